"""The mutation campaign: build a case (a copied seed with one file mutated), run kmeta
commands on it, judge the outcome, save and minimise what failed.

Every case draws from its own ``random.Random(f"{seed}:{index}")``, so case N is the same
case whatever ran before it and however long the campaign lasts.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import mutators as mu
from .oracle import batches, segment_files, tree_changes, tree_fingerprint, valid_prefix
from .runner import (
    Outcome,
    export_tasks,
    forked_replay,
    pure_core,
    run_inprocess,
    run_subprocess,
    run_terminal,
)
from .seeds import METADATA_DIR, Seed, all_seeds, copy_tree, make_writable, metadata_partition

#: Commands every case may run; placeholders: {data} the case's root, {meta} its metadata
#: partition, {part} a data partition (the mutated file's when it is in one), {peer} an
#: unmutated copy of the metadata partition, {out} a fresh output path (not made), {outdir}
#: a fresh empty dir, {to} an offset.  Every one of kmeta's commands is here; ``export``
#: through ``export-tasks`` (its tasks without the JVM) and, with ``heavy``, through Spark.
COMMANDS: dict[str, list[str]] = {
    "dump": ["dump", "{data}"],
    "dump-json": ["dump", "--json", "{data}"],
    "info": ["info", "{data}"],
    "verify": ["verify", "{data}"],
    "image": ["image", "{meta}"],
    "history": ["history", "{meta}", "--broker", "1"],
    "brokers": ["brokers", "{meta}"],
    "retention": ["retention", "{meta}", "--retention-bytes", "1KiB", "--replica", "2=1"],
    "consumers": ["consumers", "{data}", "--against", "{data}"],
    "diff": ["diff", "{meta}", "{peer}"],
    "truncate": ["truncate", "{meta}", "--to", "{to}"],
    "repair-dry-run": ["repair", "--dry-run", "{meta}"],
    "repair-out": ["repair", "{meta}", "--out", "{out}"],
    "snapshot": ["snapshot", "{meta}", "--out", "{outdir}"],
    # the other renderers: JSON of every command, record lines with hex, image browsing
    "dump-records": ["dump", "--records", "--hex", "{data}"],
    "info-json": ["info", "--json", "{data}"],
    "verify-json": ["verify", "--json", "{data}"],
    "image-json": ["image", "{meta}", "--json"],
    "image-cat": ["image", "{meta}", "cat", "/topics"],
    "image-nodes": ["image", "{meta}", "cat", "/image/*/*/*/*"],
    "history-topic": ["history", "{meta}", "--topic", "orders", "--json"],
    "brokers-json": ["brokers", "{meta}", "--json", "--since", "1", "--broker", "4"],
    "retention-json": ["retention", "{meta}", "--json", "--retention-ms", "1min"],
    "consumers-json": ["consumers", "--json", "{data}"],
    "tiering": ["tiering", "{data}"],
    "compact": ["compact", "{part}", "--compare", "--header", "version", "--roll",
                "--key", "k1"],
    "compact-json": ["compact", "--json", "--batches", "{part}"],
    "compact-write": ["compact", "{part}", "--write", "{out}"],
    "compact-roll-write": ["compact", "{part}", "--roll", "--write", "{out}"],
    "export-tasks": ["export", "{out}", "{data}"],
    "tiering-json": ["tiering", "--json", "{data}", "--local-retention", "1min"],
    "diff-json": ["diff", "--json", "{meta}", "{peer}"],
    "truncate-json": ["truncate", "--json", "{meta}", "--to", "{to}"],
    "repair-json": ["repair", "--dry-run", "--json", "{meta}"],
    "startup": ["startup", "--partitions", "{data}"],
    "startup-json": ["startup", "--json", "--kafka-version", "3.6", "{data}"],
    "startup-39": ["startup", "--all", "--kafka-version", "3.9", "{data}"],
    "report": ["report", "{data}"],
    "report-json": ["report", "--json", "{data}", "{peer}"],
    # the shell: every command over a damaged log, and two replicas at once
    "shell": ["shell", "{meta}", "-c", "ls /image; cat /image/*/*/*; tree /image/features; "
              "find /image/cluster; at 0; next 3; prev; at end; diff 0 end; history "
              "/image/topics; grep . /image/features; records 0 5; at snapshot x"],
    "shell-json": ["shell", "--json", "{meta}", "{peer}", "-c", "replica; diff 0 end; "
                   "at start; next 2; cat /image/provenance; history 3"],
}
#: Commands too slow for every campaign (a Spark start costs a minute here): with
#: ``heavy`` only, and with a longer time limit.
HEAVY: dict[str, list[str]] = {
    "export-json": ["export", "--format", "json", "--data-topics", "--to", "{out}", "{data}"],
}
HEAVY_TIMEOUT = 300.0
#: Commands run through another entry point than ``kmeta.cli.main`` (always in-process).
CALLS = {"export-tasks": export_tasks}
#: Commands whose output (what they wrote at ``{out}``/``{outdir}``) ``kmeta verify`` must
#: accept.
OUTPUT_CHECKED = ("compact-write", "compact-roll-write", "snapshot")
SAVE_PER_SIGNATURE = 20
#: Read commands that must not call a log clean when CRC-covered bytes of it were flipped.
STRICT_READERS = ("verify", "dump", "dump-json", "dump-records", "verify-json")
#: Commands whose in-process runs are repeated on the pure-Python core (formats.compiled):
#: the twin must print the same bytes and exit the same way.
TWIN_CHECKED = ("verify", "dump", "dump-json", "dump-records", "verify-json", "diff")
#: Commands run once more with the replay in a second process on the compiled core (its
#: compiled loop, kmeta.ops.replay.engine's apply_changes): the same bytes again.
FORK_CHECKED = ("verify", "verify-json")


@dataclass
class Case:
    index: int
    seed: Seed
    file: str  # relative to the case root
    mutations: list[str]
    commands: list[str]
    data: bytes = b""
    crc_damage: bool = False  # a bit flip landed inside CRC-covered bytes of a valid batch


@dataclass
class Failure:
    case: Case
    command: str
    argv: list[str]
    outcome: Outcome
    signature: str
    minimised: str = ""


@dataclass
class Stats:
    cases: int = 0
    runs: int = 0
    outcomes: Counter = field(default_factory=Counter)
    exit_codes: Counter = field(default_factory=Counter)
    mutators: Counter = field(default_factory=Counter)
    failures: list[Failure] = field(default_factory=list)
    signatures: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    #: mutator calls that raised (a bug in the harness, not in kmeta; each is printed)
    harness_errors: int = 0
    #: runs made again in a pseudo-terminal (``terminal_every``)
    terminal_runs: int = 0

    def summary(self) -> str:
        lines = [f"cases {self.cases}, command runs {self.runs} ({self.terminal_runs} in a "
                 f"terminal), {self.seconds:.0f} s, harness errors {self.harness_errors}"]
        lines.append("outcomes: " + ", ".join(f"{k} {v}" for k, v in
                                               sorted(self.outcomes.items())))
        lines.append("exit codes: " + ", ".join(f"{k} {v}" for k, v in
                                                 sorted(self.exit_codes.items(), key=str)))
        lines.append("mutators: " + ", ".join(f"{k} {v}" for k, v in
                                               sorted(self.mutators.items())))
        for sig, n in self.signatures.most_common():
            lines.append(f"  FAILURE x{n}: {sig}")
        return "\n".join(lines)


def _weight(path: Path) -> int:
    name = path.name
    if name.endswith((".log", ".checkpoint")):
        return 6 if "__cluster_metadata" in str(path) or name.endswith(".checkpoint") else 2
    return 1


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())


class Campaign:
    """One campaign: its seed, its work dir and where failures go."""

    def __init__(self, seed: int, work: Path, out: Path | None = None, *,
                 commands_per_case: int | None = None, timeout: float = 20.0,
                 minimise: bool = True, log: Callable[[str], None] | None = None,
                 seeds: list[Seed] | None = None, subprocess_every: int = 0,
                 terminal_every: int = 0, heavy: bool = False) -> None:
        self.seed = seed
        self.work = work
        self.out = out
        self.commands_per_case = commands_per_case
        self.timeout = timeout
        self.minimise = minimise
        self.log = log or (lambda s: None)
        self.subprocess_every = subprocess_every
        self.terminal_every = terminal_every
        self.commands = {**COMMANDS, **(HEAVY if heavy else {})}
        self.seeds = seeds if seeds is not None else all_seeds()
        if not self.seeds:
            raise RuntimeError("no seed inputs found (fixtures/data, KMETA_REAL_DATA)")
        self.stats = Stats()
        self._pool: list[bytes] | None = None
        self._pristine: dict[str, Path] = {}

    # -- building a case -------------------------------------------------------------

    def pool(self) -> list[bytes]:
        """Donor bytes for splices: a few files of every seed."""
        if self._pool is None:
            rng = random.Random(self.seed)
            self._pool = []
            for s in self.seeds:
                files = _files(s.path)
                for p in rng.sample(files, min(3, len(files))):
                    self._pool.append(p.read_bytes()[:1 << 20])
        return self._pool

    def pristine(self, seed: Seed) -> Path:
        """An unmutated copy of a seed (the peer of ``diff``), made once."""
        if seed.name not in self._pristine:
            dst = self.work / "pristine" / seed.name.replace("/", "_")
            copy_tree(seed.path, dst)
            self._pristine[seed.name] = dst
        return self._pristine[seed.name]

    def build(self, index: int, root: Path) -> Case:
        """Case ``index``: copy its seed to ``root`` and mutate one file there."""
        rng = random.Random(f"{self.seed}:{index}")
        seed = rng.choice(self.seeds)
        copy_tree(seed.path, root)
        files = _files(root)
        target = rng.choices(files, weights=[_weight(p) for p in files])[0]
        data = original = target.read_bytes()
        done: list[str] = []
        single_flip = False
        for step in range(rng.choice([1, 1, 1, 2, 3])):
            choices = mu.mutators_for(target)
            for _ in range(5):  # a mutator may not apply to this file: try another
                m = rng.choice(choices)
                try:
                    got = m(rng, data, self.pool())
                except Exception as e:  # noqa: BLE001 - a harness bug must not end a long run
                    print(f"case {index}: harness: mutator {mu.name_of(m)} raised "
                          f"{type(e).__name__}: {e}", file=sys.stderr)
                    self.stats.harness_errors += 1
                    got = None
                if got is not None:
                    data, what = got
                    done.append(f"{mu.name_of(m)}: {what}")
                    self.stats.mutators[mu.name_of(m)] += 1
                    single_flip = step == 0 and m is mu.bit_flip
                    break
        target.write_bytes(data)
        names = list(self.commands)
        k = self.commands_per_case
        others = [n for n in names if n != "verify"]
        commands = names if k is None else ["verify", *rng.sample(others, k - 1)]
        case = Case(index, seed, str(target.relative_to(root)), done, commands, data)
        case.crc_damage = single_flip and len(done) == 1 and \
            _flips_inside_crc(original, done[0], target)
        return case

    # -- running -------------------------------------------------------------------------

    def argv(self, command: str, root: Path, case: Case, n: int) -> list[str]:
        meta = metadata_partition(root)
        rel = meta.relative_to(root)
        peer = self.pristine(case.seed) / rel
        words = self.commands.get(command) or COMMANDS.get(command) or HEAVY[command]
        to = "1"
        if "{to}" in words:  # the middle of the log's valid part
            prefix = valid_prefix(meta)
            to = str(prefix[len(prefix) // 2].base_offset) if prefix else "1"
        out = self.work / f"out-{case.index}-{n}"
        if "{outdir}" in words:
            out.mkdir(parents=True, exist_ok=True)
        subst = {"{data}": str(root), "{meta}": str(meta), "{peer}": str(peer),
                 "{part}": str(data_partition(root, case.file)), "{out}": str(out),
                 "{outdir}": str(out), "{to}": to}
        return [subst.get(a, a) for a in words]

    def run_case(self, index: int) -> list[Failure]:
        root = self.work / f"case-{index}"
        case = self.build(index, root)
        self.stats.cases += 1
        failures = []
        # A sample of cases runs as separate processes under prlimit instead: the real
        # entry point, real descriptors, real memory and CPU limits.
        sub = bool(self.subprocess_every) and index % self.subprocess_every == 0
        # Another sample runs each command once more the way a person does, in a
        # pseudo-terminal: the bar, colours and the screen's width, which no pipe meets.
        term = bool(self.terminal_every) and index % self.terminal_every == 0
        try:
            for n, command in enumerate(case.commands):
                failure = self.run_command(case, root, command, n, sub)
                if failure is None and term and command not in CALLS and \
                        command not in HEAVY:
                    failure = self.run_in_terminal(case, root, command, n)
                if failure is not None:
                    failures.append(failure)
                    self.record(failure, root)
                    if failure.outcome.kind == "input-written":
                        break  # the input is no longer the case
        finally:
            for p in [root, *self.work.glob(f"out-{index}-*")]:
                make_writable(p)
                shutil.rmtree(p, ignore_errors=True)
        return failures

    def run_command(self, case: Case, root: Path, command: str, n: int,
                    subprocess: bool = False, **how: object) -> Failure | None:
        argv = self.argv(command, root, case, n)
        meta = metadata_partition(root)
        prefix = valid_prefix(meta) if command == "repair-out" else []
        before = tree_fingerprint(root)
        size = sum(e[1] for e in before.values() if e[0] == "file")
        timeout = HEAVY_TIMEOUT if command in HEAVY else self.timeout
        if command in CALLS:
            outcome = run_inprocess(argv, timeout, size, CALLS[command])
        elif subprocess:
            outcome = run_subprocess(argv, timeout, size, **how)
        else:
            outcome = run_inprocess(argv, timeout, size)
        self.stats.runs += 1
        self.stats.exit_codes[outcome.exit_code] += 1
        changes = tree_changes(before, tree_fingerprint(root))
        if not outcome.failed and changes:
            outcome.kind, outcome.detail = "input-written", "; ".join(changes[:5])
        if not outcome.failed and command == "repair-out" and outcome.exit_code in (0, 1):
            lost = _lost_batches(prefix, Path(argv[-1]))
            if lost:
                outcome.kind = "batch-lost"
                outcome.detail = f"{len(lost)} of {len(prefix)} valid prefix batches " \
                                 f"missing from the output, first at offset {lost[0]}"
        if not outcome.failed and command in OUTPUT_CHECKED:
            _check_output(outcome, self.work / f"out-{case.index}-{n}", self.timeout)
        if not outcome.failed and not subprocess and command in TWIN_CHECKED:
            # the same run on the pure-Python reference must print the same bytes: with
            # runs found by it in even cases, with every batch read alone in odd ones
            with pure_core(runs_too=case.index % 2 == 0):
                twin = run_inprocess(argv, self.timeout, size)
            if (twin.exit_code, twin.stdout) != (outcome.exit_code, outcome.stdout):
                outcome.kind = "twin-mismatch"
                outcome.detail = f"exit {outcome.exit_code} vs {twin.exit_code} on the " \
                    f"pure-Python core; output {len(outcome.stdout)} vs {len(twin.stdout)} bytes"
        if not outcome.failed and not subprocess and command in FORK_CHECKED:
            with forked_replay():
                forked = run_inprocess(argv, self.timeout, size)
            if (forked.exit_code, forked.stdout) != (outcome.exit_code, outcome.stdout):
                outcome.kind = "twin-mismatch"
                outcome.detail = f"exit {outcome.exit_code} vs {forked.exit_code} with the " \
                    f"compiled replay in a second process; output {len(outcome.stdout)} vs " \
                    f"{len(forked.stdout)} bytes"
        if not outcome.failed and case.crc_damage and command in STRICT_READERS and \
                outcome.exit_code == 0:
            outcome.kind, outcome.detail = "missed-damage", \
                f"exit 0 after {case.mutations[0]} in {case.file}"
        self.stats.outcomes[outcome.kind] += 1
        if not outcome.failed:
            return None
        return Failure(case, command, argv, outcome, signature(command, outcome))

    def run_in_terminal(self, case: Case, root: Path, command: str, n: int
                        ) -> Failure | None:
        """The command again in a pseudo-terminal, from the work dir with the case's
        paths relative to it (as a person there types them), an output path of its own."""
        argv = self.argv(command, root, case, n + len(case.commands))
        here = f"{self.work}/"
        typed = [a[len(here):] if a.startswith(here) else a for a in argv]
        outcome = run_terminal(typed, self.timeout * 3, self.work)
        self.stats.runs += 1
        self.stats.terminal_runs += 1
        self.stats.outcomes[outcome.kind] += 1
        if not outcome.failed:
            return None
        return Failure(case, command, argv, outcome, signature(command, outcome))

    # -- failures ------------------------------------------------------------------------

    def record(self, failure: Failure, root: Path) -> None:
        self.stats.failures.append(failure)
        self.stats.signatures[failure.signature] += 1
        first = self.stats.signatures[failure.signature] == 1
        self.log(f"case {failure.case.index}: {failure.outcome.kind} in {failure.command}: "
                 f"{failure.outcome.detail}")
        # every failure is saved, up to SAVE_PER_SIGNATURE of one kind (an hour's campaign
        # meets one bug hundreds of times)
        if self.out is None or self.stats.signatures[failure.signature] > SAVE_PER_SIGNATURE:
            return
        dest = self.out / failure.outcome.kind / f"case-{failure.case.index}-{failure.command}"
        if dest.exists():
            shutil.rmtree(dest)
        copy_tree(root, dest / "input")
        if failure.command == "diff":
            copy_tree(self.pristine(failure.case.seed), dest / "peer")
        # hostile cases (negative indexes) are minimal already: one thing made hostile
        if first and self.minimise and failure.case.index >= 0 and \
                failure.case.file in _names(root) and \
                failure.outcome.kind not in ("input-written", "terminal"):
            small = self.minimise_failure(failure, root)
            if small is not None:
                copy_tree(small, dest / "minimal")
                failure.minimised = str(dest / "minimal")
                make_writable(small)
                shutil.rmtree(small, ignore_errors=True)
        _write_case(dest, failure, root, self.pristine(failure.case.seed), self.work)

    def minimise_failure(self, failure: Failure, root: Path, budget: float = 60.0
                         ) -> Path | None:
        """The smallest tree (fewest files, fewest bytes of the mutated file) on which the
        command still fails with the same signature."""
        case = failure.case
        deadline = time.monotonic() + budget
        files = {str(p.relative_to(root)): p.read_bytes() for p in _files(root)}

        def fails(tree: dict[str, bytes]) -> bool:
            if time.monotonic() > deadline:
                return False
            trial = self.work / f"min-{case.index}"
            _materialise(trial, root, tree)
            try:
                got = self.run_command(case, trial, failure.command, 99)
                return got is not None and got.signature == failure.signature
            finally:
                for p in [trial, *self.work.glob(f"out-{case.index}-99")]:
                    make_writable(p)
                    shutil.rmtree(p, ignore_errors=True)

        saved = self.stats.runs, self.stats.outcomes.copy(), self.stats.exit_codes.copy()
        # Drop the other files, one at a time.
        for name in sorted(files):
            if name != case.file and time.monotonic() < deadline:
                trial = {k: v for k, v in files.items() if k != name}
                if fails(trial):
                    files = trial
        # Then shrink the mutated file: remove chunks, halving their size.
        data = files.get(case.file, b"")
        chunk = max(1, len(data) // 2)
        while chunk >= 1 and time.monotonic() < deadline:
            i, shrunk = 0, False
            while i < len(data) and time.monotonic() < deadline:
                trial_data = data[:i] + data[i + chunk:]
                if fails({**files, case.file: trial_data}):
                    data, shrunk = trial_data, True
                else:
                    i += chunk
            if not shrunk:
                chunk //= 2
        files[case.file] = data
        self.stats.runs, self.stats.outcomes, self.stats.exit_codes = saved
        small = self.work / f"minimal-{case.index}"
        _materialise(small, root, files)
        return small

    # -- the whole campaign ------------------------------------------------------------

    def run(self, *, cases: int | None = None, seconds: float | None = None,
            first: int = 0) -> Stats:
        start = time.monotonic()
        index = first
        while True:
            if cases is not None and index - first >= cases:
                break
            if seconds is not None and time.monotonic() - start > seconds:
                break
            self.run_case(index)
            index += 1
        self.stats.seconds = time.monotonic() - start
        return self.stats


def data_partition(root: Path, file: str) -> Path:
    """The data partition dir a case's ``{part}`` names: the mutated file's, when it is in
    one, else the first of the case (a lone partition: the root itself)."""
    first = (root / file).parent if file else root
    for where in (first, *sorted(p.parent for p in root.rglob("*.log"))):
        if where.is_dir() and not where.name.startswith(METADATA_DIR) and \
                re.fullmatch(r".+-\d+", where.name):
            return where
    return root


def _check_output(outcome: Outcome, out: Path, timeout: float) -> None:
    """An output the command wrote must be one ``kmeta verify`` accepts."""
    if not out.exists() or out.is_dir() and not any(out.iterdir()):
        return  # nothing written ({outdir} is made empty before the command)
    if outcome.exit_code not in (0, 1):
        outcome.kind, outcome.detail = "bad-output", \
            f"exit {outcome.exit_code} yet {out.name} was written"
        return
    got = run_inprocess(["verify", str(out)], timeout, 1 << 20)
    if got.exit_code != 0:
        said = got.stdout.decode("utf-8", "replace") + got.stderr  # verify lists on stdout
        problems = [line for line in said.splitlines() if line.startswith("!!")]
        outcome.kind = "bad-output"
        outcome.detail = f"verify exits {got.exit_code} on the output: " + \
            (problems[0] if problems else got.detail or said[-200:])
        outcome.stderr += "\n--- verify of the output:\n" + said


def _names(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in _files(root)}


def _materialise(dst: Path, like: Path, files: dict[str, bytes]) -> None:
    if dst.exists():
        make_writable(dst)
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    for d in sorted(p for p in like.rglob("*") if p.is_dir()):
        (dst / d.relative_to(like)).mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (dst / name).write_bytes(data)


def _write_case(dest: Path, failure: Failure, root: Path, peer: Path, work: Path) -> None:
    o = failure.outcome
    # paths relative to the saved folder; an --out dir goes to a fresh place in /tmp
    rel = [a.replace(str(root), "input").replace(str(peer), "peer")
           .replace(str(work), "/tmp/kmeta-fuzz-repro") for a in failure.argv]
    (dest / "case.json").write_text(json.dumps({
        "case": failure.case.index, "seed_input": failure.case.seed.name,
        "file": failure.case.file, "mutations": failure.case.mutations,
        "command": failure.command, "argv": rel, "outcome": o.kind, "exit_code": o.exit_code,
        "detail": o.detail, "seconds": round(o.seconds, 2), "peak_rss": o.peak_rss,
        "signature": failure.signature, "minimal": "minimal/" if failure.minimised else None,
    }, indent=2) + "\n")
    (dest / "stderr.txt").write_text(o.stderr)
    (dest / "repro.sh").write_text(
        "#!/bin/sh\n# Rerun the failing command on the saved input (or minimal/).\n"
        f"cd \"$(dirname \"$0\")\" && kmeta --traceback {' '.join(_quote(a) for a in rel)}\n")


def _quote(arg: str) -> str:
    return arg if re.fullmatch(r"[\w./=-]+", arg) else "'" + arg.replace("'", "'\\''") + "'"


def signature(command: str, o: Outcome) -> str:
    """What makes two failures the same bug: class, command and the error line with its
    numbers and paths taken out."""
    line = o.detail
    if o.kind == "terminal":  # "line 7 ... is 91 columns wide ...: 'the line itself'"
        line = line.split(": ", 1)[0]
    line = re.sub(r"/[^\s:'\"]+", "PATH", line)
    line = re.sub(r"\d+", "N", line)
    return f"{o.kind} | {command.split('-')[0]} | {line[:160]}"


def _lost_batches(prefix: list, out: Path) -> list[int]:
    if not out.is_dir():
        return []
    have = set()
    for seg in segment_files(out):
        have.update(b.raw for b in batches(seg.read_bytes()))
    return [b.base_offset for b in prefix if b.raw not in have]


def _flips_inside_crc(original: bytes, what: str, target: Path) -> bool:
    """Whether every bit flip of a single ``bit_flip`` mutation lies in the CRC-covered
    bytes (or the CRC itself) of a batch with a valid CRC in the original file."""
    if not target.name.endswith((".log", ".checkpoint")):
        return False
    m = re.search(r"\[([\d, ]+)\]", what)
    if not m:
        return False
    spans = [(b.position + 17, b.position + b.size) for b in batches(original)]
    where = [int(x) for x in m.group(1).split(",")]
    flipped = target.read_bytes()
    # two flips of one bit cancel out: require the bytes to differ
    return bool(spans) and flipped != original and \
        all(any(a <= w < e for a, e in spans) for w in where)
