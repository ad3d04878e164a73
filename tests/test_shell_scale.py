"""``kmeta shell`` on a log of tens of MB: what a command costs does not grow with the
log.  A step of next/prev reads the batch it applies (by its position, from the
timeline's index), not the segment from its start; ``records`` of the whole log is
written as it is read, in the memory ``dump -r`` takes, its first lines at once.

The fuzz campaign of issue 32 measured the old costs: ``prev 1000`` took 4.7 s on a
9 MB log and 42.5 s on a 36 MB one, ``records FROM TO`` held the range (1.37 GB on a
36 MB log, 2.4 GB and 20 s of blank screen on the 268 MB one)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.test_fixtures import generator

pytestmark = pytest.mark.slow

#: a log of this size in one segment (as a busy cluster's is, Kafka rolls at 1 GiB): the
#: old step scanned it from its start for every step
LOG_BYTES = 24 << 20


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("scale") / "data"
    generator().generate_big(out, 20241025, LOG_BYTES, segment_bytes=64 << 20)
    return out


def test_a_step_reads_its_batch_not_the_log(big_log: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    import kmeta.storage.segments as segments
    from kmeta.shell.session import open_session
    from kmeta.storage.headers import BatchesByPosition

    session = open_session([str(big_log)])
    mapped: list[str] = []
    read = [0]
    real_map, real_batch = segments.mapped, BatchesByPosition.batch

    def spy_map(path, *args, **kw):  # type: ignore[no-untyped-def]
        mapped.append(str(path))
        return real_map(path, *args, **kw)

    def spy_batch(self, path, position):  # type: ignore[no-untyped-def]
        raw = real_batch(self, path, position)
        read[0] += len(raw)
        return raw

    monkeypatch.setattr(segments, "mapped", spy_map)
    monkeypatch.setattr(BatchesByPosition, "batch", spy_batch)
    began = time.monotonic()
    back = session.step(False, 300)
    forward = session.step(True, 300)
    took = time.monotonic() - began
    steps = [o for o in [*back.objects, *forward.objects] if o["kind"] == "shell_step"]
    assert len(steps) == 600
    assert not mapped, mapped[:3]  # no segment scanned from its start
    assert read[0] < 4 << 20, read[0]  # the batches applied and their records, ~kB each
    assert took < 20, took  # the old steps: about a minute here


def test_records_of_the_whole_log_stream(big_log: Path) -> None:
    """The first lines come at once, and the whole log's records take the memory
    ``dump -r`` takes (they were all held, then written)."""
    argv = [sys.executable, "-m", "kmeta", "shell", str(big_log), "-c", "records start end"]
    began = time.monotonic()
    with subprocess.Popen(argv, stdout=subprocess.PIPE) as child:
        assert child.stdout is not None
        first = child.stdout.readline()
        first_at = time.monotonic() - began
        child.kill()
    assert first.startswith(b"baseOffset: 0 "), first
    assert first_at < 8, first_at  # the opening, then the first batch
    # peak memory of a run to the end, in a process of its own
    peak = subprocess.run(
        [sys.executable, "-c", "import resource, subprocess, sys; "
         "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True); "
         "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)", *argv],
        capture_output=True, text=True, check=True, timeout=120)
    assert int(peak.stdout) < 160_000, peak.stdout  # kB: dump -r of it takes ~60 MB


def test_records_of_the_whole_log_page_at_a_prompt(big_log: Path, tmp_path: Path) -> None:
    """At the prompt the first screen of ``records start end`` shows at once, in the
    pager, and q there ends the reply (the rest is never read)."""
    import shutil

    if shutil.which("less") is None:
        pytest.skip("less is not installed")
    from tests.test_shell_tty import PROMPT, _leave, _spawn

    child = _spawn(big_log, tmp_path, PAGER="less -FRX")
    began = time.monotonic()
    child.send("records start end\r")
    child.expect("baseOffset: 0 ", timeout=10)
    shown = time.monotonic() - began
    child.send("q")
    child.expect(PROMPT, timeout=10)
    assert _leave(child) == 0
    assert shown < 8, shown
