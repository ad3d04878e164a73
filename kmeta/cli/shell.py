"""``kmeta shell``: walk the cluster's metadata through time, at a prompt or in a script."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from kmeta.cli.app import JsonOpt, command, current_env, reading_progress
from kmeta.environment import Environment

if TYPE_CHECKING:
    from kmeta.shell.session import Session


@command
def shell(
    paths: Annotated[list[str], typer.Argument(
        help="Metadata replicas: data dirs, __cluster_metadata-0 dirs or a .checkpoint "
        "file (several: 'replica NAME' switches between them).", show_default=False,
        metavar="PATH...")],
    commands: Annotated[list[str] | None, typer.Option(
        "-c", "--command", metavar="COMMANDS", help="Run these commands (separated by ';'; "
        "several -c run in order) and exit, without a prompt: the status of the last "
        "command, or 1 where opening the log met an error finding.")] = None,
    json_out: JsonOpt = False,
) -> None:
    """A shell over the cluster's metadata, at any point of its log.

    Opens each replica's image at the end of its log (a bar shows the opening of a long
    one) and prompts with where it stands: [REPLICA @OFFSET TIME] PATH>. ls [PATH...],
    cd [PATH], pwd, cat PATH..., tree [PATH...] and find [PATH...] walk the node tree of
    Kafka 4.0's kafka-metadata-shell (/image/cluster/brokers/ID,
    /image/topics/byName/TOPIC/PARTITION, /image/configs/TOPIC:NAME ...) with its texts
    and globs (* ? {a,b}), as kmeta image ls|cat does; secrets stay redacted. at POINT
    stands at another point: an offset, a time (2024-05-01T03:12Z, or 03:12 on the
    current day; UTC unless a zone is given; the image after every record stamped before
    it), start, end, a snapshot's name or at snapshot NAME, REPLICA@POINT for another
    replica; a time before the log's first batch or after its last is said to be. next [N]
    and prev [N] step record batch by record batch (NoOp heartbeats and control batches
    are not steps) and print the nodes each added (+), removed (-) and changed (~); with
    no log, only snapshots, there is no step (at moves between them). diff POINT [POINT]
    [PATH] (or diff A..B [PATH]) compares two points, or two replicas at one;
    changes [PATH] lists the records up to here that touched a node (a node's history in
    the log); history [N] prints the last N lines typed (all without N), as Kafka's shell
    and bash do; grep PATTERN [PATH] prints the leaves whose text matches; records FROM
    [TO] (or FROM..TO) prints the records of offsets FROM to TO, both included, as dump -r
    does, written as they are read; replica [NAME] lists the replicas or switches; help
    [COMMAND]. at alone and replica say where the replica's log is: log offsets
    FIRST..LAST (the first segment's base offset to the last record, both included) and
    the log end offset, or no log where there are only snapshots. Tab completes commands,
    paths, snapshots and replicas; the lines typed are kept in
    $XDG_STATE_HOME/kmeta/history or ~/.kmeta_history; Ctrl-C stops a command, Ctrl-D or
    exit leaves; a reply taller than the screen (counted in the rows its lines wrap to)
    goes through $PAGER (less -FRX); on a terminal every line folds to its width, through
    a pipe it stays whole. The opening's bar shows its two passes over the log, index and
    replay, each against the log's bytes; what the opening found (a torn tail, a log that
    is gone: V020) is listed on the opening screen. Commands also come from -c (several
    run in order) or, when standard input is not a terminal, one per line from it: no
    prompt, --json objects per command, the findings after them (on stderr; --json: finding
    objects on stdout), and the exit status of the last command (2: it could not run as
    typed; 1: grep matched nothing), else 1 when the opening met a finding of severity
    error, as for every command.
    """
    from kmeta.shell.session import open_session

    env = current_env()
    # an index of the log, then a replay: the bar shows each pass (Timeline.open names them)
    with reading_progress(env, "shell") as progress:
        session = open_session(paths, progress)
    if commands:
        _script(env, session, commands, json_out, paths)
    if not _interactive(env):
        _script(env, session, env.stdin or (), json_out, paths)
    from kmeta.shell.repl import repl

    raise SystemExit(repl(env, session, json_out, paths))


def _interactive(env: Environment) -> bool:
    """A person at a terminal: commands from a keyboard, replies to a screen."""
    try:
        return env.stdin is not None and env.stdin.isatty() and \
            env.stdout is not None and env.stdout.isatty()
    except (AttributeError, ValueError):  # closed or replaced streams
        return False


def _script(env: Environment, session: Session, lines: Iterable[str], json_out: bool,
            given: list[str]) -> NoReturn:
    """Run each line of ``lines`` (no prompt), then tell what opening the log found, as
    every command closes with its findings (beside data a script reads: text on stderr;
    --json: finding objects after the replies'); exit with the last command's status, or
    1 for an error finding (:func:`run_status`)."""
    from kmeta.render.jsonl import dumps
    from kmeta.render.shell import findings_lines
    from kmeta.shell.commands import run_line
    from kmeta.shell.replies import run_status, write_reply

    status = 0
    guarded = env.guarded()
    out = guarded.stdout
    for line in lines:  # type: ignore[attr-defined]
        line = line.rstrip("\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        session.typed.append(line)
        leave = False
        for reply in run_line(session, line, json_out):
            status = write_reply(reply, json_out, out, env.stderr,  # type: ignore[arg-type]
                                 env.terminal_width())
            leave = reply.leave
        if leave:
            break
    findings = session.findings
    if json_out:
        guarded.write_lines((dumps(f.to_json()) for f in findings), json=True)
    else:
        out.flush()  # type: ignore[union-attr]
        for text in findings_lines(findings, given, env.colour(env.stderr)):
            print(text, file=guarded.stderr)
    raise SystemExit(run_status(status, findings))
