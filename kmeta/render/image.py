"""``kmeta image`` and ``kmeta history`` output: rich tables for people, JSON for scripts.

Secrets never appear: the image's canonical JSON already holds only fingerprints of SCRAM
credentials and delegation token ids, and the tables show users and owners, not keys.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from rich.console import Console
from rich.table import Table

from kmeta.ops.replay import HistoryRow, ImageResult, NodeLookup, children, public_json
from kmeta.render.console import console_width, fit_table, fold, noted_title
from kmeta.render.jsonl import dumps
from kmeta.render.nodes import ls_matches
from kmeta.render.text import human

SECURITY_PROTOCOLS = {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}


def _ts(ms: int | None) -> str:
    if ms is None or ms < 0:
        return "-"
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] \
            + "Z"
    except (OverflowError, OSError, ValueError):
        return str(ms)


def _ints(v: Iterable[int] | None) -> str:
    return ",".join(map(str, v or ())) or "-"


def _endpoints(eps: list[dict[str, Any]]) -> str:
    return " ".join(f"{e['name']}://{e['host']}:{e['port']}"
                    + ("" if SECURITY_PROTOCOLS.get(e.get("securityProtocol")) == e["name"]
                       else f"({SECURITY_PROTOCOLS.get(e.get('securityProtocol'), '?')})")
                    for e in eps) or "-"


def _table(title: str, *columns: str, numbers: tuple[str, ...] = ()) -> Table:
    """A table of the image: ``numbers``, the columns of numbers (never cut nor
    folded); text folds where it must."""
    t = Table(title=title, title_justify="left", show_edge=False)
    for c in columns:
        t.add_column(c, overflow="fold", no_wrap=c in numbers)
    return t


def _print(console: Console, table: Table, *drop: str) -> None:
    """``table`` fitted to the console, ``drop``'s columns left out first named first
    where it must (:func:`fit_table`), and said so under its title.  An empty table is
    one line: its title and "none" (a header over no row reads as a table cut short)."""
    if not table.row_count:
        console.print(f"{table.title}: none", markup=False, highlight=False)
        return
    table.title = noted_title(str(table.title), fit_table(table, console, drop), console)
    console.print(table)


# ---------------------------------------------------------------------- image

def header_line(result: ImageResult) -> str:
    line = (f"image at offset {result.offset} (from {result.started_from}, "
            f"{result.records:,} log record(s) applied"
            + (f", log end offset {result.log_end}" if result.log_end is not None else "")
            + f"), digest {result.image.digest()}")
    return line


def image_json(result: ImageResult) -> str:
    """One JSON object: kind, offset, digest, image, plus where the replay started."""
    return dumps({
        "kind": "image",
        "offset": result.offset,
        "digest": result.image.digest(),
        "image": public_json(result.image),
        "from": None if result.snapshot is None else str(result.snapshot),
        "start_offset": result.start_offset,
        "records": result.records,
        "log_end_offset": result.log_end,
    })


def render_image(result: ImageResult, console: Console) -> None:
    j = public_json(result.image)

    def out(line: str) -> None:
        console.print(fold(line, console_width(console)), markup=False, highlight=False)

    out(header_line(result))
    feats = ", ".join(f"{k}={v}" for k, v in j["features"].items()) or "none"
    out(f"features: {feats}")
    if j["zkMigrationState"] is not None:
        out(f"zkMigrationState: {human(j['zkMigrationState'])}")
    out(f"nextProducerId: {human(j['producerIds']['nextProducerId'])}")
    if j["transaction"]:
        out(f"open metadata transaction: {human(j['transaction'])}")

    t = _table("brokers", "id", "epoch", "fenced", "endpoints", "rack", "logDirs",
               numbers=("id", "epoch", "logDirs"))
    for b in j["brokers"].values():
        fenced = "yes" if b["fenced"] else "no"
        if b.get("inControlledShutdown"):
            fenced += " (controlled shutdown)"
        t.add_row(str(b["id"]), str(b["epoch"]), fenced, _endpoints(b["endPoints"]),
                  b.get("rack") or "-", str(len(b.get("logDirs") or ())))
    _print(console, t, "logDirs", "rack", "epoch")

    t = _table("controllers", "id", "endpoints", "incarnationId", numbers=("id",))
    for c in j["controllers"].values():
        t.add_row(str(c["id"]), _endpoints(c["endPoints"]), c["incarnationId"])
    _print(console, t, "incarnationId")

    t = _table("topics", "name", "id", "partitions", "configs",
               numbers=("partitions", "configs"))
    topic_cfg = j["configs"].get("TOPIC", {})
    for name, topic in j["topics"].items():
        t.add_row(name, topic["topicId"], str(len(topic["partitions"])),
                  str(len(topic_cfg.get(name, {}))))
    _print(console, t, "configs", "id")

    t = _table("partitions", "topic", "partition", "leader", "leaderEpoch", "partitionEpoch",
               "replicas", "isr", numbers=("partition", "leader", "leaderEpoch",
                                           "partitionEpoch", "replicas", "isr"))
    for name, topic in j["topics"].items():
        for pid, p in topic["partitions"].items():
            t.add_row(name, pid, str(p["leader"]), str(p["leaderEpoch"]),
                      str(p["partitionEpoch"]), _ints(p["replicas"]), _ints(p["isr"]))
    _print(console, t, "partitionEpoch", "leaderEpoch", "isr")

    t = _table("configs", "resource", "name", "key", "value")
    for rtype, resources in j["configs"].items():
        for rname, entries in resources.items():
            for k, v in entries.items():
                t.add_row(rtype, rname, k, human(v))
    _print(console, t, "resource")

    t = _table("SCRAM users", "user", "mechanism", "iterations", numbers=("iterations",))
    for user, mechs in j["scram"].items():
        for mech, cred in mechs.items():
            t.add_row(user, mech, str(cred["iterations"]))
    _print(console, t, "iterations")

    t = _table("delegation tokens", "owner", "requester", "renewers", "expires",
               numbers=("expires",))
    for tok in j["delegationTokens"].values():
        t.add_row(tok["owner"], tok["requester"], ",".join(tok["renewers"]) or "-",
                  _ts(tok["expirationTimestamp"]))
    _print(console, t, "renewers", "requester")
    out(f"ACLs: {len(j['acls'])}  client quota entities: {len(j['clientQuotas'])}")


def ls_lines(node: Any) -> list[str]:
    """The names under a node, one per line."""
    return children(node)


def cat_text(node: Any) -> str:
    return json.dumps(node, indent=2, ensure_ascii=False)


def node_lines(found: NodeLookup, action: str, json_out: bool) -> list[str]:
    """``kmeta image ls|cat NODE``.  An old path: its names (in the image JSON's order) or
    its JSON, as before.  A path of Kafka's tree: ``ls`` as kafka-metadata-shell prints
    it without a terminal (one name a line); ``cat`` a leaf's text as Kafka's, a
    directory's JSON (Kafka refuses to cat one).  With ``--json``: ls a JSON array of the
    names (an object path -> names when a glob matched several nodes), cat one JSON value
    per node."""
    if found.legacy:
        if action == "ls":
            names = ls_lines(found.value)
            return [dumps(names)] if json_out else names
        return [dumps(found.value) if json_out else cat_text(found.value)]
    if action == "ls":
        if not json_out:
            return [line.text for line in ls_matches(found.found)]
        listed = {p: (n.names() if n.is_dir else [n.name]) for p, n in found.found}
        return [dumps(next(iter(listed.values())) if len(listed) == 1 else listed)]
    if json_out:
        return [dumps(n.json) for _, n in found.found]
    return [cat_text(n.json) if n.is_dir else n.text for _, n in found.found]


# ---------------------------------------------------------------------- history

def history_lines(rows: Iterable[HistoryRow]) -> Iterator[str]:
    """``offset epoch timestamp TYPE vN {json}``, one line per record."""
    for r in rows:
        version = "v?" if r.version is None else f"v{r.version}"
        yield (f"{r.offset} {r.leader_epoch} {_ts(r.timestamp)} {r.type} {version} "
               f"{dumps(r.data)}")


def history_json(rows: Iterable[HistoryRow]) -> Iterator[str]:
    for r in rows:
        yield dumps(r.to_json())
