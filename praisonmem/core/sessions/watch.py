"""``session watch``: a session's new turns, as an agent writes them.

The session is found once (in any store; ``store`` narrows it), then re-read whenever the file that
holds it may have changed: the session file, or ``sessions.db`` and its ``-wal``
(:mod:`praisonmem.core.io.filewatch`: inotify on the directory, so a file replaced by an atomic rename
is followed; ``stat`` polling where there is no inotify). Reading is the stores' own lock-free read: no
lock is taken, nothing is written. A read that fails (the file is being replaced by a writer that does
not rename, or is gone for a moment) is retried at the next change or tick.

A turn is new when it was not in the session before: turns are told apart by role, content and
timestamp (the library's own test for the same turn, as its spill re-ingest uses), counted, so a turn
written twice on purpose is shown twice. Turns the library moves to ``archived_messages`` when it
compacts were seen already; its summary message is new. A turn whose content changes (a partial,
streamed turn completed in place) is shown again in its new form.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from praisonmem.core.errors import PraisonMemError, UsageError
from praisonmem.core.io.filewatch import Watcher
from praisonmem.core.paths import Paths
from praisonmem.core.sessions.documents import message_key, messages_of
from praisonmem.core.sessions.stores.locate import open_store
from praisonmem.core.sessions.view import Turn, active_turn

INTERVAL = 1.0  # seconds between checks when no event came (polling, or a missed event)


@dataclass(frozen=True)
class Watched:
    """What ``session watch`` follows: the session, its store and the file it re-reads."""

    session_id: str
    store: str
    file: str
    mode: str  # inotify or polling
    turns: int  # how many it held when the watch began


@dataclass(frozen=True)
class NewTurn:
    index: int  # its position in ``messages`` when it was read
    message: Any

    def turn(self) -> Turn:
        """The turn as ``session show`` presents it."""
        return active_turn(self.index, self.message)

    def to_json(self, session_id: str) -> dict[str, Any]:
        """One line of ``--json``: ``session export --format jsonl``'s record for the message."""
        record: dict[str, Any] = {"session_id": session_id, "archived": False, "index": self.index}
        record.update(self.message if isinstance(self.message, dict) else {"value": self.message})
        return record


def watch(paths: Paths, name: str, *, store: str | None = None, tail: int = 10, interval: float = INTERVAL,
          use_inotify: bool = True, started: Callable[[Watched], None] | None = None, wait: bool = False,
          waiting: Callable[[str], None] | None = None, stop: Callable[[], bool] | None = None,
          ) -> Iterator[list[NewTurn]]:
    """The last ``tail`` turns of the session ``name``, then each batch of new turns as it is written; never
    ends (the caller stops it). ``started`` is told what is watched before the first batch. ``wait``: a session
    no store holds yet is waited for (by its exact name, checked every ``interval``; ``waiting`` is told where
    it is looked for), then followed from its first turn. ``stop``, asked at every tick, ends the watch when it
    says so (a caller in another thread cannot close a running generator)."""
    if tail < 0 or interval <= 0:
        raise UsageError("--tail must be 0 or more and the interval positive")
    from praisonmem.core.sessions.stores.locate import is_location

    if is_location(store):
        from praisonmem.core.io import pgurl

        try:
            from praisonmem.core.sessions.stores.home import held as held_stores

            held = ", ".join(held_stores(open_store(paths)))
        except PraisonMemError:
            held = "json"
        raise UsageError(f"--store {pgurl.redact(str(store))}: session watch follows the home's stores (this home "
                         f"has: {held}), not a store elsewhere")
    if wait:
        home, ref = _appeared(paths, name, store, interval, waiting)
    else:
        home = open_store(paths, store)
        ref = home.find(name, allow_prefix=True)
    label, file = home.store_of(ref), str(ref)
    doc = home.read(ref)
    sid = home.session_id(ref, doc)
    seen: Counter[tuple[str, str, str]] = Counter()
    first = _new_turns(doc, seen)
    directory, base = os.path.split(os.path.abspath(file))
    names = [base, f"{base}-wal"] if not base.endswith(".json") else [base]
    with Watcher(directory, names, use_inotify=use_inotify) as watcher:
        signature = watcher.signature()
        if started is not None:
            started(Watched(sid, label, file, watcher.mode, len(first)))
        yield first[-tail:] if tail else []
        while stop is None or not stop():
            watcher.wait(interval)
            now = watcher.signature()
            if now == signature:
                continue
            try:
                current = _reread(paths, label, ref)
            except PraisonMemError:
                continue  # retried at the next change or tick (signature kept old)
            signature = now
            batch = _new_turns(current, seen)
            if batch:
                yield batch


def _appeared(paths: Paths, name: str, store: str | None, interval: float,
              waiting: Callable[[str], None] | None) -> tuple[Any, Any]:
    """The store and ref of the session ``name`` once a store holds it (exact names only: another session that
    merely starts with ``name`` is not the one awaited); each look opens the stores afresh."""
    import time

    from praisonmem.core.errors import NotFound

    told = False
    while True:
        home = open_store(paths, store)
        try:
            return home, home.find(name)
        except NotFound:
            pass
        if not told and waiting is not None:
            waiting(str(paths.sessions_dir) if store is None else store)
            told = True
        time.sleep(interval)


def _reread(paths: Paths, label: str, ref: Any) -> dict[str, Any]:
    """The session as it is now: a fresh store, since a store reads ``sessions.db`` once."""
    return open_store(paths, label).read(ref)


def _new_turns(doc: dict[str, Any], seen: Counter[tuple[str, str, str]]) -> list[NewTurn]:
    """The turns of ``doc`` not counted in ``seen`` yet (``seen`` is updated)."""
    now: Counter[tuple[str, str, str]] = Counter()
    for message in messages_of(doc, "archived_messages"):
        now[_key(message)] += 1
    new = []
    for index, message in enumerate(messages_of(doc)):
        key = _key(message)
        now[key] += 1
        if now[key] > seen[key]:
            new.append(NewTurn(index, message))
    for key, count in now.items():
        seen[key] = max(seen[key], count)
    return new


def _key(message: Any) -> tuple[str, str, str]:
    return message_key(message) if isinstance(message, dict) else ("", repr(message), "")
