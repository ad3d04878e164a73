"""Sample runs: what every ``--json`` command writes on a tiny log dir built here and on a
few of the repository's fixtures, checked against the declaration of every JSON object
kind (:mod:`kmeta.output_schema`).  Generation fails on a difference, as does
``tests/test_output_schema.py``: a key written but not declared, declared but written by
no sample, a value of another type, a key said to be optional that every object has."""

from __future__ import annotations

import contextlib
import gc
import io
import json
import struct
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from kmeta.cli import app
from kmeta.formats.batch import Header, build_batch
from kmeta.formats.legacy import build_message
from kmeta.formats.payload import encode_control, encode_metadata
from kmeta.output_schema import WRITTEN_BY, ObjectKind, check, nested_kinds, objects
from kmeta.spark.export import ExportResult  # imports no pyspark
from tools.docs import PROG, ROOT, DocsError

#: The fixtures of the repository the command samples are read from.
FIXTURES = Path("fixtures") / "data"
#: An offset of the healthy fixture's log inside a metadata transaction (the one begun at
#: offset 1824 and aborted at 1831), where ``image --at`` shows it open.
OPEN_TRANSACTION_AT = 1830


def run_cli(args: list[str]) -> str:
    """Run kmeta in-process, the way the installed script would, and return stdout."""
    raw = io.BytesIO()  # kmeta may write bytes to sys.stdout.buffer
    out = io.TextIOWrapper(raw, encoding="utf-8", newline="", write_through=True)
    err = io.StringIO()
    gc_was_enabled = gc.isenabled()  # dump and verify turn the cyclic collector off
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            app(args=args, prog_name=PROG, standalone_mode=False)
        except SystemExit:
            pass
        except Exception as e:
            raise DocsError(f"kmeta {' '.join(args)} failed on the sample: "
                            f"{type(e).__name__}: {e}\n{err.getvalue()}") from e
        finally:
            out.flush()
            if gc_was_enabled:
                gc.enable()
    return raw.getvalue().decode("utf-8", "surrogateescape")


def write_sample(root: Path) -> None:
    """A tiny log dir with one of each kind of object (and optional key) dump can emit."""
    topic_id = "AAAAAAAAAAAAAAAAAAAAAQ"
    meta = root / "__cluster_metadata-0"
    meta.mkdir()
    key, value = encode_control("LEADER_CHANGE", {"version": 0, "leaderId": 1,
                                                  "voters": [{"voterId": 1}],
                                                  "grantingVoters": [{"voterId": 1}]})
    segment = (
        build_batch(0, [(key, value)], control=True, leader_epoch=1, base_timestamp=1000)
        + build_batch(1, [
            (None, encode_metadata("TOPIC_RECORD", 0, {"name": "t", "topicId": topic_id}),
             [Header("origin", b"kmeta")]),
            (None, encode_metadata("CONFIG_RECORD", 0, {
                "resourceType": 2, "resourceName": "t", "name": "retention.ms",
                "value": "1000"})),
        ], leader_epoch=1, base_timestamp=1001)
        + build_batch(3, [(None, b"\x01\x14\x00\x00")], leader_epoch=1, crc=1)
        + bytes(64)
    )
    (meta / "00000000000000000000.log").write_bytes(segment)
    # a SCRAM credential: its masked bytes (dump --hex)
    scram = encode_metadata("USER_SCRAM_CREDENTIAL_RECORD", 0, {
        "name": "u", "mechanism": 1, "salt": b"s" * 4, "storedKey": b"k" * 4,
        "serverKey": b"v" * 4, "iterations": 4096})
    (meta / "00000000000000000004-0000000001.checkpoint").write_bytes(
        build_batch(0, [(None, b"\x01\x14\x00\x00"), (None, scram)], leader_epoch=1))
    (meta / "leader-epoch-checkpoint").write_text("0\n1\n1 0\n")
    legacy = root / "legacy-0"
    legacy.mkdir()
    (legacy / "00000000000000000000.log").write_bytes(
        build_message(0, b"k", b"v", magic=1, timestamp=1000))
    (legacy / "00000000000000000000.log.deleted").write_bytes(
        build_batch(0, [(b"k", b"v")]))
    (root / "meta.properties").write_text("version=1\nnode.id=1\ncluster.id=sample\n")
    (legacy / "notes.txt").write_text("not a Kafka file\n")  # a finding without position
    # A negative batch length: a finding without an offset.
    bad = bytearray(build_batch(0, [(b"k", b"v")]))
    struct.pack_into(">i", bad, 8, -5)
    (root / "stray-0").mkdir()
    (root / "stray-0" / "00000000000000000000.log").write_bytes(bytes(bad))


