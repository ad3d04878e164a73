"""``kmeta info`` for people: rich tables on a terminal, plain text through a pipe.

rich honours ``NO_COLOR`` and drops colour when stdout is not a terminal.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kmeta.findings import GROUP_OVER
from kmeta.ops.info import (
    FileSummary,
    InfoReport,
    PartitionSummary,
    TopicSummary,
    topic_summaries,
)
from kmeta.render.console import console_width, fit_table, fold, noted_title, on_terminal
from kmeta.render.retention import size
from kmeta.render.text import (
    Paths,
    group_line,
    grouped,
    human,
    shell_command,
    short_group_line,
    summarise,
)

#: Two screens of an 80x24 terminal: what info's default text fits in (issue 24), the
#: topic rows cut to what is left once the data dirs, the metadata log and the findings
#: are said.
TWO_SCREENS = 48
#: Topic rows shown whatever the rest takes.
MIN_TOPIC_ROWS = 3


def _ts(ms: int | None) -> str:
    if ms is None or ms < 0:
        return "-"
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        return str(ms)


def _n(v: Any) -> str:
    return "-" if v is None else f"{v:,}" if isinstance(v, int) else str(v)


def _o(v: Any) -> str:
    """An offset (or an epoch) as verify, dump and the file names say it: no separators."""
    return "-" if v is None else str(v)


#: The segment tables' columns a narrow terminal loses, first named first: the times
#: (20 columns each), the epochs, the first offset (the file's name holds it), then the
#: rest; the file's name is always shown.
_DROPPED = (("from", "to"), "epochs", "first", "last", "batches", "records", "bytes")


def _segments_table(title: str, files: list[FileSummary], console: Console,
                    snapshots: bool = False) -> Table:
    """The files' table fitted to the console (:func:`fit_table`: a column that does
    not fit is left out and named, a number is never cut).  ``snapshots``: a snapshot's
    name holds its end offset and epoch, and the offsets of its records start at 0, so
    those columns go (its 41-character name fits 80 columns)."""
    t = Table(title_justify="left", show_edge=False, pad_edge=False)
    cols = ("file", "first", "last", "batches", "records", "bytes", "from", "to", "epochs")
    if snapshots:
        cols = tuple(c for c in cols if c not in ("first", "last", "epochs"))
    for col in cols:
        # numbers, names, times and epochs never wrap (a file name cut to "00000…" says
        # nothing): a column that does not fit goes whole
        t.add_column(col, justify="left" if col in ("file", "from", "to", "epochs")
                     else "right", no_wrap=True)
    for s in files:
        name = s.file.rsplit("/", 1)[-1]
        row = [name] if snapshots else [name, _o(s.first_offset), _o(s.last_offset)]
        row += [_n(s.batches), _n(s.records), _n(s.size)]
        row += [_ts(s.first_timestamp), _ts(s.last_timestamp)]
        if not snapshots:
            row.append("-" if s.leader_epochs is None else
                       summarise(list(s.leader_epochs), "epochs"))
        t.add_row(*(escape(cell) for cell in row))
    t.title = noted_title(title, fit_table(t, console, _DROPPED), console)
    return t


#: Why info shows each small file: what Kafka keeps in it, in a few words.
_PURPOSES = {
    "meta.properties": "the node's identity",
    "bootstrap.checkpoint": "a new cluster's first metadata",
    "recovery-point-offset-checkpoint": "flushed to disk up to",
    "replication-offset-checkpoint": "high watermarks",
    "log-start-offset-checkpoint": "log start offsets",
    "cleaner-offset-checkpoint": "compacted up to",
    "leader-epoch-checkpoint": "where each leader epoch began",
    "quorum-state": "this node's view of the quorum",
    "partition-metadata": "the topic id",
    "partition.metadata": "the topic id",
    ".kafka_cleanshutdown": "the clean shutdown marker",
}

#: Entries of a checkpoint file shown before the rest is counted.
_ENTRIES_SHOWN = 4


def _small_lines(name: str, content: Any) -> list[str]:
    """One sentence for a small file: its name, what Kafka keeps in it, what it
    holds."""
    base = name.rsplit("/", 1)[-1]
    purpose = _PURPOSES.get(base) or ("producer state" if base.endswith(".snapshot") else None)
    head = f"{name} ({purpose})" if purpose else name
    return [f"{head}: {_holds(content)}"]


def _holds(content: Any) -> str:
    """What a small file holds, in words: a batch file's counts, a checkpoint's
    entries, a properties file's keys."""
    if not isinstance(content, dict):
        return human(content)
    if "error" in content and len(content) == 1:
        return f"not read: {content['error']}"
    if content.get("kind") == "log_file":
        return _batch_file(content)
    entries = content.get("entries")
    if isinstance(entries, list):
        if not entries:
            return "no entries"
        shown = ", ".join(_entry(e) for e in entries[:_ENTRIES_SHOWN])
        more = f", … ({len(entries):,} entries)" if len(entries) > _ENTRIES_SHOWN else ""
        return shown + more
    for keys, sentence in _SENTENCES:
        if keys <= content.keys():
            return sentence(content)
    rest = " ".join(f"{k}={human(v)}" for k, v in content.items()
                    if v not in (None, [], {}, "") and k != "comments")
    return rest or "empty"


