"""The generated files: what each should hold, which checked-in copies are stale, and
writing them."""

from __future__ import annotations

import difflib
from pathlib import Path

from tools.docs import ROOT, DocsError
from tools.docs.completions import COMPLETIONS, completion_script
from tools.docs.manpage import MAN_PAGE, man_page
from tools.docs.samples import problems, written


def generated_files() -> dict[Path, str]:
    """Every generated file, by path relative to the repository root.  Fails when what the
    commands write disagrees with the JSON OUTPUT the man page shows (the sample runs)."""
    wrong = problems(written())
    if wrong:
        raise DocsError("the --json output and kmeta/output_schema.py disagree:\n  "
                        + "\n  ".join(wrong))
    files = {MAN_PAGE: man_page()}
    for shell, path in COMPLETIONS.items():
        files[path] = completion_script(shell)
    return files


def stale_files(root: Path = ROOT, files: dict[Path, str] | None = None) -> dict[Path, str]:
    """Generated files whose checked-in copy under ``root`` differs: path -> a diff."""
    files = files if files is not None else generated_files()
    stale = {}
    for rel, text in files.items():
        path = root / rel
        try:
            current = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            stale[rel] = f"{rel}: missing"
            continue
        if current != text:
            diff = difflib.unified_diff(current.splitlines(), text.splitlines(),
                                        f"{rel} (checked in)", f"{rel} (generated)",
                                        lineterm="", n=1)
            stale[rel] = "\n".join(list(diff)[:60])
    return stale


def write(root: Path = ROOT) -> list[Path]:
    """Write every generated file under ``root``; returns those that changed."""
    changed = []
    for rel, text in generated_files().items():
        path = root / rel
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        changed.append(rel)
    return changed