def _runs(sample: Path, scratch: Path) -> dict[str, list[list[str]]]:
    """The command lines of the samples, by command: the tiny log dir ``sample`` (dump with
    and without --hex, info, verify) and fixtures that between them write every kind of
    object and every optional key; outputs go under ``scratch``.  Each runs well under a
    second."""
    data = ROOT / FIXTURES
    if not data.is_dir():
        raise DocsError(f"{data} is missing: JSON OUTPUT is checked against runs on kmeta's "
                        "fixtures")
    healthy = data / "healthy"
    divergent = data / "divergent"
    quorum3 = divergent / "quorum3"
    prefix = divergent / "truncated-prefix"
    unclean = divergent / "unclean"
    identical = divergent / "identical"
    torn = str(data / "corrupt" / "torn-tail" / "__cluster_metadata-0")
    bad_crc = str(data / "corrupt" / "bad-crc" / "__cluster_metadata-0")
    (scratch / "snapshot").mkdir()
    return {
        "dump": [["dump", "--json", str(sample)], ["dump", "--json", "--hex", str(sample)]],
        # the tiny dir, and a small file given alone (a small_file object)
        "info": [["info", "--json", str(sample)],
                 ["info", "--json", str(sample / "meta.properties")]],
        "verify": [["verify", "--json", str(sample)]],
        # three replicas: a majority, a lagging and a diverged pair (content_divergence);
        # truncated-prefix: logs that start at different offsets (at_log_start);
        # identical: no image differences at all
        "diff": [["diff", "--json", *(str(quorum3 / r) for r in "abc")],
                 ["diff", "--json", str(prefix / "a"), str(prefix / "b")],
                 ["diff", "--json", str(identical / "a"), str(identical / "b")]],
        "truncate": [["truncate", "--json", str(unclean / "a"), "--to-divergence-with",
                      str(unclean / "b")]],
        # bad-crc: a cut below the latest snapshot (committed_lost)
        "repair": [["repair", "--json", "--dry-run", torn],
                   ["repair", "--json", "--out", str(scratch / "repaired"), torn],
                   ["repair", "--json", "--dry-run", bad_crc]],
        "snapshot": [["snapshot", "--json", "--out", str(scratch / "snapshot"), str(healthy)]],
        # healthy: every section of the image; --at 1830 stops inside a metadata
        # transaction (image.transaction); v101: a replay with a finding
        "image": [["image", "--json", str(healthy)],
                  ["image", "--json", "--at", str(OPEN_TRANSACTION_AT), str(healthy)],
                  ["image", "--json", str(data / "verify" / "v101-unknown-topic")]],
        "history": [["history", "--json", "--topic", "orders", str(healthy)],
                    ["history", "--json", "--broker", "4", str(healthy)]],
        # healthy: every kind of event, leaders, anomalies (V132)
        "brokers": [["brokers", "--json", str(healthy)]],
        # healthy: deletions by both rules, a follower of each answer
        "retention": [["retention", "--json", "--retention-bytes", "600KiB", "--retention-ms",
                       "40min", "--replica", "2=3000", "--replica", "3=12704",
                       "--replica", "4=20000:99", str(healthy)]],
        # consumers: every verdict against node 2, and a position given by hand
        "consumers": [["consumers", "--json", str(data / "consumers" / "node1"), "--against",
                       str(data / "consumers" / "node2")],
                      ["consumers", "--json", "--against",
                       str(data / "consumers" / "node2" / "orders-0"), "--position", "70:2"]],
        # tiering: every kind of remote segment state, an unknown pending offset
        "tiering": [["tiering", "--json", str(data / "tiering" / "broker")]],
        # report: three replicas of a quorum (every area), an unclean broker
        "report": [["report", "--json", *(str(quorum3 / r) for r in "abc")],
                   ["report", "--json", str(data / "startup" / "unclean")]],
        # startup: a crash (recoveries, a cut, an index, a swap), moves, a refusal
        "startup": [["startup", "--json", str(data / "startup" / "unclean")],
                    ["startup", "--json", str(data / "startup" / "moves" / "a"),
                     str(data / "startup" / "moves" / "b")],
                    ["startup", "--json", str(data / "startup" / "badname")],
                    # the metadata log recovered whole: a cut that loses records
                    ["startup", "--json", str(data / "repair" / "bad-crc-mid-log")],
                    # offsets Kafka's recovery checks: a split, a segment emptied
                    ["startup", "--json", str(data / "startup" / "offsets")],
                    # the image against the disk: placement and missing_replica objects
                    ["startup", "--json", str(data / "placement" / "jbod" / "logs-a"),
                     str(data / "placement" / "jbod" / "logs-b")],
                    # two brokers (node 4, whose two dirs disagree, and node 5): the
                    # startup_brokers line
                    ["startup", "--json",
                     *(str(data / "placement" / "mixed" / d) for d in ("logs-a", "logs-b",
                                                                        "logs-c"))]],
        # shell: every command, two replicas (replica, diff across them), a refusal
        "shell": [["shell", "--json", str(healthy), "-c",
                   "ls /image; cat /image/cluster/brokers/4; tree /image/features; find "
                   "/image/producerIds; cd /image/topics; pwd; at 12000; prev; next 2; diff "
                   "0 end /image/features; changes /image/features; history 5; grep orders "
                   "/image/topics/byName/orders; records 5 7; replica; help; at nowhere"],
                  ["shell", "--json", str(quorum3 / "a"), str(quorum3 / "b"), "-c",
                   "replica b; diff a@end b@end"]],
        # compact: every strategy, every batch, a key, the disagreements
        "compact": [["compact", "--json", "--compare", "--header", "version", "--batches",
                     "--key", "K1", str(data / "compaction" / "two-producers" / "orders-0")],
                    ["compact", "--json", "--batches",
                     str(data / "compaction" / "tombstones" / "orders-0")]],
    }