def _meta_properties(m: dict[str, Any]) -> str:
    """meta.properties: the node, its cluster, the file's version (KRaft writes 1; 0 is a
    ZooKeeper-mode broker's, which may have no cluster id)."""
    said = f"node {m['node_id']}" + (f" of cluster {m['cluster_id']}" if m["cluster_id"]
                                     else ", no cluster id")
    said += " (ZooKeeper mode, version 0" if m.get("version") == 0 \
        else f" (version {m.get('version')}"
    if m.get("directory_id"):
        said += f", directory id {m['directory_id']}"
    extra = m.get("extra") or {}
    return said + "".join(f", {k}={human(v)}" for k, v in extra.items()) + ")"


def _quorum_state(q: dict[str, Any]) -> str:
    """quorum-state (Kafka's QuorumStateData): the epoch, its leader, this node's vote."""
    leader = q.get("leaderId", -1)
    said = f"epoch {_o(q['leaderEpoch'])}, " + (
        f"leader node {leader}" if leader is not None and leader >= 0 else "no leader known")
    voted = q.get("votedId", -1)
    said += f", voted for node {voted}" if voted is not None and voted >= 0 else ", no vote"
    voters = q.get("currentVoters")
    if voters is None:  # version 1 keeps the voters in the log (KIP-853)
        said += "; the voters are in the log"
    else:
        ids = sorted(v.get("voterId") for v in voters if isinstance(v, dict))
        said += f"; voters: {', '.join(map(str, ids)) or 'none'}"
    # appliedOffset: written, never read by Kafka's KRaft (always 0); said only if not
    if q.get("appliedOffset"):
        said += f"; applied offset {_o(q['appliedOffset'])}"
    return said + f" (version {q.get('data_version', 0)})"


def _producer_snapshot(p: dict[str, Any]) -> str:
    """A producer-state .snapshot: its producers, and whether its CRC holds."""
    entries = p["producer_entries"]
    if not entries:
        said = "no producer"
    else:
        shown = ", ".join(f"producer {_o(e.get('producer_id'))} epoch {e.get('epoch')} up to "
                          f"offset {_o(e.get('last_offset'))}" for e in entries[:_ENTRIES_SHOWN])
        more = f", … ({len(entries):,} producers)" if len(entries) > _ENTRIES_SHOWN else ""
        said = shown + more
    if p.get("crc_valid") is False:
        said += f"; its CRC {p.get('crc')} does not match its bytes' ({p.get('computed_crc')})"
    if p.get("trailing_bytes"):
        said += f"; {_n(p['trailing_bytes'])} byte(s) after the last entry"
    return said + f" (version {p.get('version')})"


def _clean_shutdown(c: dict[str, Any]) -> str:
    if c["brokerEpoch"] is None:  # empty: the marker before Kafka 3.7
        return "the broker shut down cleanly (an empty marker, as before Kafka 3.7)"
    return f"the broker shut down cleanly, broker epoch {_o(c['brokerEpoch'])} " \
        f"(version {c.get('version')})"


#: Small files said in a sentence of their own, known by their keys.
_SENTENCES = (({"node_id", "cluster_id"}, _meta_properties),
              ({"leaderEpoch", "votedId"}, _quorum_state),
              ({"producer_entries", "crc_valid"}, _producer_snapshot),
              ({"brokerEpoch"}, _clean_shutdown),
              ({"topic_id", "version"},
               lambda p: f"topic id {p['topic_id']} (version {p['version']})"))


def _entry(e: Any) -> str:
    if isinstance(e, dict) and {"topic", "partition", "offset"} <= e.keys():
        return f"{e['topic']}-{e['partition']} at {_o(e['offset'])}"
    if isinstance(e, dict) and {"epoch", "start_offset"} <= e.keys():
        return f"epoch {e['epoch']} from {_o(e['start_offset'])}"
    return " ".join(map(human, e.values())) if isinstance(e, dict) else human(e)


