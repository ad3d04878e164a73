"""What every command of the ``kmeta`` command line shares: the one app, the options
several commands take, how a command ends (:func:`close`), the progress bar, and the
entry point :func:`main`.  The commands live in the family modules beside this one.

Every run writes through its
:class:`~kmeta.environment.Environment` (streams, COLUMNS, NO_COLOR, ``--traceback``),
which :func:`main` makes or a caller (a test) hands in.  All errors pass through
:func:`main`, which prints one line on stderr and exits with the documented code;
``--traceback`` re-raises instead.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import click
import typer

from kmeta import __version__
from kmeta.environment import Environment
from kmeta.errors import (
    ExitCode,
    KmetaError,
    OutputError,
    UnreadableInput,
    UsageError,
    Verdict,
)
from kmeta.findings import GROUP_OVER
from kmeta.formats.decoders import DECODERS

if TYPE_CHECKING:
    from kmeta.findings import Finding

#: The app's settings: also those of the one-command app :func:`_click_app` builds.
_APP = dict(
    name="kmeta",
    help="Inspect, verify and repair Apache Kafka KRaft metadata logs on disk.\n\n"
         "Exit codes: 0 clean, 1 findings of severity error, 2 usage error, "
         "3 input unreadable.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


app = typer.Typer(**_APP)  # type: ignore[arg-type]


#: ``--decoder``'s choices: the names of kmeta's payload decoders, in their table's order.
Decoder = StrEnum("Decoder", {name: name for name in DECODERS})  # type: ignore[misc]


def current_env() -> Environment:
    """The environment of this run: the one :func:`main` made, or the process's own when
    the app is called directly (click's test runner, the docs' sample runs)."""
    return click.get_current_context().ensure_object(Environment)


def _version(value: bool) -> None:
    if value:
        from kmeta.formats.compiled import IMPLEMENTATION

        # Which scan core runs: the compiled one, or its pure-Python reference.
        print(f"kmeta {__version__} (scan core: {IMPLEMENTATION})", file=current_env().stdout)
        raise typer.Exit()


def man_page() -> Path | None:
    """The man page kmeta(1) as installed: under the prefix of this Python (a venv,
    pipx's venv, /usr/local) or the user's (pip --user), where the wheel's data files
    go, else beside the package in a source checkout (an editable install)."""
    import site
    import sysconfig

    rel = Path("share") / "man" / "man1" / "kmeta.1"
    bases = [sysconfig.get_path("data"), sys.prefix, site.getuserbase(),
             Path(__file__).resolve().parents[2] / "man" / "kmeta.1"]
    for base in bases:
        path = Path(base)
        path = path if path.name == "kmeta.1" else path / rel
        if path.is_file():
            return path
    return None


def _man_path(value: bool) -> None:
    if value:
        path = man_page()
        if path is None:
            raise UnreadableInput("the man page kmeta.1 is not installed with this kmeta",
                                  hint="reinstall it from its wheel: pip install kmeta")
        print(path, file=current_env().stdout)
        raise typer.Exit()


@app.callback()
def _root(
    traceback: Annotated[bool, typer.Option("--traceback", help="Show Python tracebacks "
                                            "instead of one-line errors.")] = False,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version, and which scan core runs (compiled or pure Python), and exit.")] = False,
    man_path: Annotated[bool, typer.Option("--man-path", callback=_man_path, is_eager=True,
                                           help="Print where the man page kmeta(1) is, for "
                                           "man -l \"$(kmeta --man-path)\" where man "
                                           "kmeta finds none, and exit.")] = False,
) -> None:
    # Declared for --help and kmeta(1): main() takes --traceback out of the arguments
    # before click sees them (it may also follow the command's name).
    del traceback, version, man_path


def command(fn: Callable[..., None]) -> Callable[..., None]:
    """``@app.command()``, where a reader that went away (``| head``) ends the command
    quietly with status 0 (click would exit 1)."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        try:
            fn(*args, **kwargs)
        except BrokenPipeError:
            current_env().quiet_stdout()
            raise typer.Exit(int(ExitCode.OK)) from None

    return app.command()(run)


def finish(env: Environment, verdict: Verdict | None = None, *, failed: bool | None = None,
           summary: bool = True) -> NoReturn:
    """End a command: the summary of its findings on stderr (``summary``: unless its
    report says it already), then the exit code the policy beside ExitCode picks
    (:meth:`kmeta.errors.Verdict.exit_code`; ``failed``: the command's own answer)."""
    verdict = verdict if verdict is not None else Verdict()
    if summary and verdict.total:
        from kmeta.render.text import summary_line

        print(summary_line(verdict), file=env.stderr)
    raise typer.Exit(int(verdict.exit_code(failed)))


#: Where a report that lists the first findings sends a reader for all of them.
VERIFY_ALL = "run kmeta verify for all of them"


def close(env: Environment, findings: list[Finding], given: list[str], *, json_out: bool,
          more: str = VERIFY_ALL, told: bool = False, untold: list[Finding] | None = None,
          beside_data: bool = False, every: bool | None = None) -> NoReturn:
    """End a command the way every command ends (DESIGN.md, "One language"): its
    findings, then the exit code of the worst of them.

    ``--json``: a ``finding`` object per line after the command's own objects (``told``:
    its renderer wrote them).  Text: after the report, on stdout, a code met many times
    as one line, paths relative to ``given``, folded at the terminal's width, then the
    count line (``told``: the report listed them itself, only the count follows;
    ``untold``: it told all but these; ``every``: the command's ``--all``, each finding
    on its line, None where it has no such option); beside
    data a script reads whole (``beside_data``: ``image --digest``, ``ls``, ``cat``), on
    stderr.
    """
    verdict = Verdict(findings)
    if json_out:
        if not told and findings:
            from kmeta.render.jsonl import dumps

            env.write_lines((dumps(f.to_json()) for f in findings), json=True)
        raise typer.Exit(int(verdict.exit_code()))
    from kmeta.render.console import clip_width
    from kmeta.render.text import Paths, listed_findings, summary_line

    stream = env.stderr if beside_data else env.stdout
    listed = [] if told else findings if untold is None else untold
    lines = list(listed_findings(listed, Paths(given), env.colour(stream), more, every))
    if verdict.total:
        lines.append(summary_line(verdict))
    if beside_data:
        env.stdout.flush()
        for line in lines:
            print(line, file=env.stderr)
    elif lines:
        env.write_lines(folded(lines, clip_width(env)))
    raise typer.Exit(int(verdict.exit_code()))


def folded(lines: Iterable[str], width: int | None) -> Iterator[str]:
    """A report's prose lines folded at the terminal's ``width``, as verify, info and
    image fold theirs; whole through a pipe (None)."""
    from kmeta.render.console import fold

    return (fold(line, width) for line in lines)


def complete_types(incomplete: str) -> list[str]:
    from kmeta.ops.dump import type_names

    return [n for n in type_names() if n.startswith(incomplete.upper())]


def complete_actions(incomplete: str) -> list[str]:
    return [a for a in IMAGE_ACTIONS if a.startswith(incomplete)]


IMAGE_ACTIONS = ("ls", "cat")


# Plain strings: kmeta itself reports unreadable paths (exit 3), not the option parser.
PathsArg = Annotated[list[str], typer.Argument(
    help="Data directories, partition directories or files.", show_default=False,
    metavar="PATH...")]


JsonOpt = Annotated[bool, typer.Option("--json", help="JSON Lines on stdout, one object per "
                                       "line (schema in kmeta(1)).")]


AllOpt = Annotated[bool, typer.Option("--all", help="List every finding on its own line "
                                      f"(by default a code met more than {GROUP_OVER} times "
                                      "is one line: how many, the first and the last).")]


IntoDataDirOpt = Annotated[bool, typer.Option(
    "--into-data-dir", help="Allow the output directly in a Kafka data dir (one holding "
    "meta.properties), where Kafka loads it at its next start; refused while a broker "
    "holds the dir's .lock.")]


JsonObjOpt = Annotated[bool, typer.Option("--json", help="JSON Lines on stdout: the "
                                          "command's object, then a finding object per "
                                          "finding (schema in kmeta(1)).")]


PathArg = Annotated[str, typer.Argument(
    help="A data directory, its __cluster_metadata-0 directory, or one .checkpoint file.",
    show_default=False, metavar="PATH")]


#: Commands that read only the metadata log and snapshots of what they are given.
_METADATA_ONLY = frozenset({"image", "history", "brokers", "retention", "diff", "snapshot",
                            "shell", "truncate", "repair"})


def reading_progress(env: Environment, label: str, streams_stdout: bool = False) -> Any:
    """The progress bar of every long command (kmeta.render.progress), imported late:
    ``kmeta --help`` imports no renderer."""
    from kmeta.render.progress import reading

    return reading(env, label, metadata_only=label in _METADATA_ONLY,
                   streams_stdout=streams_stdout)


@contextlib.contextmanager
def _streams(env: Environment) -> Iterator[None]:
    """sys.stdout and sys.stderr are ``env``'s while the command runs: click and typer
    write help, usage errors and completions there themselves."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = env.stdout, env.stderr
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


@functools.cache
def _click_app(only: str | None = None) -> click.Command:
    """The click command typer builds from ``app``, once: ``app()`` builds it anew on every
    call, which costs more than a small command (in-process runs add up).

    ``only``: the command about to run, the one built.  Typer reads the signatures and
    type hints of every command to build them all, a sixth of a short run's time; the
    rest are needed only to list them (``--help``), suggest one for a typo, or complete.
    """
    if only is None:
        return typer.main.get_command(app)
    one = typer.Typer(**_APP)  # type: ignore[arg-type]
    one.registered_callback = app.registered_callback
    one.registered_commands = [c for c in app.registered_commands if _name(c) == only]
    return typer.main.get_command(one)


def _name(info: typer.models.CommandInfo) -> str:
    return info.name or typer.main.get_command_name(info.callback.__name__)


def _command_named(args: list[str], env: Environment) -> str | None:
    """The command ``args`` run, when it is one of the app's; None for ``--help``,
    ``--version``, a typo or a shell's completion request (those need them all)."""
    if any(k.endswith("_COMPLETE") for k in (*os.environ, *env.environ)):
        return None
    for arg in args:
        if not arg.startswith("-"):
            known = {_name(c) for c in app.registered_commands}
            return arg if arg in known else None
        if arg in ("--", "-h", "--help", "--version"):
            return None
    return None


def _take_traceback(args: list[str]) -> tuple[list[str], bool]:
    """``--traceback`` is accepted anywhere before ``--``, also after the command name
    (where the crash message tells users to add it): taken out here, before click sees
    it.  The arguments without it, and whether it was there."""
    end = args.index("--") if "--" in args else len(args)
    if "--traceback" in args[:end]:
        return [a for a in args[:end] if a != "--traceback"] + args[end:], True
    return args, False


def _usage_line(e: click.UsageError) -> str:
    """click's usage error as kmeta's one line: ``kmeta: error[KM002]: what (where the
    command's options are said)``."""
    what = e.format_message().strip().rstrip(".")
    what = what[:1].lower() + what[1:]
    # click appends its guess as a sentence of its own: one line, one sentence
    what = what.replace(". Did you mean", "; did you mean").replace(" Did you mean",
                                                                     "; did you mean")
    command = e.ctx.command_path if e.ctx is not None else "kmeta"
    return UsageError(what, hint=f"{command} -h says what it takes").one_line()


def main(argv: list[str] | None = None, env: Environment | None = None) -> None:
    """Entry point: one place turns errors into a line on stderr and an exit code.

    ``env``: the streams and variables of the run (default: the process's own).  A usage
    error click finds (an unknown option, a bad value, a missing argument) is KM002's one
    line, exit 2, as kmeta's own are; a KmetaError is one line and its own exit code;
    anything else is a bug, reported in one line unless ``--traceback`` was given.
    """
    env = env or Environment()
    args, traceback = _take_traceback(sys.argv[1:] if argv is None else list(argv))
    env = replace(env, traceback=env.traceback or traceback)
    try:
        if env.stdout is None:  # started with stdout closed (``>&-``)
            raise OutputError("standard output is closed: kmeta writes its results there",
                              hint="redirect it to a file or to /dev/null instead")
        env = env.guarded()
        with _streams(env):
            # not standalone: click's errors come here, to be said in kmeta's words
            code = _click_app(_command_named(args, env)).main(
                args=args, prog_name="kmeta", obj=env, standalone_mode=False)
        sys.exit(code if isinstance(code, int) else ExitCode.OK)
    except click.exceptions.NoArgsIsHelpError as e:  # no arguments: the help, as before
        with _streams(env):
            e.show()
        sys.exit(e.exit_code)
    except click.UsageError as e:
        print(_usage_line(e), file=env.stderr)
        sys.exit(ExitCode.USAGE)
    except click.ClickException as e:
        print(f"kmeta: error: {e.format_message()}", file=env.stderr)
        sys.exit(e.exit_code)
    except click.Abort:  # end of input at a prompt
        print("kmeta: aborted", file=env.stderr)
        sys.exit(1)
    except BrokenPipeError:
        env.quiet_stdout()
        sys.exit(0)
    except KmetaError as e:
        if env.traceback:
            raise
        print(e.one_line(), file=env.stderr)
        if isinstance(e, OutputError) and env.stdout is not None:
            env.quiet_stdout()  # what is still buffered would fail again at exit
        sys.exit(int(e.exit_code))
    except KeyboardInterrupt:
        sys.exit(ExitCode.INTERRUPTED)
    except Exception as e:
        if env.traceback:
            raise
        print(f"kmeta: internal error: {type(e).__name__}: {e} (a bug in kmeta: run the "
              "same command again with --traceback added and report what it prints)",
              file=env.stderr)
        sys.exit(ExitCode.INTERNAL)
    finally:
        # dump and verify turn the cyclic collector off for speed; a caller that runs
        # kmeta in-process (tests, scripts) gets it back
        gc.enable()
