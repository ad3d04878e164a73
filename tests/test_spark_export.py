"""``kmeta export`` output that Spark reads back as it is: the partition directories of the
tables kmeta writes itself (batches, records) named as Spark names those of the others, for
nodes without a cluster id too, and the records table in the scope asked for."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import HEALTHY

from kmeta.ops.export import TABLES, Scope


def test_partition_dir_names_are_the_ones_spark_writes(spark, tmp_path: Path) -> None:
    """One partition-value rule for every table: ``partition_dir`` (batches, records) names
    each value's directory as Spark's writer (the other tables) does."""
    from kmeta.spark.export import partition_dir

    values = [None, "", " ", "MkU3OEVBNTcwNTJENDM2Qk", "a/b:c=d", "50%?#", "x{[]}^'\"\\",
              "tab\there", "é-ü", "\x7f"]
    rows = [(v, i) for i, v in enumerate(values)]
    spark.createDataFrame(rows, "cluster_id STRING, n INT").write \
        .partitionBy("cluster_id").parquet(str(tmp_path / "spark"))
    written = {p.name for p in (tmp_path / "spark").iterdir() if p.is_dir()}
    assert {partition_dir("cluster_id", v) for v in values} == written


def ddl_columns(table: str) -> list[str]:
    from kmeta.ops.export import COMMON

    return [c.name for c in COMMON + TABLES[table]]


def _node(tmp_path: Path, name: str, meta: str | None) -> Path:
    """A copy of the healthy fixture's metadata partition (and bootstrap.checkpoint, and
    its data topic) under another meta.properties, or none."""
    node = tmp_path / name
    node.mkdir()
    for part in ("__cluster_metadata-0", "orders-0"):
        shutil.copytree(HEALTHY / part, node / part)
    shutil.copy(HEALTHY / "bootstrap.checkpoint", node)
    if meta is not None:
        (node / "meta.properties").write_text(meta)
    return node


@pytest.fixture(scope="module")
def no_cluster_id(tmp_path_factory) -> list[str]:
    """Nodes without a cluster id: ``cluster.id=`` empty (node 4), a ZooKeeper-mode
    version-0 file with broker.id only (node 7), and a partition dir given directly whose
    data dir has no meta.properties (no node id either)."""
    where = tmp_path_factory.mktemp("nocluster")
    empty = _node(where, "empty", "version=1\ncluster.id=\nnode.id=4\n")
    zk = _node(where, "zk", "version=0\nbroker.id=7\n")
    bare = _node(where, "bare", None)
    return [str(empty), str(zk), str(bare / "__cluster_metadata-0")]


def test_export_without_cluster_id_reads_back(spark, tmp_path: Path,
                                              no_cluster_id: list[str]) -> None:
    from kmeta.ops.export import ddl
    from kmeta.spark.export import run_export

    out = tmp_path / "out"
    result = run_export(no_cluster_id, out, spark=spark)
    assert set(result.rows) == set(TABLES)
    for table in TABLES:
        written = spark.read.parquet(str(out / table))  # as any Spark user reads it
        assert written.count() == result.rows[table], table
        assert set(written.columns) == set(ddl_columns(table)), table  # empty ones too
        nodes = {(r.cluster_id, r.node_id) for r in
                 written.select("cluster_id", "node_id").distinct().collect()}
        if table != "findings":  # the healthy copies verify clean: no findings rows
            assert nodes == {(None, 4), (None, 7), (None, None)}, table
        # the same rows as the data source gives (read with the declared types: Spark
        # infers an all-null partition column as void)
        typed = spark.read.schema(ddl(table)).parquet(str(out / table))
        direct = spark.read.format("kmeta").option("table", table).load(no_cluster_id)
        typed = typed.select(*direct.columns)
        assert typed.exceptAll(direct).count() == 0 and direct.exceptAll(typed).count() == 0
    assert not list(out.glob("*/cluster_id=/*"))


def test_export_records_in_the_scope_asked_for(spark, tmp_path: Path) -> None:
    """Data topics' records only with data_topics, their keys and values only with
    payloads; the data source and export give the same rows for each scope."""
    from kmeta.spark.export import run_export

    def exported(scope: Scope, tables: tuple[str, ...] = ("records",)) -> tuple:
        out = tmp_path / f"out-{scope.data_topics}-{scope.payloads}"
        run_export([str(HEALTHY)], out, tables=tables, scope=scope, spark=spark)
        records = spark.read.parquet(str(out / "records"))
        direct = spark.read.format("kmeta").options(table="records", **scope.to_options()) \
            .load(str(HEALTHY))
        records = records.select(*direct.columns)
        assert records.exceptAll(direct).count() == 0 and direct.exceptAll(records).count() == 0
        return out, records.where("partition_dir = 'orders-0'")

    out, orders = exported(Scope(), ("batches", "records"))
    assert orders.count() == 0
    # batch headers of every topic (no record bytes in them)
    batches = spark.read.parquet(str(out / "batches"))
    assert batches.where("partition_dir = 'orders-0'").count() == 7
    _, orders = exported(Scope(data_topics=True))
    assert orders.count() == 11 and orders.where("data IS NOT NULL").count() == 2  # markers
    _, orders = exported(Scope(data_topics=True, payloads=True))
    assert orders.where("data IS NOT NULL").count() == 11


def _s007_case(tmp_path: Path) -> list[str]:
    """A stray file inside a metadata partition (S007 as discovery finds it, and verify
    again) and a text file given alone (S008: no Kafka file, as every command refuses
    it), beside what no unit holds: a FIFO named like a segment in the folder of data
    dirs (S008, found by discovery alone)."""
    import os

    from conftest import FIXTURES

    case = tmp_path / "fleet"
    shutil.copytree(FIXTURES / "verify" / "s007-unknown-file", case / "node")
    os.mkfifo(case / "00000000000000000000.log")
    loose = tmp_path / "notes.txt"
    loose.write_text("copied from the broker on Tuesday\n")
    return [str(case), str(loose)]


def _finding_keys(rows) -> list[tuple]:
    return sorted((r[4], r[6], r[9]) for r in rows)


def test_each_finding_is_one_row_of_the_findings_table(tmp_path: Path) -> None:
    """The findings table took discovery's findings as rows and then verify's of the same
    files: every S007 inside a data dir, a partition dir or a file given came twice."""
    from collections import Counter

    from kmeta.ops.export import plan_units, unit_rows

    paths = _s007_case(tmp_path)
    units, problems = plan_units(paths, "findings")
    rows = problems + [r for u in units for r in unit_rows(u)]
    keys = _finding_keys(rows)
    assert Counter(keys).most_common(1)[0][1] == 1, keys
    codes = Counter(k[0] for k in keys)
    # the stray file in the partition, the text file and the FIFO (outside every unit:
    # discovery's row alone)
    assert codes == Counter({"S007": 1, "S008": 2}), keys
    stray = [r for r in rows if r[6].endswith("notes.txt") and "__cluster_metadata-0" in r[6]]
    assert [r[3] for r in stray] == ["__cluster_metadata-0"]  # with its partition


def test_export_writes_each_finding_once(spark, tmp_path: Path) -> None:
    from kmeta.spark.export import run_export

    paths = _s007_case(tmp_path)
    result = run_export(paths, tmp_path / "out", tables=("findings",), spark=spark)
    written = spark.read.parquet(str(tmp_path / "out" / "findings"))
    keys = sorted((r.code, r.file, r.message) for r in written.collect())
    assert len(keys) == len(set(keys)) == result.rows["findings"] == 3, keys
    assert result.findings == {"warning": 1, "error": 2}


def test_data_source_rejects_a_bad_scope_option(spark) -> None:
    def read(**options: str):
        return spark.read.format("kmeta").options(table="records", **options) \
            .load(str(HEALTHY)).count()

    with pytest.raises(Exception, match="payloads go with data topics"):
        read(payloads="true")
    with pytest.raises(Exception, match="data_topics: true or false"):
        read(data_topics="1")


def test_spark_copies_are_the_archives_of_the_installed_pyspark(tmp_path: Path) -> None:
    """The daemon of an embedded session takes off the workers' path the archives inside
    the installed pyspark (its zips, its jars), and nothing where pyspark or py4j is not
    installed as a package."""
    import zipfile

    from kmeta.spark.daemon import spark_copies

    site = tmp_path / "site"
    lib = site / "pyspark" / "python" / "lib"
    lib.mkdir(parents=True)
    (site / "pyspark" / "jars").mkdir()
    (site / "pyspark" / "__init__.py").write_text("")
    for name in ("pyspark.zip", "py4j-0.10.9.9-src.zip"):
        with zipfile.ZipFile(lib / name, "w") as z:
            z.writestr(f"{name.split('-')[0].removesuffix('.zip')}/__init__.py", "")
    jar = site / "pyspark" / "jars" / "spark-core.jar"
    jar.write_bytes(b"")
    other = tmp_path / "user.zip"
    other.write_bytes(b"")
    zips = [str(lib / "pyspark.zip"), str(lib / "py4j-0.10.9.9-src.zip"), str(jar)]
    path = [str(tmp_path), *zips, str(other), str(site)]
    assert spark_copies(path) == []  # py4j is only in its zip
    (site / "py4j").mkdir()
    (site / "py4j" / "__init__.py").write_text("")
    assert spark_copies(path) == zips
    # pyspark only in Spark's own zips (a Spark distribution's SPARK_HOME): kept
    shutil.rmtree(site / "pyspark")
    lib.mkdir(parents=True)
    assert spark_copies([str(tmp_path / "x.zip"), str(site)]) == []


def test_workers_keep_what_they_read_of_spark_copies(tmp_path: Path, monkeypatch) -> None:
    """In a worker kmeta's daemon did not start (a planning worker, a user's session), the
    data source stops the zip importers of Spark's copies re-reading their archives at
    each task (importlib.invalidate_caches); another zip's importer still re-reads."""
    import importlib
    import sys
    import zipfile
    import zipimport

    from kmeta.spark import daemon

    site = tmp_path / "site"
    lib = site / "pyspark" / "python" / "lib"
    lib.mkdir(parents=True)
    for pkg in ("pyspark", "py4j"):
        (site / pkg).mkdir(exist_ok=True)
        (site / pkg / "__init__.py").write_text("")
    copy, other = lib / "pyspark.zip", tmp_path / "user.zip"
    for archive, module in ((copy, "kmeta_copy_probe"), (other, "kmeta_user_probe")):
        with zipfile.ZipFile(archive, "w") as z:
            z.writestr(f"{module}.py", "")
    monkeypatch.setattr(sys, "path", [str(copy), str(other), str(site), *sys.path])
    monkeypatch.setattr(daemon, "_ARCHIVES", [])
    for module in ("kmeta_copy_probe", "kmeta_user_probe"):
        importlib.import_module(module)
        monkeypatch.delitem(sys.modules, module)
    finders = {a: sys.path_importer_cache[str(a)] for a in (copy, other)}
    assert all(type(f) is zipimport.zipimporter for f in finders.values())
    daemon.keep_archives()
    assert finders[copy].invalidate_caches is daemon._keep
    assert "invalidate_caches" not in vars(finders[other])
    importlib.invalidate_caches()  # still runs
    for a in (copy, other):
        monkeypatch.delitem(sys.path_importer_cache, str(a))


