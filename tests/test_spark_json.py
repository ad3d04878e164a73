"""``kmeta dump --json`` and ``kmeta verify --json`` read back by ``spark.read.json`` with the
schemas of ``kmeta.spark.json_schemas`` (mode FAILFAST): every line, every value, every key.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO

from kmeta.spark import json_schemas as js

#: (command, extra options, input: fixture path or real-data path with a "real:" prefix)
CASES = {
    "dump-hex-torn-tail": ("dump", ["--hex"], "corrupt/torn-tail"),
    "dump-healthy": ("dump", [], "healthy"),
    "dump-ldi-poc": ("dump", [], "real:ldi-poc"),
    "dump-quorum3-kafka-3": ("dump", [], "real:quorum3-boaz/data/kafka-3"),
    "verify-torn-tail": ("verify", [], "corrupt/torn-tail"),
    "verify-data-store": ("verify", [], "real:data-store"),
}


def _input(where: str, request: pytest.FixtureRequest) -> Path:
    if where.startswith("real:"):
        return request.getfixturevalue("real_data") / where.removeprefix("real:")
    return FIXTURES / where


def _run(command: str, options: list[str], path: Path, out: Path) -> list[dict]:
    """Run the CLI into ``out``; the objects of its lines as Python reads them."""
    with out.open("wb") as fh:
        proc = subprocess.run([sys.executable, "-m", "kmeta", command, "--json", *options,
                               str(path)], stdout=fh, stderr=subprocess.PIPE, cwd=REPO)
    assert proc.returncode in (0, 1), proc.stderr.decode()  # 1: findings of severity error
    return [json.loads(line) for line in out.read_text("utf-8").splitlines()]


def _canon(obj: dict, names: list[str]) -> str:
    return json.dumps({n: obj.get(n) for n in names}, sort_keys=True)


@pytest.mark.parametrize("case", list(CASES))
def test_json_lines_read_with_schema(case, spark, request, tmp_path):
    command, options, where = CASES[case]
    out = tmp_path / f"{case}.jsonl"
    objects = _run(command, options, _input(where, request), out)
    assert objects, "the command printed nothing"
    kinds = js.COMMANDS[command]

    # The schema covers every key printed, per kind and as a union: nothing is dropped.
    for o in objects:
        assert o["kind"] in kinds, o
        extra = set(o) - {f.name for f in kinds[o["kind"]]}
        assert not extra, f"{o['kind']} keys missing from the schema: {sorted(extra)}"
    df = js.read_kmeta_json(spark, str(out), command=command)
    names = df.schema.fieldNames()
    assert names == [f.name for f in js.fields(command)]
    assert set().union(*objects) <= set(names)

    rows = df.collect()  # FAILFAST: any value that does not fit its type fails here

    # Rows per kind, as Spark parsed them, equal the lines Python parsed.
    by_kind = Counter(r["kind"] for r in rows)
    assert by_kind == Counter(o["kind"] for o in objects)

    # Every row equals its line, field by field (nested structs, maps and arrays included);
    # the JSON-text fields parse back into the very objects printed.
    text_fields = js.json_text_fields(command)
    got: Counter[str] = Counter()
    for row in rows:
        r = row.asDict(recursive=True)
        for name in text_fields:
            if r[name] is not None:
                assert isinstance(r[name], str)
                r[name] = json.loads(r[name])
        got[_canon(r, names)] += 1
    want = Counter(_canon(o, names) for o in objects)
    missing, surplus = want - got, got - want
    assert not missing and not surplus, (list(missing)[:2], list(surplus)[:2])

    if command == "dump":
        records = [o for o in objects if o["kind"] == "record"]
        assert records and all(isinstance(o["data"], dict) for o in records)
        sample = next(r for r in rows if r["kind"] == "record")
        assert isinstance(json.loads(sample["data"]), dict)
    else:
        assert by_kind["summary"] == 1 and by_kind.get("finding", 0) > 0
        finding = next(r for r in rows if r["kind"] == "finding")
        assert finding["code"] and finding["severity"] in ("error", "warning", "info")
        assert finding["message"]


def test_failfast(spark, tmp_path):
    """A value of the wrong type fails the read instead of becoming null."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind":"record","file":"x","offset":"not a number"}\n')
    with pytest.raises(Exception, match="(?i)malformed|FAILFAST|parse"):
        js.read_kmeta_json(spark, str(bad)).collect()


def test_schema_declared_once():
    """A name shared by two kinds keeps one type; the module imports without pyspark."""
    clash = {"a": (js.Field("offset", "BIGINT", ""),), "b": (js.Field("offset", "INT", ""),)}
    with pytest.raises(TypeError, match="offset"):
        js._union(clash)
    assert js.DUMP_DDL.startswith("`kind` STRING, `file` STRING, ")
    assert js.VERIFY_DDL.count("`") == 2 * len(js.fields("verify"))
    assert js.json_text_fields("dump") == {"data", "content", "details"}
    with pytest.raises(ValueError):
        js.ddl("diff")
    code = ("import sys, kmeta.spark.json_schemas; "
            "sys.exit('pyspark' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], cwd=REPO).returncode == 0
