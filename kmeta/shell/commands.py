"""The shell's commands: their names, what each takes, its help, and running a line.

The navigation commands and their texts are those of Kafka 4.0's
``kafka-metadata-shell.sh`` (``ls``, ``cd``, ``pwd``, ``cat``, ``tree``, ``find``,
``help``, ``man``, ``history [N]`` (the lines typed), ``exit``), so its users' habits
carry over; the others walk through time and across replicas (``changes [PATH]``: the
records that changed a node).  A line is split as a POSIX shell splits words
(quotes, backslashes); several commands may share a line, separated by ``;``.
"""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kmeta.errors import ExitCode, KmetaError
from kmeta.shell.replies import Reply, refused
from kmeta.shell.session import Session


@dataclass(frozen=True)
class Command:
    """One command: its ``usage`` line, a one-line ``summary`` and the ``help`` text
    ``help COMMAND`` prints, and how it runs."""

    name: str
    usage: str
    summary: str
    help: str
    run: Callable[[Session, list[str], bool], Reply]


def _count(words: list[str], name: str) -> int:
    if not words:
        return 1
    if len(words) > 1 or not re.fullmatch(r"-?[0-9]+", words[0]):
        raise _Refusal(f"{name}: {' '.join(words)}: a number of record batches",
                       f"{name} [N]")
    return int(words[0])


class _Refusal(Exception):
    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.reply = refused(message, hint)


def _one_or_none(words: list[str], name: str) -> str | None:
    if len(words) > 1:
        raise _Refusal(f"{name}: one path at most")
    return words[0] if words else None


def _needs(words: list[str], name: str) -> list[str]:
    if not words:
        raise _Refusal(f"{name}: name at least one node", f"{name} PATH...")
    return words


COMMANDS: dict[str, Command] = {c.name: c for c in (
    Command("ls", "ls [PATH...]", "List metadata nodes.",
            "The names under each PATH (default: the working directory), sorted as Kafka's "
            "shell sorts them; a leaf is listed by its own name.  Globs * ? {a,b} work in "
            "each part of a path.",
            lambda s, w, j: s.ls(w)),
    Command("cd", "cd [PATH]", "Set the current working directory.",
            "Go to the directory at PATH (default: /).  Relative paths, . and .. work as "
            "in a file system.",
            lambda s, w, j: s.cd(_one_or_none(w, "cd"))),
    Command("pwd", "pwd", "Print the current working directory.",
            "The working directory in the node tree.", lambda s, w, j: s.pwd()),
    Command("cat", "cat PATH...", "Show the contents of metadata nodes.",
            "The text of each leaf at PATH, as Kafka's shell prints it (secrets redacted).",
            lambda s, w, j: s.cat(_needs(w, "cat"))),
    Command("tree", "tree [PATH...]", "Show the contents of nodes in a tree structure.",
            "Everything under each PATH: a line 'name:' per node, its contents indented "
            "two spaces.", lambda s, w, j: s.tree(w)),
    Command("find", "find [PATH...]", "Search for nodes in the directory hierarchy.",
            "Each node at and under PATH (default: the working directory), a path per line.",
            lambda s, w, j: s.find(w)),
    Command("at", "at [POINT | snapshot NAME]", "Move to another point in the log.",
            "Stand at the image after every record below an offset.  POINT is an offset "
            "(4000), a time (2024-05-01T03:12Z, or 03:12 on the current day; UTC unless a "
            "zone is given: the image after every record stamped before it; a time before "
            "the log's first batch or after its last says so), start, end, or a "
            "snapshot's name; REPLICA@POINT stands on another replica.  Without a point: "
            "where the shell stands.", lambda s, w, j: s.at(w)),
    Command("next", "next [N]", "Step forward N record batches (default 1).",
            "Move past the next N batches of metadata records (leader changes and NoOp "
            "heartbeats are not steps), printing what each changed as nodes added (+), "
            "removed (-) and changed (~); a stretch of heartbeats alone is a step that "
            "changes nothing.  With no log, only snapshots, there is no step: at OFFSET "
            "stands at a snapshot's end.", lambda s, w, j: s.step(True, _count(w, "next"))),
    Command("prev", "prev [N]", "Step back N record batches (default 1).",
            "As next, backwards: what each batch had changed.",
            lambda s, w, j: s.step(False, _count(w, "prev"))),
    Command("diff", "diff POINT [POINT] [PATH]", "Compare the image at two points.",
            "The nodes added, removed and changed from the first point to the second "
            "(default: where the shell stands), under PATH (default: /image).  Points are "
            "as for at, and A..B says both, as kmeta prints ranges: diff 4000 end "
            "/image/topics; diff 0..20; diff ctrl-1@end ctrl-2@end compares two replicas.",
            lambda s, w, j: s.diff(list(w))),
    Command("changes", "changes [PATH]", "The records that touched a node (not typed lines).",
            "Every metadata record up to where the shell stands that touched the node at "
            "PATH (default: the working directory), under it or above it, with its offset, "
            "time and type: the node's history in the log (as kmeta history has it).  Not "
            "the lines typed: that is history.",
            lambda s, w, j: s.changes(w)),
    Command("history", "history [N]", "The lines typed (not a node's records: changes).",
            "The last N command lines typed in this shell (default: all of them), "
            "numbered, as Kafka's shell and bash have it.  Not a node's history: the "
            "records that changed a node are changes [PATH].",
            lambda s, w, j: s.history(w)),
    Command("grep", "grep PATTERN [PATH]", "Search node contents.",
            "Every leaf under PATH (default: the working directory) whose text matches the "
            "regular expression PATTERN, as 'path: text'.  Status 1 when none matches.",
            lambda s, w, j: s.grep(w)),
    Command("records", "records FROM [TO]", "Print the records of a range of offsets.",
            "The records from offset FROM to offset TO, both included (default: the "
            "record at FROM; FROM..TO says the same, as kmeta prints ranges), as kmeta "
            "dump -r prints them; with --json, dump's record objects.  end is the last "
            "record.  A long range is written as it is read, through the pager.  With no "
            "log, only snapshots, there is no record to print: dump -r prints a "
            "snapshot's.",
            lambda s, w, j: s.records(w, j)),
    Command("replica", "replica [NAME]", "List the replicas, or switch to one.",
            "Without NAME: each replica given, its log's extent, * where the shell "
            "stands.  With NAME (or the start of one): stand on that replica, at the same "
            "offset where its log has it.", lambda s, w, j: s.replica(w)),
    Command("help", "help [COMMAND]", "Display this help message.",
            "Every command in a line, or one command's help.",
            lambda s, w, j: help_reply(w)),
    Command("man", "man COMMAND", "Show the help text for a specific command.",
            "As help COMMAND (Kafka's shell's name for it).",
            lambda s, w, j: help_reply(w) if len(w) == 1 else refused(
                "man: name one command", "man COMMAND")),
    Command("exit", "exit", "Exit the metadata shell.", "Leave the shell (Ctrl-D too).",
            lambda s, w, j: Reply(leave=True)),
)}
COMMANDS["quit"] = COMMANDS["exit"]


