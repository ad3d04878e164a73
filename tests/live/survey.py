"""Run kmeta's reading commands beside the live writer and count what they say.

``python -m tests.live.survey DIR --seconds 60`` copies ``$KMETA_REAL_DATA``'s
kraft41-offsets data dir to DIR (which must not exist), starts
:class:`tests.live.kafka_like.LiveBroker` on it and runs every command of :data:`COMMANDS`
in turn until the time is up (a command of :data:`SLOW` only in the first round); then prints, per command: runs, exit codes, tracebacks and
timeouts, the findings of severity error and warning seen in ``--json`` output (by code, with
a message), and whether the run said that a process holds ``.lock``.  It is the table of
issue 34 ("runs, false alarms and exit codes, per command"); tests/test_live.py fails on the
same verdicts (:func:`judge`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.live.kafka_like import METADATA, SPARED, LiveBroker, copy_real

ROOT = Path(__file__).resolve().parents[2]
#: per-run limit: the slowest reading command takes a few seconds on the copy
TIMEOUT = 60.0


@dataclass(frozen=True)
class Where:
    """The paths a command line is built from."""

    data: Path  # the live data dir
    peer: Path  # a still copy of the metadata partition as it was before the writer ran
    scratch: Path  # a directory for output (export)


def _active_base(part: Path) -> str:
    """The metadata log's newest segment base offset: an offset the log still holds."""
    logs = sorted(p.name for p in part.glob("*.log"))
    return str(int(logs[-1][:20])) if logs else "0"


def _fresh(scratch: Path) -> str:
    out = Path(tempfile.mkdtemp(dir=scratch)) / "out"
    return str(out)


#: name -> argv builder; ``--json`` is added by the runner for the JSON variant
COMMANDS: dict[str, Callable[[Where], list[str]]] = {
    "verify": lambda w: ["verify", str(w.data)],
    "info": lambda w: ["info", str(w.data)],
    "dump": lambda w: ["dump", str(w.data)],
    "report": lambda w: ["report", str(w.data)],
    "startup": lambda w: ["startup", str(w.data)],
    "image": lambda w: ["image", str(w.data)],
    "history": lambda w: ["history", str(w.data), "--topic", SPARED.rpartition("-")[0]],
    "brokers": lambda w: ["brokers", str(w.data)],
    "retention": lambda w: ["retention", str(w.data)],
    "consumers": lambda w: ["consumers", str(w.data)],
    "shell": lambda w: ["shell", str(w.data), "-c",
                        "ls /image/topics/byName; tree /image/cluster; pwd"],
    "tiering": lambda w: ["tiering", str(w.data)],
    "compact": lambda w: ["compact", str(w.data / SPARED)],
    "diff": lambda w: ["diff", str(w.data), str(w.peer)],
    "truncate": lambda w: ["truncate", str(w.data), "--to", _active_base(w.data / METADATA)],
    "repair": lambda w: ["repair", str(w.data / METADATA), "--dry-run"],
    "export": lambda w: ["export", str(w.data), "--to", _fresh(w.scratch), "--format", "json",
                         "--table", "batches"],
}
#: commands without --json
TEXT_ONLY: frozenset[str] = frozenset()
#: commands too slow for the one-minute test file (a JVM starts): the slow variant runs them
SLOW: frozenset[str] = frozenset({"export"})

_TRACEBACK = "Traceback (most recent call last)"
#: a finding line of the text output: ``!! V032 error: FILE, byte N: message``
_TEXT_FINDING = re.compile(r"^\s*!! (?P<code>[A-Z]+\d+) (?P<severity>error|warning):?(?P<rest>.*)")
#: how kmeta says that a process holds the dir's .lock (V204's message, report's line)
#: how kmeta says a running process holds the dir's .lock: S012, in text and in --json (the
#: V204 of kmeta before issue 34 said it in startup and report only)
_LOCK = re.compile(r"\bS012\b|\bV204\b")


@dataclass
class Run:
    command: str
    json: bool
    argv: list[str]
    rc: int | None  # None: timed out
    elapsed: float
    stdout: str
    stderr: str


