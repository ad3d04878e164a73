"""Every object a ``--json`` command writes has exactly the keys of its declared kind
(``kmeta/output_schema.py``), each with the declared type, and every declared key is
written by some run: a renderer cannot drift from the declaration, which the man page's
JSON OUTPUT, the Spark schemas and the export tables are made from.

The runs are those ``python -m tools.docs`` checks too (``tools/docs/samples.py``: a tiny
log dir built there and a few fixtures), and real broker files.
"""

from __future__ import annotations

import copy
import gc
import json
import re
from pathlib import Path
from typing import Any

import pytest

from kmeta import output_schema as schema
from kmeta.ops.export import COMMON, TABLES
from kmeta.output_schema import JSON, WRITTEN_BY, Array, ObjectKind, check, nested_kinds
from tools.docs import ROOT, reference, samples

Written = list[tuple[str, dict[str, Any]]]


@pytest.fixture(scope="module")
def written() -> Written:
    return samples.written()


def test_every_object_written_matches_its_declaration(written: Written) -> None:
    assert samples.problems(written) == []
    assert gc.isenabled(), "running commands in-process left the collector off"


@pytest.mark.parametrize("path", ["ldi-poc", "data-store", "quorum3-boaz",
                                  "kraft412-scram-snapshots", "kraft-ksql-txn"])
def test_real_broker_files_match_the_declaration(real_data: Path, path: str) -> None:
    for command, extra in (("dump", ["--hex"]), ("verify", []), ("info", [])):
        out = samples.run_cli([command, "--json", *extra, str(real_data / path)])
        for line in out.splitlines():
            assert check(command, json.loads(line)) == [], (command, line[:300])


# --------------------------------------------------------- a drift is reported, kind by kind

def _kinds() -> list[ObjectKind]:
    return list(dict.fromkeys(k for tops in WRITTEN_BY.values() for top in tops
                              for k in nested_kinds(top)))


def _one_of(written: Written, kind: ObjectKind) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """A copy of the first top-level object holding a ``kind`` object, and that object in
    the copy (to change it in place)."""
    for command, top in written:
        if any(k is kind for k, _ in schema.objects(command, top)):
            top = copy.deepcopy(top)
            inner = next(o for k, o in schema.objects(command, top) if k is kind)
            return command, top, inner
    raise AssertionError(f"no {kind.name} object written")


def _wrong_value(t: Any) -> Any:
    return "text" if isinstance(t, Array) else []


@pytest.mark.parametrize("kind", _kinds(), ids=lambda k: k.name)
def test_a_key_that_is_not_declared_is_reported(written: Written, kind: ObjectKind) -> None:
    command, top, inner = _one_of(written, kind)
    inner["no_such_key"] = 1
    assert any(f"key 'no_such_key' is not declared for {kind.name} objects" in p
               for p in check(command, top)), check(command, top)


@pytest.mark.parametrize("kind", [k for k in _kinds() if not all(key.optional for key in k.keys)],
                         ids=lambda k: k.name)
def test_a_declared_key_left_out_is_reported(written: Written, kind: ObjectKind) -> None:
    command, top, inner = _one_of(written, kind)
    key = next(k for k in reversed(kind.keys) if not k.optional)
    del inner[key.name]
    assert any(f"lacks key '{key.name}' of {kind.name} objects" in p
               for p in check(command, top)), check(command, top)


@pytest.mark.parametrize("kind", _kinds(), ids=lambda k: k.name)
def test_a_value_of_another_type_is_reported(written: Written, kind: ObjectKind) -> None:
    command, top, inner = _one_of(written, kind)
    key = next(k for k in kind.keys
               if k.type is not JSON and k.name in inner and k.name != "kind")
    inner[key.name] = _wrong_value(key.type)
    assert any(re.search(rf"\.{key.name}: (list|str)\b.*, not", p)
               for p in check(command, top)), check(command, top)


def test_null_where_the_declaration_has_none_is_reported() -> None:
    problems = check("dump", {"kind": "file", "file": None, "file_kind": "segment",
                              "size": 2**63})
    assert problems == ["file.file: null, not STRING", "file.size: 9223372036854775808 does "
                        "not fit BIGINT"]
    assert "batch.position: bool True, not BIGINT" in \
        check("dump", {"kind": "batch", "position": True})


