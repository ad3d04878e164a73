"""True verdicts at the edges: what verify, info, image, diff, truncate and repair say
about inputs that are not what they seem (a system folder, a copy without its log, an
unreadable file, replicas taken at different times, a repaired copy)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import clirun
import pytest
from conftest import FIXTURES

from kmeta.errors import ExitCode
from kmeta.ops.verify import verify
from kmeta.storage.discover import discover

KMETA = [sys.executable, "-m", "kmeta"]


def run(*args: Any) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    return clirun.run(*args, env=env, timeout=60)


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def _system_like(root: Path) -> Path:
    """What /etc and /usr/lib/jvm hold: folders named like ``<topic>-<n>``, none Kafka's."""
    (root / "dbus-1" / "session.d").mkdir(parents=True)
    (root / "polkit-1" / "rules.d").mkdir(parents=True)
    (root / "openjdk-17").mkdir()
    (root / "openjdk-17" / "src.zip").symlink_to("lib/src.zip")  # dangling, as in the JDK
    (root / "python3-1").mkdir()
    (root / "python3-1" / "README").write_text("not kafka\n")
    (root / "empty-0").mkdir()
    (root / "xattr.conf").write_text("# not kafka\n")
    return root


@pytest.mark.parametrize("command", ["verify", "info", "dump"])
def test_a_folder_without_kafka_files_is_unreadable_input(tmp_path: Path,
                                                          command: str) -> None:
    proc = run(command, _system_like(tmp_path))
    assert proc.returncode == ExitCode.UNREADABLE, proc.stdout + proc.stderr
    assert "no Kafka files" in one_error_line(proc)
    assert "clean" not in proc.stdout


def test_empty_partition_dir_counts_only_inside_a_data_dir(tmp_path: Path) -> None:
    (tmp_path / "meta.properties").write_text("version=1\nnode.id=1\ncluster.id=abc\n"
                                              "directory.id=AAAAAAAAAAAAAAAAAAAAAQ\n")
    (tmp_path / "orders-0").mkdir()
    (tmp_path / "dbus-1" / "session.d").mkdir(parents=True)
    found = discover([tmp_path])
    assert [p.name for p in found.all_partitions()] == ["orders-0"]


def test_real_empty_partition_dir_is_a_partition(real_data: Path) -> None:
    names = {p.name for p in discover([real_data / "ldi-poc"]).all_partitions()}
    assert {"Retry.TestTopicPatient-0", "__cluster_metadata-0"} <= names


def test_verify_counts_the_segments_and_snapshots_it_read() -> None:
    report = verify([FIXTURES / "healthy"])
    summary = report.summary_json()
    assert summary["segments"] == 7 + 1  # the metadata log's 7, orders-0's one
    assert summary["snapshots"] == 3 + 1  # the metadata snapshots and bootstrap.checkpoint
    assert summary["not_run"] == []


def test_verify_without_any_log_does_not_say_clean(tmp_path: Path) -> None:
    (tmp_path / "meta.properties").write_text("version=1\nnode.id=1\ncluster.id=abc\n")
    proc = run("verify", tmp_path)
    assert proc.returncode == ExitCode.OK
    last = proc.stdout.strip().splitlines()[-1]
    assert not last.startswith("clean"), last
    assert "0 segment(s), 0 snapshot(s)" in last


def test_verify_says_a_loose_segment_got_batch_checks_only(tmp_path: Path) -> None:
    seg = next((FIXTURES / "healthy" / "__cluster_metadata-0").glob("*.log"))
    proc = run("verify", "--json", seg)
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["segments"] == 1
    assert len(summary["not_run"]) == 1 and "KRaft record rules" in summary["not_run"][0]


# ------------------------------------------------------------------ info and image


def _lines(out: str) -> list[dict]:
    """JSON Lines, as every command's --json writes them."""
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize("case", ["data-store", "kraft-ksql-txn", "kraft412-scram-snapshots"])
def test_info_and_image_say_the_metadata_log_is_missing(real_data: Path, case: str) -> None:
    info = run("info", "--json", real_data / case)
    assert info.returncode == ExitCode.FINDINGS, info.stderr
    codes = [f["code"] for f in _lines(info.stdout) if f["kind"] == "finding"]
    assert "V020" in codes
    image = run("image", "--digest", real_data / case)
    assert image.returncode == ExitCode.FINDINGS
    assert "V020" in image.stderr


