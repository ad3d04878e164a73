"""No secret in any view (issue 32, point 3).

SCRAM salts and keys, delegation token ids and sensitive config values are ``[redacted]``
in decoded fields; where a view shows bytes (a batch or a value in hex, a value as base64
or text with the raw, utf8 and hex decoders) their bytes are masked, and the view says
which.  Each test runs every view over a log or snapshot that holds secrets and looks for
the secrets in every encoding: hex, base64 (at each of the three alignments a secret can
have inside a longer value) and text.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import clirun
import pytest

from kmeta.formats.batch import build_batch
from kmeta.formats.field_bytes import Masked
from kmeta.formats.payload import encode_control, encode_metadata
from kmeta.ops.redact import batch_masks, mask_base64, mask_hex, mask_utf8, secret_spans

META = "__cluster_metadata-0"
SCRAM_SNAPSHOTS = Path("kraft412-scram-snapshots") / "data" / "kafka"

#: Every way dump shows a batch or a record: each decoder, text and JSON, with and
#: without --hex, and the batch headers alone.
DUMP_VIEWS: list[list[str]] = [
    ["dump", "--batches-only", "--hex"], ["dump", "--batches-only", "--hex", "--json"],
    *[["dump", "-r", *decoder, *json_out, *hexed]
      for decoder in ([], ["--decoder", "metadata"], ["--decoder", "raw"],
                      ["--decoder", "utf8"], ["--decoder", "hex"], ["--decoder", "offsets"],
                      ["--decoder", "transactions"], ["--decoder", "share-group-state"],
                      ["--decoder", "remote-log-metadata"])
      for json_out in ([], ["--json"]) for hexed in ([], ["--hex"])],
]


def run(*args: Any) -> str:
    proc = clirun.run(*args, env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
                      timeout=120)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, \
        (args, proc.stderr)
    return proc.stdout + proc.stderr


def needles(secret: bytes) -> Iterator[tuple[str, str]]:
    """(encoding, text) a view showing ``secret`` would hold somewhere."""
    yield "hex", secret.hex()
    for shift in range(3):  # base64 of a value holding the secret ``shift`` bytes in
        text = base64.b64encode(bytes(shift) + secret).decode()
        first = -(-shift * 8 // 6)  # the first character made of the secret's bits only
        last = (shift + len(secret)) * 8 // 6  # past the last
        yield f"base64+{shift}", text[first:last]
    clear = secret.decode("utf-8", "replace")[2:-2]  # its edges may join other bytes
    if len(clear) >= 8:
        yield "text", clear


def strings(obj: Any) -> Iterator[str]:
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from strings(v)


def leaks(output: str, secrets: list[bytes]) -> list[str]:
    """Which secrets ``output`` shows, in which encoding; JSON lines are also read, so an
    escaped character cannot hide one."""
    texts = [output]
    for line in output.splitlines():
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                texts += strings(json.loads(line))
    found = []
    for secret in secrets:
        for encoding, needle in needles(secret):
            if any(needle in t for t in texts):
                found.append(f"{secret[:6]!r}… as {encoding}")
    return found


# --------------------------------------------------------------------------- fixtures

SALT = b"pepper-salt-0123456789"
STORED_KEY = bytes(range(200, 232))
SERVER_KEY = b"server-key-" + bytes(range(100, 121))
SALT2 = b"second-salt-abcdefghij"
STORED_KEY2 = bytes(range(1, 33))
SERVER_KEY2 = b"srv2-" + bytes(range(150, 177))
TOKEN_ID = "token-id-secret-42"
JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required password="hunter2-pw";'
SECRETS = [SALT, STORED_KEY, SERVER_KEY, SALT2, STORED_KEY2, SERVER_KEY2,
           TOKEN_ID.encode(), JAAS.encode()]


def _scram(name: str, salt: bytes, stored: bytes, server: bytes) -> bytes:
    return encode_metadata("USER_SCRAM_CREDENTIAL_RECORD", 0, {
        "name": name, "mechanism": 1, "salt": salt, "storedKey": stored,
        "serverKey": server, "iterations": 4096})


def write_log(root: Path) -> Path:
    """A metadata log built with kmeta's writer: a LeaderChange, then secrets in an
    uncompressed batch (a SCRAM credential, a delegation token, a JAAS config beside a
    plain config) and a SCRAM credential in a gzip batch."""
    part = root / META
    part.mkdir(parents=True)
    key, value = encode_control("LEADER_CHANGE", {"version": 0, "leaderId": 1,
                                                  "voters": [{"voterId": 1}],
                                                  "grantingVoters": [{"voterId": 1}]})
    level = encode_metadata("FEATURE_LEVEL_RECORD", 0, {"name": "metadata.version",
                                                        "featureLevel": 21})
    token = encode_metadata("DELEGATION_TOKEN_RECORD", 0, {
        "owner": "User:alice", "requester": "User:alice", "renewers": [],
        "issueTimestamp": 1, "maxTimestamp": 2, "expirationTimestamp": 2,
        "tokenId": TOKEN_ID})
    jaas = encode_metadata("CONFIG_RECORD", 0, {
        "resourceType": 4, "resourceName": "1",
        "name": "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config", "value": JAAS})
    plain = encode_metadata("CONFIG_RECORD", 0, {"resourceType": 4, "resourceName": "1",
                                                 "name": "log.retention.ms", "value": "1000"})
    data = build_batch(0, [(key, value)], control=True, base_timestamp=1000)
    data += build_batch(1, [(None, v) for v in (
        level, _scram("alice", SALT, STORED_KEY, SERVER_KEY), token, jaas, plain)],
        base_timestamp=1000)
    data += build_batch(6, [(None, _scram("bob", SALT2, STORED_KEY2, SERVER_KEY2))],
                        compression=1, base_timestamp=1000)
    (part / "00000000000000000000.log").write_bytes(data)
    return part


@pytest.fixture(scope="module")
def secret_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_log(tmp_path_factory.mktemp("secrets"))


@pytest.fixture(scope="module")
def written_snapshots(secret_log: Path) -> list[Path]:
    """Snapshots ``kmeta snapshot`` wrote of the log: under Kafka's name, and under a
    name of the user's (read by its first record)."""
    out = secret_log.parent / "snapshots"
    out.mkdir()
    run("snapshot", "--out", out, secret_log)
    run("snapshot", "--out", out / "my-snapshot", secret_log)
    named = sorted(out.glob("*.checkpoint"))
    assert len(named) == 1 and (out / "my-snapshot").is_file()
    return [named[0], out / "my-snapshot"]


