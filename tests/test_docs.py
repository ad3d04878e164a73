"""The generated documentation (man page, shell completions) is current and complete.

``man/kmeta.1`` and ``completions/*`` are checked in; these tests fail when they differ
from what ``python -m tools.docs --write`` would generate from the live command line, when
a command or option has no help text, and when a finding code or exit code is missing
from the man page.  (JSON OUTPUT against what the commands write: test_output_schema.py.)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kmeta.errors import ExitCode
from kmeta.findings import CODES
from tools.docs import ROOT, manpage
from tools.docs.completions import COMPLETE_VAR, COMPLETIONS, completion_script
from tools.docs.generated import generated_files, stale_files
from tools.docs.introspect import all_commands, describe, undocumented
from tools.docs.manpage import MAN_PAGE

REGENERATE = "regenerate with: python -m tools.docs --write"


@pytest.fixture(scope="module")
def generated() -> dict[Path, str]:
    return generated_files()


@pytest.fixture(scope="module")
def man_text() -> str:
    path = ROOT / MAN_PAGE
    if not path.exists():
        pytest.fail(f"{MAN_PAGE} is missing; {REGENERATE}")
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
    stale = stale_files(ROOT, generated)
    assert not stale, (f"generated files are stale ({', '.join(map(str, stale))}); "
                       f"{REGENERATE}\n\n" + "\n\n".join(stale.values()))


def test_generation_is_deterministic(generated: dict[Path, str]) -> None:
    assert manpage.man_page() == generated[MAN_PAGE]
    for shell, path in COMPLETIONS.items():
        assert completion_script(shell) == generated[path]
    for text in generated.values():
        assert not re.search(r"\b(19|20)\d\d-\d\d-\d\d\b", text), "a date in generated output"
        assert "/tmp" not in text and str(Path.home()) + "/" not in text


@pytest.mark.slow
def test_check_and_write_commands(tmp_path: Path) -> None:
    """``--check`` fails on a missing or edited file and passes after ``--write``."""
    cmd = [sys.executable, "-m", "tools.docs"]  # from the root: tools is not installed
    missing = subprocess.run([*cmd, "--check", "--root", str(tmp_path)], capture_output=True,
                             text=True, timeout=120, cwd=ROOT)
    assert missing.returncode == 1, missing.stderr
    assert "out of date" in missing.stderr and "--write" in missing.stderr
    written = subprocess.run([*cmd, "--write", "--root", str(tmp_path)], capture_output=True,
                             text=True, timeout=120, cwd=ROOT)
    assert written.returncode == 0, written.stderr
    for rel in [MAN_PAGE, *COMPLETIONS.values()]:
        assert (tmp_path / rel).is_file()
    ok = subprocess.run([*cmd, "--check", "--root", str(tmp_path)], capture_output=True,
                        text=True, timeout=120, cwd=ROOT)
    assert ok.returncode == 0, ok.stderr
    page = tmp_path / MAN_PAGE
    page.write_text(page.read_text() + ".\\\" hand edit\n")
    edited = subprocess.run([*cmd, "--check", "--root", str(tmp_path)], capture_output=True,
                            text=True, timeout=120, cwd=ROOT)
    assert edited.returncode == 1
    assert str(MAN_PAGE) in edited.stderr


# ------------------------------------------------------------------------ completeness

def test_every_command_and_option_has_help() -> None:
    root = describe()
    commands = list(all_commands(root))
    assert {c.path[-1] for c in commands} >= {"dump", "info"}
    assert undocumented(root) == []


def test_man_page_covers_every_command_and_option(man_text: str) -> None:
    root = describe()
    commands = _section(man_text, "COMMANDS")
    plain = _unroff(commands)
    for c in all_commands(root):
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
            f"finding {code} ({sev}) is missing from FINDINGS in {MAN_PAGE}"


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


def test_every_json_command_has_a_json_subsection(man_text: str) -> None:
    """Commands with --json are documented under JSON OUTPUT (dump and info by their
    objects, every other one in a subsection of its own)."""
    json_doc = _section(man_text, "JSON OUTPUT")
    for c in all_commands(describe()):
        if "--json" not in c.option_strings() or c.path[-1] in {"dump", "info"}:
            continue
        assert f'.SS "{c.path[-1]} \\-\\-json"' in json_doc, \
            f"{c.name} --json is not documented under JSON OUTPUT"


def test_examples_use_existing_options() -> None:
    assert manpage.check_examples(describe()) == []


# ------------------------------------------------------------------------- rendering

@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed")
def test_man_page_renders_without_warnings() -> None:
    page = str(ROOT / MAN_PAGE)
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
    text = (ROOT / COMPLETIONS["zsh"]).read_text()
    assert text.startswith("#compdef kmeta\n")


def test_bash_completion_works_with_the_installed_kmeta() -> None:
    """Source completions/kmeta.bash and complete ``kmeta dump --fr<TAB>``."""
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    script = _installed_kmeta()
    bash = (f'source {ROOT / COMPLETIONS["bash"]}\n'
            "complete -p kmeta\n"
            "COMP_WORDS=(kmeta dump --fr); COMP_CWORD=2\n"
            "_kmeta_completion kmeta\n"
            'printf "reply:%s\\n" "${COMPREPLY[@]}"\n'
            "COMP_WORDS=(kmeta d); COMP_CWORD=1\n"
            "_kmeta_completion kmeta\n"
            'printf "reply:%s\\n" "${COMPREPLY[@]}"\n')
    env = dict(os.environ, PATH=f"{script.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop(COMPLETE_VAR, None)
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
    fish = (f"source {ROOT / COMPLETIONS['fish']}; "
            'complete -C "kmeta dump --fr"; complete -C "kmeta d"')
    env = dict(os.environ, PATH=f"{script.parent}{os.pathsep}{os.environ.get('PATH', '')}",
               HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path))
    env.pop(COMPLETE_VAR, None)
    proc = subprocess.run(["fish", "--no-config", "-c", fish], capture_output=True,
                          text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    offered = {line.split("\t")[0] for line in proc.stdout.splitlines()}
    assert {"--from-offset", "dump"} <= offered


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completion_registers(tmp_path: Path) -> None:
    zsh = ("autoload -Uz compinit; compinit -u -D; "
           f"source {ROOT / COMPLETIONS['zsh']}; print -- ${{_comps[kmeta]}}")
    proc = subprocess.run(["zsh", "-f", "-c", zsh], capture_output=True, text=True,
                          env=dict(os.environ, HOME=str(tmp_path)), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "_kmeta_completion"


def test_completion_of_every_command_option() -> None:
    """The completion protocol the scripts use offers every option of every command."""
    env = dict(os.environ)
    env.pop(COMPLETE_VAR, None)
    code = "import sys; sys.argv[0] = 'kmeta'; from kmeta.cli import main; main()"
    for c in all_commands(describe()):
        words = " ".join(c.path) + " --"
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
            env={**env, COMPLETE_VAR: "complete_bash", "COMP_WORDS": words,
                 "COMP_CWORD": str(len(c.path))})
        assert proc.returncode == 0, proc.stderr
        offered = set(proc.stdout.split())
        long_names = {n for p in c.options for n in p.names if n.startswith("--")}
        assert long_names <= offered, f"{c.name}: not offered {long_names - offered}"
