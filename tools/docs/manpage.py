"""The man page ``man/kmeta.1``, section by section: the command line as introspected, the
exit codes, the finding codes, JSON OUTPUT (:mod:`tools.docs.reference`) and the
hand-written environment, examples and see-also."""

from __future__ import annotations

import importlib
import re
import shlex
from pathlib import Path

from kmeta import __version__
from kmeta.errors import ExitCode, KmetaError
from kmeta.findings import CODES
from tools.docs import GENERATED_NOTE, PROG, DocsError
from tools.docs.completions import COMPLETE_VAR
from tools.docs.introspect import CommandDoc, ParamDoc, all_commands, describe
from tools.docs.reference import section_json
from tools.docs.roff import bold, esc, italic, paragraphs, sentence

MAN_PAGE = Path("man") / "kmeta.1"


def _param_label(p: ParamDoc) -> str:
    if p.kind == "argument":
        name = p.metavar or p.name
        # a metavar that names its repetition ("LOCAL PEER [MORE...]") gets no more dots
        dots = p.nargs != 1 and "..." not in name
        label = italic(name.removesuffix("...")) + ("..." if dots or name.endswith("...") else "")
        return label if p.required else f"[{label}]"
    names = ", ".join(bold(n) for n in p.names)
    if p.secondary:
        names += ", " + ", ".join(bold(n) for n in p.secondary)
    if p.metavar is None:
        return names
    if p.choices:
        # \: lets troff break a long list of choices after a bar
        return f"{names} {{" + "|\\:".join(bold(c) for c in p.choices) + "}"
    return f"{names} {italic(p.metavar)}"


def _range(p: ParamDoc) -> str | None:
    lo, hi = p.minimum, p.maximum
    if lo is not None and hi is not None:
        return f"From {lo} to {hi}."
    if lo is not None:
        return f"At least {lo}."
    if hi is not None:
        return f"At most {hi}."
    return None


def _param_entry(p: ParamDoc) -> list[str]:
    parts = [sentence(p.help)] if p.help else []
    r = _range(p)
    if r:
        parts.append(r)
    if p.multiple and "repeatable" not in p.help.lower():
        parts.append("May be given more than once.")
    if p.required and p.kind == "argument" and p.nargs != 1:
        # "LOCAL PEER [MORE...]" says itself how many it needs
        if " " not in (p.metavar or ""):
            parts.append("At least one is required.")
    elif p.required:
        parts.append("Required.")
    if p.default is not None:
        parts.append(f"Default: {p.default}.")
    if p.envvar:
        parts.append(f"Environment variable: {p.envvar}.")
    return [".TP", _param_label(p), esc(" ".join(parts))]


def _usage(c: CommandDoc) -> str:
    pieces = [bold(c.name)]
    if c.options:
        pieces.append(f"[{italic('OPTIONS')}]")
    for a in c.arguments:
        pieces.append(_param_label(a))
    if c.subcommands:
        pieces.append(f"{italic('COMMAND')} [{italic('ARGS')}]...")
    return " ".join(pieces)


def _section_name(root: CommandDoc) -> list[str]:
    first = root.help.split("\n", 1)[0].strip().rstrip(".")
    summary = first[:1].lower() + first[1:] if first[1:2].islower() else first
    return [".SH NAME", f"{PROG} \\- {esc(summary)}"]


def _section_synopsis(root: CommandDoc) -> list[str]:
    out = [".SH SYNOPSIS", ".nf", _usage(root)]
    for c in all_commands(root):
        out.append(_usage(c))
    out.append(".fi")
    return out


DESCRIPTION = [
    "kmeta reads what a Kafka broker or KRaft controller writes to its log directories: "
    "record batch segments, KRaft snapshots (.checkpoint), bootstrap.checkpoint, "
    "leader-epoch and offset checkpoints, quorum-state, partition.metadata, "
    "meta.properties, index files and producer-state snapshots. A PATH may be one file, a "
    "partition directory (topic-N), a broker data directory (a log.dirs entry) or a "
    "directory above several of them.",
    "Inputs are opened read-only. A command's report goes to standard output, its "
    "findings closing it (after the report in text, as finding objects in --json), and "
    "errors to standard error, so output can be piped into jq, spark.read.json or head; "
    "where standard output is data a script reads whole (image --digest, ls, cat) the "
    "findings go to standard error. Damaged input is the normal case for this tool: every "
    "problem becomes a finding with a stable code (see FINDINGS) and reading goes on past "
    "a bad batch where it safely can; a Python traceback is never shown unless "
    "--traceback is given.",
    "Secrets (SCRAM salts and keys, delegation token ids, values of sensitive configs such "
    "as *.password or sasl.jaas.config) are shown as [redacted] by every command, and by "
    "dump unless --show-secrets is given; image shows SCRAM credentials and token ids as "
    "xxh3 fingerprints, so replicas can still be compared. Where dump shows bytes (--hex, "
    "and record values with the raw, utf8 and hex decoders) a secret's bytes are masked, "
    "in a log or a snapshot, whatever the decoder: ** for each byte in hex, * in base64 "
    "and text; a masked: note (the masked key in --json) names the record, the field and "
    "the bytes (N bytes at P, from the start of the batch or of the value). A compressed "
    "batch holding a secret has its whole records section masked: compressed bytes do not "
    "show the secret, but they give it back once decompressed. In a metadata log, what "
    "kmeta cannot read may be a damaged secret: a record that does not decode is masked "
    "after its type and version, and a batch's records from where they stop reading. "
    "dump --show-secrets shows every byte.",
]


