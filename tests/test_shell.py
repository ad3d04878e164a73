"""``kmeta shell`` in scripts (-c and standard input): every command on the fixtures and
on every real metadata dir, each command's answer against what kmeta's other commands
and a brute force say, the --json objects against their declaration, and wrong input as
one line and a documented status.  tests/test_shell_tty.py drives the prompt itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kmeta import output_schema
from kmeta.core import image_nodes as nodes
from kmeta.ops.replay import Timeline
from kmeta.shell.session import changes_under, tree_of
from tests.clirun import run
from tests.conftest import DIVERGENT, FIXTURES, HEALTHY

EVERY_COMMAND = ("pwd; ls; ls /image; cd /image/topics/byName; ls; cd ..; pwd; "
                 "cat /image/cluster/brokers/*; tree /image/features; find /image/cluster; "
                 "at start; next 2; prev; at end; diff start end; changes /image/features; "
                 "history 3; grep . /image/features; records start; replica; help; help at; "
                 "man ls; at snapshot nope; bogus; cat /nope")


def _shell(*args: object, commands: str | None = None, stdin: str | None = None,
           env: dict[str, str] | None = None) -> object:
    argv = ["shell", *map(str, args)]
    if commands is not None:
        argv += ["-c", commands]
    return run(*argv, env=env if env is not None else {"COLUMNS": "80"}, input=stdin)


def _objects(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def _metadata_dirs(root: Path) -> list[Path]:
    return sorted({p.parent for p in root.rglob("__cluster_metadata-0/*.log")})


@pytest.mark.parametrize("root", ["fixtures", "real"])
def test_every_command_on_every_metadata_dir(root: str, real_data: Path) -> None:
    """No traceback, a status of the documented ones, JSON as declared, on every log."""
    dirs = _metadata_dirs(FIXTURES if root == "fixtures" else real_data)
    assert len(dirs) > (20 if root == "fixtures" else 5)
    opened = 0
    for d in dirs:
        text = _shell(d, commands=EVERY_COMMAND)
        assert "Traceback" not in text.stderr + text.stdout, d
        if text.returncode in (2, 3) and "bogus" not in text.stderr:
            # a log no image can be built from: one line, as kmeta image says it
            (line,) = text.stderr.strip().splitlines()
            assert line.startswith("kmeta: error[KM00"), (d, line)
            continue
        opened += 1
        assert text.returncode == 2, (d, text.stderr)  # the last command: cat /nope
        assert "cat: /nope: No such file or directory." in text.stderr
        assert "bogus: unknown command" in text.stderr
        js = _shell("--json", d, commands=EVERY_COMMAND)
        for obj in _objects(js.stdout):
            assert output_schema.check("shell", obj) == [], (d, obj)
        kinds = {o["kind"] for o in _objects(js.stdout)}
        assert {"shell_node", "shell_at", "shell_cd", "shell_help", "shell_error",
                "shell_replica"} <= kinds, (d, kinds)
    assert opened >= len(dirs) // 2


def test_ls_cat_tree_find_are_kafka_s() -> None:
    out = _shell(HEALTHY, commands="ls /; ls /image; cat /image/producerIds/nextProducerId; "
                 "tree /image/producerIds; find /image/producerIds").stdout.splitlines()
    assert out[:2] == ["image", "local"]
    assert out[2:12] == ["acls", "clientQuotas", "cluster", "configs", "delegationToken",
                         "features", "producerIds", "provenance", "scram", "topics"]
    assert out[12] == "13000"
    assert out[13:15] == ["nextProducerId:", "  13000"]
    assert out[15:] == ["/image/producerIds", "/image/producerIds/nextProducerId"]


def test_cd_pwd_and_relative_paths() -> None:
    out = _shell(HEALTHY, commands="cd /image/topics/byName/orders; pwd; cat name; cd ../..; "
                 "pwd; cd nowhere; pwd")
    assert out.stdout.splitlines() == ["/image/topics/byName/orders", "orders", "/image/topics"
                                       , "/image/topics"]
    assert out.stderr.strip() == "cd: nowhere: no such directory."
    assert out.returncode == 0  # the last command, pwd, ran


def test_at_lands_on_the_image_kmeta_image_builds() -> None:
    timeline = Timeline.open(HEALTHY)
    for offset in (0, 1, 1830, 5000, 12000, timeline.end):
        js = _objects(_shell("--json", HEALTHY, commands=f"at {offset}; cat "
                             "/image/producerIds/nextProducerId").stdout)
        assert js[0]["kind"] == "shell_at" and js[0]["offset"] == offset
        image = run("image", "--json", "--at", offset, HEALTHY, env={}).stdout
        pid = json.loads(image.splitlines()[0])["image"]["producerIds"]["nextProducerId"]
        assert js[1]["text"] == str(-1 if pid is None else pid)


def test_at_a_time_a_snapshot_start_and_end() -> None:
    timeline = Timeline.open(HEALTHY)
    snap = timeline.snapshots()[0]
    js = _objects(_shell("--json", HEALTHY, commands=(
        f"at 2023-11-14T23:00:00Z; at 23:00; at snapshot {snap.name}; at {snap.name}; "
        "at start; at end")).stdout)
    at = [o["offset"] for o in js]
    stamp = 1699_999_200_000 + 3600_000 * 24 * 0  # 2023-11-14T22:00Z
    stamp = (stamp // 86_400_000) * 86_400_000 + 23 * 3_600_000
    assert at[0] == at[1] == timeline.offset_at(stamp)
    assert at[2] == at[3] == snap.end_offset
    assert at[4:] == [timeline.start, timeline.end]


def test_next_and_prev_print_what_each_batch_changed() -> None:
    timeline = Timeline.open(HEALTHY)
    js = _objects(_shell("--json", HEALTHY, commands="at 12000; next; next 3; prev 3"
                         ).stdout)
    steps = [o for o in js if o["kind"] == "shell_step"]
    assert len(steps) == 7
    start = steps[0]["to_offset"]  # the end of a batch: where steps land
    assert [s["from_offset"] for s in steps[1:4]] == [start, steps[1]["to_offset"],
                                                      steps[2]["to_offset"]]
    assert steps[-1]["to_offset"] == start  # three back undo three forward
    for s in steps:
        a = tree_of(*timeline.image_at(s["from_offset"]))
        b = tree_of(*timeline.image_at(s["to_offset"]))
        want = changes_under(a, b, "/image")
        assert want, s  # a step is a batch that changes a node
        assert [(c["path"], c["change"], c["old_text"], c["new_text"])
                for c in s["node_changes"]] == [tuple(w) for w in want]
    text = _shell(HEALTHY, commands="at 12000; next").stdout.splitlines()
    assert text[3].startswith(">> offsets 12000..")


def test_diff_is_every_leaf_that_differs() -> None:
    timeline = Timeline.open(HEALTHY)
    (obj,) = _objects(_shell("--json", HEALTHY, commands="diff 3000 9000 /image").stdout)
    a = nodes.flatten(tree_of(*timeline.image_at(3000)), "/")
    b = nodes.flatten(tree_of(*timeline.image_at(9000)), "/")
    shown = lambda p: p.startswith("/image/") and not p.startswith(  # noqa: E731
        "/image/topics/byId/") and p != "/image/provenance"
    want = sorted([(p, "added") for p in b if p not in a and shown(p)]
                  + [(p, "removed") for p in a if p not in b and shown(p)]
                  + [(p, "changed") for p in a if p in b and a[p] != b[p] and shown(p)])
    assert sorted((c["path"], c["change"]) for c in obj["node_changes"]) == want
    same = _shell(HEALTHY, commands="diff end end").stdout
    assert same.strip() == "/image: the same at healthy@12704 and healthy@12704"


def test_diff_compares_replicas_at_one_offset() -> None:
    quorum = DIVERGENT / "quorum3"
    js = _objects(_shell("--json", quorum / "a", quorum / "c", commands=(
        "replica; diff a@end c@end; replica c; at")).stdout)
    replicas = [o for o in js if o["kind"] == "shell_replica"]
    assert [r["name"] for r in replicas] == ["a", "c"] and replicas[0]["current"]
    (d,) = [o for o in js if o["kind"] == "shell_diff"]
    assert (d["from_replica"], d["to_replica"]) == ("a", "c")
    assert js[-1]["kind"] == "shell_at" and js[-1]["replica"] == "c"


def test_changes_lists_the_records_that_touched_a_node() -> None:
    js = _objects(_shell("--json", HEALTHY, commands="changes /image/topics/byName/orders/0"
                         ).stdout)
    assert js and all(o["kind"] == "shell_record" for o in js)
    assert js[0]["type"] == "TOPIC_RECORD"  # the topic above the partition
    assert {o["type"] for o in js} >= {"PARTITION_RECORD", "PARTITION_CHANGE_RECORD"}
    assert all(o["data"].get("partitionId", 0) == 0 for o in js)
    offsets = [o["offset"] for o in js]
    assert offsets == sorted(offsets)
    # the same as history --topic says of partition 0
    other = [json.loads(line) for line in run("history", "--json", "--topic", "orders",
                                              HEALTHY, env={}).stdout.splitlines()]
    want = [o["offset"] for o in other if o["kind"] == "history" and (
        o["type"] == "TOPIC_RECORD" or o["data"].get("partitionId") == 0)
        and o["type"] != "CONFIG_RECORD"]
    assert offsets == want
    # only what stood before the shell's point
    early = _objects(_shell("--json", HEALTHY, commands="at 3000; changes "
                            "/image/topics/byName/orders/0").stdout)
    assert all(o["offset"] < 3000 for o in early[1:])


def test_grep_searches_leaves_and_says_when_nothing_matched() -> None:
    out = _shell(HEALTHY, commands="grep 'leader=-1' /image/topics/byName")
    assert out.returncode in (0, 1)
    for line in out.stdout.splitlines():
        path, _, text = line.partition(": ")
        assert "leader=-1" in text and path.startswith("/image/topics/byName/")
    none = _shell(HEALTHY, commands="grep no-such-text-anywhere /image")
    assert none.returncode == 1 and none.stdout == ""
    bad = _shell(HEALTHY, commands="grep '(' /image")
    assert bad.returncode == 2 and "not a regular expression" in bad.stderr


def test_records_are_dump_s() -> None:
    """FROM TO are the first and the last offset, both included, as dump's --from-offset
    and --to-offset and every A..B kmeta prints (it was TO excluded)."""
    dump = run("dump", "-r", "--from-offset", "5", "--to-offset", "7",
               HEALTHY / "__cluster_metadata-0" / "00000000000000000000.log",
               env={}).stdout.splitlines()
    want = [line for line in dump if line.startswith(("baseOffset:", "| offset:"))]
    for command in ("records 5 7", "records 5..7"):
        assert _shell(HEALTHY, commands=command).stdout.splitlines() == want, command
    js = _objects(_shell("--json", HEALTHY, commands="records 5 7").stdout)
    assert [o["offset"] for o in js if o["kind"] == "record"] == [5, 6, 7]
    last = _objects(_shell("--json", HEALTHY, commands="records end").stdout)
    assert [o["offset"] for o in last if o["kind"] == "record"] == [12703]
    backwards = _shell(HEALTHY, commands="records 7 5")
    assert backwards.returncode == 2 and "records: 5 is before 7" in backwards.stderr


def test_history_is_the_lines_typed_and_changes_a_node_s_records() -> None:
    """history N in a topic's dir printed the last N lines typed where a person meant
    partition N's records: two commands now, each help saying which is which."""
    out = _shell(HEALTHY, commands="cd /image/topics/byName/orders; pwd; history 0; "
                 "history; history 2")
    lines = out.stdout.splitlines()
    assert lines[1] == "(history 0: the last 0 line(s) typed; the records that changed " \
        "node 0: changes 0)"
    assert lines[2] == "    1  cd /image/topics/byName/orders; pwd; history 0; history; " \
        "history 2"
    assert lines[3] == lines[2]  # one line typed, -c's
    wrong = _shell(HEALTHY, commands="history /image/topics")
    assert wrong.returncode == 2
    assert wrong.stderr.splitlines() == ["history: /image/topics: a number of lines typed",
                                         "  the records that changed a node: changes "
                                         "/image/topics"]
    node = _objects(_shell("--json", HEALTHY, commands="cd /image/topics/byName/orders; "
                           "changes 0").stdout)
    assert node and {o["kind"] for o in node[1:]} == {"shell_record"}
    for command in ("history", "changes"):
        help_text = _shell(HEALTHY, commands=f"help {command}").stdout
        other = "changes" if command == "history" else "history"
        assert other in help_text, help_text
    every = _shell(HEALTHY, commands="help").stdout.splitlines()
    assert all(len(line) <= 80 for line in every), every


