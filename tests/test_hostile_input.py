"""Hostile input never crashes, hangs or blows up memory.

Each class a mutation fuzzer found keeps a minimal repro in ``tests/fuzz/corpus/<class>/``,
made here by a builder from the small healthy verify fixture (written by kmeta's own
writer, see fixtures/README.md) and checked in; ``test_corpus_is_current`` fails when a
builder and its checked-in copy drift apart (rebuild with ``KMETA_REBUILD_CORPUS=1``).
Special files (FIFOs, links to devices) cannot live in git: their tests add them to a
copy of the corpus at run time.

Every test runs the command line as an SRE does, with a timeout (a hang is a failure), and
checks the exit code, one clear line and no traceback: in-process through
``tests/clirun.py``, or as a real subprocess where its memory is measured.
"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

import clirun
import pytest
import zstandard
from conftest import REPO, VERIFY
from crc32c import crc32c

from kmeta.formats.batch import HEADER, HEADER_SIZE, encode_record
from kmeta.formats.payload import encode_metadata

CORPUS = REPO / "tests" / "fuzz" / "corpus"
VERIFY_HEALTHY_META = VERIFY / "healthy" / "__cluster_metadata-0"
META = "__cluster_metadata-0"
SEGMENT = "00000000000000000000.log"
INDEX = "00000000000000000000.index"
TIMEOUT = 30


def _environ() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env["NO_COLOR"] = "1"
    return env


def run(*args: object, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    return clirun.run(*args, env=_environ(), timeout=timeout)


def run_process(*args: object, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    """A real subprocess, for a test that measures the peak memory of its children."""
    return subprocess.run([sys.executable, "-m", "kmeta", *map(str, args)],
                          capture_output=True, text=True, env=_environ(), timeout=timeout)


def assert_clear(proc: subprocess.CompletedProcess[str], code: int) -> None:
    """Exit ``code``, no traceback, no internal error."""
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out, out
    assert "internal error" not in out, out
    assert proc.returncode == code, (proc.returncode, out[-2000:])


# ------------------------------------------------------------------ corpus builders


def _healthy(dest: Path) -> Path:
    part = dest / META
    shutil.copytree(VERIFY_HEALTHY_META, part)
    return part


def build_index_negative_position(dest: Path) -> None:
    """An .index whose one entry names offset 6 at byte -5 (os.pread refused it)."""
    part = _healthy(dest)
    (part / INDEX).write_bytes(struct.pack(">ii", 6, -5))


HUGE = "9" * 5000  # past Python's 4300-digit limit for int()


def build_text_huge_integer(dest: Path) -> None:
    """A data dir whose text files each hold a number past every limit: the epoch cache's
    start offset, partition.metadata's version, meta.properties' node.id and an offset
    checkpoint's offset."""
    part = _healthy(dest)
    (part / "leader-epoch-checkpoint").write_text(f"0\n1\n1 {HUGE}\n")
    (part / "partition.metadata").write_text(f"version: {HUGE}\n"
                                             "topic_id: AAAAAAAAAAAAAAAAAAAAAQ")
    (dest / "meta.properties").write_text(f"node.id={HUGE}\nversion=1\n"
                                          "cluster.id=NvgEQDh6AWXxYTpbNTUZFw\n")
    (dest / "recovery-point-offset-checkpoint").write_text(
        f"0\n1\n__cluster_metadata 0 {HUGE}\n")


def build_text_int_overflow(dest: Path) -> None:
    """Numbers one past Kafka's types: an int32 epoch and an int64 offset."""
    part = _healthy(dest)
    (part / "leader-epoch-checkpoint").write_text("0\n2\n1 0\n2147483648 3\n")
    (dest / "meta.properties").write_text("node.id=1\nversion=1\n"
                                          "cluster.id=NvgEQDh6AWXxYTpbNTUZFw\n")
    (dest / "recovery-point-offset-checkpoint").write_text(
        "0\n1\n__cluster_metadata 0 9223372036854775808\n")


#: Special files cannot be checked in (and a link to /dev/zero in the repository would
#: stall any tool that reads every file): a case lists them in specials.json, name ->
#: "fifo", "loop" (a link to itself) or "link:<target>", made by ``add_specials``.
SPECIALS = "specials.json"


def _with_specials(dest: Path, specials: dict[str, str]) -> None:
    _healthy(dest)
    (dest / SPECIALS).write_text(json.dumps(specials, indent=1, sort_keys=True) + "\n")


