"""The generated documentation (man page, shell completions) is current and complete.

``man/kmeta.1`` and ``completions/*`` are checked in; these tests fail when they differ
from what ``python -m kmeta.docs --write`` would generate from the live command line, when
a command or option has no help text, and when a finding code or exit code is missing
from the man page.
"""

from __future__ import annotations

import copy
import gc
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kmeta import docs
from kmeta.errors import ExitCode
from kmeta.findings import CODES

ROOT = docs.ROOT
REGENERATE = "regenerate with: python -m kmeta.docs --write"


@pytest.fixture(scope="module")
def generated() -> dict[Path, str]:
    return docs.generated_files()


@pytest.fixture(scope="module")
def schema() -> docs.JsonSchema:
    """The keys real runs of every command emit (what JSON OUTPUT is checked against)."""
    return docs.json_schema()


@pytest.fixture(scope="module")
def man_text() -> str:
    path = ROOT / docs.MAN_PAGE
    if not path.exists():
        pytest.fail(f"{docs.MAN_PAGE} is missing; {REGENERATE}")
    return path.read_text(encoding="utf-8")


def _section(man: str, name: str) -> str:
    """The roff source of one .SH section."""
    m = re.search(rf"^\.SH \"?{re.escape(name)}\"?\n(.*?)(?=^\.SH |\Z)", man, re.M | re.S)
    assert m, f"man page has no {name} section"
    return m.group(1)


def _unroff(text: str) -> str:
    return re.sub(r"\\f[BIRP]", "", text).replace("\\-", "-").replace("\\e", "\\")


# --------------------------------------------------------------------------- staleness

def test_checked_in_files_are_current(generated: dict[Path, str]) -> None:
    stale = docs.stale_files(ROOT, generated)
    assert not stale, (f"generated files are stale ({', '.join(map(str, stale))}); "
                       f"{REGENERATE}\n\n" + "\n\n".join(stale.values()))


def test_generation_is_deterministic(generated: dict[Path, str]) -> None:
    assert docs.man_page() == generated[docs.MAN_PAGE]
    for shell, path in docs.COMPLETIONS.items():
        assert docs.completion_script(shell) == generated[path]
    for text in generated.values():
        assert not re.search(r"\b(19|20)\d\d-\d\d-\d\d\b", text), "a date in generated output"
        assert "/tmp" not in text and str(Path.home()) + "/" not in text