# ------------------------------------------------------------------------------ tests


def test_needles_find_what_show_secrets_shows(secret_log: Path) -> None:
    """The search finds each secret where --show-secrets prints it, in every encoding:
    a test of the test."""
    seen = {}
    for decoder in ("raw", "utf8", "hex"):
        seen[decoder] = leaks(run("dump", "-r", "--decoder", decoder, "--show-secrets",
                                  secret_log), SECRETS)
    hexed = leaks(run("dump", "--batches-only", "--hex", "--show-secrets", secret_log),
                  SECRETS)
    # the gzip batch's too: these few bytes compress into a stored block, the secrets
    # as they are (compressed bytes are masked whole for that reason among others)
    assert len(hexed) == len(SECRETS)
    assert len(seen["hex"]) == len(SECRETS) and len(seen["raw"]) == len(SECRETS)
    assert any("as text" in x for x in seen["utf8"])


@pytest.mark.parametrize("view", DUMP_VIEWS, ids=" ".join)
def test_no_secret_in_dump_of_a_log(secret_log: Path, view: list[str]) -> None:
    out = run(*view, secret_log)
    assert leaks(out, SECRETS) == []
    if "--hex" in view or "--decoder" in view and "metadata" not in view:
        assert "masked" in out


@pytest.mark.parametrize("view", DUMP_VIEWS, ids=" ".join)
def test_no_secret_in_dump_of_written_snapshots(written_snapshots: list[Path],
                                                 view: list[str]) -> None:
    for snapshot in written_snapshots:
        out = run(*view, snapshot)
        assert leaks(out, SECRETS) == [], snapshot.name
        assert "reading it as a log segment" not in out


def test_a_snapshot_under_another_name_is_read_as_a_snapshot(
        written_snapshots: list[Path]) -> None:
    out = run("dump", "--json", written_snapshots[1])
    objs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    file = next(o for o in objs if o["kind"] == "file")
    assert (file["file_kind"], file["decoder"]) == ("kraft-snapshot", "metadata")
    assert any(o.get("code") == "S007" and "KRaft snapshot" in o["message"] for o in objs)
    records = [o for o in objs if o["kind"] == "record"]
    assert {r["type"] for r in records} >= {"SNAPSHOT_HEADER", "USER_SCRAM_CREDENTIAL_RECORD"}