def _section_description(root: CommandDoc) -> list[str]:
    out = [".SH DESCRIPTION"]
    for i, para in enumerate(paragraphs(root.help) + [esc(p) for p in DESCRIPTION]):
        if i:
            out.append(".PP")
        out.append(para)
    return out


def _section_global_options(root: CommandDoc) -> list[str]:
    out = [".SH GLOBAL OPTIONS",
           "These come before the command name, as in " + bold(f"{PROG} --traceback dump")
           + "."]
    for p in root.params:
        out += _param_entry(p)
    return out


def _section_commands(root: CommandDoc) -> list[str]:
    out = [".SH COMMANDS"]
    for c in all_commands(root):
        out.append(f'.SS "{esc(" ".join(c.path[1:]))}"')
        out.append(_usage(c))
        for para in paragraphs(c.help):
            out += [".PP", para]
        for p in c.arguments + c.options:
            out += _param_entry(p)
        for para in paragraphs(c.epilog):
            out += [".PP", para]
    return out


#: What each exit code means, by ExitCode member name.  A member without an entry here
#: makes generation fail.
EXIT_MEANINGS = {
    "OK": "Success: the input was read and no finding of severity error was made (warnings "
          "and info findings may have been reported).",
    "FINDINGS": "At least one finding of severity error (for example a bad CRC, a torn "
                "tail, replicas that diverged, a consumer that would move): the same rule "
                "for every command.",
    "USAGE": "Usage error: an unknown command or option, a bad option value, or options "
             "that contradict each other (such as --from-offset after --to-offset, "
             "--since after --until), a path at the wrong level whose message names the "
             "right one (a partition dir where startup takes a log dir, a data dir where "
             "repair takes its __cluster_metadata-0, several partitions where compact "
             "takes one), an output that would land inside an input or among a broker's "
             "files; also a standard output that is closed or cannot be written (a full "
             "disk).",
    "UNREADABLE": "Input unreadable: a path (given as PATH or named by an option such as "
                  "--metadata or --from-snapshot) that does not exist, cannot be opened or "
                  "listed, or holds none of the Kafka files the command reads: a text "
                  "file, a folder of text files, an empty dir, /etc; and, for a command "
                  "that reads the metadata log (image, history, brokers, retention, shell, "
                  "diff, snapshot, truncate, repair), a data dir without "
                  "__cluster_metadata-0 (ZooKeeper mode, or its metadata.log.dir elsewhere) "
                  "or a data partition; for consumers, no __consumer_offsets partition; for "
                  "compact, no partition dir of a topic; for tiering, the partition dir of "
                  "an internal topic; for one that reads the log itself (history, "
                  "snapshot, truncate, repair), a metadata partition whose log segments are "
                  "gone. The commands that can answer from its snapshots (image, brokers, "
                  "retention, shell, and info, verify, report) answer, with verify's V020 error "
                  "finding: 1. One status for each of these, for every command; a file that "
                  "cannot be opened among others read is an S008 finding, and 3 too.",
    "INTERNAL": "Internal error: a bug in kmeta. Run again with --traceback and report it.",
    "INTERRUPTED": "Interrupted (Ctrl-C).",
}


def _section_exit_status() -> list[str]:
    out = [".SH EXIT STATUS",
           "Exit codes are part of kmeta's interface and are kept stable."]
    missing = [m.name for m in ExitCode if m.name not in EXIT_MEANINGS]
    if missing:
        raise DocsError(f"ExitCode member(s) {', '.join(missing)} have no meaning in "
                        "tools.docs.manpage.EXIT_MEANINGS")
    for m in ExitCode:
        out += [".TP", bold(str(int(m))), esc(f"({m.name}) {EXIT_MEANINGS[m.name]}")]
    out += [".PP", esc("An error that stops a command is one line on standard error, "
                       "kmeta: error[REFERENCE]: PATH: what happened (what to do), with a "
                       "stable reference:")]
    for c in _error_classes():
        doc = " ".join((c.__doc__ or "").split("\n\n")[0].split())
        out += [".TP", f"{bold(c.reference)} (exit {int(c.exit_code)})", esc(doc)]
    return out