def _batch_file(f: dict[str, Any]) -> str:
    """A bootstrap.checkpoint's (or a lone snapshot's) counts, as a segment's row says
    them."""
    if not f.get("size"):
        return "empty"
    said = f"{size(f['size'])}"
    if f.get("records") is not None:
        said += f", {_n(f['records'])} record(s) in {_n(f['batches'])} batch(es)"
    if f.get("first_offset") is not None:
        said += f", offsets {_o(f['first_offset'])}..{_o(f['last_offset'])}"
    types = ", ".join(f"{k}={v:,}" for k, v in (f.get("records_by_type") or {}).items())
    control = ", ".join(f"{k}={v:,}" for k, v in
                        (f.get("control_records_by_type") or {}).items())
    if types:
        said += f": {types}"
    if control:
        said += f"; control: {control}"
    if f.get("bad_crc_batches"):
        said += f"; {f['bad_crc_batches']:,} batch(es) with a bad CRC"
    return said


def _say(console: Console, line: str) -> None:
    """A line of prose, folded at the console's width (never in a pipe), not markup."""
    console.print(fold(line, console_width(console)), markup=False, highlight=False)


def _partition(console: Console, p: PartitionSummary) -> None:
    head = fold(f"{p.name}  ({p.path})", console_width(console))
    console.print(f"[bold]{escape(p.name)}[/bold]{escape(head[len(p.name):])}")
    _say(console, f"  log start offset: {_o(p.log_start_offset)}  "
         f"log end offset: {_o(p.log_end_offset)}")
    for name, content in p.files.items():
        for line in _small_lines(name, content):
            _say(console, "  " + line)
    if p.segments:
        console.print(_segments_table("  segments", p.segments, console))
        ends = sum(not s.decoded for s in p.segments)
        if ends:  # "-" must not read as none
            _say(console, f"  {ends:,} segment(s) read at their ends: their batches, records "
                 "and epochs not counted (kmeta verify reads every batch)")
    else:
        console.print("  no log segments", markup=False, highlight=False)
    if p.snapshots:
        console.print(_segments_table("  snapshots", p.snapshots, console, snapshots=True))
    if p.is_metadata:
        types = p.record_types()
        if types:
            _say(console, "  records per type: " + ", ".join(
                f"{k}={v:,}" for k, v in sorted(types.items(), key=lambda kv: -kv[1])))
        ctl = p.control_records()
        if ctl:
            _say(console, "  control records: " + ", ".join(
                f"{k}={v:,}" for k, v in ctl.items()))
    if p.other_files:
        _say(console, "  other files: " + ", ".join(p.other_files))


def _minute(ms: int | None) -> str:
    if ms is None or ms < 0:
        return "-"
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):
        return str(ms)


#: The topic table: numbers first, the name last where a long one can run on; a
#: partition's row under its topic's (--partitions) in the same columns.
_TOPIC_HEAD = (f"{'parts':>5} {'segs':>5} {'bytes':>9}  {'oldest (UTC)':<16}  "
               f"{'newest (UTC)':<16}  topic")


def _row(parts: str, segments: int, nbytes: int, oldest: int | None,
         newest: int | None, name: str) -> str:
    return (f"{parts:>5} {segments:>5} {size(nbytes):>9}  {_minute(oldest):<16}  "
            f"{_minute(newest):<16}  {name}")


def _topic_row(t: TopicSummary) -> str:
    # "!": a partition of it has a finding (the anomalies line and the findings say which)
    return _row(f"{len(t.partitions):,}", t.segments, t.size, t.first_timestamp,
                t.last_timestamp, ("! " if t.troubled else "") + t.topic)


def _partition_row(p: PartitionSummary, findings: int) -> str:
    # first..last offset inclusive, as verify says a log's offsets
    start, end = p.log_start_offset, p.log_end_offset
    offsets = f"no data (empty at {end})" if start >= end else f"{start}..{end - 1}"
    mark = f" ! {findings:,} finding(s)" if findings else ""
    return _row("", len(p.segments), p.size, p.first_timestamp, p.last_timestamp,
                f"{p.name} {offsets}{mark}")


def _anomalies(topics: list[TopicSummary]) -> list[str]:
    """Partitions that stand out: those with findings (their topics' rows come first,
    marked !; the findings follow, grouped)."""
    troubled = [t for t in topics if t.troubled]
    if not troubled:
        return []
    count = sum(len(t.troubled) for t in troubled)
    return [f"anomalies: {count:,} partition(s) with findings, in {len(troubled):,} "
            "topic(s) (marked !, first below)"]