def test_masked_bytes_are_named(secret_log: Path) -> None:
    """Where bytes are masked, the output says which: the record, the field, the bytes."""
    objs = [json.loads(line) for line in
            run("dump", "--json", "--hex", secret_log).splitlines()]
    batches = [o for o in objs if o["kind"] == "batch"]
    plain, gzip = batches[1], batches[2]
    fields = [(m["offset"], m["field"]) for m in plain["masked"]]
    assert fields == [(2, "salt"), (2, "storedKey"), (2, "serverKey"), (3, "tokenId"),
                      (4, "value")]
    raw = bytes.fromhex(plain["hex"].replace("*", "0"))
    for m in plain["masked"]:
        assert plain["hex"][2 * m["position"]:2 * (m["position"] + m["length"])] \
            == "*" * 2 * m["length"]
        assert raw[m["position"] - 1] == m["length"] + 1  # its compact length just before
    assert gzip["masked"] == [{"offset": None, "field": "compressed records", "position": 61,
                               "length": gzip["size"] - 61}]
    assert gzip["hex"].endswith("*" * 2 * (gzip["size"] - 61))
    assert "*" not in gzip["hex"][:122]
    scram = next(o for o in objs if o["kind"] == "record" and o["offset"] == 2)
    value = bytes.fromhex(scram["value_hex"].replace("*", "0"))
    assert [(m["field"], value[m["position"] - 1]) for m in scram["masked"]] == \
        [("salt", len(SALT) + 1), ("storedKey", 33), ("serverKey", len(SERVER_KEY) + 1)]
    plain_config = next(o for o in objs if o["kind"] == "record" and o["offset"] == 5)
    assert "masked" not in plain_config and "*" not in plain_config["value_hex"]
    text = run("dump", "--hex", "-r", secret_log)
    assert f"masked: offset 2: salt ({len(SALT)} bytes at" in text
    assert "masked: the compressed records (" in text
    assert "--show-secrets shows them" in text


def test_show_secrets_shows_every_byte(secret_log: Path) -> None:
    out = run("dump", "--json", "--hex", "--show-secrets", secret_log)
    assert "*" not in out and '"masked"' not in out
    assert SALT.hex() in out and STORED_KEY.hex() in out


def test_other_views_of_the_log(secret_log: Path, tmp_path: Path) -> None:
    views = [["image"], ["image", "--json"], ["history", "--broker", "1"],
             ["history", "--json", "--broker", "1"], ["info"], ["verify"], ["report"],
             ["report", "--json"], ["report", "--html", tmp_path / "r.html"],
             ["shell", "-c", "find /image; cat /image/scram/*/*; cat /image/configs/*/*; "
              "cat /image/delegationTokens/*; records 0 9; history 0"],
             ["shell", "--json", "-c", "records 0 9; cat /image/scram/*/*"]]
    for view in views:
        assert leaks(run(*view, secret_log), SECRETS) == [], view
    assert leaks((tmp_path / "r.html").read_text(), SECRETS) == []


# ---------------------------------------------------------------------------- real data


def _real_secrets(real: Path) -> list[bytes]:
    """The SCRAM salts and keys of the real snapshots, as --show-secrets gives them."""
    out = run("dump", "--json", "--show-secrets", "--type", "USER_SCRAM_CREDENTIAL_RECORD",
              real / META)
    found = set()
    for line in out.splitlines():
        obj = json.loads(line)
        if obj["kind"] == "record":
            found |= {base64.b64decode(obj["data"][k])
                      for k in ("salt", "storedKey", "serverKey")}
    return sorted(found)


@pytest.fixture(scope="module")
def real(real_data: Path) -> tuple[Path, list[bytes]]:
    path = real_data / SCRAM_SNAPSHOTS
    if not path.is_dir():
        pytest.skip(f"{path} is absent")
    secrets = _real_secrets(path)
    assert len(secrets) == 6
    return path, secrets


@pytest.mark.parametrize("view", DUMP_VIEWS, ids=" ".join)
def test_no_secret_in_dump_of_real_snapshots(real: tuple[Path, list[bytes]],
                                             view: list[str]) -> None:
    path, secrets = real
    newest = sorted((path / META).glob("*.checkpoint"))[-1]
    for target in (path, newest):
        assert leaks(run(*view, target), secrets) == [], target


def test_no_secret_in_other_views_of_real_snapshots(real: tuple[Path, list[bytes]],
                                                    tmp_path: Path) -> None:
    path, secrets = real
    views = [["image"], ["image", "--json"], ["info"], ["info", "--json"], ["verify"],
             ["report"], ["report", "--json"], ["report", "--html", tmp_path / "r.html"],
             ["history", "--broker", "1"],
             ["shell", "-c", "find /image; cat /image/scram/*/*; history 0"]]
    for view in views:
        assert leaks(run(*view, path), secrets) == [], view
    assert leaks((tmp_path / "r.html").read_text(), secrets) == []
    assert leaks(run("dump", "--batches-only", "--hex", "--show-secrets", path), secrets)