#: The modules that define KmetaError's subclasses: imported, so that each is listed.
ERROR_MODULES = ("kmeta.errors", "kmeta.formats.compression", "kmeta.storage.targets")


def _error_classes() -> list[type[KmetaError]]:
    """Every class that sets its own reference, by reference."""
    for name in ERROR_MODULES:
        importlib.import_module(name)
    found: dict[str, type[KmetaError]] = {}
    todo: list[type[KmetaError]] = [KmetaError]
    while todo:
        c = todo.pop()
        if "reference" in vars(c):
            found.setdefault(c.reference, c)
        todo += c.__subclasses__()
    return [found[r] for r in sorted(found)]


FINDING_GROUPS = {"F": "format: bytes that do not follow their format",
                  "S": "storage: files, their names and how they end",
                  "V": "verify: what the log says about the cluster"}


def _section_findings() -> list[str]:
    out = [".SH FINDINGS",
           "Every problem kmeta sees in its input is reported as a finding with a stable "
           "code, a severity (error, warning or info), the file, and where known the byte "
           "position and the offset. Findings of severity error make the exit status 1. "
           "The codes are grouped by the layer that reports them: "
           + esc("; ".join(f"{k} {v}" for k, v in FINDING_GROUPS.items())) + "."]
    for code, c in sorted(CODES.items()):
        out += [".TP", f"{bold(code)} ({esc(c.severity.value)})", esc(sentence(c.meaning))]
    return out



ENVIRONMENT = [
    ("NO_COLOR", "When set to a non-empty value, output for people carries no colour or "
                 "other terminal escape codes. Output that is not a terminal never does."),
    ("COLUMNS", "The width output for people is fitted to. Without it, the terminal's "
                "width; through a pipe nothing is wrapped, so that each finding stays on "
                "one line. On a terminal every line is shown whole: one wider than the "
                "terminal is folded (at spaces, else after a comma, slash or semicolon), "
                "JSON is indented as jq shows it, and a table leaves out the columns that "
                "do not fit and names them (--json has them all); a number is never cut. "
                "Through a pipe or into a file the output is the same byte for byte "
                "whatever the terminal."),
    ("KMETA_PURE_PYTHON", "When set to a non-empty value, kmeta reads with its "
                          "pure-Python scan core even where the compiled one was built "
                          "(pip builds it when a C compiler is there). Both give the same "
                          "output; the compiled one is several times faster on a long log. "
                          "kmeta --version says which one runs."),
    ("KMETA_ONE_PROCESS", "When set to a non-empty value, kmeta verify replays the "
                          "image in its own process. By default, on Linux with a second "
                          "CPU, a log of 32 MiB or more is replayed by a forked child while "
                          "the checks go on; the report is the same byte for byte."),
    ("KMETA_REAL_DATA", "For kmeta's own test suite: the directory of real Kafka broker "
                        "files (ldi-poc, data-store, quorum3-boaz) the tests read. .ci/run "
                        "sets it; tests that need it are skipped when the directory is "
                        "absent."),
    ("PAGER", "The pager kmeta shell runs for a reply taller than the screen, at its "
              "prompt only; when it is unset, less -FRX where it is installed, else none."),
    ("XDG_STATE_HOME", "Where kmeta shell keeps the lines typed at its prompt, across "
                       "sessions: $XDG_STATE_HOME/kmeta/history; when it is unset, "
                       "~/.kmeta_history (HOME). A history that cannot be written is kept "
                       "for the session only."),
    (COMPLETE_VAR, "Set by the shell completion scripts when they run kmeta to ask for "
                   "completions; not for interactive use."),
]