def test_check_and_write_commands(tmp_path: Path) -> None:
    """``--check`` fails on a missing or edited file and passes after ``--write``."""
    cmd = [sys.executable, "-m", "kmeta.docs"]
    missing = subprocess.run([*cmd, "--check", "--root", str(tmp_path)], capture_output=True,
                             text=True, timeout=120)
    assert missing.returncode == 1, missing.stderr
    assert "out of date" in missing.stderr and "--write" in missing.stderr
    written = subprocess.run([*cmd, "--write", "--root", str(tmp_path)], capture_output=True,
                             text=True, timeout=120)
    assert written.returncode == 0, written.stderr
    for rel in [docs.MAN_PAGE, *docs.COMPLETIONS.values()]:
        assert (tmp_path / rel).is_file()
    ok = subprocess.run([*cmd, "--check", "--root", str(tmp_path)], capture_output=True,
                        text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    page = tmp_path / docs.MAN_PAGE
    page.write_text(page.read_text() + ".\\\" hand edit\n")
    edited = subprocess.run([*cmd, "--check", "--root", str(tmp_path)], capture_output=True,
                            text=True, timeout=120)
    assert edited.returncode == 1
    assert str(docs.MAN_PAGE) in edited.stderr


# ------------------------------------------------------------------------ completeness

def test_every_command_and_option_has_help() -> None:
    root = docs.describe()
    commands = list(docs.all_commands(root))
    assert {c.path[-1] for c in commands} >= {"dump", "info"}
    assert docs.undocumented(root) == []


def test_man_page_covers_every_command_and_option(man_text: str) -> None:
    root = docs.describe()
    commands = _section(man_text, "COMMANDS")
    plain = _unroff(commands)
    for c in docs.all_commands(root):
        assert f'.SS "{" ".join(c.path[1:])}"' in commands, f"{c.name} has no subsection"
        for p in c.options:
            for name in p.names:
                assert name in plain, f"{c.name} {name} missing from the man page"
    plain_global = _unroff(_section(man_text, "GLOBAL OPTIONS"))
    for p in root.options:
        for name in p.names:
            assert name in plain_global, f"global option {name} missing from the man page"


def test_every_finding_code_is_in_the_man_page(man_text: str) -> None:
    findings = _unroff(_section(man_text, "FINDINGS"))
    for code, c in CODES.items():
        sev = c.severity.value
        assert re.search(rf"^{code} \({sev}\)$", findings, re.M), \
            f"finding {code} ({sev}) is missing from FINDINGS in {docs.MAN_PAGE}"


def test_every_exit_code_is_in_the_man_page(man_text: str) -> None:
    exits = _unroff(_section(man_text, "EXIT STATUS"))
    for member in ExitCode:
        assert re.search(rf"^{int(member)}\n\({member.name}\) ", exits, re.M), \
            f"exit code {int(member)} ({member.name}) is missing from EXIT STATUS"


def test_man_page_has_every_section(man_text: str) -> None:
    for name in ("NAME", "SYNOPSIS", "DESCRIPTION", "GLOBAL OPTIONS", "COMMANDS",
                 "EXIT STATUS", "FINDINGS", "JSON OUTPUT", "ENVIRONMENT", "EXAMPLES",
                 "SEE ALSO"):
        _section(man_text, name)
    env = _unroff(_section(man_text, "ENVIRONMENT"))
    assert "NO_COLOR" in env and "KMETA_REAL_DATA" in env
    see_also = _unroff(_section(man_text, "SEE ALSO"))
    assert "kafka-dump-log.sh" in see_also and "kafka-metadata-shell.sh" in see_also


def test_json_keys_of_real_output_are_documented(man_text: str, real_data: Path) -> None:
    """Every key ``dump --json --hex`` writes for real broker files is in JSON OUTPUT."""
    json_doc = _section(man_text, "JSON OUTPUT")
    documented: dict[str, set[str]] = {}
    for m in re.finditer(r'^\.SS "(\w+) objects"\n(.*?)(?=^\.SS |\Z)', json_doc, re.M | re.S):
        documented[m.group(1)] = set(re.findall(r"^\.TP\n\\fB([\w\\-]+)\\fR", m.group(2),
                                                re.M))
    assert {"file", "batch", "record", "finding"} <= set(documented)
    proc = subprocess.run([sys.executable, "-m", "kmeta", "dump", "--json", "--hex",
                           str(real_data / "ldi-poc")], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    seen: dict[str, set[str]] = {}
    for line in proc.stdout.splitlines():
        obj = json.loads(line)
        seen.setdefault(obj["kind"], set()).update(obj)
    for kind, keys in seen.items():
        assert kind in documented, f"objects of kind {kind} are not documented"
        assert keys <= documented[kind], \
            f"{kind} keys not in the man page: {sorted(keys - documented[kind])}"


# A key emitted but not explained, or explained but not emitted, fails generation: for
# the tables of dump and info and for every table of the newer commands (COMMAND_JSON).

def _command_tables() -> list[tuple[str, int]]:
    return [(c.command, i) for c in docs.COMMAND_JSON for i, t in enumerate(c.tables)
            if t.see is None]


def _table(command: str, index: int) -> docs.JsonTable:
    return next(c for c in docs.COMMAND_JSON if c.command == command).tables[index]


def test_json_output_generates(schema: docs.JsonSchema) -> None:
    lines = docs._section_json(schema)
    for c in docs.COMMAND_JSON:
        assert f'.SS "{docs.esc(c.command)} \\-\\-json"' in lines


@pytest.mark.parametrize(("command", "index"), _command_tables())
def test_key_missing_from_a_command_table_fails(schema: docs.JsonSchema,
                                                monkeypatch: pytest.MonkeyPatch,
                                                command: str, index: int) -> None:
    table = _table(command, index)
    key = list(table.keys)[-1]
    monkeypatch.delitem(table.keys, key)
    with pytest.raises(docs.DocsError, match=rf"{re.escape(command)} --json .*key "
                                             rf"'{key}' is emitted but has no explanation"):
        docs._section_json(schema)


@pytest.mark.parametrize(("command", "index"), _command_tables())
def test_key_no_longer_emitted_by_a_command_fails(schema: docs.JsonSchema,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  command: str, index: int) -> None:
    monkeypatch.setitem(_table(command, index).keys, "no_such_key", "Never emitted.")
    with pytest.raises(docs.DocsError, match=r"key 'no_such_key' is explained in "
                                             r"kmeta/docs.py but no longer emitted"):
        docs._section_json(schema)


def test_unknown_key_in_a_referenced_table_fails(schema: docs.JsonSchema) -> None:
    """verify's findings use the keys of dump's finding objects: a key of their own fails."""
    verify = next(c for c in docs.COMMAND_JSON if c.command == "verify")
    index = next(i for i, t in enumerate(verify.tables) if t.see is not None)
    changed = copy.deepcopy(schema)
    changed.commands["verify"][index].add({"kind": "finding", "hint": "x"})
    with pytest.raises(docs.DocsError, match=r"verify --json finding top-level object key "
                                             r"'hint' is emitted but is not a key of"):
        docs._section_json(changed)


def test_missing_command_output_fails(schema: docs.JsonSchema) -> None:
    """A command whose sample run wrote nothing: every key it explains is reported."""
    changed = copy.deepcopy(schema)
    del changed.commands["diff"]
    with pytest.raises(docs.DocsError, match=r"diff --json top-level object key 'kind' is "
                                             r"explained .* but no longer emitted"):
        docs._section_json(changed)


@pytest.mark.parametrize("kind", [*docs.JSON_KEYS, "info"])
def test_key_missing_from_a_dump_or_info_table_fails(schema: docs.JsonSchema,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     kind: str) -> None:
    table = docs.INFO_KEYS if kind == "info" else docs.JSON_KEYS[kind]
    key = list(table)[-1]
    monkeypatch.delitem(table, key)
    with pytest.raises(docs.DocsError, match=rf"{kind} object key '{key}' is emitted but "
                                             "has no explanation"):
        docs._section_json(schema)


def test_command_samples_find_every_table(schema: docs.JsonSchema) -> None:
    """Each table's objects were met in the sample runs (a table of a command that
    refers to another is allowed none: repair and snapshot met no finding)."""
    for c in docs.COMMAND_JSON:
        for t, seen in zip(c.tables, schema.commands[c.command], strict=True):
            if t.see is None:
                assert seen.objects, f"{c.command}: no object at {t.paths}"
    assert gc.isenabled(), "running commands in-process left the collector off"


def test_every_json_command_has_a_json_subsection(man_text: str) -> None:
    """Commands with --json are documented under JSON OUTPUT (dump and info by their
    objects, every other one in a subsection of its own)."""
    json_doc = _section(man_text, "JSON OUTPUT")
    for c in docs.all_commands(docs.describe()):
        if "--json" not in c.option_strings() or c.path[-1] in {"dump", "info"}:
            continue
        assert f'.SS "{c.path[-1]} \\-\\-json"' in json_doc, \
            f"{c.name} --json is not documented under JSON OUTPUT"


def test_image_tables_cover_every_section_with_fixed_keys() -> None:
    """Each section of the image whose entries have fixed keys has a table of its own,
    checked against the entities of the sample runs (test_command_samples_find_every_table
    makes sure each was met: one run stops inside a metadata transaction)."""
    image = next(c for c in docs.COMMAND_JSON if c.command == "image")
    sections = next(t for t in image.tables if t.paths == ("image",))
    entities = {t.paths[0].split(".")[1] for t in image.tables
                if t.paths[0].startswith("image.")}
    # the sections whose entries have fixed keys; the others map names to values
    assert entities == set(sections.keys) - {"features", "configs", "clientQuotas",
                                             "zkMigrationState"}


def test_image_views_are_checked() -> None:
    """ls, cat and --digest are compared with image --json: a difference is reported."""
    healthy = ROOT / docs.FIXTURES / "healthy"
    whole = json.loads(docs._run_cli(["image", "--json", str(healthy)]))
    assert docs._check_image_views(healthy, whole) == []
    changed = copy.deepcopy(whole)
    changed["digest"] = "0" * 32
    broker = next(iter(changed["image"]["brokers"]))
    changed["image"]["brokers"][broker]["rack"] = "elsewhere"
    changed["image"]["extra"] = {}
    problems = docs._check_image_views(healthy, changed)
    assert len(problems) == 4, problems
    assert any("ls /" in p for p in problems)
    assert any(f"cat /brokers/{broker}" in p for p in problems)
    assert any("--digest --json wrote" in p for p in problems)


def test_examples_use_existing_options() -> None:
    assert docs.check_examples(docs.describe()) == []


# ------------------------------------------------------------------------- rendering

@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed")
def test_man_page_renders_without_warnings() -> None:
    page = str(ROOT / docs.MAN_PAGE)
    proc = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-P-cbou", page],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert proc.stderr == "", proc.stderr
    assert "KMETA(1)" in proc.stdout and "EXIT STATUS" in proc.stdout


def _installed_kmeta() -> Path:
    script = Path(sys.executable).parent / "kmeta"
    if not script.exists():
        pytest.skip("no installed kmeta script next to the interpreter")
    return script


def test_zsh_completion_starts_with_compdef() -> None:
    text = (ROOT / docs.COMPLETIONS["zsh"]).read_text()
    assert text.startswith("#compdef kmeta\n")


def test_bash_completion_works_with_the_installed_kmeta() -> None:
    """Source completions/kmeta.bash and complete ``kmeta dump --fr<TAB>``."""
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    script = _installed_kmeta()
    bash = (f'source {ROOT / docs.COMPLETIONS["bash"]}\n'
            "complete -p kmeta\n"
            "COMP_WORDS=(kmeta dump --fr); COMP_CWORD=2\n"
            "_kmeta_completion kmeta\n"
            'printf "reply:%s\\n" "${COMPREPLY[@]}"\n'
            "COMP_WORDS=(kmeta d); COMP_CWORD=1\n"
            "_kmeta_completion kmeta\n"
            'printf "reply:%s\\n" "${COMPREPLY[@]}"\n')
    env = dict(os.environ, PATH=f"{script.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop(docs.COMPLETE_VAR, None)
    proc = subprocess.run(["bash", "--norc", "--noprofile", "-c", bash], capture_output=True,
                          text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "complete -o default -F _kmeta_completion kmeta" in proc.stdout
    replies = [line.removeprefix("reply:") for line in proc.stdout.splitlines()
               if line.startswith("reply:")]
    assert "--from-offset" in replies
    assert "dump" in replies


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completion_works_with_the_installed_kmeta(tmp_path: Path) -> None:
    script = _installed_kmeta()
    fish = (f"source {ROOT / docs.COMPLETIONS['fish']}; "
            'complete -C "kmeta dump --fr"; complete -C "kmeta d"')
    env = dict(os.environ, PATH=f"{script.parent}{os.pathsep}{os.environ.get('PATH', '')}",
               HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path))
    env.pop(docs.COMPLETE_VAR, None)
    proc = subprocess.run(["fish", "--no-config", "-c", fish], capture_output=True,
                          text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    offered = {line.split("\t")[0] for line in proc.stdout.splitlines()}
    assert {"--from-offset", "dump"} <= offered


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completion_registers(tmp_path: Path) -> None:
    zsh = ("autoload -Uz compinit; compinit -u -D; "
           f"source {ROOT / docs.COMPLETIONS['zsh']}; print -- ${{_comps[kmeta]}}")
    proc = subprocess.run(["zsh", "-f", "-c", zsh], capture_output=True, text=True,
                          env=dict(os.environ, HOME=str(tmp_path)), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "_kmeta_completion"


def test_completion_of_every_command_option() -> None:
    """The completion protocol the scripts use offers every option of every command."""
    env = dict(os.environ)
    env.pop(docs.COMPLETE_VAR, None)
    code = "import sys; sys.argv[0] = 'kmeta'; from kmeta.cli import main; main()"
    for c in docs.all_commands(docs.describe()):
        words = " ".join(c.path) + " --"
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
            env={**env, docs.COMPLETE_VAR: "complete_bash", "COMP_WORDS": words,
                 "COMP_CWORD": str(len(c.path))})
        assert proc.returncode == 0, proc.stderr
        offered = set(proc.stdout.split())
        long_names = {n for p in c.options for n in p.names if n.startswith("--")}
        assert long_names <= offered, f"{c.name}: not offered {long_names - offered}"