@dataclass
class Verdict:
    """What one run did wrong beside a healthy broker."""

    traceback: bool = False
    timed_out: bool = False
    bad_exit: bool = False
    #: (severity, code, message) of every error or warning finding in --json output
    findings: list[tuple[str, str, str]] = field(default_factory=list)
    #: error[KMxxx] lines on stderr
    errors: list[str] = field(default_factory=list)
    lock_noticed: bool = False
    #: the finding objects of --json output, whole (every severity)
    objects: list[dict[str, Any]] = field(default_factory=list)

    @property
    def error_findings(self) -> list[tuple[str, str, str]]:
        return [f for f in self.findings if f[0] == "error"]

    def failures(self, warnings: bool = True) -> list[str]:
        out = []
        if self.traceback:
            out.append("traceback")
        if self.timed_out:
            out.append("timeout")
        if self.bad_exit:
            out.append("exit")
        out += [f"{s} {c}: {m}" for s, c, m in self.findings
                if s == "error" or (warnings and s == "warning")]
        out += self.errors
        return out


def run_kmeta(argv: list[str], timeout: float = TIMEOUT) -> tuple[int | None, str, str, float]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.setdefault("COLUMNS", "100")
    start = time.monotonic()
    try:
        p = subprocess.run([sys.executable, "-m", "kmeta", *argv], capture_output=True,
                           text=True, timeout=timeout, env=env, cwd=ROOT,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else e.stdout
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else e.stderr
        return None, out or "", err or "", time.monotonic() - start
    return p.returncode, p.stdout, p.stderr, time.monotonic() - start


def run_command(name: str, where: Where, as_json: bool, timeout: float = TIMEOUT) -> Run:
    argv = COMMANDS[name](where) + (["--json"] if as_json else [])
    rc, out, err, elapsed = run_kmeta(argv, timeout)
    return Run(name, as_json, argv, rc, elapsed, out, err)


def _objects(text: str) -> Iterator[Any]:
    """Every JSON value of JSON Lines (or one JSON document) output."""
    text = text.strip()
    if not text:
        return
    try:
        yield json.loads(text)
        return
    except json.JSONDecodeError:
        pass
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(("{", "[")):
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                continue


def findings_in(value: Any) -> Iterator[dict[str, Any]]:
    """Finding objects anywhere in a JSON value (top-level lines, or nested in a report)."""
    if isinstance(value, dict):
        if isinstance(value.get("code"), str) and value.get("severity") in (
                "error", "warning", "info"):
            yield value
        for v in value.values():
            yield from findings_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from findings_in(v)


def judge(run: Run) -> Verdict:
    v = Verdict()
    both = run.stdout + "\n" + run.stderr
    v.traceback = _TRACEBACK in both
    v.timed_out = run.rc is None
    v.bad_exit = run.rc not in (0, None)
    # the one-line errors (kmeta: error[KMxxx]: ...) and internal errors (exit 70)
    v.errors = [line for line in run.stderr.splitlines()
                if line.startswith(("kmeta: error[", "kmeta: internal error"))]
    if not run.json:
        for line in both.splitlines():
            m = _TEXT_FINDING.match(line)
            if m:
                v.findings.append((m["severity"], m["code"], m["rest"].strip()))
    else:
        seen = set()
        for obj in _objects(run.stdout):
            for f in findings_in(obj):
                v.objects.append(f)
                key = (f["severity"], f["code"], str(f.get("message", "")),
                       str(f.get("file")), f.get("position"), f.get("offset"))
                if f["severity"] in ("error", "warning") and key not in seen:
                    seen.add(key)
                    v.findings.append((f["severity"], f["code"],
                                       f"{f.get('file')}: {f.get('message')}"))
    v.lock_noticed = bool(_LOCK.search(both)) or any(c == "V204" for _, c, _ in v.findings)
    return v


# ---------------------------------------------------------------------- the table


@dataclass
class Row:
    runs: int = 0
    exits: Counter[str] = field(default_factory=Counter)
    tracebacks: int = 0
    timeouts: int = 0
    codes: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    lock_noticed: int = 0
    seconds: float = 0.0

    def add(self, run: Run, v: Verdict) -> None:
        self.runs += 1
        self.exits["timeout" if run.rc is None else str(run.rc)] += 1
        self.tracebacks += v.traceback
        self.timeouts += v.timed_out
        self.lock_noticed += v.lock_noticed
        self.seconds += run.elapsed
        for s, c, m in v.findings:
            self.codes[f"{c}({s[0]})"] += 1
            if run.json or c not in self.examples:  # JSON messages are whole, text wraps
                self.examples[c] = m
        for e in v.errors:
            code = e.split("[", 1)[1].split("]", 1)[0] if "error[" in e else "internal"
            self.codes[f"{code}(exit)"] += 1
            self.examples.setdefault(code, e)


def prepare(real: str | os.PathLike[str], at: str | os.PathLike[str]) -> Where:
    """The data dir copy, the still peer copy of its metadata partition, a scratch dir."""
    at = Path(at)
    at.mkdir(parents=True)
    data = copy_real(real, at / "kafka-data")
    peer = at / "peer" / METADATA
    shutil.copytree(data / METADATA, peer)
    scratch = at / "scratch"
    scratch.mkdir()
    return Where(data, peer, scratch)


def survey(where: Where, seconds: float, *, lock: str = "posix", rate: float = 600.0,
           commands: list[str] | None = None, seed: int = 0,
           echo: Callable[[str], None] | None = None) -> dict[str, Row]:
    names = commands or list(COMMANDS)
    rows = {f"{n}{' --json' if j else ''}": Row() for n in names for j in (False, True)
            if not (j and n in TEXT_ONLY)}
    with LiveBroker(where.data, lock=lock, seed=seed, rate=rate):
        end = time.monotonic() + seconds
        rounds = 0
        while time.monotonic() < end:
            for label in rows:
                if time.monotonic() >= end:
                    break
                name, _, j = label.partition(" ")
                if rounds and name in SLOW and len(names) > 1:
                    continue  # a Spark job takes as long as a round of all the others
                run = run_command(name, where, bool(j))
                v = judge(run)
                rows[label].add(run, v)
                if echo:
                    echo(f"{label}: exit {run.rc} {run.elapsed:.1f}s "
                         f"{' '.join(v.failures()[:3])}")
            rounds += 1
    return rows


def table(rows: dict[str, Row]) -> str:
    lines = [f"{'command':<20} {'runs':>4}  {'exits':<18} {'tb':>2} {'to':>2} {'lock':>4}  "
             "findings (error/warning, by code; KMxxx: exit error line)"]
    for label, r in rows.items():
        exits = " ".join(f"{k}:{n}" for k, n in sorted(r.exits.items()))
        codes = " ".join(f"{k}x{n}" for k, n in r.codes.most_common())
        lines.append(f"{label:<20} {r.runs:>4}  {exits:<18} {r.tracebacks:>2} {r.timeouts:>2} "
                     f"{r.lock_noticed:>4}  {codes}")
    examples: dict[str, str] = {}
    for label, r in rows.items():
        for c, m in r.examples.items():
            if label.endswith("--json") or c not in examples:
                examples[c] = m
    if examples:
        lines += ["", "one message per code:"]
        lines += [f"  {c}: {m[:220]}" for c, m in sorted(examples.items())]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.live.survey",
                                 description="kmeta's reading commands beside a live writer")
    ap.add_argument("dir", help="a new directory for the copy")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--real", default=os.environ.get("KMETA_REAL_DATA"),
                    help="the real data root (default: $KMETA_REAL_DATA)")
    ap.add_argument("--lock", choices=("posix", "flock"), default="posix")
    ap.add_argument("--rate", type=float, default=600.0)
    ap.add_argument("--command", action="append", choices=sorted(COMMANDS),
                    help="only this command (repeatable)")
    ap.add_argument("-v", "--verbose", action="store_true", help="a line per run")
    args = ap.parse_args(argv)
    if not args.real:
        ap.error("give --real or set KMETA_REAL_DATA")
    where = prepare(args.real, args.dir)
    rows = survey(where, args.seconds, lock=args.lock, rate=args.rate,
                  commands=args.command,
                  echo=(lambda s: print(s, file=sys.stderr, flush=True)) if args.verbose
                  else None)
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
