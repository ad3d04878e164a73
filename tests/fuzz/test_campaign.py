"""The fuzz campaign in the normal test suite: a fixed seed, a bounded number of cases
(about a minute and a half here), the hostile-environment pass, and tests that show the
harness's judges can fail.  A long campaign runs by hand: ``python -m tests.fuzz``."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from . import campaign as cp
from .campaign import Campaign
from .hostile import run_hostile
from .known import OPEN_BUGS, open_bug
from .oracle import batches, segment_files, tree_changes, tree_fingerprint, valid_prefix
from .runner import DOCUMENTED, Outcome, classify, run_inprocess, run_subprocess
from .seeds import DAMAGED, FIXTURES, METADATA_DIR, Seed, copy_tree, damaged_partition, damaged_seed

CI_SEED = 20241125
CI_CASES = 60
CI_SECONDS = 80.0  # a loaded machine runs fewer cases rather than blow the budget
HEALTHY = Seed("fixtures/healthy", FIXTURES / "healthy")


def _unexpected(stats: cp.Stats) -> list[str]:
    return [f"case {f.case.index} ({f.case.seed.name}, {f.case.file}: {f.case.mutations}) "
            f"{f.command}: {f.outcome.kind}: {f.outcome.detail}\n{f.outcome.stderr[-800:]}"
            for f in stats.failures if open_bug(f.signature) is None]


@pytest.mark.slow
def test_mutation_campaign(tmp_path: Path) -> None:
    camp = Campaign(CI_SEED, tmp_path / "work", tmp_path / "failures", commands_per_case=4,
                    timeout=20.0, minimise=False, subprocess_every=15,
                    terminal_every=12)
    stats = camp.run(cases=CI_CASES, seconds=CI_SECONDS)
    print(stats.summary())
    assert stats.cases >= 10, stats.summary()
    assert stats.terminal_runs > 0, stats.summary()
    assert stats.outcomes["ok"] > 0
    assert not _unexpected(stats), "\n\n".join(_unexpected(stats))


@pytest.mark.slow
def test_hostile_environment(tmp_path: Path) -> None:
    camp = Campaign(CI_SEED, tmp_path / "work", tmp_path / "failures", timeout=20.0,
                    minimise=False, seeds=[HEALTHY])
    run_hostile(camp, subprocess=False, commands=("dump", "verify", "repair-dry-run"))
    print(camp.stats.summary())
    assert not _unexpected(camp.stats), "\n\n".join(_unexpected(camp.stats))


# -- the judges can fail -------------------------------------------------------------------

def test_valid_prefix_of_a_healthy_log_is_every_batch() -> None:
    meta = FIXTURES / "healthy" / METADATA_DIR
    every = [b for seg in segment_files(meta) for b in batches(seg.read_bytes())]
    assert len(every) > 1000
    assert valid_prefix(meta) == every


def test_valid_prefix_stops_at_an_offset_gap(tmp_path: Path) -> None:
    meta = tmp_path / "m"
    copy_tree(FIXTURES / "healthy" / METADATA_DIR, meta)
    first = segment_files(meta)[0]
    data = first.read_bytes()
    found = batches(data)
    third = found[2]
    first.write_bytes(data[:third.position] + data[third.position + third.size:])
    assert [b.base_offset for b in valid_prefix(meta)] == [b.base_offset for b in found[:2]]


def test_a_batch_missing_from_repairs_output_is_seen(tmp_path: Path) -> None:
    meta = FIXTURES / "healthy" / METADATA_DIR
    out = tmp_path / "out"
    copy_tree(meta, out)
    prefix = valid_prefix(meta)
    assert cp._lost_batches(prefix, out) == []
    seg = segment_files(out)[0]
    data = seg.read_bytes()
    seg.write_bytes(data[:prefix[5].position] + data[prefix[5].position + prefix[5].size:])
    assert cp._lost_batches(prefix, out) == [prefix[5].base_offset]


def test_an_input_written_by_a_command_is_seen(tmp_path: Path) -> None:
    # repair --in-place does write its input: the harness must notice
    root = tmp_path / "data"
    copy_tree(FIXTURES / "corrupt" / "torn-tail", root)
    before = tree_fingerprint(root)
    got = run_inprocess(["repair", str(root / METADATA_DIR), "--in-place", "--backup",
                         str(tmp_path / "backup")], 30, 1 << 20)
    assert got.exit_code in (0, 1), got.stderr
    assert tree_changes(before, tree_fingerprint(root))


@pytest.mark.parametrize("code, stderr, timed_out, peak, kind", [
    (0, "", False, 0, "ok"), (1, "kmeta: 3 finding(s)", False, 0, "ok"), (3, "x", False, 0, "ok"),
    (70, "kmeta: internal error: KeyError", False, 0, "internal"),
    (1, "Traceback (most recent call last):\n", False, 0, "internal"),
    (4, "", False, 0, "internal"), (None, "", True, 0, "hang"),
    (70, "kmeta: internal error: MemoryError", False, 0, "memory"),
    (0, "", False, 1 << 40, "memory"),
])
def test_classifier(code, stderr, timed_out, peak, kind) -> None:
    assert classify(code, stderr, 1.0, peak, 200 << 20, timed_out)[0] == kind


def test_inprocess_runner_sees_hangs_and_escapes(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from kmeta import cli

    monkeypatch.setattr(cli, "main", lambda argv, env: time.sleep(10))
    assert run_inprocess(["verify", "x"], 0.3, 0).kind == "hang"
    monkeypatch.setattr(cli, "main",
                        lambda argv, env: (_ for _ in ()).throw(GeneratorExit()))
    assert run_inprocess(["verify", "x"], 5, 0).kind == "internal"


def test_a_clean_verdict_on_a_flipped_log_is_missed_damage(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    camp = Campaign(1, tmp_path / "work", None, seeds=[HEALTHY], minimise=False)
    root = tmp_path / "case"
    copy_tree(HEALTHY.path, root)
    seg = segment_files(root / METADATA_DIR)[0]
    original = seg.read_bytes()
    b = batches(original)[3]
    flipped = bytearray(original)
    flipped[b.position + 30] ^= 4
    seg.write_bytes(bytes(flipped))
    what = f"bit flip at [{b.position + 30}]"
    assert cp._flips_inside_crc(original, what, seg)
    case = cp.Case(0, HEALTHY, str(seg.relative_to(root)), [f"bit_flip: {what}"], ["verify"],
                   crc_damage=True)
    assert camp.run_command(case, root, "verify", 0) is None  # kmeta itself says exit 1
    monkeypatch.setattr(cp, "run_inprocess", lambda *a: Outcome("ok", 0, 0.1))
    failure = camp.run_command(case, root, "verify", 0)
    assert failure is not None and failure.outcome.kind == "missed-damage"


def test_a_compiled_core_that_prints_other_bytes_is_a_twin_mismatch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kmeta.formats import runs

    camp = Campaign(1, tmp_path / "work", None, seeds=[HEALTHY], minimise=False)
    root = tmp_path / "case"
    copy_tree(HEALTHY.path, root)
    case = cp.Case(0, HEALTHY, "x", [], ["dump-json"])
    assert camp.run_command(case, root, "dump-json", 0) is None
    fill = runs.fill

    def wrong(raw: bytes, count: int, *rest: object) -> str | bytes:
        # a run's text, but not the one-batch text the template is checked against (as
        # text, or as the bytes a dump writes as they are)
        text = fill(raw, count, *rest)
        if count <= 1:
            return text
        if type(text) is bytes:
            return text.replace(b'"crc_valid":true', b'"crc_valid":false')
        return text.replace('"crc_valid":true', '"crc_valid":false')

    monkeypatch.setattr(runs, "fill", wrong)
    failure = camp.run_command(case, root, "dump-json", 0)
    assert failure is not None and failure.outcome.kind == "twin-mismatch"


def test_a_compiled_replay_loop_that_applies_otherwise_is_a_twin_mismatch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kmeta.ops.replay import engine as replay

    if replay._compiled_changes is None:
        pytest.skip("the compiled core is not built")
    camp = Campaign(1, tmp_path / "work", None, seeds=[HEALTHY], minimise=False)
    root = tmp_path / "case"
    copy_tree(HEALTHY.path, root)
    case = cp.Case(0, HEALTHY, "x", [], ["verify-json"])
    assert camp.run_command(case, root, "verify-json", 0) is None
    real = replay._compiled_changes

    def wrong(values: list, offsets: list, i: int, image: object, *rest: object) -> tuple:
        # every partition change taken, the leader's epoch left behind
        got = real(values, offsets, i, image, *rest)
        for topic in image.topics.values():  # type: ignore[attr-defined]
            for p in topic["partitions"].values():
                p["leaderEpoch"] = -7
        return got

    monkeypatch.setattr(replay, "_compiled_changes", wrong)
    failure = camp.run_command(case, root, "verify-json", 0)
    assert failure is not None and failure.outcome.kind == "twin-mismatch"
    assert "second process" in failure.outcome.detail


# -- classes the campaign found, fixed: each repro must stay a documented outcome ----------

def _diff_legacy(tmp_path: Path) -> Outcome:
    root = tmp_path / "in"
    copy_tree(FIXTURES / "verify" / "v010-legacy-message", root)
    return run_inprocess(["truncate", str(root / METADATA_DIR), "--to", "1"], 30, 1 << 20)


def _stdout_full(tmp_path: Path) -> Outcome:
    root = tmp_path / "in"
    copy_tree(HEALTHY.path, root)
    return run_subprocess(["verify", str(root)], 30, 1 << 20, stdout="/dev/full")


def _non_utf8_name(tmp_path: Path) -> Outcome:
    root = tmp_path / "in"
    copy_tree(HEALTHY.path, root)
    seg = root / METADATA_DIR / "00000000000000000000.log"
    shutil.copyfile(seg, os.fsencode(seg.parent) + b"/0000000000000000\xff\xfe.log")
    return run_inprocess(["verify", str(root)], 30, 1 << 20)  # stdout: strict UTF-8


def _lone_null_value(tmp_path: Path) -> Outcome:
    # The first small lone record of a scan, memoised with a null value, was never decoded
    # (its payload stayed None): verify of such a bootstrap.checkpoint ended in exit 70.
    from kmeta.formats.batch import build_batch

    root = tmp_path / "in"
    root.mkdir()
    (root / "bootstrap.checkpoint").write_bytes(build_batch(0, [(None, None)]))
    return run_inprocess(["verify", str(root)], 30, 1 << 20)


def _compact_write_damaged(how: str) -> Callable[[Path], Outcome]:
    """compact --write, with and without --roll, on a damaged partition: it ended in an
    internal error (offsets outside their segment), or wrote a log verify rejects (a
    bad CRC).  Judged by the campaign, the output check included."""
    def repro(tmp_path: Path) -> Outcome:
        seed = Seed(f"damaged/{how}", damaged_seed(how))
        camp = Campaign(1, tmp_path / "work", None, seeds=[seed], minimise=False)
        root = tmp_path / "case"
        damaged_partition(how, root / "orders-0")
        case = cp.Case(0, seed, "orders-0/00000000000000000000.log", [how], [])
        for n, command in enumerate(("compact-write", "compact-roll-write")):
            failure = camp.run_command(case, root, command, n)
            if failure is not None:
                return failure.outcome
        # both read the damage and said so (exit 1), not a usage error
        if camp.stats.exit_codes != {1: 2}:
            return Outcome("internal", None, 0.0, f"exit codes {camp.stats.exit_codes}")
        return Outcome("ok", 1, 0.0)
    return repro


FIXED = {"diff-legacy-records-count": _diff_legacy, "stdout-write-error": _stdout_full,
         "non-utf8-name-utf8-locale": _non_utf8_name, "lone-null-value": _lone_null_value,
         **{f"compact-write-{how}": _compact_write_damaged(how) for how in DAMAGED}}


def test_no_open_bug_lacks_a_repro() -> None:
    # an entry of known.py must come with a strict-xfail repro here before it is tolerated
    assert not OPEN_BUGS, "add a repro and a strict xfail for each open bug"


@pytest.mark.parametrize("name", sorted(FIXED))
def test_fixed_class_stays_fixed(name: str, tmp_path: Path) -> None:
    got = FIXED[name](tmp_path)
    assert got.exit_code in DOCUMENTED and not got.failed, f"{name}: {got.detail}"
    assert open_bug(name) is None


def test_saved_case_reproduces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a failure is saved with its input, argv relative to the folder, and a repro script
    camp = Campaign(1, tmp_path / "work", tmp_path / "out", seeds=[HEALTHY], minimise=False)
    root = tmp_path / "work" / "case-0"
    copy_tree(FIXTURES / "verify" / "v010-legacy-message", root)
    case = cp.Case(0, HEALTHY, f"{METADATA_DIR}/x", ["none"], ["truncate"])
    assert camp.run_command(case, root, "truncate", 0) is None  # the legacy class is fixed
    # a failure stood in for by the runner: what is saved must replay it
    monkeypatch.setattr(cp, "run_inprocess",
                        lambda *a: Outcome("internal", 70, 0.1, "TypeError: stand-in"))
    failure = camp.run_command(case, root, "truncate", 0)
    assert failure is not None
    camp.record(failure, root)
    saved = tmp_path / "out" / failure.outcome.kind / "case-0-truncate"
    assert (saved / "input" / METADATA_DIR).is_dir()
    assert "input/" + METADATA_DIR in (saved / "repro.sh").read_text()
    shutil.rmtree(root)


def test_semantic_mutation_of_a_record_with_bytes_fields() -> None:
    # A SCRAM credential decodes to bytes (salt, keys): the mutator once copied records
    # through JSON and the 60-minute campaign died on one, 55 minutes in.
    import random

    from kmeta.formats.batch import build_batch
    from kmeta.formats.payload import encode_metadata

    from .mutators import semantic_record

    value = encode_metadata("USER_SCRAM_CREDENTIAL_RECORD", 0, {
        "name": "alice", "mechanism": 1, "salt": b"salt", "storedKey": b"k" * 32,
        "serverKey": b"s" * 32, "iterations": 4096})
    data = build_batch(0, [(None, value)])
    changed = [semantic_record(random.Random(seed), data, [data]) for seed in range(40)]
    assert any(c is not None for c in changed)


def test_every_command_is_driven() -> None:
    import typer.main

    from kmeta.cli import NO_INPUT, app

    commands = {c.name for c in typer.main.get_command(app).commands.values()} - NO_INPUT  # type: ignore[attr-defined]
    driven = {words[0] for words in {**cp.COMMANDS, **cp.HEAVY}.values()}
    assert commands and commands <= driven, commands - driven


def test_an_output_verify_rejects_is_a_bad_output(tmp_path: Path) -> None:
    good = tmp_path / "good"
    copy_tree(FIXTURES / "compaction" / "tombstones", good)
    outcome = Outcome("ok", 0, 0.1)
    cp._check_output(outcome, good, 20.0)
    assert outcome.kind == "ok", outcome.detail
    bad = damaged_partition("bit-flip", tmp_path / "bad" / "orders-0").parent
    cp._check_output(outcome, bad, 20.0)
    assert outcome.kind == "bad-output" and "F001" in outcome.detail
    # an output left behind by a command that refused (exit 2) is one too
    refused = Outcome("ok", 2, 0.1)
    cp._check_output(refused, good, 20.0)
    assert refused.kind == "bad-output"
    # an {outdir} made empty for the command and left empty is no output
    empty = Outcome("ok", 2, 0.1)
    (tmp_path / "empty").mkdir()
    cp._check_output(empty, tmp_path / "empty", 20.0)
    assert empty.kind == "ok"


def test_export_tasks_read_every_table(tmp_path: Path) -> None:
    from kmeta.ops.export import TABLES

    from .runner import export_tasks

    got = run_inprocess(["export", str(tmp_path / "out"), str(HEALTHY.path)], 120, 1 << 20,
                        export_tasks)
    assert got.kind == "ok" and got.exit_code == 0, got.stderr
    counts = dict(line.rsplit(" ", 1) for line in got.stdout.decode().splitlines())
    assert set(TABLES) <= set(counts) and int(counts["batches"]) > 1000
    nothing = run_inprocess(["export", str(tmp_path / "o2"), "/etc"], 60, 1 << 20, export_tasks)
    assert nothing.kind == "ok", nothing.detail


@pytest.mark.parametrize(("raw", "code", "kind"), [
    (b"clean: 0 error(s)\r\n", 0, "ok"),
    (b"x" * 81 + b"\r\n", 1, "terminal"),
    (b"verify \xe2\x94\x81\xe2\x94\x81\xe2\x94\x81\xe2\x94\x81 1.0/2.0 MB 3.0 MB/s 0:00:01\r\n",
     0, "terminal"),
    (b"kmeta: internal error: KeyError: 'x'\r\n", 70, "internal"),
    (b"Traceback (most recent call last):\r\n", 1, "internal"),
    (b"", 4, "internal"),
])
def test_a_terminal_run_is_judged_as_a_person_sees_it(
        raw: bytes, code: int, kind: str, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    """A case run again in a pseudo-terminal fails as ``terminal`` on a line wider than
    the screen or a bar left on it, as ``internal`` on a crash or an undocumented
    status: the screens here are the bytes such runs write, rendered by the emulator."""
    import tests.terminal as terminal

    from .runner import run_terminal

    monkeypatch.setattr(terminal, "run_in_terminal", lambda args, **how: terminal.render(
        args, raw, exit_code=code))
    outcome = run_terminal(["verify", "x"], 5, tmp_path)
    assert outcome.kind == kind, outcome


@pytest.mark.slow
def test_a_terminal_run_of_a_healthy_log_is_ok(tmp_path: Path) -> None:
    """The real thing once: kmeta in a pseudo-terminal on a healthy fixture."""
    from .runner import run_terminal

    outcome = run_terminal(["verify", str(FIXTURES / "healthy")], 60, tmp_path)
    assert (outcome.kind, outcome.exit_code) == ("ok", 0), outcome