@pytest.mark.parametrize(("case", "code"), [("torn-tail", "S001"), ("bad-crc", "F001")])
def test_info_carries_verify_cheap_verdicts(case: str, code: str) -> None:
    proc = run("info", "--json", FIXTURES / "corrupt" / case)
    assert proc.returncode == ExitCode.FINDINGS
    assert code in [f["code"] for f in _lines(proc.stdout) if f["kind"] == "finding"]


# ------------------------------------------------------------------ unreadable files

UNREADABLE_SEGMENT = "00000000000000001802.log"  # the second of healthy's seven


def _deny(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """os.open raises PermissionError for files called ``name``, as for user nobody."""
    real_open = os.open

    def fake_open(path: Any, flags: int, *args: Any, **kw: Any) -> int:
        if Path(path).name == name:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kw)

    monkeypatch.setattr(os, "open", fake_open)


def test_verify_gives_one_finding_for_an_unreadable_segment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _deny(monkeypatch, UNREADABLE_SEGMENT)
    report = verify([FIXTURES / "healthy"])
    assert [(f.code, Path(f.file).name) for f in report.findings] == \
        [("S008", UNREADABLE_SEGMENT)]
    assert any("a segment cannot be read" in line for line in report.not_run)


def test_image_refuses_a_log_with_an_unreadable_segment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from kmeta.errors import UnreadableInput
    from kmeta.ops.replay import build_image

    _deny(monkeypatch, UNREADABLE_SEGMENT)
    with pytest.raises(UnreadableInput, match="Permission denied"):
        build_image(FIXTURES / "healthy")