#: (what it does, command line).  Every option named here must exist on its command:
#: generation fails otherwise.
EXAMPLES = [
    ("Decode a metadata log the way kafka-dump-log.sh --cluster-metadata-decoder would, "
     "one line per batch and per record:",
     "kmeta dump -r /var/lib/kafka/data/__cluster_metadata-0"),
    ("Only partition and topic records, between two offsets:",
     "kmeta dump -r --type PARTITION_RECORD --type TOPIC_RECORD \\\n"
     "    --from-offset 1000 --to-offset 2000 /var/lib/kafka/data/__cluster_metadata-0"),
    ("Batch headers only, without control batches, from the first megabyte of a segment:",
     "kmeta dump --batches-only --skip-control --max-bytes 1048576 \\\n"
     "    00000000000000000000.log"),
    ("The records of an ordinary topic as text, with their bytes in hex:",
     "kmeta dump -r --decoder utf8 --hex /var/lib/kafka/data/orders-0"),
    ("Every finding of a data directory, as JSON:",
     "kmeta dump --json /var/lib/kafka/data | jq -c 'select(.kind == \"finding\")'"),
    ("The file object and the first batch only; kmeta stops quietly when head exits:",
     "kmeta dump --json /var/lib/kafka/data/__cluster_metadata-0 | head -2"),
    ("One screen about a data directory, and the same as JSON:",
     "kmeta info /var/lib/kafka/data\n"
     "kmeta info --json /var/lib/kafka/data"),
    ("Show SCRAM credentials and sensitive config values instead of [redacted]:",
     "kmeta dump -r --show-secrets --type USER_SCRAM_CREDENTIAL_RECORD \\\n"
     "    --type CONFIG_RECORD /var/lib/kafka/data/__cluster_metadata-0"),
    ("Everything copied off a cluster's machines in one report, with its pictures in one "
     "HTML page that opens offline:",
     "kmeta report --html cluster.html ./controller-1 ./controller-2 ./controller-3 \\\n"
     "    ./broker-4 ./broker-5"),
    ("Walk the metadata through time at a prompt; or, in a script, what partition 0 of "
     "orders looked like at 03:12 UTC and what changed since, as JSON:",
     "kmeta shell /var/lib/kafka/data\n"
     "kmeta shell --json /var/lib/kafka/data \\\n"
     "    -c 'at 2024-05-01T03:12Z; cat /image/topics/byName/orders/0; diff . end'"),
    ("Before starting a crashed broker of two log dirs: what Kafka will recover, cut or "
     "refuse, and how long it takes with the broker's own thread count and a measured "
     "disk rate:",
     "kmeta startup --config /etc/kafka/server.properties --recovery-rate 400MB \\\n"
     "    /data1/kafka /data2/kafka"),
]

SEE_ALSO = [
    "kafka-dump-log.sh and kafka-metadata-shell.sh, in the bin/ directory of Apache Kafka.",
    "https://kafka.apache.org/documentation/#kraft",
]


def check_examples(root: CommandDoc) -> list[str]:
    """Options named in EXAMPLES that the command line does not have."""
    problems = []
    commands = {c.path[-1]: c for c in root.subcommands}
    for _, line in EXAMPLES:
        for part in re.split(r"\|\||&&|\||\n", line.replace("\\\n", " ")):
            words = shlex.split(part)
            if not words or words[0] != PROG:
                continue
            target = root
            for w in words[1:]:
                if target is root and w in commands:
                    target = commands[w]
                elif w.startswith("-") and len(w) > 1 and \
                        w.split("=", 1)[0] not in target.option_strings():
                    problems.append(f"example uses {w}, which {target.name} does not "
                                    f"have: {line}")
            if target is root:
                problems.append(f"example names no command: {line}")
    return problems


def _section_environment() -> list[str]:
    out = [".SH ENVIRONMENT"]
    for name, text in ENVIRONMENT:
        out += [".TP", bold(name), esc(text)]
    return out


def _section_examples(root: CommandDoc) -> list[str]:
    problems = check_examples(root)
    if problems:
        raise DocsError("EXAMPLES are out of date:\n  " + "\n  ".join(problems))
    out = [".SH EXAMPLES"]
    for i, (text, line) in enumerate(EXAMPLES):
        out += [".PP" if i else "", esc(text), ".PP", ".RS 4", ".nf", esc(line), ".fi", ".RE"]
    return [x for x in out if x]


def _section_see_also() -> list[str]:
    out = [".SH SEE ALSO"]
    for i, line in enumerate(SEE_ALSO):
        if i:
            out.append(".br")
        out.append(esc(line))
    return out


def man_page(root: CommandDoc | None = None) -> str:
    """The whole roff man page ``man/kmeta.1``."""
    root = root or describe()
    lines = [
        f'.\\" {GENERATED_NOTE}',
        f'.TH KMETA 1 "" "{PROG} {esc(__version__)}" "User Commands"',
        ".nh",  # no hyphenation: option names stay whole
        ".ad l",
        *_section_name(root),
        *_section_synopsis(root),
        *_section_description(root),
        *_section_global_options(root),
        *_section_commands(root),
        *_section_exit_status(),
        *_section_findings(),
        *section_json(),
        *_section_environment(),
        *_section_examples(root),
        *_section_see_also(),
    ]
    return "\n".join(lines) + "\n"