def test_scripts_from_standard_input_and_their_status() -> None:
    ok = _shell(HEALTHY, stdin="pwd\n# a comment\n\ncd /image\npwd\n")
    assert ok.stdout.splitlines() == ["/", "/image"] and ok.returncode == 0
    last_bad = _shell(HEALTHY, stdin="pwd\ncat /nope\n")
    assert last_bad.returncode == 2
    last_good = _shell(HEALTHY, stdin="cat /nope\npwd\n")
    assert last_good.returncode == 0
    left = _shell(HEALTHY, commands="pwd; exit; cat /nope")
    assert left.returncode == 0 and left.stderr == ""
    open_quote = _shell(HEALTHY, commands="cat 'unclosed")
    assert open_quote.returncode == 2 and "close the quote" in open_quote.stderr


def test_a_wrong_command_gets_one_line_and_a_suggestion() -> None:
    out = _shell(HEALTHY, commands="histroy")
    assert out.returncode == 2
    assert out.stderr.splitlines() == ["histroy: unknown command",
                                       "  did you mean 'history'? (help lists every command)"]
    far = _shell(HEALTHY, commands="at 99999999")
    assert far.returncode == 2
    assert far.stderr.splitlines() == [
        "at: 99999999: offset 99999999 is past healthy's log end offset 12704",
        "  log offsets 0..12703, log end offset 12704"]
    nope = _shell(HEALTHY, commands="replica zzz")
    assert nope.returncode == 2 and "replicas: healthy" in nope.stderr
    path = _shell(HEALTHY, commands="cat /image/cluster/broker/4; cd /image/topic")
    assert path.returncode == 2
    assert path.stderr.splitlines() == [
        "cat: /image/cluster/broker/4: No such file or directory.",
        "  did you mean /image/cluster/brokers/4?",
        "cd: /image/topic: no such directory.", "  did you mean /image/topics?"]


