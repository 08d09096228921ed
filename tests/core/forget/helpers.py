"""What the forget tests of the memory-like stores share: a copy of the real libraries' tree, its stores as
``locate`` finds them, a plan-and-erase pass, byte snapshots and the 8-character residue scan."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from praisonmem.core.config import Settings
from praisonmem.core.forget.memory import forget_stores
from praisonmem.core.forget.model import StorePlan, Subject, SubjectKind, Where
from praisonmem.core.io.cache import Cache
from praisonmem.core.locate import locate
from praisonmem.core.paths import resolve
from tests.core.forget import machine

CHROMA = Path("project/.praisonai/knowledge/chroma")  # the servers' module forgets Chroma: only read here


def copy(template: Path, root: Path) -> Path:
    shutil.copytree(template, root, symlinks=True)
    return root


def where(root: Path, monkeypatch) -> Where:
    monkeypatch.setenv("HOME", str(root / "home"))
    monkeypatch.delenv("MEM0_DIR", raising=False)
    paths = resolve(home=root / "home" / ".praisonai", memory_dir=root / "project" / ".praisonai" / "memory", env={},
                    user_home=root / "home")
    report = locate(paths, Settings(), [str(root / "project")], env={"HOME": str(root / "home")},
                    user_home=root / "home")
    return Where(paths, tuple(report.stores), cache=Cache(root / "cache"))


def plans(where: Where, subject: Subject) -> list[tuple[object, StorePlan]]:
    return [(store, store.plan(subject)) for store in forget_stores(where)]


def forget(where: Where, subject: Subject) -> list[tuple[object, StorePlan]]:
    planned = plans(where, subject)
    for store, plan in planned:
        if plan.erasures:
            store.erase(plan)
    return planned


def user(value: str) -> Subject:
    return Subject(SubjectKind.user, value)


def snapshot(root: Path) -> dict[str, tuple]:
    """Every path under ``root``: its bytes (files), mode and mtime (ns), so a read that changed anything shows."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            data = path.read_bytes() if path.is_file() and not path.is_symlink() else None
            found[str(path.relative_to(root))] = (data, st.st_mode, st.st_mtime_ns)
    return found


def grams(texts: list[str], size: int = 8) -> set[str]:
    return {t[i:i + size] for t in texts for i in range(len(t) - size + 1)}


def residue(root: Path, texts: list[str], skip: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """The files under ``root`` (Chroma's directory and ``skip`` aside) holding any 8-character piece of ``texts``, in UTF-8 or
    lower case (praisonmem's search index keeps texts lower-cased)."""
    wanted = grams(texts) - grams(list(machine.BOB.values()))  # " prefers" is in both users' texts
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        if any((root / part) in path.parents for part in (CHROMA, *skip)):
            continue
        data = path.read_bytes()
        low = data.lower()
        hits = sorted(g for g in wanted if g.encode() in data or g.lower().encode() in low)
        if hits:
            found[str(path.relative_to(root))] = hits[:3]
    return found


def alice_texts() -> list[str]:
    return list(machine.ALICE.values())