@pytest.mark.spark
def test_embedded_export_runs_its_own_daemon(tmp_path: Path) -> None:
    """``kmeta export`` on an embedded session (its own JVM, its Python workers started by
    kmeta.spark.daemon): the tables hold the rows the data source reads."""
    import json
    import subprocess
    import sys

    import pyarrow as pa
    import pyarrow.parquet as pq

    from kmeta.ops.export import COMMON, plan_units, unit_rows

    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "kmeta", "export", "--json", "--master",
                           "local[2]", "--table", "batches", "--table", "records",
                           "--table", "epochs", "--to", str(out), str(HEALTHY)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["rows"]
    for table in ("batches", "records"):
        units, _ = plan_units([str(HEALTHY)], table)
        # the files hold each row once, as strings (their dictionaries are the writer's)
        want = sorted((row[:1] + row[3:] for u in units for row in unit_rows(u)), key=repr)
        files = [pq.read_table(f) for f in sorted((out / table).rglob("part-*.parquet"))]
        assert all(f.schema.names == [c.name for c in COMMON + TABLES[table]
                                      if c.name not in ("cluster_id", "node_id")] and
                   not any(pa.types.is_dictionary(t) for t in f.schema.types) for f in files)
        got = sorted((tuple(r.values()) for f in files for r in f.to_pylist()), key=repr)
        assert rows[table] == len(want) and got == want
    assert rows["epochs"] > 0