def test_verify_findings_have_the_keys_of_dump_findings() -> None:
    """verify's findings are dump's finding objects: a key of their own is reported."""
    finding = {"kind": "finding", "file": None, "code": "V003", "severity": "error",
               "message": "gap", "hint": "x"}
    assert check("verify", finding) == ["finding: key 'hint' is not declared for finding "
                                        "objects"]
    assert check("verify", {"kind": "batch"})[0].startswith("verify --json wrote an object "
                                                             "of no declared kind")


def test_a_key_no_sample_writes_is_reported(written: Written) -> None:
    less = copy.deepcopy(written)
    for command, top in less:
        for kind, obj in schema.objects(command, top):
            if kind is schema.PAIR:
                obj.pop("kafka", None)
    assert "key 'kafka' of pair objects is declared in kmeta/output_schema.py but no " \
           "sample run wrote it" in samples.problems(less)


def test_a_command_without_output_is_reported(written: Written) -> None:
    problems = samples.problems([(c, o) for c, o in written if c != "diff"])
    assert "no diff object was written by the sample runs" in problems
    assert "no pair object was written by the sample runs" in problems


def test_an_optional_key_every_object_has_is_reported(written: Written) -> None:
    more = copy.deepcopy(written)
    for command, top in more:
        for kind, obj in schema.objects(command, top):
            if kind is schema.FINDING:
                obj.setdefault("position", 0)
    assert "key 'position' of finding objects is declared optional but every one written " \
           "has it" in samples.problems(more)


# ------------------------------------------------------------------ what the declaration is

def test_kmeta_keys_are_snake_case() -> None:
    """kmeta's own keys are snake_case; the image's keep Kafka's JSON names."""
    for kind in _kinds():
        if not kind.kafka_names:
            bad = [k.name for k in kind.keys if not re.fullmatch(r"[a-z][a-z0-9_]*", k.name)]
            assert not bad, f"{kind.name} keys not snake_case: {bad}"


def test_every_kind_written_is_in_the_man_page() -> None:
    assert reference.unlisted() == []


def test_image_sections_with_fixed_keys_are_declared_kinds() -> None:
    """Each section of the image whose entries have fixed keys is a kind of its own,
    which the sample runs meet (one stops inside a metadata transaction); the others map
    names to values."""
    sections = schema.IMAGE_SECTIONS
    entities = {k.name for k in sections.keys
                if any(True for _ in nested_kinds(k.type))}
    assert entities == {k.name for k in sections.keys} - {"features", "configs",
                                                           "clientQuotas", "zkMigrationState"}


def test_export_columns_share_the_types_of_json_keys() -> None:
    """An export column named as a key of kmeta's JSON holds the same fact: it has the
    same type (Kafka's names in the image aside)."""
    types: dict[str, set[str]] = {}
    for kind in _kinds():
        if not kind.kafka_names:
            for k in kind.keys:
                types.setdefault(k.name, set()).add(k.type.ddl)
    for table, columns in TABLES.items():
        for c in COMMON + columns:
            if c.name in types:
                assert types[c.name] == {c.type}, (table, c.name, c.type, types[c.name])


def test_image_views_are_checked() -> None:
    """ls, cat and --digest are compared with image --json: a difference is reported."""
    healthy = ROOT / samples.FIXTURES / "healthy"
    whole = json.loads(samples.run_cli(["image", "--json", str(healthy)]))
    assert samples.check_image_views(healthy, whole) == []
    changed = copy.deepcopy(whole)
    changed["digest"] = "0" * 32
    broker = next(iter(changed["image"]["brokers"]))
    changed["image"]["brokers"][broker]["rack"] = "elsewhere"
    changed["image"]["extra"] = {}
    problems = samples.check_image_views(healthy, changed)
    assert len(problems) == 4, problems
    assert any("cat / --json" in p for p in problems)  # the extra section
    assert any(f"cat /brokers/{broker}" in p for p in problems)
    assert any("--digest --json wrote" in p for p in problems)
