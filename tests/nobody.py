"""A Python that user nobody can run, with the kmeta under test: what the tests that run
kmeta as another user (to meet a file root could read) need.

Root's interpreter and packages are often where nobody cannot go: a pyenv under /root
(mode 700), a venv in a clone in a home directory or a ``mktemp -d``.  Such a process
does not start, or worse, starts on another Python: the dynamic loader, unable to read the
libpython of the interpreter's RUNPATH, takes the system's, with its own standard library.
So :func:`python` lays out, once per process and in a folder every user can traverse, the
interpreter, its shared library, its standard library, the kmeta package this process
imported and the distributions kmeta needs at run time, each file a hard link (a
fraction of a second; a copy where no link can be made or the file is not readable by
all), checks that nobody runs *this* Python there, and removes it all at exit.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from importlib import metadata
from pathlib import Path

NOBODY = 65534
#: Standard library folders kmeta never imports: the bulk of the files, left out.
_SKIP = {"site-packages", "dist-packages", "test", "idlelib", "tkinter", "turtledemo",
         "ensurepip", "lib2to3", "__phello__"}


def unavailable() -> str | None:
    """Why kmeta cannot run as nobody here (None: it can)."""
    if os.geteuid() != 0:
        return "only root can run a command as user nobody"
    if shutil.which("setpriv") is None:
        return "no setpriv (util-linux) to drop to user nobody"
    return None


def drop() -> list[str]:
    """The start of a command line that runs the rest as nobody, without root's groups."""
    return [shutil.which("setpriv") or "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
            "--clear-groups"]


@functools.cache
def python() -> list[str]:
    """The command line that starts this Python, with this kmeta, as user nobody (an
    interpreter's options go after it).  Built on first use, removed at exit."""
    home = Path(tempfile.mkdtemp(prefix="kmeta-nobody-", dir=_open_base()))
    atexit.register(shutil.rmtree, home, True)
    home.chmod(0o755)
    exe = _lay_out(home)
    # LD_LIBRARY_PATH: searched before the RUNPATH (root's folder) the binary names
    argv = [*drop(), "/usr/bin/env", f"LD_LIBRARY_PATH={home / 'lib'}", str(exe), "-s"]
    probe = subprocess.run([*argv, "-c", "import sys, kmeta.cli; print(sys.version)"],
                           capture_output=True, text=True, cwd="/", timeout=60)
    if probe.returncode != 0 or probe.stdout.strip() != sys.version:
        raise RuntimeError(f"user nobody cannot run this Python from {home}: "
                           f"{probe.stdout.strip()} {probe.stderr.strip()[-1500:]}")
    return argv


def _open_base() -> str:
    """A temporary folder whose every parent all users can traverse."""
    for base in (tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm"):
        path = Path(base).resolve()
        if path.is_dir() and all(os.stat(p).st_mode & stat.S_IXOTH
                                 for p in [path, *path.parents]):
            return str(path)
    raise RuntimeError("no temporary folder that user nobody can reach")


def _lay_out(home: Path) -> Path:
    """Mirror the interpreter into ``home`` as a prefix of its own; return its binary."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    base = Path(sys.base_prefix)
    exe = base / "bin" / version
    if not exe.exists():
        exe = Path(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))
    _mkdir(home / "bin")
    _put(exe, home / "bin" / version)
    _mkdir(home / "lib")
    if sysconfig.get_config_var("Py_ENABLE_SHARED"):
        soname = sysconfig.get_config_var("INSTSONAME")
        _put(Path(sysconfig.get_config_var("LIBDIR")) / soname, home / "lib" / soname)
    # the interpreter finds its library by the landmark lib/pythonX.Y/os.py beside bin/
    stdlib = Path(sysconfig.get_paths(vars={"base": sys.base_prefix,
                                            "platbase": sys.base_prefix})["stdlib"])
    lib = home / "lib" / version
    _tree(stdlib, lib, skip=_SKIP)
    site = lib / "site-packages"
    _mkdir(site)
    kmeta_dir = Path(sys.modules["kmeta"].__file__ if "kmeta" in sys.modules
                     else __import__("kmeta").__file__).parent
    for dist in _runtime(metadata.distribution("kmeta")):
        for rel in dist.files or ():
            parts = Path(rel).parts
            # the package itself comes from where this process imports it (an editable
            # install's finder points into the clone)
            if ".." in parts or parts[0] == "kmeta" or parts[0].startswith("__editable__"):
                continue
            src = Path(str(dist.locate_file(rel)))
            if src.is_file():
                _put(src, site / rel, mkdirs=True)
    _tree(kmeta_dir, site / "kmeta", skip=set())
    return home / "bin" / version


def _runtime(root: metadata.Distribution) -> list[metadata.Distribution]:
    """``root`` and every distribution it needs at run time (no extras), once each."""
    from packaging.requirements import Requirement

    found: dict[str, metadata.Distribution] = {}
    todo = [root]
    while todo:
        dist = todo.pop()
        name = dist.metadata["Name"].lower().replace("_", "-")
        if name in found:
            continue
        found[name] = dist
        for line in dist.requires or ():
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(metadata.distribution(req.name))
    return list(found.values())


def _tree(src: Path, dst: Path, skip: set[str]) -> None:
    _mkdir(dst)
    for entry in os.scandir(src):
        target = dst / entry.name
        if entry.is_symlink():
            os.symlink(os.readlink(entry.path), target)
        elif entry.is_dir():
            if entry.name not in skip:
                _tree(Path(entry.path), target, skip=set())
        elif entry.is_file():
            _put(Path(entry.path), target)


def _mkdir(path: Path) -> None:
    path.mkdir()
    path.chmod(0o755)  # whatever the umask


def _put(src: Path, dst: Path, mkdirs: bool = False) -> None:
    """``dst`` the file ``src``, readable by all: a hard link where the file already is
    (its mode is the original's), else a copy opened up."""
    if mkdirs:
        for parent in reversed(dst.parents):
            if not parent.exists():
                _mkdir(parent)
    mode = src.stat().st_mode
    if mode & stat.S_IROTH:
        try:
            os.link(src, dst)
            return
        except OSError:  # another file system, or links refused: a copy
            pass
    shutil.copyfile(src, dst)
    dst.chmod(0o755 if mode & stat.S_IXUSR else 0o644)