# ------------------------------------------------------------------------------ units


def test_secret_spans_of_a_value() -> None:

    value = _scram("alice", SALT, STORED_KEY, SERVER_KEY)
    spans = secret_spans(value, metadata=False)
    assert [value[m.position:m.position + m.length] for m in spans] == \
        [SALT, STORED_KEY, SERVER_KEY]
    assert [m.field for m in spans] == ["salt", "storedKey", "serverKey"]
    # an unknown version of a secret type: its body, in a metadata log only
    future = value[:2] + b"\x07" + value[3:]
    assert secret_spans(future, metadata=True) == (Masked("body", 3, len(value) - 3),)
    assert secret_spans(future, metadata=False) == ()
    topic = encode_metadata("TOPIC_RECORD", 0, {"name": "t",
                                                "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"})
    assert secret_spans(topic, metadata=True) == ()  # not a secret type
    # a record that does not decode may be anything, a damaged secret too: in a metadata
    # log its body is masked; its frame unreadable, all of it
    assert secret_spans(topic[:-3], metadata=True) == (Masked("body", 3, len(topic) - 6),)
    assert secret_spans(b"\xff\xff", metadata=True) == (Masked("body", 0, 2),)
    assert secret_spans(topic[:-3], metadata=False) == ()


def test_masked_encodings() -> None:

    data = bytes(range(10))
    masks = [Masked("x", 3, 2)]
    assert mask_hex(data, masks) == "000102****0506070809"
    text = mask_base64(data, masks)
    assert len(text) == len(base64.b64encode(data)) and re.fullmatch(r"AAEC\*+[^*]+", text)
    assert mask_utf8(b"abcdefg", masks) == "abc**fg"


def test_a_damaged_records_section_of_a_metadata_batch_is_masked_from_the_damage() -> None:
    from kmeta.formats.batch import parse_batch

    raw = bytearray(build_batch(0, [(None, _scram("a", SALT, STORED_KEY, SERVER_KEY))]))
    raw[61] = 0x7f  # the record's length: past the end of the batch
    batch = parse_batch(bytes(raw))
    assert batch_masks(batch, metadata=True) == \
        (Masked("unreadable records", 61, len(raw) - 61),)
    assert batch_masks(batch, metadata=False) == ()


def _damaged_logs(root: Path) -> Iterator[Path]:
    """The secret log damaged as a disk damages it: the SCRAM record's apiKey byte changed
    (it no longer decodes, or reads as no secret type), and the first batch's length grown
    over the batch after it (a control batch that runs on over the secrets)."""
    good = write_log(root / "good") / "00000000000000000000.log"
    data = good.read_bytes()
    at = data.index(_scram("alice", SALT, STORED_KEY, SERVER_KEY))
    for name, change in (("apikey", lambda b: b.__setitem__(at + 1, 46)),
                         ("runs-on", lambda b: b.__setitem__(slice(8, 12),
                                                             (232).to_bytes(4, "big")))):
        damaged = bytearray(data)
        change(damaged)
        part = root / name / META
        part.mkdir(parents=True)
        (part / good.name).write_bytes(bytes(damaged))
        yield part


def test_no_secret_in_dump_of_damaged_logs(tmp_path: Path) -> None:
    """A damaged record may be a secret kmeta can no longer recognise: in a metadata log,
    what does not decode is masked (--show-secrets shows it)."""
    for part in _damaged_logs(tmp_path):
        for view in DUMP_VIEWS:
            out = run(*view, part)
            assert leaks(out, [SALT, STORED_KEY, SERVER_KEY]) == [], (part.parent.name, view)
        shown = run("dump", "--batches-only", "--hex", "--show-secrets", part)
        assert leaks(shown, [SALT, STORED_KEY, SERVER_KEY]), part.parent.name


def test_an_image_of_a_snapshot_under_another_name_asks_for_its_name(
        written_snapshots: list[Path]) -> None:
    """Read as a snapshot, it still does not say where it stands: an image would claim
    offset 0, so the image's commands ask for the name that says it."""
    proc = clirun.run("image", written_snapshots[1], env={**os.environ, "NO_COLOR": "1"})
    assert proc.returncode == 2
    assert "end offset and epoch are in a snapshot's name only" in proc.stderr
    assert clirun.run("image", written_snapshots[0]).returncode == 0
