"""``kmeta report`` and ``kmeta brokers``: the sentences that sum the findings up say what
the findings under them say (issue 32, point 6), in one vocabulary (point 5), and the
fuzz campaign's report crashes stay fixed; each input built here with kmeta's writer."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from clirun import run

from kmeta.formats.checksum import crc32c
from kmeta.formats.payload import encode_metadata
from kmeta.storage import writer as W

T0 = 1_700_000_000_000


def _feature_level(level: int = 21) -> bytes:
    return encode_metadata("FEATURE_LEVEL_RECORD", 0,
                           {"name": "metadata.version", "featureLevel": level})


def test_a_lone_bootstrap_checkpoint_with_a_corrupt_zstd_batch_is_reported(
        tmp_path: Path) -> None:
    """Fuzz: its SnapshotHeader batch claims zstd (CRC still good): the snapshots area has
    a finding and no metadata replica to point retention at (max() of nothing)."""
    path = W.write_bootstrap_checkpoint(tmp_path, [_feature_level()], timestamp=T0)
    data = bytearray(path.read_bytes())
    attributes = struct.unpack_from(">h", data, 21)[0]
    struct.pack_into(">h", data, 21, attributes | 4)  # zstd
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:83])))
    path.write_bytes(bytes(data))
    proc = run("report", tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "internal error" not in proc.stderr
    lines = proc.stdout.splitlines()
    snapshots = next(line for line in lines if line.startswith("snapshots "))
    assert "ERROR" in snapshots and snapshots.split("ERROR", 1)[1].strip(" [1]")
    # the command it points to reads what it names
    assert f"kmeta verify {tmp_path}" in proc.stdout
    objs = [json.loads(line) for line in run("report", "--json", tmp_path).stdout.splitlines()]
    assert any(o.get("code") == "V021" for o in objs)


# ------------------------------------------------------------------- time axes


def test_an_axis_ticks_as_few_as_fit_however_long_its_domain() -> None:
    from kmeta.render.report.svg import Scale

    for lo, hi in ((T0, 72_000_000_000_000_000), (0, 2**63 - 1), (-2**63, 2**63 - 1),
                   (T0, T0 + 5_000)):
        for time in (True, False):
            ticks = Scale(lo, hi, 100, 1000).ticks(time=time)
            assert 1 <= len(ticks) <= 12, (lo, hi, time, len(ticks))


def _metadata_log(root: Path, stamps: list[int], epoch: int = 1) -> Path:
    part = root / "__cluster_metadata-0"
    W.write_segments(part, [W.noop_batch(i, epoch, ts) for i, ts in enumerate(stamps)])
    return part


def test_a_corrupt_timestamp_of_year_two_million_is_left_off_the_time_axes(
        tmp_path: Path) -> None:
    """Fuzz: one batch stamped in year ~2.28 million put a tick per year on the axis
    (a 275 MB page); now it is left off every time axis, and the page says so."""
    stamps = [T0 + i * 1000 for i in range(50)]
    stamps[25] = 72_000_000_000_000_000
    _metadata_log(tmp_path / "node", stamps)
    page = tmp_path / "report.html"
    proc = run("report", "--html", page, tmp_path / "node")
    assert proc.returncode in (0, 1), proc.stderr
    html = page.read_text()
    assert len(html) < 1_000_000
    assert "1 implausible time(s) left off the axis: year 2,283,559 (72000000000000000 ms)" in html
    import re

    years = {int(y) for y in re.findall(r'class="tick"[^>]*>(\d{4})-', html)}
    assert years <= {2023}, years


# ------------------------------------------------------------------- brokers' line


def _area(paths: list[Path], name: str) -> str:
    proc = run("report", *paths)
    assert proc.returncode in (0, 1), proc.stderr
    return next(line for line in proc.stdout.splitlines() if line.startswith(f"{name} "))


def test_a_quorum_is_its_voters_and_crashes_the_log_cannot_judge_are_a_question(
        real_data: Path) -> None:
    """quorum3-boaz: Kafka 3.5, three combined nodes, no RegisterControllerRecord (3.7
    on): its quorum is the LeaderChange's three voters, not "0 controllers"; its brokers'
    restarts followed fences that cannot tell (their CRASHES column says ?), so the sum
    is ?, not 0."""
    line = _area([real_data / "quorum3-boaz"], "brokers")
    assert "3 brokers, 3 voters; ? crashes, 5 fences" in line, line
    text = run("brokers", real_data / "quorum3-boaz" / "data" / "kafka-3").stdout
    assert "quorum voters: 1, 2, 3 (from the LeaderChange of epoch 32)" in text
    alone = run("brokers", real_data / "data-store").stdout
    assert "quorum voters: 1 (from quorum-state)" in alone
    # its three brokers' last fences cannot tell (they led nothing): ? as well
    assert "3 brokers, 3 voters; ? crashes" in _area([real_data / "kraft32-three"], "brokers")


def test_the_crash_count_is_the_crash_findings_count() -> None:
    from conftest import FIXTURES

    for name, told in (("new-mv", "1 crash,"), ("combined", "at least 1 crash,"),
                       ("idle", "at least 1 crash,")):
        path = FIXTURES / "lifecycle" / name
        objs = [json.loads(line) for line in run("report", "--json", path).stdout.splitlines()]
        crashes = sum(1 for o in objs if o.get("code") == "V131")
        assert crashes == 1, name
        assert told in _area([path], "brokers"), name


def test_brokers_summary_names_the_log_end_offset_as_every_command_does(
        real_data: Path) -> None:
    objs = [json.loads(line) for line in
            run("brokers", "--json", real_data / "kraft41-offsets").stdout.splitlines()]
    summary = objs[-1]
    assert summary["kind"] == "brokers_summary"
    assert summary["log_end_offset"] == 1192 and "end_offset" not in summary
    assert summary["voters"] == [1] and summary["voters_from"] == "the LeaderChange of epoch 1"


def test_a_replica_without_its_log_has_its_epoch_cache_and_no_made_up_bounds(
        real_data: Path) -> None:
    """data-store: the log segment was not kept; its leader-epoch-checkpoint holds 15
    entries. report_replica said 0..0 and an empty epoch cache, then null..null where
    info says 63224..63224 (Kafka makes the log anew at the latest snapshot's end): report,
    brokers and info now give one answer."""
    objs = [json.loads(line) for line in
            run("report", "--json", real_data / "data-store").stdout.splitlines()]
    replica = next(o for o in objs if o["kind"] == "report_replica")
    assert (replica["log_start_offset"], replica["log_end_offset"]) == (63224, 63224)
    info = [json.loads(line) for line in
            run("info", "--json", real_data / "data-store").stdout.splitlines()]
    part = next(o for o in info if o["kind"] == "partition_dir")
    assert (part["log_start_offset"], part["log_end_offset"]) == (63224, 63224)
    summary = [json.loads(line) for line in
               run("brokers", "--json", real_data / "data-store").stdout.splitlines()][-1]
    assert summary["kind"] == "brokers_summary" and summary["log_end_offset"] == 63224
    assert len(replica["epoch_cache"]) == 15
    assert replica["epoch_cache"][-1] == {"epoch": 15, "start_offset": 77314}
    text = run("report", real_data / "data-store").stdout
    assert "metadata log: no segment left (kafka-data), snapshots to 63,224" in text
    assert "0..0" not in text


def test_under_an_error_the_first_next_step_is_the_error_s() -> None:
    """A warning whose hint says "nothing is lost" (V181) met before an error whose
    records are lost (V190): the area's verdict is ERROR, so its step is the error's."""
    from kmeta.findings import HINTS, Finding
    from kmeta.ops.report import Report
    from kmeta.ops.report.areas import next_steps

    found = [Finding("V181", "a stray kept as -stray", "/d/t-0-stray"),
             Finding("V190", "t-1 is missing and its records are lost", "/d")]
    steps = next_steps(Report(["/d"]), "logs", found)
    assert "nothing is lost" not in steps[0][0]
    assert steps[0][0] == HINTS["V190"]


def test_report_accepts_all_as_its_folded_lines_say(real_data: Path) -> None:
    """ldi-poc: 51 V198 findings fold into one line ending "(--all lists each)"; report
    --all lists each."""
    folded = run("report", real_data / "ldi-poc")
    assert "V198 info x51" in folded.stdout and "(--all lists each)" in folded.stdout
    every = run("report", "--all", real_data / "ldi-poc")
    assert every.returncode == folded.returncode == 1, every.stderr
    lines = every.stdout.splitlines()
    assert sum(1 for line in lines if line.startswith("!! V198 info:")) == 51
    assert "(--all lists each)" not in every.stdout
    assert lines[-1] == "kmeta: 56 finding(s): 1 error(s), 2 warning(s), 53 info"


def test_a_divergence_has_one_direction_in_the_area_line_and_its_finding() -> None:
    from conftest import DIVERGENT

    pair = [DIVERGENT / "diverged" / r for r in "ab"]
    proc = run("report", *pair)
    line = next(x for x in proc.stdout.splitlines() if x.startswith("replicas "))
    finding = next(x for x in proc.stdout.splitlines() if x.startswith("!! V160"))
    assert "a diverged from b at offset 335" in line, line
    assert finding.startswith("!! V160 error: a/") and "diverged from" in finding
    assert finding.split("diverged from ")[1].startswith(str(DIVERGENT / "diverged" / "b"))


# ------------------------------------------------------------------- the page


def test_the_page_says_how_many_findings_and_which_command_lists_the_rest() -> None:
    from kmeta.findings import Finding
    from kmeta.ops.report import Report
    from kmeta.render.report.html import MOST_FINDING_ROWS, report_html

    report = Report(["/d"])
    report.findings = [Finding("V197", f"duplicate logs of t-{i}", f"/d/t-{i}")
                       for i in range(MOST_FINDING_ROWS + 345)] + \
        [Finding("V177", "no .kafka_cleanshutdown", "/d")]
    html = report_html(report)
    total = MOST_FINDING_ROWS + 346
    assert f"{total:,} findings ({total - 1:,} errors, 1 warning): the table lists the " \
        f"first {MOST_FINDING_ROWS:,} (errors first); the other 346 are not on this page" \
        in html
    assert "<code>kmeta report --all /d</code> lists every one" in html
    assert f'data-total="{total}"' in html


def test_a_partition_an_error_names_from_its_checkpoint_file_is_not_green() -> None:
    """V035 is said of recovery-point-offset-checkpoint ("orders-1 at offset 40, beyond
    its log end"): the partitions picture drew orders-1 as having no finding."""
    from kmeta.findings import Finding
    from kmeta.ops.report import Report
    from kmeta.render.report.pictures import partitions

    report = Report(["/d"])
    report.partitions = {("orders", 0): [Path("/d/orders-0")],
                         ("orders", 1): [Path("/d/orders-1")]}
    found = [Finding("V035", "orders-1 at offset 40, beyond its log end offset 39",
                     "/d/recovery-point-offset-checkpoint", offset=40)]
    svg = partitions(report, found)
    import re

    kinds = dict(re.findall(r'class="span (p-\w+)"[^>]*><title>([\w.-]+?):', svg))
    assert kinds == {"p-ok": "orders-0", "p-error": "orders-1"}


def test_a_consumer_s_partition_whose_dir_is_here_is_not_said_absent(tmp_path: Path) -> None:
    """A committed position in a partition whose dir is on the paths but holds no
    segment: its log bounds are unknown, the partition is not "not on these paths"."""
    import shutil

    from conftest import FIXTURES

    node = tmp_path / "node1"
    shutil.copytree(FIXTURES / "consumers" / "node1", node)
    for f in (node / "orders-1").iterdir():
        if f.suffix in (".log", ".index", ".timeindex"):
            f.unlink()
    page = tmp_path / "r.html"
    assert run("report", "--html", page, node).returncode in (0, 1)
    html = page.read_text()
    row = html[html.index('<td>orders-1</td>'):]
    row = row[:row.index("</tr>")]
    assert "not on these paths" not in row
    assert "dir here, bounds unknown" in row and "its dir holds no segment" in row


def test_a_long_topic_name_is_shortened_to_fit_never_cut_at_the_edge() -> None:
    from kmeta.render.report.svg import Chart, Lane, Span

    name = "payments.europe.card-authorisations.settlement.retry.dead-letter.v12"
    chart = Chart("t", [Lane(name, [Span(0, 1, "p-ok", "x")]), Lane("audit", [])], 0, 2)
    svg = chart.svg()
    import re

    width = int(re.search(r'<line class="axis" x1="(\d+)"', svg)[1])
    label = re.search(r'class="lane-label"[^>]*>([^<]*)<title>([^<]*)', svg)
    assert len(label[1]) * 7.5 <= width - 8  # ends at width - 8, starts at 0 or right of it
    assert label[1].startswith("payments.europe") and label[1].endswith("dead-letter.v12")
    assert label[2] == name  # whole on hover


# ------------------------------------------- the brokers' story: times, silences, restarts

MINUTE, DAY = 60_000, 86_400_000


def _story():  # noqa: ANN202
    """fixtures/generate.py's scripted lifecycle log (the lifecycle fixtures' writer)."""
    from test_fixtures import generator

    g = generator()
    s = g.Lifecycle(21, 7)
    s.leader_change(0, 3000, (3000, 3001, 3002))
    s.records(100, [("FEATURE_LEVEL_RECORD", {"name": "metadata.version",
                                              "featureLevel": 21})])
    g._register_controllers(s, 200, (3000, 3001, 3002))
    for b in (1, 2):
        s.register(1000 * b, b)
        s.unfence(1000 * b + 500, b)
    s.create_topic(10_000, "pay", 4, [1, 2], rf=2)
    s.noops(10_000)
    return g, s


def test_the_to_time_is_the_newest_batch_not_the_last(tmp_path: Path) -> None:
    """The last batches stamped two days before the ones before them (a clock set back):
    the log's times run to its newest batch, not its last."""
    g, s = _story()
    s.fence(20 * MINUTE, 2)
    s.noops(20 * MINUTE - 2 * DAY, 3)
    s.write(tmp_path / "n" / "__cluster_metadata-0")
    summary = json.loads(run("brokers", "--json", tmp_path / "n").stdout.splitlines()[-1])
    assert summary["last_timestamp"] == g.T0 + 20 * MINUTE
    assert "2023-11-14 22:33:20 UTC" in run("brokers", tmp_path / "n").stdout.splitlines()[0]


def test_a_stretch_with_no_record_is_neither_serving_nor_a_long_fence(tmp_path: Path) -> None:
    """Broker 2 fenced, then nothing written for 16 days (the cluster powered off), then
    a new leader and broker 2 back within minutes: not "fenced for 16 d" (V132), and the
    lane of broker 1 (unfenced throughout) is not drawn serving across the 16 days."""
    g, s = _story()
    s.fence(5 * MINUTE, 2)
    s.noops(5 * MINUTE)
    back = 5 * MINUTE + 16 * DAY
    s.leader_change(back, 3000, (3000, 3001, 3002))
    s.register(back + MINUTE, 2)
    s.unfence(back + MINUTE + 500, 2)
    s.noops(back + 2 * MINUTE)
    s.write(tmp_path / "n" / "__cluster_metadata-0")
    text = run("brokers", tmp_path / "n").stdout
    assert "V132" not in text
    assert "no record in the log for at least 15 d 23 h" in text
    page = tmp_path / "r.html"
    run("report", "--html", page, tmp_path / "n")
    html = page.read_text()
    import re

    lane = html[html.index('data-lane="broker-1"'):]
    lane = lane[:lane.index("</g>")]
    spans = [(k, t) for k, t in re.findall(r'class="span state (\w+)"[^>]*><title>([^<]*)',
                                           lane)]
    silent = [t for k, t in spans if k == "silent"]
    assert len(silent) == 1 and "no record in the log for at least 15 d 23 h" in silent[0]
    serving = [t for k, t in spans if k == "unfenced"]
    assert serving and all(" d)" not in t and " d " not in t for t in serving), serving


def test_fences_after_every_controller_restarted_are_no_crash(tmp_path: Path) -> None:
    """A whole-cluster restart (Kafka 3.7+): every controller registers a new incarnation,
    the new active controller's sessions (ClusterControlManager.activate) run out 9 s
    later and it fences the brokers, taking their leaderships; the brokers come back.
    That is no crash the log can tell (no V131, no fencing storm V133)."""
    g, s = _story()
    t = 30 * MINUTE
    s.leader_change(t, 3001, (3000, 3001, 3002))
    g._register_controllers(s, t + 1000, (3000, 3001, 3002))
    s.fence(t + 11_000, 1)
    s.fence(t + 11_500, 2)
    s.register(t + 20_000, 1)
    s.unfence(t + 20_500, 1)
    s.register(t + 21_000, 2)
    s.unfence(t + 21_500, 2)
    s.noops(t + 22_000)
    s.write(tmp_path / "n" / "__cluster_metadata-0")
    objs = [json.loads(line) for line in
            run("brokers", "--json", tmp_path / "n").stdout.splitlines()]
    assert not [o for o in objs if o.get("code") in ("V131", "V133")]
    fences = [o["fence_kind"] for o in objs if o.get("event") == "fenced"]
    assert fences == ["quorum_restarted", "quorum_restarted"]
    assert "? crashes" in _area([tmp_path / "n"], "brokers")
    # the same fences with the controllers still up are crashes (V131 each)
    g, s = _story()
    s.fence(t + 11_000, 1)
    s.register(t + 20_000, 1)
    s.unfence(t + 20_500, 1)
    s.write(tmp_path / "m" / "__cluster_metadata-0")
    objs = [json.loads(line) for line in
            run("brokers", "--json", tmp_path / "m").stdout.splitlines()]
    assert [o["code"] for o in objs if o.get("code") == "V131"] == ["V131"]


def test_every_replica_behind_is_named(real_data: Path) -> None:
    """quorum3-boaz: kafka-1 and kafka-2 hold byte-identical logs, one batch short of
    kafka-3's: both are behind, not kafka-1 alone (diff pairs each with the first)."""
    line = _area([real_data / "quorum3-boaz"], "replicas")
    assert "3 replicas agree; kafka-1, kafka-2 behind (a prefix of the longest)" in line


# ------------------------------------------- issue 32: the lines are the findings' sums


def test_a_startup_error_line_says_the_error_before_the_cost(real_data: Path) -> None:
    """data-store: 7 V190 (records lost) under "nothing to recover"; ldi-poc: 1 V190 under
    "3.2 KiB to re-read": the ERROR line now says the error first."""
    line = _area([real_data / "data-store"], "startup")
    assert "ERROR" in line and "7 replicas missing, records lost; nothing to re-read" in line
    assert "nothing to recover" not in line
    line = _area([real_data / "ldi-poc"], "startup")
    # 345.2 KiB of metadata log (recovered whole on every start) + 3.2 KiB of data logs
    assert "1 broker: 1 replica missing, records lost; 348.3 KiB to re-read" in line, line


def test_the_consumers_line_counts_groups_as_the_consumers_command(real_data: Path) -> None:
    for name, groups in (("kraft-ksql-txn", "2 group(s) with metadata (0 deleted)"),
                         ("cp51-connect-cleaned", "19 group(s) with metadata (16 deleted)")):
        said = run("consumers", real_data / name).stdout
        assert groups in said
        line = _area([real_data / name], "consumers")
        assert groups.replace("(s)", "s") in line, line


def test_snapshots_startup_deletes_are_not_said_retention_s(real_data: Path) -> None:
    """data-store: the 6 snapshots go in startup's truncation; retention's rules stop."""
    line = _area([real_data / "data-store"], "snapshots")
    assert "startup's truncation deletes 6 snapshots, retention deletes nothing" in line, line


def test_the_bracketed_counts_are_explained_where_they_first_appear(real_data: Path) -> None:
    lines = run("report", real_data / "ldi-poc").stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if line.endswith("]"))
    legend = next(i for i, line in enumerate(lines) if line.startswith("[N]: "))
    assert first < legend < lines.index("What to do next")
    assert lines[legend] == "[N]: the area's number of findings (the !! lines at the end)"
    # no bracket, no legend
    quiet = run("report", real_data / "kraft41-offsets").stdout
    assert ("[N]: " in quiet) == any(line.endswith("]") for line in quiet.splitlines()[:12])


def test_a_time_in_a_state_spanning_no_record_does_not_count_the_gap(tmp_path: Path) -> None:
    """kraft32-three: "fenced after 1 d 12 h unfenced" across 36 h with no record (the
    cluster was off): the stretch is said apart, and the time fenced excludes it."""
    g, s = _story()
    s.fence(5 * MINUTE, 2)
    s.noops(5 * MINUTE)
    back = 5 * MINUTE + 16 * DAY
    s.leader_change(back, 3000, (3000, 3001, 3002))
    s.unfence(back + MINUTE, 2)
    s.fence(back + 3 * MINUTE, 2)
    s.noops(back + 4 * MINUTE)
    s.write(tmp_path / "n" / "__cluster_metadata-0")
    text = run("brokers", tmp_path / "n").stdout
    assert "unfenced after at least " in text and " fenced and 15 d 23 h with no record " \
        "in the log" in text, text
    assert "after 16 d" not in text
    objs = [json.loads(line) for line in
            run("brokers", "--json", tmp_path / "n").stdout.splitlines()]
    unfence = next(o for o in objs if o.get("event") == "unfenced" and o["node"] == 2)
    assert unfence["fenced_ms"] - unfence["fenced_silent_ms"] < 2 * MINUTE
    node = next(n for n in objs[-1]["nodes"] if n["node"] == 2 and n["role"] == "broker")
    assert node["fenced_ms"] < 10 * MINUTE


def test_a_fence_the_log_cannot_judge_leaves_the_crash_count_unknown(
        real_data: Path, tmp_path: Path) -> None:
    """kraft32-three: three fences the timeline calls "the log cannot tell", the brokers
    never back: CRASHES said 0; lifecycle/idle broker 2 (fenced while it led: "a lost
    session or a crash", never back) too. A fence followed by its unfence is no crash."""
    from conftest import FIXTURES

    def crashes(path: Path) -> dict[int, object]:
        objs = [json.loads(line) for line in run("brokers", "--json", path).stdout.splitlines()]
        return {n["node"]: n["crashes"] for n in objs[-1]["nodes"] if n["role"] == "broker"}

    assert crashes(real_data / "kraft32-three" / "data" / "kafka1") == \
        {1: None, 2: None, 3: None}
    assert crashes(FIXTURES / "lifecycle" / "idle")[2] is None
    text = run("brokers", real_data / "kraft32-three" / "data" / "kafka1").stdout
    assert "broker 1        fenced                     0    1      1       ?" in text
    # unfenced again after a fence that cannot tell: the process lived, no crash
    g, s = _story()
    s.fence(5 * MINUTE, 2)
    s.unfence(6 * MINUTE, 2)
    s.noops(7 * MINUTE)
    s.write(tmp_path / "n" / "__cluster_metadata-0")
    assert crashes(tmp_path / "n") == {1: 0, 2: 0}
    s.fence(8 * MINUTE, 2)
    s.noops(9 * MINUTE)
    s.write(tmp_path / "m" / "__cluster_metadata-0")
    assert crashes(tmp_path / "m") == {1: 0, 2: None}


def test_a_merged_stretch_s_tooltip_says_times_not_epoch_milliseconds() -> None:
    """ldi-poc's page: "3 stretches too narrow to draw apart, 1769.8G–1769.8G"."""
    from kmeta.render.report.svg import Scale, Span, _merge_spans

    t0 = 1_769_791_434_349
    spans = [Span(t0 + i * 100, t0 + i * 100 + 100, "unfenced", f"tip {i}") for i in range(3)]
    x = Scale(t0, t0 + 86_400_000, 0, 1000)
    merged = _merge_spans(spans, x, time=True)
    assert len(merged) == 1, merged
    assert "3 stretches too narrow to draw apart, 2026-01-30 16:43:54.349 UTC – " \
        "2026-01-30 16:43:54.649 UTC;" in merged[0].tip
    offsets = [Span(1_700_000 + i, 1_700_001 + i, "x", "t") for i in range(3)]
    tip = _merge_spans(offsets, Scale(0, 10**9, 0, 1000))[0].tip
    assert "1,700,000 – 1,700,003;" in tip and "G" not in tip


def test_a_grouped_missing_replica_s_last_example_names_its_partition(
        real_data: Path) -> None:
    """data-store: "V190 error x7 ... last: kafka-data" named only the log dir; a missing
    replica's finding is now about the dir its partition would have."""
    text = run("report", real_data / "data-store").stdout
    line = next(line for line in text.splitlines() if line.startswith("!! V190 error x7"))
    assert line.endswith("; last: kafka-data/input-topic-0 (--all lists each)"), line
    objs = [json.loads(line) for line in
            run("verify", "--json", real_data / "data-store").stdout.splitlines()]
    v190 = [o for o in objs if o.get("code") == "V190"]
    assert all(o["file"].endswith(f"/kafka-data/{o['message'].split(' is ')[0]}")
               for o in v190), v190
