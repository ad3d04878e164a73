"""Every line whole on a terminal of any width (issue 32, point 2): a line wider than
the terminal is folded, never cut; a table drops (and names) columns or folds text, never
a number's digits; through a pipe every byte is as written.

The pseudo-terminal runs of the everyday commands are in test_terminal.py; here are the
pieces they rest on, at 40, 80 and 120 columns, and info's words for small files and for
an empty log.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table

from kmeta.environment import Environment, fold, terminal_lines
from kmeta.ops.info import info
from kmeta.render.console import fit_table, make_console

WIDTHS = (40, 80, 120)

#: A batch line of ``kmeta dump``, in kafka-dump-log.sh's words (309 columns).
BATCH = ("baseOffset: 0 lastOffset: 0 count: 1 baseSequence: -1 lastSequence: -1 "
         "producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 1 isTransactional: false "
         "isControl: false deleteHorizonMs: OptionalLong.empty position: 0 "
         "CreateTime: 1699996400000 size: 76 magic: 2 compresscodec: none crc: 2130741101 "
         "isvalid: true")

#: A record line of ``kmeta history``: its JSON has no space to fold at.
HISTORY = ('2076 4 2023-11-14T22:29:09.368Z REGISTER_CONTROLLER_RECORD v0 {"controllerId":1,'
           '"incarnationId":"Y5Gqu20e2FPafLfhHzXLRA","zkMigrationReady":false,"endPoints":'
           '[{"name":"CONTROLLER","host":"controller-1.kafka.internal","port":9093,'
           '"securityProtocol":0}]}')

PATH = "the log's rules are not checked here: kmeta verify " + \
    "fixtures/big/256MiB/" * 4 + "__cluster_metadata-0"

ESC = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")


def columns(row: str) -> int:
    return cell_len(ESC.sub("", row))


# ---------------------------------------------------------------------- fold

@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("line", [BATCH, HISTORY, PATH], ids=["dump", "history", "path"])
def test_a_folded_line_fits_and_keeps_every_character(line: str, width: int) -> None:
    folded = fold(line, width)
    rows = folded.split("\n")
    assert all(columns(row) <= width for row in rows), rows
    assert all(row.startswith("    ") for row in rows[1:]), rows
    # nothing lost or added but the breaks: the words in order, each whole or split
    assert re.sub(r"\s+", "", folded) == re.sub(r"\s+", "", line)
    if width >= 80:
        assert len(rows) > 1 and all(row.strip() for row in rows)


@pytest.mark.parametrize("width", WIDTHS)
def test_fold_breaks_at_spaces_first_then_after_commas_and_slashes(width: int) -> None:
    rows = fold(BATCH, width).split("\n")
    words = BATCH.split(" ")
    # every word of the batch line is whole on one row
    assert [w for row in rows for w in row.split()] == words
    # a path breaks after a slash, JSON after a comma, never inside a name
    path_rows = fold(PATH, width).split("\n")
    assert all(row.rstrip().endswith(("/", "here:", "verify", "-0")) for row in
               path_rows[:-1]), path_rows
    json_rows = fold(HISTORY, width).split("\n")
    if width >= 80:  # at 40 a JSON string wider than a row is cut where the row ends
        assert all(row.endswith((",", "v0")) for row in json_rows[:-1]), json_rows


def test_a_line_that_fits_is_the_same_string() -> None:
    line = "x" * 80
    assert fold(line, 80) is line
    assert fold(BATCH, None) is BATCH
    assert list(terminal_lines([line, BATCH], 400)) == [line, BATCH]


def test_wide_characters_take_two_columns() -> None:
    """East Asian wide characters (a topic named in Chinese) count as the terminal
    draws them: 30 of them are 60 columns, not 30."""
    line = "topic 主题名称主题名称主题名称主题名称主题名称主题名称 " * 3
    for width in WIDTHS:
        rows = fold(line, width).split("\n")
        assert all(cell_len(row) <= width for row in rows), rows
    assert fold("主" * 30, 40) != "主" * 30


def test_colour_takes_no_columns_and_survives_the_fold() -> None:
    red, reset = "\x1b[1;31m", "\x1b[0m"
    line = f"{red}error{reset} " + "word " * 14 + "end"  # 80 columns, 91 characters
    assert columns(line) == 79 and fold(line, 80) == line
    folded = fold(line + " more words here", 40)
    assert folded.startswith(red + "error" + reset)
    assert all(columns(row) <= 40 for row in folded.split("\n"))
    assert ESC.sub("", folded).split() == ESC.sub("", line + " more words here").split()


@pytest.mark.parametrize("width", WIDTHS)
def test_json_on_a_terminal_is_indented_as_jq_shows_it(width: int) -> None:
    obj = {"kind": "batch", "path": "fixtures/big/256MiB/" * 5 + "x.log",
           "records": [{"offset": n, "value": "v" * 30} for n in range(3)]}
    line = json.dumps(obj, separators=(",", ":"))
    shown = "\n".join(terminal_lines([line, '{"a":1}', f"{line}\n{line}"], width,
                                      json=True))
    rows = shown.split("\n")
    assert rows[0] == "{" and rows[1].startswith('  "kind": "batch"')
    assert '{"a":1}' in rows  # a line that fits stays one line
    # an item of two lines (dump writes a batch and its record so) is two values
    assert rows.count('  "kind": "batch",') == 3
    assert all(cell_len(row) <= width for row in rows), rows


# ---------------------------------------------------------------------- write_lines

class _Terminal(io.TextIOWrapper):
    """A text stream that says it is a terminal, as a person's stdout does."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("json_out", [False, True])
