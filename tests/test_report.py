"""``kmeta report``: every analysis that applies, one verdict per area, the findings each
once, what to do next as commands that run; on the fixtures and on every real dir."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from kmeta import output_schema as schema
from kmeta.findings import Severity
from kmeta.ops import processes
from kmeta.ops.report import AREAS, build_report
from kmeta.ops.report.areas import area_of
from tests.clirun import run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "data"
CASES = {
    "diverged": [FIXTURES / "divergent" / "diverged" / r for r in "ab"],
    "quorum3": [FIXTURES / "divergent" / "quorum3"],
    "unclean-broker": [FIXTURES / "startup" / "unclean"],
    "consumers": [FIXTURES / "consumers"],
    "tiering": [FIXTURES / "tiering" / "broker"],
    "healthy": [FIXTURES / "healthy"],
    "torn-metadata": [FIXTURES / "corrupt" / "torn-tail"],
    "snapshots": [FIXTURES / "verify" / "v026-no-snapshot-below-start"],
}


def _real(real_data: Path) -> list[Path]:
    return sorted(p for p in real_data.iterdir() if p.is_dir())


def _json(paths: list[Path]) -> list[dict]:
    proc = run("report", "--json", *paths)
    assert proc.returncode in (0, 1), proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def _every_case(real_data: Path) -> list[list[Path]]:
    return [*CASES.values(), *([p] for p in _real(real_data))]


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_json_is_declared_and_the_exit_is_the_worst_findings(case: str) -> None:
    paths = CASES[case]
    objs = _json(paths)
    problems = [p for o in objs for p in schema.check("report", o)]
    assert problems == []
    assert objs[-1]["kind"] == "report_summary"
    assert [o["area"] for o in objs if o["kind"] == "report_area"] == list(AREAS)
    findings = [o for o in objs if o["kind"] == "finding"]
    keys = [json.dumps(f, sort_keys=True) for f in findings]
    assert len(keys) == len(set(keys)), "a finding told twice"
    worst_error = any(f["severity"] == "error" for f in findings)
    assert run("report", *paths).returncode == (1 if worst_error else 0)
    assert objs[-1]["verdict"] == ("error" if worst_error else "warning" if any(
        f["severity"] == "warning" for f in findings) else "ok")


def test_every_real_dir_reports_within_80_columns(real_data: Path) -> None:
    for d in _real(real_data):
        proc = run("report", d, env={"COLUMNS": "80", "NO_COLOR": "1", "PATH": ""})
        assert proc.returncode in (0, 1), (d, proc.stderr)
        assert "Traceback" not in proc.stdout + proc.stderr
        lines = proc.stdout.splitlines()
        assert lines[0].startswith("kmeta report:")
        too_long = [line for line in lines if len(line) > 80]
        assert too_long == [], (d, too_long)
        for name in AREAS:
            assert any(line.startswith(f"{name} ") for line in lines), (d, name)


def test_each_area_has_its_own_findings_and_verify_s_are_all_there(real_data: Path) -> None:
    """A finding belongs to the area whose analysis says it; every finding verify makes
    on the same paths is in the report."""
    for paths in _every_case(real_data):
        report = build_report([str(p) for p in paths])
        for area in report.areas:
            assert all(area_of(f.code) == area.name for f in area.findings)
            worst = area.worst
            assert area.verdict == ("error" if worst is Severity.ERROR else "warning"
                                    if worst is Severity.WARNING else
                                    "none" if area.verdict == "none" else "ok")
        verified = run("verify", "--json", *paths)
        told = {json.dumps(o, sort_keys=True) for o in map(json.loads, verified.stdout.splitlines())
                if o["kind"] == "finding"}
        mine = {json.dumps(f.to_json(), sort_keys=True) for f in report.findings}
        assert told <= mine, (paths, sorted(told - mine)[:3])


def test_what_to_do_next_names_commands_that_run(real_data: Path) -> None:
    """Each command the report suggests is one kmeta accepts: it runs to a verdict (exit 0
    or 1), never a usage error."""
    seen = 0
    for paths in _every_case(real_data):
        for o in _json(paths):
            if o["kind"] != "report_area":
                continue
            for step in o["next_steps"]:
                argv = shlex.split(step["command"])
                assert argv[0] == "kmeta"
                if "repair" in argv:  # its --out is a new directory: ask for the plan only
                    argv = [a for a in argv[:argv.index("--out")]] + ["--dry-run"]
                proc = run(*argv[1:])
                assert proc.returncode in (0, 1), (step, proc.stderr[-500:])
                seen += 1
    assert seen >= 5


def test_the_areas_agree_with_their_commands() -> None:
    """The replicas area's verdict is diff's exit code; the startup area's, startup's."""
    diverged = CASES["diverged"]
    report = build_report([str(p) for p in diverged])
    replicas = next(a for a in report.areas if a.name == "replicas")
    diffed = run("diff", *(p / "__cluster_metadata-0" for p in diverged))
    assert (replicas.verdict == "error") == (diffed.returncode == 1) and replicas.verdict == "error"
    unclean = CASES["unclean-broker"]
    report = build_report([str(p) for p in unclean])
    startup = next(a for a in report.areas if a.name == "startup")
    assert startup.verdict == "error" and run("startup", *unclean).returncode == 1
    assert "records lost on 1" in startup.line


def test_a_report_page_is_not_written_into_an_input(tmp_path: Path) -> None:
    proc = run("report", FIXTURES / "startup" / "unclean", "--html",
               FIXTURES / "startup" / "unclean" / "report.html")
    assert proc.returncode == 2 and "KM005" in proc.stderr
    assert not (FIXTURES / "startup" / "unclean" / "report.html").exists()


def _story(result) -> list[str]:  # noqa: ANN001
    """brokers --json of a result, the log's own findings left out (verify's, in a report)."""
    from kmeta.render.brokers import brokers_json

    return [line for line in brokers_json(result)
            if '"kind":"finding"' not in line or '"code":"V13' in line]


@pytest.mark.parametrize("forked", [False, True])
def test_the_brokers_story_is_heard_in_verify_s_replay(
        forked: bool, real_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The report tells the brokers' lives from verify's one replay of the log (a watch on
    it, in this process or in the replay's child): the story kmeta brokers tells by its
    own replay, line for line, on every fixture and real metadata log it can start the
    same way: a log start no snapshot covers too (the stretch below the snapshot the
    replay starts from is heard first, in this process: lifecycle/log-start)."""
    import kmeta.ops.brokers as brokers_mod
    from kmeta.ops.replay import process as replay_process

    if forked:  # whatever threads pytest runs: the replay forks, its pass takes spans
        monkeypatch.setattr(replay_process, "FORK_ABOVE", 0)
        monkeypatch.setattr(processes, "no_other_thread", lambda: True)
    heard = []
    real_heard = brokers_mod.brokers_heard

    def spy(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        out = real_heard(*args, **kwargs)
        heard.append(out is not None)
        return out

    monkeypatch.setattr(brokers_mod, "brokers_heard", spy)
    dirs = [FIXTURES / "healthy", FIXTURES / "divergent" / "diverged" / "a",
            *sorted(p for p in (FIXTURES / "lifecycle").iterdir() if p.is_dir()),
            real_data / "ldi-poc", real_data / "quorum3-boaz" / "data" / "kafka-1",
            real_data / "kraft32-three" / "data" / "kafka2"]
    for d in dirs:
        report = build_report([str(d)])
        assert report.brokers is not None, d
        lead = max(report.metadata, key=lambda m: m.log_end_offset or -1)
        assert _story(report.brokers) == _story(brokers_mod.brokers(str(lead.path))), d
    assert heard == [True] * len(dirs)


@pytest.mark.parametrize("where", ["missing-dir/report.html", ".", "proc"])
def test_an_unusable_page_path_is_one_line_and_a_usage_error(where: str, tmp_path: Path
                                                              ) -> None:
    """A folder that is not there, a directory, a place that cannot be written: one line
    naming the path, exit 2, before any analysis runs (it was an internal error)."""
    target = "/proc/report.html" if where == "proc" else str(tmp_path / where)
    proc = run("report", FIXTURES / "healthy", "--html", target)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--html" in lines[0] and "internal error" not in lines[0]


def test_a_damaged_file_given_alone_is_verified_as_itself(tmp_path: Path) -> None:
    """What to do next names the file itself when it is in no partition dir (a segment's
    name: a file of no Kafka name or bytes is refused, exit 3)."""
    text = tmp_path / "00000000000000000000.log"
    text.write_text("# not a segment\n" * 50)
    objs = _json([text])
    commands = [s["command"] for o in objs if o["kind"] == "report_area"
                for s in o["next_steps"]]
    assert commands == [f"kmeta verify {text}"]


def test_a_long_command_is_broken_where_a_shell_joins_it() -> None:
    """A suggested command wider than the terminal is continued with a backslash between
    arguments: pasted, it is the one command (a folded line pasted as two)."""
    from kmeta.render.report.text import command_lines

    args = ["diff", "/srv/copies/controller-1/data", "/srv/copies/controller-2/data",
            "/srv/copies/controller-3/data with space"]
    lines = list(command_lines(args, 50))
    assert len(lines) > 1 and all(len(line) <= 50 for line in lines)
    assert all(line.endswith(" \\") for line in lines[:-1])
    joined = " ".join(line.removesuffix("\\").strip() for line in lines)
    assert shlex.split(joined) == ["kmeta", *args]
    assert list(command_lines(args, None)) == ["    " + shlex.join(["kmeta", *args])]


def test_consumers_are_read_where_the_commits_are(real_data: Path) -> None:
    """kraft32-three's commits are in kafka2's __consumer_offsets (kafka1's and kafka3's
    hold none): the report reads the dir holding most of them."""
    report = build_report([str(real_data / "kraft32-three")], pictures=False)
    assert report.consumers is not None and report.consumers.rows
    assert report.consumers_dir is not None and report.consumers_dir.name == "kafka2"


@pytest.mark.parametrize("forked", [False, True])
def test_retention_is_tallied_by_verify_s_pass(forked: bool, real_data: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The report's retention reads the headers through verify's pass (a LogTally it
    drives, whole spans at once where the replay is forked): what kmeta retention reads
    by its own pass, on every fixture and real metadata log."""
    from kmeta.ops.replay import process as replay_process
    from kmeta.ops.retention import retention

    if forked:
        monkeypatch.setattr(replay_process, "FORK_ABOVE", 0)
        monkeypatch.setattr(processes, "no_other_thread", lambda: True)
    dirs = sorted({p.parent.parent for root in (FIXTURES, real_data)
                   for p in root.rglob("__cluster_metadata-0/*.log")})
    compared = 0
    for d in dirs:
        for got in build_report([str(d)]).retention:
            want = retention(str(got.partition))
            assert _retention_facts(got) == _retention_facts(want), got.partition
            compared += 1
    assert compared > 20


def _retention_facts(r) -> tuple:  # noqa: ANN001
    plan = r.plan and (r.plan.segment_bytes, r.plan.snapshot_facts, r.plan.steps,
                       r.plan.stopped)
    return (r.snapshots, r.segments, r.log_start, r.log_end, r.now, r.startup, r.refusal,
            plan)


@pytest.mark.parametrize("case", ["unclean-broker", "quorum3", "healthy", "torn-metadata",
                                  "clean-but-cut", "inconsistent", "two-logs",
                                  "startup-brokers", "startup-offsets", "placement"])
def test_startup_made_ahead_and_beside_is_the_startup_made_after_verify(
        case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The report's startup loads each log where verify's worker checks it (before the
    image is known) and, above 64 MiB, recovers the metadata log in a process beside
    verify's pass: the report is the one startup made wholly after verify gives, on
    fixtures that take either way."""
    from kmeta.ops.report import build as build_module
    from kmeta.ops.startup import manager
    from kmeta.render.report.text import report_json

    kraftstart = FIXTURES / "kraftstart"
    paths = CASES.get(case) or _MORE.get(case) or [kraftstart / case]
    made = list(report_json(build_report([str(p) for p in paths])))
    used = []
    real = manager.load_partition

    def counted(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        used.append(args[1])
        return real(*args, **kwargs)

    # made ahead: plan_startup loads no log again but where the image's config differs
    monkeypatch.setattr(processes, "default_jobs", lambda: 1)  # checked here, counted
    monkeypatch.setattr(manager, "load_partition", counted)
    assert list(report_json(build_report([str(p) for p in paths]))) == made, case
    assert len(used) == len(set(used)), used  # each log loaded once
    # nothing ahead, the metadata log recovered beside
    monkeypatch.setattr(build_module, "_ahead_loader", lambda: lambda _path, _seen, imaged: None)
    monkeypatch.setattr(build_module, "_RECOVER_BESIDE", -1)
    assert list(report_json(build_report([str(p) for p in paths]))) == made, case
    assert any('"area":"startup"' in line for line in made)


def test_startup_loads_ahead_the_logs_of_the_current_dir(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``kmeta report .`` in a data dir: the logs loaded where verify checks them are
    taken (their log dir is the current dir, named ``.``), none loaded twice."""
    from kmeta.ops.startup import manager
    from kmeta.render.report.text import report_json

    data = FIXTURES / "placement" / "jbod" / "logs-a"
    want = [line.replace(str(data), ".") for line in report_json(build_report([str(data)]))]
    used = []
    real = manager.load_partition

    def counted(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        used.append(str(args[1]))
        return real(*args, **kwargs)

    monkeypatch.chdir(data)
    monkeypatch.setattr(processes, "default_jobs", lambda: 1)
    monkeypatch.setattr(manager, "load_partition", counted)
    got = list(report_json(build_report(["."])))
    assert len(used) == len(set(used)) == 6, used
    assert [json.loads(line) for line in got if '"area":"startup"' in line] == \
        [json.loads(line) for line in want if '"area":"startup"' in line]


_MORE = {"startup-brokers": [FIXTURES / "startup" / "brokers"],
         "startup-offsets": [FIXTURES / "startup" / "offsets"],
         "placement": [FIXTURES / "placement"]}
