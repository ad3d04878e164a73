"""The shell completion scripts: what typer/click emit for ``_KMETA_COMPLETE``, obtained by
running kmeta exactly as the shell would, with a generated-file note."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tools.docs import GENERATED_NOTE, PROG, DocsError

COMPLETE_VAR = "_KMETA_COMPLETE"
#: Each shell's script, by path relative to the repository root.
COMPLETIONS = {
    "bash": Path("completions") / "kmeta.bash",
    "zsh": Path("completions") / "_kmeta",
    "fish": Path("completions") / "kmeta.fish",
}


def _emit_completion(shell: str) -> str:
    """What ``_KMETA_COMPLETE=source_<shell> kmeta`` prints, run as the shell would run it."""
    script = (f"import sys; sys.argv[0] = {PROG!r}; "
              "from kmeta.cli import main; main()")
    # typer keeps click 7's "source_bash"; click 8 alone says "bash_source".
    for instruction in (f"source_{shell}", f"{shell}_source"):
        env = dict(os.environ, **{COMPLETE_VAR: instruction})
        proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                              text=True, timeout=60)
        if proc.returncode == 0 and proc.stdout.strip():
            return proc.stdout
    raise DocsError(f"kmeta emitted no {shell} completion script: {proc.stderr.strip()}")


def completion_script(shell: str) -> str:
    """A checked-in completion script: click/typer's own, with a generated-file note."""
    body = _emit_completion(shell).strip("\n").strip()
    note = f"# {GENERATED_NOTE}"
    lines = body.split("\n")
    if lines[0].startswith("#compdef"):
        # zsh reads "#compdef" only on the first line of a file in $fpath.
        lines.insert(1, note)
    else:
        lines.insert(0, note)
    return "\n".join(line.rstrip() for line in lines) + "\n"