def test_a_pipe_gets_every_byte_as_written(json_out: bool) -> None:
    """Scripts read kmeta's lines through pipes: not a byte changes there, whatever
    COLUMNS says."""
    lines = [json.dumps({"line": BATCH}), HISTORY] if json_out else [BATCH, HISTORY, PATH]
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8")
    Environment(stdout=out, stderr=io.StringIO(), environ={"COLUMNS": "40"}).write_lines(
        lines, json=json_out)
    assert raw.getvalue() == ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("width", WIDTHS)
def test_a_terminal_gets_every_line_whole(width: int) -> None:
    raw = io.BytesIO()
    out = _Terminal(raw, encoding="utf-8")
    env = Environment(stdout=out, stderr=io.StringIO(), environ={"COLUMNS": str(width)})
    env.write_lines([BATCH, HISTORY, "short"])
    env.write_lines([json.dumps({"line": BATCH})], json=True)
    rows = raw.getvalue().decode().splitlines()
    assert all(cell_len(row) <= width for row in rows), rows
    assert "short" in rows and '{' in rows and '  "line":' in "\n".join(rows)


# ---------------------------------------------------------------------- tables

def _segments(console: Console) -> tuple[Table, list[str]]:
    t = Table(title="segments", show_edge=False, pad_edge=False)
    for name in ("file", "first", "last", "batches", "records", "bytes", "from", "to"):
        t.add_column(name, no_wrap=True, justify="left" if name == "file" else "right")
    numbers = [f"{n:,}" for n in (1_914_613, 2_872_334, 922_361, 956_251, 68_157_369)]
    t.add_row("00000000000001914613.log", *numbers, "2023-11-25T13:23:42Z",
              "2023-11-30T20:53:12Z")
    return t, numbers


def _drawn(table: Table, width: int) -> list[str]:
    console = Console(width=width, file=io.StringIO(), color_system=None)
    console.print(table)
    return console.file.getvalue().splitlines()  # type: ignore[attr-defined]


@pytest.mark.parametrize("width", WIDTHS)
def test_a_table_drops_named_columns_never_digits(width: int) -> None:
    console = Console(width=width, file=io.StringIO())
    table, numbers = _segments(console)
    dropped = fit_table(table, console, [("from", "to"), "first", "last", "batches",
                                         "records"])
    rows = _drawn(table, width)
    assert all(cell_len(row) <= width for row in rows), rows
    cells = {c.strip() for row in rows for c in row.split("│")}
    kept = [c.header for c in table.columns]
    for header, number in zip(("first", "last", "batches", "records", "bytes"), numbers,
                              strict=True):
        assert (number in cells) == (header in kept), (header, rows)
    assert set(dropped) | set(kept) == {"file", "first", "last", "batches", "records",
                                        "bytes", "from", "to"}
    # 127 columns in all: the times go below that, the first offset too below 81
    assert dropped == {40: ["from", "to", "first", "last", "batches", "records"],
                       80: ["from", "to", "first"], 120: ["from", "to"]}[width]
    whole, _ = _segments(console)
    assert fit_table(whole, Console(width=127, file=io.StringIO()), ["first"]) == []


