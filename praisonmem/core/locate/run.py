"""``praisonmem locate``: every store on this machine that PraisonAI, praisonai, Upsonic or mem0 wrote, found by
its content, with what it holds and the praisonmem command that reaches it. Read-only: nothing is created,
changed or locked (SQLite files through :func:`praisonmem.core.io.sqlite.connect_ro`, JSON files by their
first bytes)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from praisonmem.core.errors import NotFound, UsageError
from praisonmem.core.locate import places
from praisonmem.core.locate.model import ABSENT, Report, Store
from praisonmem.core.locate.walk import SPLIT_AFTER, Context, one_file, walk

DEFAULT_DEPTH = 6


def check_dirs(dirs: Sequence[str]) -> list[str]:
    """Each DIR as an absolute path; :class:`NotFound` for one that does not exist, :class:`UsageError` for a file."""
    out = []
    for given in dirs:
        path = os.path.abspath(os.path.expanduser(given))
        if not os.path.exists(path):
            raise NotFound(f"{given}: no such directory")
        if not os.path.isdir(path):
            raise UsageError(f"{given}: not a directory (locate walks directories)")
        out.append(path)
    return out


def locate(paths: Any, settings: Any, dirs: Sequence[str] = (), *, depth: int = DEFAULT_DEPTH, connect: bool = False,
           env: Mapping[str, str] | None = None, user_home: Path | None = None, timeout: float = 5.0) -> Report:
    """Every store under the homes, mem0's directory, the configured stores and ``dirs`` (default: the cwd)."""
    if depth < 0:
        raise UsageError(f"--depth must be 0 or more, got {depth}")
    env = os.environ if env is None else env
    user_home = Path.home() if user_home is None else user_home
    roots = check_dirs(dirs or ["."])
    report = Report()
    home_roots, absent = places.homes(paths.data.path, paths.data.source, env, user_home)
    home_roots += places.state_and_memory(paths, absent)
    mem0_roots, mem0_absent = places.mem0(env, user_home)
    named, report.servers = places.configured(settings, env)
    walked = frozenset(str(root.path) for root in [*home_roots, *mem0_roots])
    for root in [*home_roots, *mem0_roots]:
        walk(str(root.path), depth, Context(report, flags=root.flags, timeout=timeout, split_after=SPLIT_AFTER))
    for item in named:
        ctx = Context(report, timeout=timeout)
        if item.path.is_dir():
            walk(str(item.path), 0, ctx)
        elif not (item.path.is_file() and one_file(str(item.path), ctx)) and not item.path.exists():
            absent.append(item)
    for item in [*absent, *mem0_absent]:
        report.stores.append(Store(str(item.path), item.kind, item.library, flags=[ABSENT]))
    for root_dir in roots:
        if root_dir not in walked:
            walk(root_dir, depth, Context(report, timeout=timeout, walked=walked, split_after=SPLIT_AFTER))
    report.stores = _merged(report.stores)
    if connect:
        from praisonmem.core.locate import servers as server_checks

        for server in report.servers:
            server_checks.check(server)
    return report


def _merged(stores: list[Store]) -> list[Store]:
    """One row per store (a DIR may hold a home walked already: that walk's flags are kept), sorted by path."""
    seen: dict[tuple[str, str], Store] = {}
    for store in stores:
        key = (store.path, store.kind)
        if key in seen:
            seen[key].flag(*store.flags)
        else:
            seen[key] = store
    return sorted(seen.values(), key=lambda s: (s.path, s.kind))