def help_reply(words: list[str]) -> Reply:
    """``help``: a line per command; ``help COMMAND``: its usage and help."""
    if not words:
        width = max(len(c.usage) for c in COMMANDS.values())
        lines = ["kmeta shell: walk the cluster's metadata through time.", ""]
        seen = set()
        for name, c in COMMANDS.items():
            if c.name in seen or name != c.name:
                continue
            seen.add(c.name)
            lines.append(f"  {c.usage:<{width}}  {c.summary}")
        lines += ["", "help COMMAND tells more; paths take globs (* ? {a,b}).",
                  "Ctrl-C stops a command, Ctrl-D or exit leaves."]
        return Reply(lines, [{"kind": "shell_help", "command": c.name, "usage": c.usage,
                              "summary": c.summary} for c in COMMANDS.values()])
    name = words[0]
    c = COMMANDS.get(name)
    if c is None or len(words) > 1:
        return _unknown(name)
    # the help is one line: a terminal folds it to its width, a pipe keeps it whole
    return Reply([f"{c.usage}", f"  {c.summary}", "", c.help],
                 [{"kind": "shell_help", "command": c.name, "usage": c.usage,
                   "summary": c.summary}])


def _unknown(name: str) -> Reply:
    close = difflib.get_close_matches(name, list(COMMANDS), n=1)
    hint = f"did you mean {close[0]!r}? (help lists every command)" if close else \
        "help lists every command"
    return refused(f"{name}: unknown command", hint)


def split_commands(line: str) -> list[list[str]]:
    """The commands of a line: words split as a POSIX shell splits them, commands at each
    ``;`` outside quotes.  A UsageError-worthy line (an open quote) raises ValueError."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";")
    lexer.whitespace_split = True
    lexer.commenters = ""
    out: list[list[str]] = [[]]
    for word in lexer:
        if word and set(word) == {";"}:
            out.extend([] for _ in word)
        else:
            out[-1].append(word)
    return [words for words in out if words]


def run_line(session: Session, line: str, json_out: bool = False) -> Iterator[Reply]:
    """Run the commands of ``line`` one by one, as their replies are taken (so one that
    reads where the one before moved reads it there); up to an ``exit``."""
    try:
        commands = split_commands(line)
    except ValueError as e:
        yield refused(f"cannot read the line: {e}", "close the quote")
        return
    for words in commands:
        reply = run_words(session, words, json_out)
        yield reply
        if reply.leave:
            return


def run_words(session: Session, words: list[str], json_out: bool = False) -> Reply:
    """Run one command given as words."""
    command = COMMANDS.get(words[0])
    if command is None:
        return _unknown(words[0])
    try:
        return command.run(session, words[1:], json_out)
    except _Refusal as r:
        return r.reply
    except KmetaError as e:
        reply = refused(f"{words[0]}: {e.message}", e.hint)
        if e.exit_code != ExitCode.USAGE:
            reply.status = int(e.exit_code)
        return reply
