"""``kmeta info`` says what it checked: its findings are those met reading the files, and
when there are none it does not sound like a clean bill of health, since the log's rules
are ``kmeta verify``'s."""

from __future__ import annotations

import os
from pathlib import Path

import clirun
from conftest import FIXTURES


def _info(path: Path) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env["COLUMNS"] = "80"
    proc = clirun.run("info", str(path), env=env, timeout=60)
    return proc.returncode, proc.stdout


def test_a_log_verify_rejects_is_not_called_clean() -> None:
    gap = FIXTURES / "verify" / "v003-gap"  # offsets skip: verify's V003, an error
    assert clirun.run("verify", str(gap), timeout=60).returncode == 1
    code, out = _info(gap)
    lines = out.splitlines()
    assert "findings: none" not in out
    assert lines[-2:] == ["findings met reading: none",
                          f"the log's rules are not checked here: kmeta verify {gap}"]
    assert code == 0  # info itself met nothing


def test_a_text_file_points_to_verify(tmp_path: Path) -> None:
    # a segment's name (a file of no Kafka name or bytes is refused, exit 3), in a folder
    # whose name is pasted as it stands: quoted
    notes = tmp_path / "notes of Tuesday" / "00000000000000000000.log"
    notes.parent.mkdir()
    notes.write_text("copied from the broker on Tuesday\n")
    code, out = _info(notes)
    assert "findings: none" not in out and "S010" in out
    lines = out.splitlines()
    assert lines[-2:] == [f"the log's rules are not checked here: kmeta verify '{notes}'",
                          "kmeta: 1 finding(s): 1 error(s), 0 warning(s), 0 info"]
    assert code == 1


def test_the_verify_line_is_never_folded(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 70) / "__cluster_metadata-0"
    deep.mkdir(parents=True)
    (deep / "quorum-state").write_text('{"leaderId":1,"leaderEpoch":1,"votedId":-1,'
                                       '"appliedOffset":0,"currentVoters":[],'
                                       '"data_version":0}')
    _, out = _info(deep)
    said = f"the log's rules are not checked here: kmeta verify {deep}"
    assert said in out.splitlines()


def test_small_files_are_said_in_sentences(real_data: Path) -> None:
    # each as Kafka wrote it: not the file's keys dumped as key=value, no Python None
    said = {
        "ldi-poc/__cluster_metadata-0/quorum-state":
            "epoch 1, leader node 1, no vote; voters: 1 (version 0)",
        "kraft-ksql-txn/kafka-data/_confluent-ksql-default__command_topic-0/"
        "00000000000000000002.snapshot": "(producer state): producer 0 epoch 0 up to "
                                         "offset 0 (version 1)",
        "kafka25-zk-offsets/data/kafka/__consumer_offsets-7/00000000000000000003.snapshot":
            "(producer state): no producer (version 1)",
        "kraft-ksql-txn/kafka-data/.kafka_cleanshutdown":
            "the broker shut down cleanly, broker epoch 53326 (version 0)",
        "kraft32-three/data/kafka1/.kafka_cleanshutdown":
            "the broker shut down cleanly (an empty marker, as before Kafka 3.7)",
        "kafka25-zk-offsets/data/kafka/meta.properties":
            "node 0 of cluster UAh5RmlKQJqK6xvZ2PrLjQ (ZooKeeper mode, version 0)",
        "ldi-poc/meta.properties":
            "node 1 of cluster q1w2e3r4t5y6u7i8o9p0 (version 1, directory id "
            "XHhkr4tkSsD900pOQ8pPfg)",
        "ldi-poc/__cluster_metadata-0/partition.metadata":
            "topic id AAAAAAAAAAAAAAAAAAAAAQ (version 0)",
    }
    for name, sentence in said.items():
        proc = clirun.run("info", str(real_data / name), timeout=60)
        first = proc.stdout.splitlines()[0]
        assert sentence in first, first
        assert "=" not in first and "None" not in first, first
        # the file alone holds no log: verify is pointed at its directory
        parent = (real_data / name).parent
        assert proc.stdout.splitlines()[-1] == \
            f"the log's rules are not checked here: kmeta verify {parent}", proc.stdout


def test_a_meta_properties_without_a_cluster_id_says_so(tmp_path: Path) -> None:
    (tmp_path / "meta.properties").write_text("#\nversion=0\nbroker.id=1\n")
    code, out = _info(tmp_path / "meta.properties")
    said = " ".join(out.split())  # a long tmp path folds the line at 80 columns
    assert "node 1, no cluster id (ZooKeeper mode, version 0)" in said, out
    assert "None" not in out