def written() -> list[tuple[str, dict[str, Any]]]:
    """Every object the sample runs write, with the command that wrote it.  image ls, cat
    and --digest write none: they are checked against image --json
    (:func:`check_image_views`).  export: its result object (Spark is too slow to start
    here)."""
    out: list[tuple[str, dict[str, Any]]] = []
    with tempfile.TemporaryDirectory(prefix="kmeta-docs-") as sample, \
            tempfile.TemporaryDirectory(prefix="kmeta-docs-out-") as scratch:
        write_sample(Path(sample))
        for command, arg_lists in _runs(Path(sample), Path(scratch)).items():
            for args in arg_lists:
                lines = [line for line in run_cli(args).splitlines() if line.strip()]
                if not lines:
                    raise DocsError(f"kmeta {' '.join(args)} wrote no JSON")
                out += [(command, json.loads(line)) for line in lines]
    healthy = ROOT / FIXTURES / "healthy"
    image = next(obj for command, obj in out if command == "image")
    views = check_image_views(healthy, image)
    if views:
        raise DocsError("kmeta image ls, cat and --digest disagree with image --json:\n  "
                        + "\n  ".join(views))
    out.append(("export", ExportResult(Path("out"), "parquet", "local[*]").to_json()))
    return out


def problems(objects_written: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Where the objects written and their declaration disagree: each object checked
    (:func:`kmeta.output_schema.check`), then every kind some command writes: met at
    all, each key written at least once, each optional key absent at least once."""
    out = []
    keys: dict[ObjectKind, set[str]] = defaultdict(set)  # the keys met
    lacking: dict[ObjectKind, set[str]] = defaultdict(set)  # keys some object lacked
    for command, obj in objects_written:
        out += [f"{command} --json: {p}" for p in check(command, obj)]
        for kind, found in objects(command, obj):
            keys[kind] |= set(found)
            lacking[kind] |= {k.name for k in kind.keys} - set(found)
    declared = dict.fromkeys(k for tops in WRITTEN_BY.values() for top in tops
                             for k in nested_kinds(top))
    for kind in declared:
        if kind not in keys:
            out.append(f"no {kind.name} object was written by the sample runs")
            continue
        for k in kind.keys:
            if k.name not in keys[kind]:
                out.append(f"key {k.name!r} of {kind.name} objects is declared in "
                           "kmeta/output_schema.py but no sample run wrote it")
            elif k.optional and k.name not in lacking[kind]:
                out.append(f"key {k.name!r} of {kind.name} objects is declared optional but "
                           "every one written has it")
    return out


def check_image_views(path: Path, whole: dict[str, Any]) -> list[str]:
    """What JSON OUTPUT says of ``image ls``, ``cat`` and ``--digest`` against ``whole``,
    the ``image --json`` object for ``path``: ls / lists Kafka's root (image, local), cat /
    is the image, ls of an old section path lists that section's keys, cat of a broker is
    that broker's object, on one line, and --digest prints the digest alone."""
    image = whole.get("image") or {}
    wrong = []
    ls = run_cli(["image", str(path), "ls", "/", "--json"])
    if ls.count("\n") != 1 or json.loads(ls) != ["image", "local"]:
        wrong.append(f"image ls / --json wrote {ls.strip()!r}, not Kafka's root "
                     "['image', 'local']")
    cat = run_cli(["image", str(path), "cat", "/", "--json"])
    if cat.count("\n") != 1 or json.loads(cat) != image:
        wrong.append("image cat / --json did not write image --json's image on one line")
    ls = run_cli(["image", str(path), "ls", "/brokers", "--json"])
    if ls.count("\n") != 1 or json.loads(ls) != list(image.get("brokers") or {}):
        wrong.append(f"image ls /brokers --json wrote {ls.strip()!r}, not the keys of "
                     "image.brokers")
    broker = next(iter(image.get("brokers") or {}), None)
    if broker is None:
        wrong.append(f"{path} has no broker to cat")
    else:
        cat = run_cli(["image", str(path), "cat", f"/brokers/{broker}", "--json"])
        if cat.count("\n") != 1 or json.loads(cat) != image["brokers"][broker]:
            wrong.append(f"image cat /brokers/{broker} --json did not write "
                            "image.brokers." + broker + " on one line")
    for args in (["--digest"], ["--digest", "--json"]):
        digest = run_cli(["image", *args, str(path)])
        if digest != whole.get("digest", "") + "\n":
            wrong.append(f"image {' '.join(args)} wrote {digest!r}, not the digest of "
                            "image --json")
    return wrong
