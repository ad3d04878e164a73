"""Text lines for people, in the style of Kafka's ``kafka-dump-log.sh``.

An SRE who knows Kafka's tool reads these lines the same way: a ``baseOffset: …`` line per
batch and, with ``--records``, a ``| offset: …`` line per record with its payload.
Findings appear inline, where they were met, as ``!! CODE severity: message``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from kmeta.errors import Verdict
from kmeta.findings import CODES, GROUP_OVER, SAID_FIRST, Finding
from kmeta.formats.batch import Batch
from kmeta.formats.legacy import LegacyBatch
from kmeta.formats.runs import RunText
from kmeta.ops.dump import BatchDump, BatchMore, FileEvent, OneRecord, RecordRun
from kmeta.ops.redact import SHOW_SECRETS, mask_hex, masked_text
from kmeta.render.jsonl import dumps

_CONTROL_LABELS = {
    "SNAPSHOT_HEADER": "SnapshotHeader",
    "SNAPSHOT_FOOTER": "SnapshotFooter",
    "KRAFT_VERSION": "KRaftVersion",
    "KRAFT_VOTERS": "KRaftVoters",
    "LEADER_CHANGE": "LeaderChange",
}


def _bool(v: bool) -> str:
    return "true" if v else "false"


def batch_line(b: Batch | LegacyBatch) -> str:
    if b.magic >= 2:
        horizon = b.delete_horizon_ms
        head = (f"baseOffset: {b.base_offset} lastOffset: {b.last_offset} "
                f"count: {b.records_count} baseSequence: {b.base_sequence} "
                f"lastSequence: {b.last_sequence} producerId: {b.producer_id} "
                f"producerEpoch: {b.producer_epoch} partitionLeaderEpoch: {b.leader_epoch} "
                f"isTransactional: {_bool(b.is_transactional)} "
                f"isControl: {_bool(b.is_control)} "
                f"deleteHorizonMs: {'OptionalLong.empty' if horizon is None else horizon}")
    else:
        head = f"offset: {b.last_offset}"
    return (f"{head} position: {b.position} {b.timestamp_type}: {b.max_timestamp} "
            f"size: {b.size} magic: {b.magic} compresscodec: {b.compression} "
            f"crc: {b.crc} isvalid: {_bool(b.crc_valid)}")


def record_line(b: Batch | LegacyBatch, r: Any, p: Any, show_hex: bool = False) -> str:
    key_size = -1 if r.key is None else len(r.key)
    value_size = -1 if r.value is None else len(r.value)
    line = (f"| offset: {r.offset} {b.timestamp_type}: {r.timestamp} "
            f"keySize: {key_size} valueSize: {value_size}")
    if b.magic >= 2:
        keys = ",".join(h.key for h in r.headers)
        line += f" sequence: {r.sequence} headerKeys: [{keys}]"
    if b.is_control:
        if p.type in ("ABORT", "COMMIT") and p.data and "coordinatorEpoch" in p.data:
            line += f" endTxnMarker: {p.type} coordinatorEpoch: {p.data['coordinatorEpoch']}"
        elif p.type in _CONTROL_LABELS and not p.finding:
            line += f" {_CONTROL_LABELS[p.type]} {dumps(p.data)}"
        else:
            line += f" controlType: {p.type} {dumps(p.data)}"
    elif p.type == "RAW":
        if p.data["key"] is not None:
            line += f" key: {p.data['key']}"
        line += f" payload: {p.data['value']}"
    else:
        line += " payload: " + dumps({"type": p.type, "version": p.version, "data": p.data})
    if show_hex:
        line += f" keyHex: {'null' if r.key is None else bytes(r.key).hex()}"
        value_hex = "null" if r.value is None else mask_hex(r.value, p.redacted)
        line += f" valueHex: {value_hex}"
    if p.redacted and (show_hex or p.type == "RAW" or p.finding):
        # the line shows bytes of the value (decoded fields say [redacted] themselves)
        line += f" masked: {masked_text(p.redacted)} ({SHOW_SECRETS})"
    return line


def finding_line(f: Finding, colour: bool = False, paths: Paths | None = None) -> str:
    """``!! CODE severity: where: message``; ``colour``: the code and severity painted
    (the caller knows whether its stream is a terminal)."""
    where = f.where() if paths is None else paths.where(f)
    return f"!! {_head(f, colour)}: {where}: {f.message}"


def _head(f: Finding, colour: bool, suffix: str = "") -> str:
    head = f"{f.code} {f.severity.value}{suffix}"
    if not colour:
        return head
    # Imported here, like the module's other console helpers: text.py loads no rich.
    from kmeta.render.console import styled

    return styled(head, f.severity.value)


class Paths:
    """File names shown relative to the paths the user gave: under one argument, the
    rest of the path after it; the user knows what they typed."""

    def __init__(self, given: list[str]) -> None:
        import os

        self.bases = sorted((os.path.normpath(g) for g in given), key=len, reverse=True)

    def show(self, file: str | None) -> str:
        import os

        if not file:
            return "-"
        norm = os.path.normpath(file)
        for base in self.bases:
            if norm == base:
                return os.path.basename(norm) or norm
            if norm.startswith(base.rstrip(os.sep) + os.sep):
                rest = norm[len(base.rstrip(os.sep)) + 1:]
                return rest if len(self.bases) == 1 else os.path.join(
                    os.path.basename(base), rest)
        return file

    def where(self, f: Finding) -> str:
        parts = [self.show(f.file)]
        if f.position is not None:
            parts.append(f"byte {f.position}")
        if f.offset is not None:
            parts.append(f"offset {f.offset}")
        return ", ".join(parts)


class FindingGroup(NamedTuple):
    """Findings of one code shown as one: the first, the last and how many."""

    first: Finding
    last: Finding
    count: int


def grouped(findings: list[Finding], expand: bool = False,
            over: int = GROUP_OVER) -> list[FindingGroup]:
    """One entry per finding, except that a code met more than ``over`` times becomes
    one group at the place of its first finding (24 near-identical V025 rows are one)."""
    # said on stderr before the answer (kmeta.render.progress): not again after it
    findings = [f for f in findings if f.code not in SAID_FIRST]
    if expand:
        return [FindingGroup(f, f, 1) for f in findings]
    by_code: dict[str, list[Finding]] = {}
    for f in findings:
        by_code.setdefault(f.code, []).append(f)
    out = []
    for f in findings:
        same = by_code[f.code]
        if len(same) <= over:
            out.append(FindingGroup(f, f, 1))
        elif f is same[0]:
            out.append(FindingGroup(f, same[-1], len(same)))
    return out


#: What lists each finding of a group, said after it: the command's own ``--all``, or,
#: for a command without that option, verify's.
EACH = "--all lists each"
VERIFY_EACH = "kmeta verify --all lists each"


def group_line(g: FindingGroup, paths: Paths, colour: bool = False, each: str = EACH) -> str:
    """A finding's line; a group's reads ``!! V025 info x24: what the code means; first:
    WHERE: message; last: WHERE (--all lists each)``."""
    if g.count == 1:
        return finding_line(g.first, colour, paths)
    return (f"!! {_head(g.first, colour, f' x{g.count:,}')}: {CODES[g.first.code][1]}; "
            f"first: {paths.where(g.first)}: {g.first.message}; "
            f"last: {paths.where(g.last)} ({each})")


def short_group_line(g: FindingGroup, paths: Paths, colour: bool = False) -> str:
    """A group's line where room is short (a report of thousands of partitions on two
    screens): ``!! S001 error x3: what the code means; first: FILE (--all lists each)``;
    a finding alone keeps its whole line."""
    if g.count == 1:
        return finding_line(g.first, colour, paths)
    return (f"!! {_head(g.first, colour, f' x{g.count:,}')}: {CODES[g.first.code][1]}; "
            f"first: {paths.show(g.first.file)} (--all lists each)")


#: How many findings (groups of one code count as one) a command lists when its output is
#: about something else: image, history, snapshot and diff on stderr, repair's check of
#: the copy it wrote.  A screenful with the summary; kmeta verify lists them all.
FINDINGS_SHOWN = 20


def listed_findings(findings: list[Finding], paths: Paths, colour: bool, more: str,
                    every: bool | None = None) -> Iterator[str]:
    """The first FINDINGS_SHOWN findings (or groups), then how many more and ``more``:
    where to see them all.  ``every``: the command's ``--all`` (True: each finding, none
    left out); None: the command has no such option, so a group points to verify's."""
    if every:
        yield from (finding_line(f, colour, paths) for f in findings)
        return
    groups = grouped(findings)
    each = EACH if every is not None else VERIFY_EACH
    for g in groups[:FINDINGS_SHOWN]:
        yield group_line(g, paths, colour, each)
    if len(groups) > FINDINGS_SHOWN:
        rest = sum(g.count for g in groups[FINDINGS_SHOWN:])
        yield f"kmeta: {rest:,} more finding(s): {more}"