@pytest.mark.parametrize("width", WIDTHS)
def test_text_folds_before_a_number_is_touched(width: int) -> None:
    """A column of text (a config's value) folds at spaces, then inside a word; the
    numbers beside it stay whole."""
    console = Console(width=width, file=io.StringIO())
    t = Table(show_edge=False)
    t.add_column("partitions", no_wrap=True)
    t.add_column("value", overflow="fold")
    t.add_row("1,234,567", "a value that is long " * 6 + "x" * 70)
    assert fit_table(t, console) == []
    rows = _drawn(t, width)
    assert all(cell_len(row) <= width for row in rows), rows
    assert "1,234,567" in rows[2]


def test_a_terminal_too_narrow_for_any_fit_folds_but_loses_nothing() -> None:
    console = Console(width=12, file=io.StringIO())
    t = Table(show_edge=False)
    t.add_column("bytes", no_wrap=True)
    t.add_column("records", no_wrap=True)
    t.add_row("68,157,369", "956,251")
    fit_table(t, console)
    drawn = "".join(c for row in _drawn(t, 12) for c in row if c.isdigit() or c == ",")
    assert "68,157,369" in drawn.replace("68,157,369956,251", "68,157,369 956,251") or \
        sorted(drawn) == sorted("68,157,369956,251")


# ---------------------------------------------------------------------- info

def test_info_on_a_terminal_fits_and_names_what_it_left_out(tmp_path: Path) -> None:
    """The rich console of a terminal folds what it prints; a piped one writes it as
    rendered."""
    from conftest import HEALTHY

    from kmeta.render.info import render_info

    report = info([HEALTHY])
    for width in WIDTHS:
        raw = io.BytesIO()
        env = Environment(stdout=_Terminal(raw, encoding="utf-8", write_through=True),
                          stderr=io.StringIO(), environ={"COLUMNS": str(width),
                                                         "NO_COLOR": "1"})
        render_info(report, make_console(env), given=[str(HEALTHY)])
        rows = raw.getvalue().decode().splitlines()
        assert all(cell_len(row) <= width for row in rows), rows
        said = " ".join(" ".join(rows).split())
        assert ("wider terminal shows: from, to" in said) == (width < 130), said


def test_small_files_are_said_in_words(tmp_path: Path) -> None:
    """A data dir's small files: what each is for and what it holds, not a dump of
    ``kind=log_file file=… file_kind=…``."""
    import clirun
    from conftest import HEALTHY

    proc = clirun.run("info", str(HEALTHY), env={"COLUMNS": "200"})
    out = proc.stdout
    assert "kind=log_file" not in out and "file_kind=" not in out
    if "bootstrap.checkpoint" in out:
        assert re.search(r"bootstrap\.checkpoint \(a new cluster's first metadata\): "
                         r"\S+ B, \d+ record\(s\) in \d+ batch\(es\)", out), out
    assert re.search(r"meta\.properties \(the node's identity\): node \d+ of cluster ",
                     out), out


def _empty_partitions(tmp_path: Path) -> Path:
    """A data dir with an empty segment at 42, a partition without any segment whose
    log start checkpoint says 17, and one without either."""
    d = tmp_path / "data"
    for name in ("empty-0", "bare-0", "bare-1"):
        (d / name).mkdir(parents=True)
    (d / "empty-0" / "00000000000000000042.log").write_bytes(b"")
    (d / "log-start-offset-checkpoint").write_text("0\n1\nbare 0 17\n")
    (d / "meta.properties").write_text("version=1\nnode.id=1\ncluster.id=abc\n")
    return d


def test_an_empty_log_ends_where_it_starts_as_startup_says(tmp_path: Path) -> None:
    """Kafka's log end offset of a log without a batch is where it is empty at
    (LogSegment.readNextOffset: an empty segment's base offset; LogLoader.recoverLog: a
    log without a segment starts at its checkpointed start, else 0): a number, as
    ``startup --json`` says it, never null."""
    import clirun

    d = _empty_partitions(tmp_path)
    objects = [json.loads(line) for line in
               clirun.run("info", "--json", str(d)).stdout.splitlines()]
    ends = {o["name"]: (o["log_start_offset"], o["log_end_offset"]) for o in objects
            if o["kind"] == "partition_dir"}
    assert ends == {"empty-0": (42, 42), "bare-0": (17, 17), "bare-1": (0, 0)}
    startup = [json.loads(line) for line in
               clirun.run("startup", "--json", str(d)).stdout.splitlines()]
    said = {f"{o['topic']}-{o['partition']}": o["log_end_offset"] for o in startup
            if o["kind"] == "startup_partition"}
    assert said == {name: end for name, (_, end) in ends.items()}
    text = clirun.run("info", "--partitions", str(d), env={"COLUMNS": "200"}).stdout
    assert "empty-0 no data (empty at 42)" in text, text


