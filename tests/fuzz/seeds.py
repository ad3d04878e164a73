"""The inputs the harness mutates: real broker dirs (``KMETA_REAL_DATA``) and fixtures.

A seed is a data dir (or a lone partition dir) small enough to copy for every case.  The
copy is made with fresh, writable files so that a mutation never reaches the originals.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures" / "data"
METADATA_DIR = "__cluster_metadata-0"

#: Real data dirs, relative to KMETA_REAL_DATA: every KRaft layout plus two ZooKeeper-mode
#: dirs (legacy message sets, compaction) that commands must refuse or read cleanly.
REAL = ("ldi-poc", "data-store", "quorum3-boaz/data/kafka-3", "kraft32-three/data/kafka1",
        "kraft41-offsets", "kraft412-scram-snapshots/data/kafka", "kraft-ksql-txn",
        "cp51-connect-cleaned", "kafka25-zk-offsets")
#: Fixture dirs: a healthy data dir and damaged or unusual partition dirs.
FIXTURE = ("healthy", "corrupt/pristine", "corrupt/corrupt-gzip", "corrupt/unknown-version",
           "repair/snapshot-beyond-end", "verify/v010-legacy-message", "verify/f009-legacy-crc",
           "verify/v112-nested-transaction", "divergent/quorum3", "consumers",
           "tiering/broker", "tiering/seed-example", "compaction/transactions/orders-0",
           "compaction/two-producers/orders-0", "compaction/legacy/orders-0",
           "startup/unclean", "startup/badname", "startup/refusals", "startup/checkpoints",
           "kraftstart/cut-under-snapshot", "kraftstart/clean-but-cut")
#: Largest seed the harness copies for each case.
MAX_SEED_BYTES = 4 << 20
#: Damaged data partitions the campaign once failed on (``compact --write`` wrote what
#: verify rejects, or ended in an internal error), made from the tombstones fixture by
#: :func:`damaged_partition`: the campaign mutates them further.
DAMAGED = ("swapped", "max-offset", "bit-flip")
_made: dict[str, Path] = {}


@dataclass(frozen=True)
class Seed:
    name: str
    path: Path

    @property
    def size(self) -> int:
        return sum(p.stat().st_size for p in self.path.rglob("*") if p.is_file())


def real_data() -> Path | None:
    env = os.environ.get("KMETA_REAL_DATA")
    path = Path(env) if env else REPO.parent / "shared" / "real"
    return path if path.is_dir() else None


def all_seeds() -> list[Seed]:
    """Every seed present on this machine, in a fixed order (the campaign is seeded)."""
    out = []
    real = real_data()
    if real is not None:
        out += [Seed(f"real/{n}", real / n) for n in REAL if (real / n).is_dir()]
    out += [Seed(f"fixtures/{n}", FIXTURES / n) for n in FIXTURE if (FIXTURES / n).is_dir()]
    if (FIXTURES / "compaction" / "tombstones").is_dir():
        out += [Seed(f"damaged/{how}", damaged_seed(how)) for how in DAMAGED]
    return [s for s in out if s.size <= MAX_SEED_BYTES]


def damaged_partition(how: str, part: Path) -> Path:
    """The tombstones fixture's partition copied to ``part`` with one damage: two batches
    of one key swapped (offsets go back), the last batch of its first segment at base
    offset 2^63-1 (past what the segment's index addresses, and past the next segment),
    or a bit flipped inside the records of a batch every round keeps (a bad CRC)."""
    import struct

    from .oracle import batches

    copy_tree(FIXTURES / "compaction" / "tombstones" / "orders-0", part)
    # segment 0: offsets 0-1, 2, 3 (key fresh), 4 (its tombstone), 5; segment 6: 6
    seg = part / ("00000000000000000006.log" if how == "bit-flip" else
                  "00000000000000000000.log")
    data = bytearray(seg.read_bytes())
    found = batches(bytes(data))
    if how == "swapped":  # both of key fresh's records stay: the tombstone first
        a, b = found[2], found[3]
        data[a.position:b.position + b.size] = b.raw + a.raw
    elif how == "max-offset":
        struct.pack_into(">q", data, found[-1].position, 2**63 - 1)
    elif how == "bit-flip":  # in the one batch of the active segment, which stays
        data[found[0].position + found[0].size - 3] ^= 0x10
    else:
        raise ValueError(f"{how!r}: one of {', '.join(DAMAGED)}")
    seg.write_bytes(bytes(data))
    return part


def damaged_seed(how: str) -> Path:
    """A damaged partition as a seed, made once per process in a temporary dir."""
    if how not in _made:
        import atexit
        import tempfile

        root = Path(tempfile.mkdtemp(prefix="kmeta-fuzz-seed-"))
        atexit.register(shutil.rmtree, root, True)
        _made[how] = damaged_partition(how, root / "orders-0")
    return _made[how]


def copy_tree(src: Path, dst: Path) -> None:
    """Copy ``src`` to a new ``dst``: contents only (not modes, which are read-only in the
    real data), symlinks as links."""
    dst.mkdir(parents=True)
    for entry in sorted(src.iterdir()):
        target = dst / entry.name
        if entry.is_symlink():
            os.symlink(os.readlink(entry), target)
        elif entry.is_dir():
            copy_tree(entry, target)
        elif entry.is_file():
            shutil.copyfile(entry, target)


def metadata_partition(root: Path) -> Path:
    """The __cluster_metadata-0 dir under a copied seed, else the seed's own root (a
    partition dir given directly, or a ZooKeeper-mode dir with none)."""
    if root.name.startswith(METADATA_DIR):
        return root
    found = sorted(root.rglob(METADATA_DIR))
    return found[0] if found else root


def make_writable(root: Path) -> None:
    """Let the harness delete what a case left (modes a case may have changed)."""
    for dirpath, dirnames, _ in os.walk(root):
        for d in dirnames:
            p = os.path.join(dirpath, d)
            if not os.path.islink(p):
                os.chmod(p, 0o755)
    if root.exists() and not root.is_symlink():
        os.chmod(root, 0o755)