@pytest.mark.parametrize("target, code", [("/etc", 3), ("{missing}", 3), ("{text}", 3)])
def test_wrong_input_is_one_line(target: str, code: int, tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not kafka\n")
    path = target.format(missing=tmp_path / "nope", text=text)
    out = _shell(path, commands="ls")
    assert out.returncode == code, out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith("kmeta: error[KM00") and "Traceback" not in out.stderr


def test_secrets_stay_redacted() -> None:
    out = _shell(HEALTHY, commands="cat /image/scram/*/*; tree /image/delegationToken; "
                 "grep . /image/configs").stdout
    assert "salt=[redacted]" in out and "tokenId=[redacted]" in out
    from kmeta.ops.replay import build_image

    image = build_image(HEALTHY).image
    for secret in image.secrets.values():
        for value in (secret if isinstance(secret, (list, tuple)) else [secret]):
            if isinstance(value, str) and len(value) > 6:
                assert value not in out


def test_opening_shows_its_progress_on_a_terminal() -> None:
    """The opening reads the metadata log twice (its index, then the replay that keeps
    the checkpoints): the bar shows each pass against the bytes of the log and its
    snapshots, and nothing else (its total was twice them: 537 MB for a 268 MB log)."""
    from rich.filesize import decimal

    from tests.test_cli_edges import _on_a_terminal

    meta = HEALTHY / "__cluster_metadata-0"
    read = [*meta.glob("*.log"), *meta.glob("*.checkpoint"), HEALTHY / "bootstrap.checkpoint"]
    size = sum(p.stat().st_size for p in read)
    seen = _on_a_terminal(("shell", HEALTHY, "-c", "pwd"), "stderr", {})
    assert "shell: index " in seen and "shell: replay " in seen, seen[-400:]
    assert f"/{decimal(size)}" in seen, (decimal(size), seen[-400:])
    assert f"/{decimal(2 * size)}" not in seen, seen[-400:]


def test_a_folder_of_several_replicas_opens_each() -> None:
    js = _objects(_shell("--json", DIVERGENT / "quorum3", commands="replica").stdout)
    assert [o["name"] for o in js] == ["a", "b", "c"]
    assert [o["current"] for o in js] == [True, False, False]


def test_completion_offers_commands_paths_points_and_replicas() -> None:
    from kmeta.shell.repl import ShellCompleter
    from kmeta.shell.session import open_session

    quorum = DIVERGENT / "quorum3"
    session = open_session([str(quorum / "a"), str(quorum / "b")])
    complete = ShellCompleter(session).candidates
    assert [c[0] for c in complete("hi")] == ["history"]
    assert [c[0] for c in complete("ch")] == ["changes"]
    assert ("/image/", -3, "image/") in complete("changes /im")
    assert [c[0] for c in complete("replica ")] == ["a", "b"]
    assert {"start", "end", "snapshot", "a@", "b@"} <= {c[0] for c in complete("at ")}
    names = [s.name for s in session.timeline.snapshots()]
    if names:
        assert [c[0] for c in complete("at snapshot ")] == names
    assert ("/image/", -3, "image/") in complete("ls /im")
    assert [c[0] for c in complete("cat /image/cluster/b")] == ["/image/cluster/brokers/"]
    assert [c[0] for c in complete("man l")] == ["ls"]


def test_the_log_is_the_segments_on_disk() -> None:
    """The shell's "log" is kmeta's: the segments, from the first one's base offset to
    the last record (A..B both included), then the log end offset; the offsets where
    images start are named as such, and a replica of snapshots only has no log (it said
    "log 382..589" of a log whose first segment starts at 346, and printed a log for a
    dir of snapshots)."""
    later = DIVERGENT / "later-copy" / "a"
    out = _shell(later, commands="at; replica").stdout.splitlines()
    assert out[:3] == ["a at offset 589, the log end offset",
                       "  log offsets 346..588, log end offset 589; images from offset 382 "
                       "(the first snapshot inside it)",
                       "  offset 588 applied last (epoch 3, 2023-11-14 22:17:43 UTC)"]
    (at,) = _objects(_shell("--json", later, commands="at").stdout)
    assert (at["log_start_offset"], at["log_end_offset"], at["first_image_offset"],
            at["last_image_offset"]) == (346, 589, 382, 589)
    early = _shell(later, commands="at 350")
    assert early.stderr.splitlines() == [
        "at: 350: offset 350 is before 382, the first offset a has an image at",
        "  log offsets 346..588, log end offset 589"]
    only = FIXTURES / "verify" / "v020-no-segment"
    out = _shell(only, commands="at; replica").stdout.splitlines()
    assert out[:2] == ["v020-no-segment at offset 10, a snapshot's end",
                       "  no log, snapshot(s) ending at 10"]
    assert not any("log offsets" in line for line in out), out
    at, gone = _objects(_shell("--json", only, commands="at").stdout)
    assert gone["kind"] == "finding" and gone["code"] == "V020"  # the log is gone
    assert (at["log_start_offset"], at["log_end_offset"], at["first_image_offset"]) == \
        (None, None, 10)


def test_stepping_past_the_images_says_where_they_end() -> None:
    """prev from the first image of a log that starts later said "(start of a's log:
    offset 382)" where the log starts at 346: it is where the images start."""
    later = DIVERGENT / "later-copy" / "a"
    out = _shell(later, commands="at start; prev; at end; next 2").stdout.splitlines()
    assert "(a has no image before offset 382: 0 of 1 step(s))" in out, out
    assert "(a has no image past offset 589: 0 of 2 step(s))" in out, out


def _torn(tmp_path: Path) -> Path:
    """A copy of the healthy data dir whose last metadata segment lost its last 30 bytes:
    a torn tail (S001, an error finding, as verify, image and brokers say)."""
    import shutil

    copy = tmp_path / "torn"
    shutil.copytree(HEALTHY, copy)
    last = sorted((copy / "__cluster_metadata-0").glob("*.log"))[-1]
    last.write_bytes(last.read_bytes()[:-30])
    return copy


def test_findings_met_opening_are_told_and_set_the_status(tmp_path: Path) -> None:
    """A torn tail (or a metadata partition whose log is gone, V020) was hidden: -c at
    printed where it stood and exited 0 where verify, image and brokers say S001 and exit
    1.  They are told as image tells them beside data (stderr; --json: finding objects
    after the replies') and count in the status as every command's findings do."""
    torn = _torn(tmp_path)
    image = run("image", torn, env={})
    assert image.returncode == 1 and "S001 error" in image.stdout
    out = _shell(torn, commands="at")
    assert out.returncode == 1, out.stderr
    assert out.stdout.splitlines()[0].startswith("torn at offset ")  # the replies as before
    errors = out.stderr.splitlines()
    assert errors[0].startswith("!! S001 error: __cluster_metadata-0/") and "torn tail" in \
        errors[0]
    assert errors[1] == "kmeta: 1 finding(s): 1 error(s), 0 warning(s), 0 info"
    assert f"kmeta verify {torn}" in errors[2]
    js = _objects(_shell("--json", torn, commands="at; pwd").stdout)
    assert [o["kind"] for o in js] == ["shell_at", "shell_cd", "finding"]
    assert js[-1]["code"] == "S001" and js[-1]["severity"] == "error"
    # a command that could not run as typed keeps its status; grep's "none" too
    assert _shell(torn, commands="cat /nope").returncode == 2
    assert _shell(torn, commands="grep nothing-matches /image").returncode == 1
    assert _shell(torn, stdin="pwd\n").returncode == 1
    # a log whose segments are gone: V020, as image, brokers and retention say it
    gone = FIXTURES / "verify" / "v020-no-segment"
    assert run("image", gone, env={}).returncode == 1
    ls = _shell(gone, commands="ls")
    assert ls.returncode == 1 and ls.stdout.splitlines() == ["image", "local"]
    assert ls.stderr.startswith("!! V020 error: __cluster_metadata-0: no log segment")
    # a healthy log: nothing said, 0
    ok = _shell(HEALTHY, commands="at")
    assert ok.returncode == 0 and ok.stderr == ""


def _snapshots_only(tmp_path: Path) -> Path:
    """The healthy metadata partition without its segments: three snapshots, no log."""
    import shutil

    part = tmp_path / "only" / "__cluster_metadata-0"
    part.mkdir(parents=True)
    for f in (HEALTHY / "__cluster_metadata-0").iterdir():
        if f.suffix == ".checkpoint" or f.name in ("leader-epoch-checkpoint", "quorum-state",
                                                   "partition.metadata"):
            shutil.copy(f, part / f.name)
    return part.parent


def test_snapshots_alone_have_no_steps_and_no_records(tmp_path: Path) -> None:
    """prev said "(… has no image before offset 4000: 0 of 1 step(s))" and moved there all
    the same; next after at snapshot moved to the last snapshot saying "no image past";
    records printed nothing and exited 0.  A step is a record batch: with no log there is
    none, and the shell says so without moving."""
    only = _snapshots_only(tmp_path)
    out = _shell("--json", only, commands="prev; at; at snapshot "
                 "00000000000000004000-0000000006; next 2; at; records 4000 8157; "
                 "records 8000..8156")
    js = _objects(out.stdout)
    at = [o["offset"] for o in js if o["kind"] == "shell_at"]
    assert at == [12294, 4000, 4000]
    errors = [o["message"] for o in js if o["kind"] == "shell_error"]
    assert errors == ["prev: only has no log, only snapshots: no record batch to step over",
                      "next: only has no log, only snapshots: no record batch to step over",
                      "records: only has no log, only snapshots",
                      "records: only has no log, only snapshots"]
    assert out.returncode == 2  # records, as a range there is no image at
    text = _shell(only, commands="next")
    assert text.stdout == "" and text.returncode == 2
    assert text.stderr.splitlines()[1] == \
        "  at OFFSET stands at a snapshot's end: 4000, 8157, 12294"
    lone = sorted((HEALTHY / "__cluster_metadata-0").glob("*.checkpoint"))[-1]
    assert _shell(lone, commands="prev").returncode == 2


def test_a_step_over_heartbeats_only_says_where_it_went() -> None:
    """From past the last data batch next moved to the log's end saying "(healthy has no
    image past offset 12704: 0 of 1 step(s))": it went, so it is a step, said as one."""
    timeline = Timeline.open(HEALTHY)
    after = timeline.index.data_last[-1] + 1
    assert after < timeline.end  # heartbeats after the last data batch
    out = _shell(HEALTHY, commands=f"at {after}; next; at; next; at")
    lines = out.stdout.splitlines()
    assert lines[3] == f">> offsets {after}..{timeline.end - 1}: no metadata record " \
        "(heartbeats, control records)"
    assert lines[4] == "  (no node changed)"
    assert lines[5] == f"healthy at offset {timeline.end}, the log end offset"
    # at the end: no step, no move
    assert f"(healthy has no image past offset {timeline.end}: 0 of 1 step(s))" in lines
    assert lines[-3] == lines[5]
    back = _shell(HEALTHY, commands="at 1; prev; at").stdout.splitlines()
    assert back[3].startswith("<< offsets 0..0: ") and back[-3] == "healthy at offset 0"


def test_lines_are_whole_through_a_pipe() -> None:
    """The shell folded its own lines at 80 columns, through a pipe too (changes wrapped
    a record's topicId=…; next, prev and at the same): a script greps whole lines.  On a
    terminal the front ends fold each line (tests/test_shell_tty.py)."""
    import re

    for env in ({}, {"COLUMNS": "80"}):
        out = _shell(HEALTHY, commands="at 12000; next; prev; at; replica",
                     env=env).stdout.splitlines()
        assert max(len(line) for line in out) > 100, out
        assert not [line for line in out if line.startswith("    ") and
                    not line.startswith(("    was: ", "    now: "))], out
        changes = _shell(HEALTHY, commands="changes /image/topics/byName/orders",
                         env=env).stdout.splitlines()
        # a record a line: its offset, time, epoch, type and every field
        assert all(re.match(r" *[0-9]+ [0-9]{4}-[0-9]{2}-[0-9]{2} .* e[0-9]+ [A-Z_]+ v[0-9]",
                            line) for line in changes), changes
        assert any("topicId=" in line and len(line) > 80 for line in changes), changes


def test_a_time_outside_the_log_says_so() -> None:
    """at 2020-… went to offset 0 and at 2030-… to the end with no word: the image is
    right (the state after every record stamped before it), and the reply says the time
    is outside the log's."""
    out = _shell(HEALTHY, commands="at 2000-01-01T00:00Z; at 2100-01-01; "
                 "at 2023-11-14T23:00Z; diff 2000-01-01..end /image/features")
    lines = out.stdout.splitlines()
    assert lines[0] == "(2000-01-01T00:00Z is before the log's first batch, stamped " \
        "2023-11-14 22:13:20 UTC: the image before any record of the log)"
    assert lines[1] == "healthy at offset 0"
    assert lines[4] == "(2100-01-01 is after the log's last batch, stamped 2023-11-14 " \
        "23:51:53 UTC: the image after every record of the log)"
    assert lines[5] == "healthy at offset 12704, the log end offset"
    assert lines[8].startswith("healthy at offset ")  # inside the log: no note
    assert lines[11].startswith("(2000-01-01 is before the log's first batch")
    assert lines[12].startswith("/image/features: healthy@0 -> healthy@12704")
    js = _objects(_shell("--json", HEALTHY, commands="at 2000-01-01").stdout)
    assert js[0]["offset"] == 0


def test_two_points_as_a_range_wherever_two_are_taken() -> None:
    """records 10..12 worked and diff 0..20 was a usage error."""
    for a, b in (("0..20", "0 20"), ("4000..end /image/topics", "4000 end /image/topics"),
                 ("healthy@0..20", "healthy@0 healthy@20")):
        got = _shell(HEALTHY, commands=f"diff {a}")
        assert got.returncode == 0, got.stderr
        assert got.stdout == _shell(HEALTHY, commands=f"diff {b}").stdout
    assert _shell(HEALTHY, commands="records healthy@10..12").stdout == \
        _shell(HEALTHY, commands="records 10 12").stdout
    parent = _shell(HEALTHY, commands="cd /image/topics; diff 0 ..")
    assert parent.returncode == 0 and parent.stdout.startswith("/image: ")


def test_several_commands_options_run_in_order() -> None:
    """-c 'at 100' -c pwd ran only the last -c."""
    out = _shell(HEALTHY, commands="at 100")
    both = run("shell", HEALTHY, "-c", "at 100", "-c", "cd /image; pwd", "-c", "at",
               env={})
    lines = both.stdout.splitlines()
    assert lines[:3] == out.stdout.splitlines()
    assert lines[3] == "/image" and lines[4] == lines[0]
    assert both.returncode == 0
    last_bad = run("shell", HEALTHY, "-c", "pwd", "-c", "cat /nope", env={})
    assert last_bad.returncode == 2
    left = run("shell", HEALTHY, "-c", "exit", "-c", "cat /nope", env={})
    assert left.returncode == 0 and left.stderr == ""
