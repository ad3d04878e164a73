"""Nothing lands in an input, or among a broker's own files, by accident.

Every write command (snapshot --out, compact --write, export --to, repair --out, truncate
--apply --out) refuses an output inside what it reads, or in a Kafka data dir (one with
meta.properties) or partition dir, with one KM005 line (exit 2) that names the path and
the flag that allows the one case a user can mean: ``snapshot --into-partition`` and
``--into-data-dir``.  Paths are judged resolved: symbolic links and ``..`` are followed.
A refusal writes nothing, and export refuses before Spark starts.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from clirun import run
from conftest import HEALTHY, REPO

import kmeta.spark.export
from kmeta.errors import ExitCode, KmetaError
from kmeta.storage.targets import WriteTargetError, check_target, landing

META = "__cluster_metadata-0"


def state(root: Path) -> dict[str, int]:
    """Every name below ``root`` with its size: what a refusal must leave as it was."""
    return {str(p.relative_to(root)): p.lstat().st_size for p in sorted(root.rglob("*"))}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A broker's data dir (meta.properties, the metadata partition, orders-0)."""
    shutil.copytree(HEALTHY, tmp_path / "data")
    return tmp_path / "data"


@pytest.fixture
def other(tmp_path: Path) -> Path:
    """Another broker's data dir, formatted and holding no partition yet."""
    d = tmp_path / "other"
    d.mkdir()
    shutil.copy(HEALTHY / "meta.properties", d)
    return d


def refused(tmp_path: Path, *args: object, flag: str | None = None,
            cwd: Path | None = None) -> str:
    """Run ``kmeta ARGS``; it must refuse with KM005 (exit 2) in one line, naming
    ``flag`` when given, and leave everything under ``tmp_path`` as it was."""
    before = state(tmp_path)
    done = run(*args, env={}, cwd=cwd)
    assert done.returncode == ExitCode.USAGE, done.stderr
    assert done.stderr.startswith("kmeta: error[KM005]: "), done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    if flag is not None:
        assert f"add {flag} if that is what you mean" in done.stderr
    assert state(tmp_path) == before
    return done.stderr


# ------------------------------------------------------------------------- snapshot


@pytest.mark.parametrize("source, out", [
    (META, META),  # the case: its own live metadata partition
    (".", META),
    (META, f"{META}/../{META}"),
    (".", f"./{META}/../{META}/new.checkpoint"),  # a new file there, by another spelling
    (".", "../link"),  # a link to the partition
    (".", "../link/new.checkpoint"),
], ids=["own-partition", "data-dir-input", "dotdot", "dotdot-file", "link", "link-file"])
def test_snapshot_into_a_metadata_partition_needs_the_flag(data: Path, tmp_path: Path,
                                                           source: str, out: str) -> None:
    (tmp_path / "link").symlink_to(data / META)
    message = refused(tmp_path, "snapshot", source, "--out", out, flag="--into-partition",
                      cwd=data)
    assert f"{Path(out)}: --out is inside " in message
    assert f"{data.resolve() / META}" in message and "metadata partition directory" in message
    if source == ".":  # outside the input, not only outside the partition in it
        assert message.endswith(f"choose a directory outside {data.resolve()})\n")


@pytest.mark.parametrize("out", [".", "x.checkpoint", "orders-0", "orders-0/x.checkpoint",
                                 "new/"],
                         ids=["data-dir", "file-in-data-dir", "data-partition",
                              "data-partition-file", "new-dir-in-data-dir"])
def test_snapshot_elsewhere_among_the_brokers_files_is_refused(data: Path, tmp_path: Path,
                                                               out: str) -> None:
    if out == "new/":
        (data / "new").mkdir()
    message = refused(tmp_path, "snapshot", META, "--out", out, cwd=data)
    assert "--into-partition" not in message  # no flag makes these right
    # even when asked: only a metadata partition dir takes a snapshot
    refused(tmp_path, "snapshot", META, "--out", out, "--into-partition", cwd=data)


