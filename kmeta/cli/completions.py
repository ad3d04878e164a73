"""``kmeta completions``: the shell completion script, printed or installed where the
shell finds it, as ``gh completion`` and ``rustup completions`` do.  The wheel also ships
the scripts (and the man page) under its prefix's share/ (pyproject.toml, data-files);
this command is for the prefix no shell looks in (a venv, pipx)."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from kmeta.cli.app import command, current_env
from kmeta.errors import UsageError


class Shell(StrEnum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"


def script(shell: str) -> str:
    """The completion script of ``shell``: what ``_KMETA_COMPLETE=source_SHELL kmeta``
    prints, the scripts in completions/ without their generated-file note."""
    # typer's own function, the one behind --show-completion: typer's classes answer
    # the completion requests (click's own scripts speak another protocol)
    from typer._completion_shared import get_completion_script

    return get_completion_script(prog_name="kmeta", complete_var="_KMETA_COMPLETE",
                                 shell=shell).strip("\n") + "\n"


def user_file(shell: str, environ: Mapping[str, str]) -> Path:
    """Where ``shell`` loads a user's completion for kmeta from without any set-up
    (bash-completion's and fish's user dirs), or from a dir zsh is told of once."""
    home = Path(environ.get("HOME") or Path.home())
    data = Path(environ.get("XDG_DATA_HOME") or home / ".local" / "share")
    if shell == "bash":  # bash-completion 2.x, loaded on first Tab
        return data / "bash-completion" / "completions" / "kmeta"
    if shell == "fish":
        config = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
        return config / "fish" / "completions" / "kmeta.fish"
    return data / "zsh" / "site-functions" / "_kmeta"  # on $fpath once (said below)


def _next_step(shell: str, path: Path) -> str:
    if shell == "zsh":
        return (f"add to ~/.zshrc, before compinit: fpath=({path.parent} $fpath); then "
                "open a new shell")
    if shell == "bash":
        return "open a new shell (bash-completion loads it on the first Tab)"
    return "open a new shell"


@command
def completions(
    shell: Annotated[Shell, typer.Argument(
        help="The shell: bash, zsh or fish.", show_default=False, metavar="SHELL")],
    install: Annotated[bool, typer.Option(
        "--install", help="Write the script where the shell loads it for this user "
        "(bash: $XDG_DATA_HOME/bash-completion/completions/kmeta; zsh: "
        "$XDG_DATA_HOME/zsh/site-functions/_kmeta; fish: "
        "$XDG_CONFIG_HOME/fish/completions/kmeta.fish) and say what is left to do.")]
    = False,
) -> None:
    """Print the shell completion script of kmeta, or install it for this user.

    source <(kmeta completions bash) completes in the current bash; --install writes it
    where the shell finds it in every new one. pip, pipx and a venv also install the
    scripts under their prefix's share/ (bash-completion, zsh/site-functions,
    fish/vendor_completions.d), which a shell reads when that prefix is its own.
    """
    env = current_env()
    text = script(shell.value)
    if not install:
        env.stdout.write(text)
        return
    path = user_file(shell.value, env.environ)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise UsageError(f"cannot write the completion script: {e.strerror}",
                         context=str(path)) from e
    print(f"wrote {path}; {_next_step(shell.value, path)}", file=env.stdout)