def build_special_files(dest: Path) -> None:
    """A FIFO and a /dev/zero link named like segments, a /dev/urandom link named like a
    snapshot, a FIFO leader-epoch-checkpoint and a quorum-state linked to /dev/zero."""
    _with_specials(dest, {
        "00000000000000000020.log": "fifo",
        "00000000000000000030.log": "link:/dev/zero",
        "00000000000000000010-0000000001.checkpoint": "link:/dev/urandom",
        "leader-epoch-checkpoint": "fifo",
        "quorum-state": "link:/dev/zero",
    })


def build_symlink_loop(dest: Path) -> None:
    """Links that loop, one named like an index, two named like nothing Kafka knows."""
    _with_specials(dest, {"00000000000000000000.index": "loop", "loop-a": "link:loop-b",
                          "loop-b": "link:loop-a"})


def add_specials(case_dir: Path) -> None:
    """Make the special files a copied case lists (replacing regular files of the same
    name) inside its metadata partition dir."""
    part = case_dir / META
    for name, what in json.loads((case_dir / SPECIALS).read_text()).items():
        target = part / name
        if target.exists() or target.is_symlink():
            target.unlink()
        if what == "fifo":
            os.mkfifo(target)
        elif what == "loop":
            target.symlink_to(name)
        else:
            target.symlink_to(what.removeprefix("link:"))