def test_snapshot_into_the_partition_when_asked_says_what_kafka_will_do(data: Path) -> None:
    part = data / META
    done = run("snapshot", part, "--out", part, "--into-partition", env={})
    assert done.returncode == 0, done.stderr
    written = part / "00000000000000012704-0000000011.checkpoint"
    assert written.is_file()
    assert (f"note: written into the metadata partition directory {part}: at its next start "
            "Kafka loads the cluster image from this snapshot, the newest, and replays the "
            "log from offset 12704") in done.stdout
    # one older than the newest one there: Kafka passes it over
    done = run("snapshot", data, "--out", part, "--into-partition", "--at", "5000", env={})
    assert done.returncode == 0, done.stderr
    assert "loads the cluster image from the newer snapshot " \
           "00000000000000012704-0000000011, not from this one" in done.stdout


def test_snapshot_into_partition_names_a_place_that_is_not_one(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    message = refused(tmp_path, "snapshot", HEALTHY, "--out", tmp_path / "plain",
                      "--into-partition")
    assert "--into-partition is given, but --out is not directly in a metadata partition" \
        in message


def test_snapshot_into_a_plain_directory_is_written(tmp_path: Path) -> None:
    done = run("snapshot", HEALTHY, "--out", tmp_path, "--at", "5000", env={})
    assert done.returncode == 0, done.stderr
    assert "note: written into" not in done.stdout


# ------------------------------------------------------------------------- compact


def test_compact_write_into_a_data_dir_needs_the_flag(data: Path, other: Path,
                                                      tmp_path: Path) -> None:
    source = data / "orders-0"
    message = refused(tmp_path, "compact", source, "--write", other, flag="--into-data-dir")
    assert f"{other}: --write is inside the data directory {other} " in message
    (tmp_path / "link").symlink_to(other)
    refused(tmp_path, "compact", source, "--write", tmp_path / "link", flag="--into-data-dir")
    done = run("compact", source, "--write", other, "--into-data-dir", env={})
    assert done.returncode == 0, done.stderr
    assert (other / "orders-0" / "00000000000000000000.log").is_file()


@pytest.mark.parametrize("write", ["data", "data/orders-0/sub", "data/new", "other/new"],
                         ids=["own-data-dir", "inside-input", "new-dir-in-data-dir",
                              "new-dir-in-other-data-dir"])
def test_compact_write_refused_even_with_the_flag(data: Path, other: Path, tmp_path: Path,
                                                  write: str) -> None:
    for flag in ((), ("--into-data-dir",)):
        refused(tmp_path, "compact", data / "orders-0", "--write", tmp_path / write, *flag)


# ------------------------------------------------------------------------- repair


def test_repair_into_a_data_dir_needs_the_flag(data: Path, other: Path,
                                               tmp_path: Path) -> None:
    part = data / META
    refused(tmp_path, "repair", part, "--out", other / META, flag="--into-data-dir")
    done = run("repair", part, "--out", other / META, "--into-data-dir", env={})
    assert done.returncode == 0, done.stderr
    assert (other / META / "quorum-state").is_file()


@pytest.mark.parametrize("out", [f"data/{META}", f"data/{META}/sub", f"data/{META}.repaired",
                                 "data/new/deeper", f"other/new/{META}"],
                         ids=["input", "inside-input", "unparsable-name", "deeper",
                              "deeper-other"])
def test_repair_out_refused_even_with_the_flag(data: Path, other: Path, tmp_path: Path,
                                               out: str) -> None:
    for flag in ((), ("--into-data-dir",)):
        refused(tmp_path, "repair", data / META, "--out", tmp_path / out, *flag)


def test_repair_backup_never_goes_into_a_data_dir(data: Path, other: Path,
                                                  tmp_path: Path) -> None:
    refused(tmp_path, "repair", data / META, "--in-place", "--backup", other / "backup")


# ------------------------------------------------------------------------- truncate


def test_truncate_into_a_data_dir_needs_the_flag(data: Path, other: Path,
                                                 tmp_path: Path) -> None:
    refused(tmp_path, "truncate", data / META, "--to", "5468", "--apply", "--out",
            other / META, flag="--into-data-dir")
    done = run("truncate", data / META, "--to", "5468", "--apply", "--out", other / META,
               "--into-data-dir", env={})
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("args", [
    ["data", "--out", "data/x"],  # beside the partition it cuts, in the input data dir
    ["data", "--out", f"data/{META}/x"],
    [f"data/{META}", "--out", "peer/x", "--to-divergence-with", "peer"],  # the peer is read
], ids=["data-dir-input", "inside-partition", "inside-peer"])
def test_truncate_out_inside_what_it_reads_is_refused(data: Path, tmp_path: Path,
                                                      args: list[str]) -> None:
    shutil.copytree(data / META, tmp_path / "peer")
    path, *rest = args
    refused(tmp_path, "truncate", tmp_path / path, "--to", "5468", "--apply",
            *[tmp_path / a if "/" in a or a == "peer" else a for a in rest])


# ------------------------------------------------------------------------- export


class SparkStarted(Exception):
    """Raised in place of the export job: the check must come before it."""


@pytest.fixture
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    def started(*args: object, **kw: object) -> None:
        raise SparkStarted("the export job ran")

    monkeypatch.setattr(kmeta.spark.export, "run_export", started)


@pytest.mark.parametrize("paths, to", [
    (["data"], "data/out"),
    (["d*"], "data/orders-0/out"),  # a glob: judged against what it matches
    (["data/orders-0"], "other/out"),  # not an input, but a data dir
    ([f"data/{META}/00000000000000000000.log"], f"data/{META}/out"),
], ids=["inside-input", "inside-glob", "other-data-dir", "beside-a-file-input"])
def test_export_refuses_before_spark_starts(data: Path, other: Path, tmp_path: Path,
                                            no_spark: None, paths: list[str], to: str
                                            ) -> None:
    message = refused(tmp_path, "export", *paths, "--to", to, cwd=tmp_path)
    assert "SparkStarted" not in message


def test_export_elsewhere_goes_on_to_spark(data: Path, tmp_path: Path,
                                           no_spark: None) -> None:
    done = run("export", data, "--to", tmp_path / "tables", env={})
    assert "SparkStarted: the export job ran" in done.stderr


# ------------------------------------------------------------------------- the rule


def test_a_new_path_lands_in_the_nearest_existing_directory(data: Path) -> None:
    where = landing(data / "a" / "b" / "c", [])
    assert where.parent == data.resolve() and where.kafka_dir == data.resolve()
    assert landing(Path(os.sep) / "nonexistent-kmeta" / "x", []).role is None


def test_a_link_loop_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(KmetaError) as e:
        check_target(tmp_path / "loop" / "x", [], what="--out")
    assert e.value.exit_code == ExitCode.USAGE and "\n" not in e.value.one_line()


def test_the_reference_is_stable_and_in_the_man_page() -> None:
    assert WriteTargetError.reference == "KM005"
    assert WriteTargetError.exit_code == ExitCode.USAGE
    man = (REPO / "man" / "kmeta.1").read_text(encoding="utf-8")
    assert "\\fBKM005\\fR (exit 2)" in man


@pytest.mark.parametrize("command", [
    ["snapshot", f"data/{META}", "--out", f"data/{META}", "--into-partition"],
    ["compact", "data/orders-0", "--write", "other", "--into-data-dir"],
    ["repair", f"data/{META}", "--out", f"other/{META}", "--into-data-dir"],
], ids=["snapshot", "compact", "repair"])
def test_the_flags_are_refused_while_a_broker_holds_the_data_dir(
        data: Path, other: Path, tmp_path: Path, command: list[str]) -> None:
    import fcntl

    target = other if "other" in " ".join(command) else data
    lock = target / ".lock"
    lock.write_bytes(b"")  # as a broker leaves it
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as another process would hold it
        message = refused(tmp_path, *command, cwd=tmp_path)
        assert f"{lock}: a running process holds the data directory's .lock" in message
        assert "stop the broker before --into-" in message
    finally:
        os.close(fd)
    assert run(*command, env={}, cwd=tmp_path).returncode == 0  # stopped: written


def test_the_note_falls_back_when_retention_cannot_tell(data: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The snapshot is written by then: a failure to tell more is a plainer note, never a
    failed command."""
    import kmeta.ops.retention
    from kmeta.ops.snapshot import write_snapshot_at

    def cannot(path: object, **kw: object) -> None:
        raise KmetaError("cannot list directory: Permission denied")

    monkeypatch.setattr(kmeta.ops.retention, "retention", cannot)
    result = write_snapshot_at(data, data / META, at=5000, timestamp_ms=1, durable=False,
                               into_partition=True)
    assert result.path.is_file()
    assert result.notes[-1].endswith("loads the cluster image from the newest snapshot there "
                                     "(ordered by epoch, then end offset); kmeta retention "
                                     "could not tell more: cannot list directory: Permission "
                                     "denied")
