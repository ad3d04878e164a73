"""``kmeta shell``: walk the cluster's metadata through time, at a prompt or in a script."""

from __future__ import annotations

from typing import Annotated, NoReturn

import typer

from kmeta.cli.app import JsonOpt, command, current_env, reading_progress
from kmeta.environment import Environment


@command
def shell(
    paths: Annotated[list[str], typer.Argument(
        help="Metadata replicas: data dirs, __cluster_metadata-0 dirs or a .checkpoint "
        "file (several: 'replica NAME' switches between them).", show_default=False,
        metavar="PATH...")],
    commands: Annotated[str | None, typer.Option(
        "-c", "--command", metavar="COMMANDS", help="Run these commands (separated by ';') "
        "and exit with the status of the last, without a prompt.")] = None,
    json_out: JsonOpt = False,
) -> None:
    """A shell over the cluster's metadata, at any point of its log.

    Opens each replica's image at the end of its log; ls, cd, cat, tree and find walk it
    as kafka-metadata-shell.sh does (its node names and texts, secrets redacted).  at
    moves to an offset, a time or a snapshot; next and prev step record batch by batch
    and print what changed; diff compares two points (or two replicas), history lists the
    records that touched a node, grep searches the nodes, records prints a range of
    records.  help lists every command.  Commands also come from -c or, when standard
    input is not a terminal, one per line from it: no prompt, --json objects per command,
    and the exit status of the last command.
    """
    from kmeta.shell.session import open_session

    env = current_env()
    with reading_progress(env, "shell", passes=2):  # an index of the log, then a replay
        session = open_session(paths)
    if commands is not None:
        _script(env, session, [commands], json_out)
    if not _interactive(env):
        _script(env, session, env.stdin or (), json_out)
    from kmeta.shell.repl import repl

    raise SystemExit(repl(env, session, json_out))


def _interactive(env: Environment) -> bool:
    """A person at a terminal: commands from a keyboard, replies to a screen."""
    try:
        return env.stdin is not None and env.stdin.isatty() and \
            env.stdout is not None and env.stdout.isatty()
    except (AttributeError, ValueError):  # closed or replaced streams
        return False


def _script(env: Environment, session: object, lines: object, json_out: bool) -> NoReturn:
    """Run each line of ``lines`` (no prompt); exit with the last command's status."""
    from kmeta.shell.commands import run_line
    from kmeta.shell.replies import write_reply

    status = 0
    out = env.guarded().stdout
    for line in lines:  # type: ignore[attr-defined]
        line = line.rstrip("\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        session.typed.append(line)  # type: ignore[attr-defined]
        leave = False
        for reply in run_line(session, line, json_out):  # type: ignore[arg-type]
            status = write_reply(reply, json_out, out, env.stderr)  # type: ignore[arg-type]
            leave = reply.leave
        if leave:
            break
    raise SystemExit(status)