def _bomb_batch(codec: int, count: int) -> bytes:
    """One batch at offset 10 (after the healthy log) holding ``count`` NoOp records,
    compressed in a stream (the section is never whole in memory here), valid CRC."""
    record = encode_record(0, 0, None, encode_metadata("NO_OP_RECORD", 0, {}))
    chunk = record * 100_000
    if codec == 4:
        comp = zstandard.ZstdCompressor(level=19, write_content_size=False).compressobj()
    else:
        comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    body = b"".join(comp.compress(chunk) for _ in range(count // 100_000)) + comp.flush()
    head = bytearray(HEADER.pack(10, HEADER_SIZE - 12 + len(body), 1, 2, 0, codec,
                                 count - 1, 0, 0, -1, -1, -1, count))
    struct.pack_into(">I", head, 17, crc32c(body, crc32c(bytes(head[21:]))))
    return bytes(head) + body


def build_zstd_bomb(dest: Path) -> None:
    """18 KB of zstd holding 20,000,000 NoOp records (220 MB) after the healthy log."""
    part = _healthy(dest)
    with open(part / SEGMENT, "ab") as f:
        f.write(_bomb_batch(4, 20_000_000))


def build_gzip_bomb(dest: Path) -> None:
    """About 43 KB of gzip holding 2,000,000 NoOp records (22 MB)."""
    part = _healthy(dest)
    with open(part / SEGMENT, "ab") as f:
        f.write(_bomb_batch(1, 2_000_000))


def build_zstd_many_records(dest: Path) -> None:
    """About 1 KB of zstd holding 600,000 NoOp records (6.6 MB, under the 16 MiB cap):
    decoded whole, its records alone were hundreds of megabytes of Python objects."""
    part = _healthy(dest)
    with open(part / SEGMENT, "ab") as f:
        f.write(_bomb_batch(4, 600_000))


BUILDERS: dict[str, Callable[[Path], None]] = {
    "zstd-bomb": build_zstd_bomb,
    "zstd-many-records": build_zstd_many_records,
    "gzip-bomb": build_gzip_bomb,
    "special-files": build_special_files,
    "symlink-loop": build_symlink_loop,
    "index-negative-position": build_index_negative_position,
    "text-huge-integer": build_text_huge_integer,
    "text-int-overflow": build_text_int_overflow,
}


def corpus_copy(name: str, tmp_path: Path) -> Path:
    """A writable copy of one corpus case; returns its metadata partition dir."""
    dest = tmp_path / name
    shutil.copytree(CORPUS / name, dest, symlinks=True)
    if (dest / SPECIALS).exists():
        add_specials(dest)
    return dest / META


def f010_files(proc: subprocess.CompletedProcess[str]) -> set[str]:
    """Names of the files verify --json reported F010 for."""
    found = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return {Path(f["file"]).name for f in found if f.get("code") == "F010"}


def _same_tree(a: Path, b: Path) -> bool:
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    return not mismatch and not errors and all(
        _same_tree(a / d, b / d) for d in cmp.common_dirs)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_corpus_is_current(name: str, tmp_path: Path) -> None:
    built = tmp_path / name
    built.mkdir()
    BUILDERS[name](built)
    if os.environ.get("KMETA_REBUILD_CORPUS"):
        shutil.rmtree(CORPUS / name, ignore_errors=True)
        shutil.copytree(built, CORPUS / name, symlinks=True)
    assert _same_tree(built, CORPUS / name), f"rebuild tests/fuzz/corpus/{name}"


# ------------------------------------------------------------------ index values


def test_negative_index_position_is_a_finding(tmp_path: Path) -> None:
    part = corpus_copy("index-negative-position", tmp_path)
    proc = run("verify", part)
    assert_clear(proc, 1)
    assert "V032" in proc.stdout and "byte -5" in proc.stdout
    proc = run("repair", "--dry-run", part)
    assert_clear(proc, 0)
    assert "omitted" in proc.stdout and INDEX in proc.stdout


# ------------------------------------------------------------------ numbers in text files


def test_integers_past_pythons_digit_limit_are_f010(tmp_path: Path) -> None:
    data_dir = corpus_copy("text-huge-integer", tmp_path).parent
    proc = run("verify", "--json", data_dir)
    assert_clear(proc, 1)
    assert f010_files(proc) == {"leader-epoch-checkpoint", "partition.metadata",
                                "meta.properties", "recovery-point-offset-checkpoint"}
    assert HUGE not in proc.stdout  # the message quotes the start of the number only
    for command in (("info",), ("dump",), ("image",), ("repair", "--dry-run")):
        target = data_dir / META
        assert "Traceback" not in run(*command, target).stderr


def test_integers_past_kafkas_types_are_f010(tmp_path: Path) -> None:
    data_dir = corpus_copy("text-int-overflow", tmp_path).parent
    proc = run("verify", "--json", data_dir)
    assert_clear(proc, 1)
    assert f010_files(proc) == {"leader-epoch-checkpoint", "recovery-point-offset-checkpoint"}
    assert "Integer.parseInt" in proc.stdout and "Long.parseLong" in proc.stdout


# ------------------------------------------------------------------ special files


@pytest.mark.parametrize("command", ["verify", "dump", "info", "image"])
def test_special_files_are_findings_and_never_read(command: str, tmp_path: Path) -> None:
    part = corpus_copy("special-files", tmp_path)
    args = (command, "--all") if command in ("verify", "info") else (command,)  # ungrouped
    proc = run(*args, part, timeout=20)  # a FIFO would block for ever: the timeout fails
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out and "internal error" not in out, out
    if command != "image":  # image reports only what it could not replay
        assert proc.returncode == 3, out  # S008: a file that cannot be read
        for what in ("a FIFO", "a character device"):
            assert what in out
    assert proc.returncode in (0, 1, 3)


def test_repair_copies_no_special_file(tmp_path: Path) -> None:
    part = corpus_copy("special-files", tmp_path)
    out = tmp_path / "out" / META
    proc = run("repair", part, "--out", out, timeout=20)
    assert_clear(proc, 0)
    assert "a FIFO (named pipe), not a regular file" in proc.stdout
    names = {p.name for p in out.iterdir()}
    assert "00000000000000000030.log" not in names  # the /dev/zero link
    assert not (out / "quarantine").exists()  # the /dev/urandom snapshot is not copied
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    assert size < 100_000


def test_symlink_loop_in_a_partition_dir(tmp_path: Path) -> None:
    part = corpus_copy("symlink-loop", tmp_path)
    proc = run("verify", part)
    assert_clear(proc, 3)
    assert "symbolic link loop" in proc.stdout
    proc = run("repair", part, "--out", tmp_path / "out" / META)
    assert_clear(proc, 0)
    assert proc.stdout.count("a symbolic link loop, not a regular file") == 3


# ------------------------------------------------------------------ compression bombs


@pytest.mark.slow
@pytest.mark.parametrize("name", ["zstd-bomb", "gzip-bomb"])
@pytest.mark.parametrize("command", [("verify",), ("info",), ("dump", "--json"),
                                     ("repair", "--dry-run")])
def test_compression_bomb_is_a_finding(name: str, command: tuple[str, ...],
                                       tmp_path: Path) -> None:
    part = corpus_copy(name, tmp_path)
    proc, peak_mib = run_measured(tmp_path, *command, part, timeout=60)
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out and "internal error" not in out, out[-2000:]
    if command[0] == "repair":
        # Kafka's recovery checks a batch's CRC, not its records: the batch stays.
        assert proc.returncode == 0, out[-2000:]
    else:
        assert "F006" in out and "inflates beyond" in out, out[-2000:]
        assert proc.returncode == 1, out[-2000:]
    # this run alone (ru_maxrss of the children counted every run the worker made):
    # a bomb decoded whole took gigabytes
    assert peak_mib < 400


#: Runs kmeta (argv[2:]) and writes its peak RSS in KiB to argv[1], however it exits:
#: VmHWM, of this program alone (ru_maxrss counts the forked pytest before the exec).
_PEAK_DRIVER = """
import runpy, sys
out, sys.argv = sys.argv[1], ["kmeta", *sys.argv[2:]]
try:
    runpy.run_module("kmeta", run_name="__main__")
finally:
    status = open("/proc/self/status").read().split("VmHWM:")[1]
    open(out, "w").write(status.split()[0])
"""



def run_measured(tmp_path: Path, *args: object, timeout: float
                 ) -> tuple[subprocess.CompletedProcess[str], float]:
    """kmeta ``args`` in a process of its own, and that process's peak RSS in MiB."""
    peak = tmp_path / "peak"
    proc = subprocess.run([sys.executable, "-c", _PEAK_DRIVER, peak, *map(str, args)],
                          capture_output=True, text=True, timeout=timeout,
                          env={**_environ(), "NO_COLOR": "1"})
    return proc, int(peak.read_text()) / 1024

@pytest.mark.slow
@pytest.mark.parametrize("command", [("verify",), ("info",), ("dump", "--json"),
                                     ("dump", "-r"), ("repair", "--dry-run")])
def test_records_of_a_large_batch_are_a_stream(command: tuple[str, ...],
                                               tmp_path: Path) -> None:
    """600,000 records in one batch under the decompression cap: verify peaked at 160 MB,
    dump --json at 400 MB (the input is 3 KB); streamed, memory does not grow with the
    record count."""
    part = corpus_copy("zstd-many-records", tmp_path)
    proc, peak_mib = run_measured(tmp_path, *command, part, timeout=300)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    # every record is read: offset deltas all 0 are one V002 for the batch (verify)
    assert proc.returncode == (1 if command == ("verify",) else 0), proc.stderr[-2000:]
    assert peak_mib < 100


@pytest.mark.parametrize("bounds", [("--from-offset", "100"), ("--to-offset", "9"),
                                    ("--from-offset", "600009")])
def test_records_of_a_large_batch_filtered_out_leave_no_empty_lines(
        bounds: tuple[str, str], tmp_path: Path) -> None:
    """The 600,000 records of one batch all sit at offset 10 (offset deltas 0): an offset
    range past them printed the batch and then an empty line per piece of 4,096 records
    the filter emptied (146 of them)."""
    part = corpus_copy("zstd-many-records", tmp_path)
    for json_out in (["--json"], []):
        proc = run("dump", *json_out, "-r", *bounds, part)
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        assert lines and "" not in lines, (bounds, json_out, len(lines))
        if json_out:
            records = [o for o in map(json.loads, lines) if o["kind"] == "record"]
            assert all(o["offset"] != 10 for o in records)


# ------------------------------------------------------------------ many files


def test_discovery_and_repair_planning_do_no_per_pair_path_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sorting Path objects (their comparisons) and a Path per entry in the repair's
    fingerprint made ``repair`` of a directory of 100,000 files take over a minute:
    neither may come back."""
    from kmeta.ops.repair import plan_repair

    part = _healthy(tmp_path)
    for i in range(200):
        (part / f"junk-{i}").write_bytes(b"x")

    def refuse(*_: object) -> bool:
        raise AssertionError("Path comparison or relative_to in a per-file loop")

    monkeypatch.setattr(Path, "__lt__", refuse)
    monkeypatch.setattr(Path, "relative_to", refuse)
    plan = plan_repair(part)
    assert sum(1 for c in plan.changes if c.name.startswith("junk-")) == 200


def test_discovery_looks_at_each_entry_once(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """is_file, is_dir (twice each) and not_regular stat-ed every entry five times: the
    listing's file types say the same for plain files and directories."""
    from kmeta.storage.discover import discover

    part = _healthy(tmp_path)
    for i in range(300):
        (part / f"junk-{i}").write_bytes(b"x")
    (part / "sub").mkdir()
    (part / "00000000000000000040.log").symlink_to("00000000000000000000.log")
    calls = []
    real_stat = os.stat

    def counted(*args: object, **kw: object) -> os.stat_result:
        calls.append(args[0])
        return real_stat(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", counted)
    found = discover([part])
    assert len(calls) < 10, len(calls)
    codes = [f.code for f in found.findings]
    assert codes.count("S007") == 301  # the junk names and the directory
    names = [f.path.name for p in found.all_partitions() for f in p.files]
    assert "00000000000000000040.log" in names  # a link to a regular file is read


def test_many_findings_are_lines_not_a_table(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """rich lays out what it prints for milliseconds a line: verify of a partition dir with
    50,000 junk names took 6 minutes drawing them.  Lines go straight to the file (without
    colour), grouped by default and one per finding with --all."""
    from rich.console import Console

    from kmeta.environment import Environment
    from kmeta.findings import Finding
    from kmeta.ops.verify import VerifyReport
    from kmeta.render import verify as render

    def no_rich(*_: object, **__: object) -> None:
        raise AssertionError("rich laid out a line")

    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setattr(Console, "print", no_rich)
    report = VerifyReport(findings=[Finding("S007", "not a Kafka file name; skipped",
                                            f"/d/junk-{i}") for i in range(2000)]
                          + [Finding("S004", "garbage", "/d/x.log", 7)], segments=1)
    render.render_text(report, Environment(), expand=True)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "!! S007 warning: /d/junk-0: not a Kafka file name; skipped"
    assert lines[2000] == "!! S004 error: /d/x.log, byte 7: garbage"
    assert "hint S004: " in lines[2001] and lines[-1].startswith("broken: 1 error")
    render.render_text(report, Environment())
    grouped = capsys.readouterr().out.splitlines()
    assert sum("S007" in line for line in grouped) == 1  # one group line for 2,000


# ------------------------------------------------------------------ a file that shrinks


#: Runs kmeta with the segment scan (``segments._scan``) wrapped: right after the first item read from the segment
#: argv[1] names, the segment is truncated to argv[2] bytes, as a live broker's follower
#: truncation would, between two items of the scan (argv[3:] is the kmeta command).
_SHRINK_DRIVER = """
import os, runpy, sys
from pathlib import Path
import kmeta.storage.segments as segments
target, cut = Path(sys.argv[1]).resolve(), int(sys.argv[2])
real, done = segments._scan, []
def scan(buf, file, *args, **kw):
    for i, item in enumerate(real(buf, file, *args, **kw)):
        yield item
        if i == 0 and not done and Path(file).resolve() == target:
            done.append(os.truncate(target, cut))
segments._scan = scan
sys.argv = ["kmeta", *sys.argv[3:]]
runpy.run_module("kmeta", run_name="__main__")
"""

NOOP_BATCH = 72  # the healthy log's last batch: one NoOp, offset 9, at byte 810
SHRINK_BATCHES = 170_000  # a segment of about 12 MiB: three loads of 4 MiB
SHRINK_CUT = 882 + NOOP_BATCH * 100_000  # a batch boundary past the first load


@pytest.fixture(scope="module")
def long_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The healthy log followed by copies of its last NoOp batch at offsets 10 on: a base
    offset lies outside the CRC, so each copy stays intact."""
    part = _healthy(tmp_path_factory.mktemp("long"))
    seg = part / SEGMENT
    data = seg.read_bytes()
    noop = bytearray(data[810:])
    assert len(noop) == NOOP_BATCH and len(data) == 882
    with open(seg, "ab") as f:
        for offset in range(10, 10 + SHRINK_BATCHES):
            struct.pack_into(">q", noop, 0, offset)
            f.write(noop)
    return part


@pytest.mark.slow
@pytest.mark.parametrize("command", [("dump",), ("dump", "--json"), ("verify",), ("info",),
                                     ("image",), ("diff",), ("repair", "--dry-run")])
def test_segment_truncated_while_read_is_reported(command: tuple[str, ...], long_log: Path,
                                                  tmp_path: Path) -> None:
    """Reading a mapped page past a file's new end was SIGBUS (exit -7, no message)."""
    part = tmp_path / META
    shutil.copytree(long_log, part)
    args = [*command, part] + ([long_log] if command == ("diff",) else [])
    proc = subprocess.run([sys.executable, "-c", _SHRINK_DRIVER, part / SEGMENT,
                           str(SHRINK_CUT), *map(str, args)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "NO_COLOR": "1"})
    out = proc.stdout + proc.stderr
    assert proc.returncode >= 0, f"killed by signal {-proc.returncode}"
    assert (part / SEGMENT).stat().st_size == SHRINK_CUT  # the driver did truncate it
    assert "Traceback" not in out and "internal error" not in out, out[-2000:]
    assert f"shrank while it was read (from {882 + NOOP_BATCH * SHRINK_BATCHES} to " \
           f"{SHRINK_CUT} bytes)" in out, out[-2000:]
    assert proc.returncode == 3, (proc.returncode, out[-2000:])
    if command[0] == "dump":  # the batches before the new end, and none after it
        last = 9 + (SHRINK_CUT - 882) // NOOP_BATCH
        key = "baseOffset: {} " if command == ("dump",) else '"offset":{},"timestamp"'
        assert key.format(last) in out and key.format(last + 1) not in out, out[-2000:]