def summary_line(verdict: Verdict) -> str:
    """``kmeta: N finding(s): …``, by severity."""
    return (f"kmeta: {verdict.total:,} finding(s): {verdict.errors:,} error(s), "
            f"{verdict.warnings:,} warning(s), {verdict.infos:,} info")


def file_lines(ev: FileEvent) -> Iterator[str]:
    yield f"Dumping {ev.file}"
    kind = ev.file_kind
    if kind == "bootstrap-checkpoint":
        yield "KRaft bootstrap snapshot"
    elif kind == "kraft-snapshot":
        state = f" ({ev.info['suffix']})" if ev.info.get("suffix") else ""
        yield (f"Snapshot end offset: {_scalar(ev.info.get('base_offset'))}, "
               f"epoch: {_scalar(ev.info.get('epoch'))}{state}")
    elif kind == "segment" and ev.info.get("base_offset") is not None:
        # A file whose name is not a segment's has no starting offset (S007 says so).
        yield f"Log starting offset: {ev.info['base_offset']}"
    if ev.content is not None:
        yield from content_lines(ev.content)


def content_lines(content: Any) -> Iterator[str]:
    """Small files: their decoded fields, one ``key: value`` per line, lists expanded."""
    data = content.to_json() if hasattr(content, "to_json") else content
    if not isinstance(data, dict):
        yield str(data)
        return
    for k, v in data.items():
        if isinstance(v, list) and v and isinstance(v[0], dict):
            yield f"{k}: {len(v)}"
            for item in v:
                yield "  " + " ".join(f"{ik}: {_scalar(iv)}" for ik, iv in item.items())
        else:
            yield f"{k}: {_scalar(v)}"


