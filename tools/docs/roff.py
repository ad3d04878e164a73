"""Writing roff: escaping text, fonts, paragraphs of click help text."""

from __future__ import annotations

import re


def esc(text: str) -> str:
    """Escape text for roff: backslashes, hyphens (so options copy-paste), leading dots."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join("\\&" + line if line[:1] in (".", "'") else line
                     for line in text.split("\n"))


def bold(text: str) -> str:
    return f"\\fB{esc(text)}\\fR"


def italic(text: str) -> str:
    return f"\\fI{esc(text)}\\fR"


def paragraphs(text: str) -> list[str]:
    """Split click help text into roff paragraphs; ``\\b`` blocks stay unfilled."""
    out = []
    for block in re.split(r"\n\s*\n", text.strip()):
        if not block.strip():
            continue
        if block.lstrip().startswith("\b"):
            lines = block.lstrip()[1:].strip("\n")
            out.append(".nf\n" + esc(lines) + "\n.fi")
        else:
            out.append(esc(" ".join(block.split())))
    return out


def sentence(text: str) -> str:
    """Capitalised and ending in a full stop."""
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."