def _topic_lines(topics: list[TopicSummary], width: int | None, room: int | None,
                 listing: bool) -> list[str]:
    """The topic table folded to ``width``; cut to ``room`` lines (None: every topic),
    the rest summed on one line; ``listing``: each topic's partitions under it."""
    out = [fold(line, width) for line in _anomalies(topics)]
    partitions = sum(len(t.partitions) for t in topics)
    out.append(fold(f"data topics: {len(topics):,}, partitions: {partitions:,}, "
                    f"segments: {sum(t.segments for t in topics):,}, "
                    f"bytes: {size(sum(t.size for t in topics))}", width))
    out.append(fold(_TOPIC_HEAD + (", offsets" if listing else ""), width))
    used = sum(x.count("\n") + 1 for x in out)
    for n, t in enumerate(topics):
        row = fold(_topic_row(t), width)
        if room is not None and used + row.count("\n") + 2 > room and \
                n >= MIN_TOPIC_ROWS and n < len(topics):
            rest = topics[n:]
            out.append(fold(f"… {len(rest):,} more topic(s): "
                            f"{sum(len(r.partitions) for r in rest):,} partitions, "
                            f"{size(sum(r.size for r in rest))} (--partitions lists all)",
                            width))
            break
        out.append(row)
        used += row.count("\n") + 1
        if listing:
            for p in t.partitions:
                out.append(fold(_partition_row(p, t.troubled[p.name]), width))
    return out


def _verify_targets(report: InfoReport, given: list[str]) -> list[str]:
    """What to hand verify: a small file given alone (quorum-state, meta.properties) is
    judged with its directory (verify of the file alone checks no log), so its directory
    is named instead."""
    small = {os.path.realpath(p) for p in report.small_files}
    out: list[str] = []
    for path in given:
        if os.path.realpath(path) in small:
            path = os.path.dirname(os.path.normpath(path)) or "."
        if path not in out:
            out.append(path)
    return out


def _tail(console: Console, report: InfoReport, given: list[str] | None, expand: bool,
          over: int = GROUP_OVER) -> str:
    """The findings and the line naming verify, as text: ``over``, how many times a code
    is met before its findings are one line (below GROUP_OVER, to fit two screens: a
    short line, its meaning and the first file)."""
    with console.capture() as tail:
        # info reads and decodes; the log's rules (offsets, epochs, indexes, snapshots, the
        # replayed image) are verify's, so "none" here must not read as "the log is sound".
        if report.findings:
            console.print(f"[bold]findings[/bold] met reading: {len(report.findings)}",
                          highlight=False)
            paths = Paths(given or [])
            for g in grouped(report.findings, expand, over):
                line = short_group_line if over < GROUP_OVER else group_line
                _say(console, "  " + line(g, paths))
        else:
            console.print("findings met reading: none", highlight=False)
        verify = shell_command("verify", *_verify_targets(report, given or []))
        said = f"the log's rules are not checked here: {verify}"
        if on_terminal(console) and cell_len(said) > console.width:
            # the command on a line of its own, to be copied (folded only if it must)
            said = f"the log's rules are not checked here:\n    {verify}"
        # through a pipe one unfolded line: the command is copied as it stands
        console.print(said, markup=False, highlight=False, soft_wrap=True)
    return tail.get()


def render_info(report: InfoReport, console: Console, given: list[str] | None = None,
                expand: bool = False, partitions: bool = False) -> None:
    """``given``: the paths the user gave (findings name files relative to them);
    ``expand``: every finding on its own line, no groups; ``partitions``: every topic and
    a line per partition (by default the data topics are one row each, as many as fit two
    screens with the rest; the metadata log and a partition dir given alone are shown
    whole)."""
    width = console_width(console)
    with console.capture() as head:
        for d in report.data_dirs:
            said = fold(f"data dir {d.path}", width)
            console.print(f"[bold]data dir[/bold]{escape(said[len('data dir'):])}")
            for name, content in d.files.items():
                for line in _small_lines(name, content):
                    _say(console, "  " + line)
            console.print(f"  partitions: {len(d.partitions)}")
            for p in d.partitions:
                if p.is_metadata:
                    _partition(console, p)
        for p in report.partitions:
            _partition(console, p)
        if report.files:
            console.print(_segments_table("files", report.files, console))
        for name, content in report.small_files.items():
            for line in _small_lines(name, content):
                _say(console, line)
    head_text = head.get()
    in_dirs = [p for d in report.data_dirs for p in d.partitions]
    topics = topic_summaries(in_dirs, report.findings)
    tail_text = _tail(console, report, given, expand)
    # the topic rows' minimum, and the count line close() writes after the report
    least = sum(x.count("\n") + 1 for x in _topic_lines(topics, width, 0, False)) \
        if topics else 0
    least += bool(report.findings)
    if not expand and not partitions and \
            head_text.count("\n") + tail_text.count("\n") + least > TWO_SCREENS:
        tail_text = _tail(console, report, given, expand, over=1)
    write = console.file.write
    write(head_text)
    if topics:
        room = None if partitions else TWO_SCREENS - head_text.count("\n") - \
            tail_text.count("\n") - bool(report.findings)
        for line in _topic_lines(topics, width, room, partitions):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
    write(tail_text)