def test_stderr_on_a_terminal_folds_an_error_line_but_not_a_bar() -> None:
    """What kmeta prints on stderr (an error line, a usage error) fits a terminal too;
    a progress bar's redraw (a carriage return, cursor moves) passes untouched, and a
    stderr that is not a terminal gets the line whole."""
    error = ("kmeta: error[KM002]: 3 metadata partitions found: " +
             ", ".join(f"/srv/kafka/data/kafka{n}/__cluster_metadata-0" for n in (1, 2, 3)) +
             " (give one __cluster_metadata-0 directory)")
    bar = "\r\x1b[2Kverify " + "━" * 70 + " 12.3/268.5 MB"
    for width in WIDTHS:
        seen = io.StringIO()
        terminal = type("Tty", (io.StringIO,), {"isatty": lambda self: True})()
        env = Environment(stdout=io.StringIO(), stderr=terminal,
                          environ={"COLUMNS": str(width)}).guarded()
        print(error, file=env.stderr)
        env.stderr.write(bar)
        rows = terminal.getvalue().split(bar)[0].splitlines()
        assert len(rows) > 1 and all(cell_len(row) <= width for row in rows), rows
        assert terminal.getvalue().endswith(bar)
        piped = Environment(stdout=io.StringIO(), stderr=seen,
                            environ={"COLUMNS": str(width)}).guarded()
        print(error, file=piped.stderr)
        assert seen.getvalue() == error + "\n"


def test_info_through_a_pipe_keeps_every_column_on_one_line() -> None:
    """Through a pipe (no COLUMNS) nothing is fitted or folded: each segment's row is
    one line with every column, times and epochs included, for grep."""
    from conftest import HEALTHY

    from kmeta.render.info import render_info

    out = io.StringIO()
    env = Environment(stdout=out, stderr=io.StringIO(), environ={})
    render_info(info([HEALTHY]), make_console(env), given=[str(HEALTHY)])
    text = out.getvalue()
    head = next(line for line in text.splitlines() if line.startswith("file "))
    assert [c.strip() for c in head.split("┃")] == [
        "file", "first", "last", "batches", "records", "bytes", "from", "to", "epochs"]
    assert "wider terminal" not in text
    assert "\n    " not in text.split("the log's rules")[1]  # the verify line whole


def test_the_shell_s_replies_fold_on_a_terminal_too() -> None:
    """The shell writes its replies itself (``-c`` and the prompt alike): on a terminal
    each line is folded as every command's is, through a pipe it is left whole."""
    from kmeta.shell.replies import Reply, texts

    wide = "baseOffset: 0 lastOffset: 0 " + "count: 1 " * 30
    reply = Reply(lines=[wide, "short"])
    assert [t for t, _ in texts(reply, False, [0])] == [wide, "short"]
    shown = [t for t, _ in texts(reply, False, [0], 80)]
    rows = "\n".join(shown).split("\n")
    assert len(rows) > 2 and all(len(r) <= 80 for r in rows), rows
    assert " ".join(rows).split() == (wide + " short").split()


def test_a_difference_cut_to_the_terminal_keeps_its_key_and_both_values() -> None:
    """truncate at 60 columns printed ``…/partitions/0/leader… -> 1`` for two keys
    (leader and leaderEpoch) that could not be told apart: a path gives up its middle,
    never its leaf or the values."""
    from kmeta.render.text import _clip_difference

    diffs = ["/topics/Retry.TestTopicPatient/partitions/0/leader: -1 -> 1",
             "/topics/Retry.TestTopicPatient/partitions/0/leaderEpoch: 1 -> 0"]
    for width in (40, 56, 80):
        cut = [_clip_difference(d, width) for d in diffs]
        assert all(len(c) <= width for c in cut), cut
        assert cut[0].endswith("/leader: -1 -> 1") and cut[1].endswith("/leaderEpoch: 1 -> 0"), cut
    assert _clip_difference(diffs[0], None) == diffs[0]