def _scalar(v: Any) -> str:
    return human(v)


def human(v: Any) -> str:
    """A value as a person writes it, never Python's spelling: ``-`` for none, true and
    false, lists comma-separated (a list of one-key objects, such as Kafka's
    ``[{"voterId": 1}]``, as the bare values), objects as ``key=value`` pairs."""
    if v is None:
        return "-"
    if isinstance(v, bool):
        return _bool(v)
    if isinstance(v, dict):
        return " ".join(f"{k}={human(x)}" for k, x in v.items()) or "-"
    if isinstance(v, (list, tuple)):
        if not v:
            return "-"
        return ",".join(human(next(iter(x.values()))) if isinstance(x, dict) and len(x) == 1
                        else f"({human(x)})" if isinstance(x, dict) else human(x)
                        for x in v)
    return str(v)


#: image differences shown in text (all of them are in the JSON)
DIFFERENCES_SHOWN = 12


def _clip_difference(d: str, width: int | None) -> str:
    """``path: before -> after`` cut to ``width`` keeping what tells two lines apart in
    view: the node's own name (a path's end), a short ``before``, and ``after`` (a long
    ``before`` must not hide that ``after`` is ``(absent)``); the path gives up its
    middle first."""
    from kmeta.render.console import clip

    head, arrow, tail = d.rpartition(" -> ")
    if width is None or len(d) <= width or not arrow:
        return clip(d, width)
    path, colon, before = head.partition(": ")
    after = clip(tail, min(len(tail), width // 4))
    before = clip(before, min(len(before), width // 4))
    room = width - len(colon) - len(before) - len(arrow) - len(after)
    return _clip_middle(path, max(room, 1)) + colon + before + arrow + after


def _clip_middle(text: str, width: int) -> str:
    """``text`` in ``width`` columns, its middle given up for "…": a path keeps its root
    and its leaf."""
    if len(text) <= width:
        return text
    if width < 2:
        return "…"[:width]
    end = (width - 1) * 2 // 3
    return text[:width - 1 - end] + "…" + text[len(text) - end:]


def difference_lines(title: str, diffs: list[str], indent: str = "  ", *,
                     width: int | None = None) -> Iterator[str]:
    """``title: N difference(s)`` and the first few, each cut to ``width`` (the terminal's:
    a whole topic's state is one line; None keeps them whole); the JSON holds them all,
    in full."""
    if not diffs:
        yield f"{indent}{title}: the same"
        return
    yield f"{indent}{title}: {len(diffs)} difference(s)"
    for d in diffs[:DIFFERENCES_SHOWN]:
        yield f"{indent}  {_clip_difference(d, width - len(indent) - 2 if width else None)}"
    more = len(diffs) - DIFFERENCES_SHOWN
    if more > 0 or (width and any(len(d) + len(indent) + 2 > width
                                  for d in diffs[:DIFFERENCES_SHOWN])):
        yield f"{indent}  " + (f"… {more} more; " if more > 0 else "") + \
            "--json has them all, in full"


def summarise(items: list[Any], what: str, shown: int = 8) -> str:
    """A long list as its first and last items and a count: ``1,2,3,…,299,300 (300
    epochs)``; a short one whole."""
    if len(items) <= shown:
        return ",".join(map(human, items)) or "-"
    half = shown // 2
    return (",".join(map(human, items[:half])) + ",…," + ",".join(map(human, items[-half:]))
            + f" ({len(items)} {what})")


def _entry_lines(b: Any, entries: Iterable[Any], records: bool, show_hex: bool,
                 colour: bool = False) -> Iterator[str]:
    for e in entries:
        if type(e) is not tuple:
            yield finding_line(e, colour)
        elif records:
            yield record_line(b, e[0], e[1], show_hex)


def render(events: Iterable[Any], *, records: bool, show_hex: bool = False,
           only_matches: bool = False, colour: bool = False,
           utf8: bool = False) -> Iterator[str | bytes]:
    """``only_matches`` (dump --type): a file's header is shown only above a batch or
    finding of it, so that files without a matching record take no lines.  ``colour``:
    finding codes painted by severity (stdout is a terminal).  ``utf8``: a run of
    batches may come as the UTF-8 bytes of its lines (``formats.runs.RunText``), for
    ``Environment.write_lines``; else every item is text."""
    pending: FileEvent | None = None
    runs = RunText((lambda b, p: f"{batch_line(b)}\n{record_line(b, b.records()[0], p)}")
                   if records else (lambda b, p: batch_line(b)))
    for ev in events:
        if type(ev) is RecordRun:
            text = runs.text(ev[0], ev[1])
            yield text if utf8 or type(text) is str else text.decode()
            continue
        if only_matches:
            if isinstance(ev, FileEvent):
                pending = ev
                continue
            if pending is not None:
                yield from file_lines(pending)
                pending = None
        if type(ev) is BatchDump or type(ev) is OneRecord:
            b = ev.batch
            yield batch_line(b)
            if show_hex:
                masked = ev.masked
                yield f"  hex: {mask_hex(b.raw, masked)}"
                if masked:
                    yield f"  masked: {masked_text(masked)} ({SHOW_SECRETS})"
            yield from _entry_lines(b, ev.entries, records, show_hex, colour)
        elif type(ev) is BatchMore:
            yield from _entry_lines(ev.batch, ev.entries, records, show_hex, colour)
        elif isinstance(ev, Finding):
            yield finding_line(ev, colour)
        elif isinstance(ev, FileEvent):
            yield from file_lines(ev)


def shell_command(*args: str) -> str:
    """``kmeta ARGS``, each argument quoted for a POSIX shell: a command kmeta suggests is
    pasted as it stands (a path with a space or a quote in it included)."""
    import shlex

    return shlex.join(("kmeta", *args))