@pytest.fixture(scope="module")
def denied_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import shutil

    root = tmp_path_factory.mktemp("denied")
    root.chmod(0o755)
    for name in ("a", "b"):
        shutil.copytree(FIXTURES / "healthy", root / name)
    for p in [root, *root.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    (root / "a" / "__cluster_metadata-0" / UNREADABLE_SEGMENT).chmod(0)
    return root


@pytest.mark.parametrize("args", [
    ["verify", "--json", "a"], ["info", "--json", "a"], ["image", "--digest", "a"],
    ["dump", "--batches-only", "a/__cluster_metadata-0"], ["diff", "a", "b"],
    ["repair", "--dry-run", "a/__cluster_metadata-0"], ["truncate", "a", "--to", "100"],
    ["history", "a", "--broker", "4"]])
def test_every_command_gives_one_line_and_exit_3_as_nobody(denied_copy: Path,
                                                           nobody_python: list[str],
                                                           args: list[str]) -> None:
    proc = subprocess.run([*nobody_python, "-m", "kmeta", *args], capture_output=True,
                          text=True, cwd=denied_copy, timeout=60)
    assert proc.returncode == ExitCode.UNREADABLE, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    codes = re_codes(proc.stdout + proc.stderr)
    assert set(codes) <= {"S008"} and codes.count("S008") <= 1, codes[:20]


def re_codes(text: str) -> list[str]:
    import re

    return re.findall(r'\b([FSV]\d{3})\b', text)


# ------------------------------------------------------------------ offset checkpoints


def _codes(path: Path) -> list[str]:
    return [f.code for f in verify([path]).findings]


def test_an_empty_segment_sets_the_log_end(real_data: Path) -> None:
    # rfid_user_access-0 holds only an empty 00000000000000000005.log: its log end is 5,
    # where the recovery point and high watermark (5) are.
    assert "V035" not in _codes(real_data / "cp51-connect-cleaned")


def test_partitions_without_segments_have_no_known_log_end(real_data: Path) -> None:
    codes = _codes(real_data / "kraft412-scram-snapshots")
    assert "V035" not in codes
    assert codes.count("V028") == 1  # once for the data dir, not once per partition


def test_what_kafka_repairs_on_load_is_a_warning_that_says_so(real_data: Path) -> None:
    # kraft-ksql-txn keeps __cluster_metadata-0/00000000000000000000.index without its
    # segment: LogLoader deletes an orphaned index on load
    report = verify([real_data / "kraft-ksql-txn"])
    orphans = [f for f in report.findings if f.code == "V030"]
    assert len(orphans) == 2
    assert all(f.severity.value == "warning" and "Kafka deletes it on load" in f.message
               for f in orphans)


# ------------------------------------------------------------------ diff of two copies in time

LATER_COPY = FIXTURES / "divergent" / "later-copy"


@pytest.mark.parametrize("order", [("a", "b"), ("b", "a")])
def test_diff_of_an_earlier_and_a_later_copy_is_lag(order: tuple[str, str]) -> None:
    for name in order:
        assert run("verify", LATER_COPY / name).returncode == ExitCode.OK
    proc = run("diff", "--json", *(LATER_COPY / n for n in order))
    assert proc.returncode == ExitCode.OK, proc.stderr
    out = json.loads(proc.stdout.splitlines()[0])  # the diff object, then findings
    assert not out["diverged"]
    assert out["lagging_replicas"] == [str(LATER_COPY / "b")]
    (pair,) = out["pairs"]
    b_follows = pair["epoch_truncation"][
        "local_follows_peer" if order[0] == "b" else "peer_follows_local"]
    assert b_follows["outcome"] == "snapshot"
    assert b_follows["snapshot"] == "00000000000000000382-0000000003"
    # a fetching from b (which Kafka never does: a is ahead) cannot be carried on: it says
    # why instead of refusing the whole comparison
    a_follows = pair["epoch_truncation"][
        "peer_follows_local" if order[0] == "b" else "local_follows_peer"]
    assert a_follows["outcome"] == "undetermined" and a_follows["reason"]


def test_snapshot_answer_says_why() -> None:
    """The leader sends a snapshot for a fetch below its log start, or for one whose last
    epoch is older than its earliest snapshot: the sentence names the reason that holds."""
    from kmeta.ops.diff import diff_replicas

    report = diff_replicas([str(LATER_COPY / "a"), str(LATER_COPY / "b")], images=False)
    said = " ".join(report.pairs[0].kafka)
    assert "b ends at 342, below the leader's log start 346" in said


# ------------------------------------------------------------------ what a repair costs

BAD_CRC = FIXTURES / "corrupt" / "bad-crc" / "__cluster_metadata-0"


def test_repair_says_how_many_committed_records_the_cut_lost(tmp_path: Path) -> None:
    proc = run("repair", BAD_CRC, "--out", tmp_path / "r" / "__cluster_metadata-0")
    assert proc.returncode == ExitCode.OK, proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    # the bad CRC at offset 20 cuts the log; the intact snapshot at 458 proves 20..457
    # were committed
    assert last.startswith("cost: 438 committed record(s) lost (offsets 20..457)"), last
    assert "fetch them again from the leader" in last and "--follow-snapshot" in last
    plan = json.loads(run("repair", "--dry-run", "--json", BAD_CRC).stdout)
    assert plan["committed_lost"] == {"records": 438, "first_offset": 20, "last_offset": 457,
                                      "snapshot": "00000000000000000458-0000000002"}


def test_following_the_snapshot_loses_no_committed_record() -> None:
    plan = json.loads(run("repair", "--dry-run", "--json", "--follow-snapshot",
                          BAD_CRC).stdout)
    assert plan["committed_lost"] is None


def test_truncate_apply_reports_what_it_wrote_once(tmp_path: Path) -> None:
    out = tmp_path / "t" / "__cluster_metadata-0"
    proc = run("truncate", BAD_CRC.parent, "--to", "100", "--apply", "--out", out)
    assert proc.returncode == ExitCode.OK, proc.stderr
    assert "simulation" not in proc.stdout and "nothing written" not in proc.stdout
    removed = [line for line in proc.stdout.splitlines() if "removed:" in line]
    assert len(removed) == 1, removed
    repaired = json.loads(run("repair", "--dry-run", "--json", "--truncate-to", "100",
                              BAD_CRC).stdout)
    assert f"removed: {repaired['removed']['batches']} batch(es)" in removed[0]


@pytest.mark.parametrize("to", [8, 300])  # above and below the bad-CRC batch at 195
def test_truncate_simulation_counts_what_repair_writes(to: int) -> None:
    source = FIXTURES / "repair" / "bad-crc-mid-log" / "__cluster_metadata-0"
    sim = json.loads(run("truncate", "--json", "--no-images", source.parent,
                         "--to", to).stdout)
    plan = json.loads(run("repair", "--dry-run", "--json", "--truncate-to", to,
                          source).stdout)
    assert sim["new_log_end_offset"] == plan["log_end_offset"] == min(to, 195)
    assert sim["removed_records"]["batches"] == plan["removed"]["batches"]
    assert sim["removed_records"]["records"] == plan["removed"]["records"]


# ------------------------------------------------------------------ repair -> verify -> diff


@pytest.mark.parametrize("name", ["R", "ldi-poc___cluster_metadata-0"])  # the second
# is named like a data topic's partition (topic-N)
def test_a_repaired_copy_is_the_partition_it_repaired(tmp_path: Path, name: str) -> None:
    out = tmp_path / name
    assert run("repair", BAD_CRC, "--out", out).returncode == ExitCode.OK
    assert (out / "quarantine").is_dir()
    proc = run("verify", "--json", out)
    assert proc.returncode == ExitCode.OK, proc.stdout
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    summary = lines[-1]
    assert list(summary["logs"]) == [str(out)]  # KRaft checks and replay ran
    assert summary["not_run"] == [] and lines[:-1] == []  # no S007 for its quarantine/
    diff = run("diff", "--json", out, FIXTURES / "corrupt" / "pristine")
    assert diff.returncode == ExitCode.OK, diff.stderr
    assert _lines(diff.stdout)[0]["lagging_replicas"] == [str(out)]
    image = run("image", "--digest", out)
    assert image.returncode == ExitCode.OK, image.stderr


@pytest.mark.parametrize("keep", ["partition.metadata", "segments only"])
def test_a_renamed_copy_without_quorum_state_or_snapshot_is_still_recognised(
        tmp_path: Path, keep: str) -> None:
    import shutil

    source = tmp_path / "in" / "__cluster_metadata-0"
    shutil.copytree(FIXTURES / "repair" / "torn-tail" / "__cluster_metadata-0", source)
    for f in [source / "quorum-state", *source.glob("*.checkpoint")]:
        f.unlink()
    if keep == "segments only":  # a Kafka 3.2 copy has no partition.metadata
        (source / "partition.metadata").unlink()
    out = tmp_path / "R"
    assert run("repair", source, "--out", out).returncode == ExitCode.OK
    found = discover([out])
    assert [(p.path, p.is_metadata) for p in found.partitions] == [(out, True)]
    diff = run("diff", "--json", out, source)
    # the source's torn tail is an error finding (S001), as everywhere: exit 1; no V160
    assert diff.returncode == ExitCode.FINDINGS, diff.stderr
    lines = [json.loads(line) for line in diff.stdout.splitlines()]
    assert lines[0]["diverged"] is False
    assert {o["code"] for o in lines[1:]} == {"S001"}
    assert run("image", "--digest", out).returncode == ExitCode.OK


def test_a_renamed_data_topic_copy_is_not_taken_for_the_metadata_log(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(FIXTURES / "healthy" / "orders-0", tmp_path / "copy")
    found = discover([tmp_path / "copy"])
    assert not list(found.all_partitions()) and found.files
    proc = run("diff", tmp_path / "copy", FIXTURES / "healthy")
    assert proc.returncode == ExitCode.UNREADABLE  # no metadata log: none of what it reads
    assert "must keep that name" in one_error_line(proc)


def test_loose_snapshots_stay_loose_files(tmp_path: Path) -> None:
    import shutil

    for snap in (FIXTURES / "healthy" / "__cluster_metadata-0").glob("*.checkpoint"):
        shutil.copy(snap, tmp_path)
    found = discover([tmp_path])
    assert not list(found.all_partitions()) and len(found.files) == 3


def test_diff_refuses_replicas_of_two_clusters(real_data: Path) -> None:
    proc = run("diff", real_data / "data-store" / "kafka-data",
               real_data / "kraft-ksql-txn" / "kafka-data")
    assert proc.returncode == ExitCode.USAGE
    assert "not replicas of one cluster" in one_error_line(proc)


def test_truncate_without_a_log_says_so(real_data: Path) -> None:
    proc = run("truncate", real_data / "data-store", "--to", "5")
    assert proc.returncode == ExitCode.UNREADABLE
    assert "no log segment" in one_error_line(proc)


def test_image_of_a_zookeeper_mode_data_dir_says_so(real_data: Path) -> None:
    proc = run("image", real_data / "kafka25-zk-offsets")
    assert proc.returncode == ExitCode.UNREADABLE
    assert "ZooKeeper-mode data dir" in one_error_line(proc)


def test_majority_counts_the_replicas_that_hold_it(real_data: Path) -> None:
    data = real_data / "quorum3-boaz" / "data"
    proc = run("diff", data / "kafka-1", data / "kafka-2", data / "kafka-3")
    assert "majority (3 of 3, 2 needed)" in proc.stdout, proc.stdout
