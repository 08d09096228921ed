"""``forget`` on praisonaiagents' Chroma memory (``chroma_db[_<user>]``, collection ``memory_store[_<user>]`` or an
Agent's ``memory_<user>``) and Chroma knowledge (``praisonai_knowledge``) in the directories ``locate`` found.

``--user`` is every item of the user's own collection (the library names it after the user) and every item of
another memory or knowledge collection whose ``user_id`` metadata is that user; ``--session`` and ``--agent`` the items whose
metadata names them. Reads go through a private copy (:func:`praisonmem.core.io.chroma.snapshot`: opening a
Chroma directory rewrites files), the delete through :func:`praisonmem.core.io.chroma.delete_ids`, which syncs
the segment, purges chromadb's write-ahead log and VACUUMs, so the raw-byte scan of the plan's files finds no
deleted text. A ``--user`` forget that empties the user's own collection drops it too (its name is the user's
id), with the HNSW files chromadb leaves of it, and removes the ``chroma_db_<user>`` directory it leaves empty;
the library makes both again on its next start.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from praisonmem.core.forget.match import distinctive, epoch_of, guarded, names_subject, older
from praisonmem.core.forget.model import Action, Erasure, ForgetStore, StorePlan, Subject, SubjectKind, Where

KIND = "chroma-memory"
KINDS = (KIND, "chroma-knowledge")  # knowledge items whose metadata names the subject are hers too


def forget_stores(where: Where) -> list[ForgetStore]:
    """One store per Chroma memory or knowledge collection ``where.located`` lists."""
    out: list[ForgetStore] = []
    seen: set[tuple[str, str]] = set()
    for item in where.located:
        kind = getattr(item, "kind", None)
        if kind not in KINDS:
            continue
        holds = getattr(item, "holds", None) or {}
        name = holds.get("collection")
        if isinstance(name, str) and (item.path, name) not in seen:
            seen.add((item.path, name))
            out.append(ChromaMemory(Path(item.path), name, kind))
        elif kind == KIND and holds.get("collections") == 0:
            out.append(EmptyChromaDir(Path(item.path)))
    return out


def files(path: Path) -> list[Path]:
    """Every regular file of the Chroma directory (``chroma.sqlite3`` and its journals, each segment's files)."""
    found = []
    for root, _dirs, names in os.walk(path):
        found += [Path(root) / n for n in sorted(names) if os.path.isfile(os.path.join(root, n))]
    return sorted(found)


class ChromaMemory:
    """One memory collection of one Chroma directory."""

    store = KIND

    def __init__(self, path: Path, collection: str, kind: str = KIND) -> None:
        self.store = kind
        self.path = path
        self.collection = collection
        self.location = f"{path} ({collection})"

    def owned_by(self, user: str) -> bool:
        """The collection is the user's own (``memory_store_<user>``, or ``memory_<user>`` as an Agent names it)."""
        from praisonmem.core.errors import UsageError
        from praisonmem.core.memory import ChromaMemoryStore

        try:  # the library's own naming of a user's collection (an id it refuses names none)
            name = ChromaMemoryStore(self.path, user).collection_name
        except UsageError:
            return False
        return name != "memory_store" and self.collection in (name, "memory" + name[len("memory_store"):])

    def own_dir(self, user: str) -> bool:
        """The directory is the one the library makes for the user (``chroma_db_<user>``)."""
        from praisonmem.core.memory import ChromaMemoryStore

        return ChromaMemoryStore(self.path.parent, user).path.name == self.path.name

    def plan(self, subject: Subject) -> StorePlan:
        plan = StorePlan(self.store, self.location, files=files(self.path))
        return guarded(plan, lambda: self._plan(plan, subject))

    def _plan(self, plan: StorePlan, subject: Subject) -> None:
        from praisonmem.core.io import chroma as chroma_io

        with chroma_io.snapshot(self.path) as client:
            rows = chroma_io.rows(chroma_io.collection(client, self.collection, self.path))
            alone = chroma_io.names(client) == [self.collection]
            others = [r["document"] or "" for name in chroma_io.names(client) if name != self.collection
                      for r in chroma_io.rows(client.get_collection(name, embedding_function=None))]
        whole = self.store == KIND and subject.kind == SubjectKind.user and self.owned_by(subject.value)
        mine, kept, undated = [], list(others), 0
        for row in rows:
            meta = row["metadata"] or {}
            inside = older(subject, epoch_of(meta.get("timestamp") or meta.get("created_at"))) \
                if whole or names_subject({"metadata": meta}, subject) else False
            undated += inside is None
            if inside:
                mine.append(row)
            else:
                kept.append((row["document"] or "") + "\n" + json.dumps(meta, ensure_ascii=False))
        for row in mine:
            plan.erasures.append(Erasure(f"item:{row['id']}", f"Chroma memory {row['id']} in {self.collection}",
                                         Action.remove, distinctive([row["document"]], kept)))
        if whole and len(mine) == len(rows):  # her own collection emptied: its name is her id, so it goes too
            plan.erasures.append(Erasure(f"collection:{self.collection}",
                                         f"Chroma collection {self.collection} (named after the user)"))
            if alone and self.own_dir(subject.value):
                plan.erasures.append(Erasure(f"directory:{self.path.name}",
                                             f"Chroma directory {self.path} (named after the user, left empty)"))
        if undated:
            plan.notes.append(f"{undated} items without a time left alone (--before cannot place them)")

    def erase(self, plan: StorePlan) -> int:
        from praisonmem.core.io import chroma as chroma_io

        if not self.path.exists() and any(e.key.startswith("directory:") for e in plan.erasures):
            return 0  # a rerun: the whole directory went already
        ids = [e.key.split(":", 1)[1] for e in plan.erasures if e.key.startswith("item:")]
        if ids:
            if not chroma_io.delete_ids(self.path, self.collection, ids):  # those gone already are skipped
                # all gone already: a rerun after a kill, maybe between chromadb's delete and the VACUUM that
                # clears the free pages holding the deleted texts, so it is run again
                chroma_io.vacuum(self.path)
        done = len(ids)
        if any(e.key == f"collection:{self.collection}" for e in plan.erasures):
            chroma_io.drop_collection(self.path, self.collection)  # idempotent: a rerun scrubs again
            done += 1
            if any(e.key.startswith("directory:") for e in plan.erasures):
                done += chroma_io.remove_empty_store(self.path)
        return done

    def residue(self, needles: Sequence[str]) -> list[str] | None:
        return []  # a store of files says nothing beyond them: the proof scans their bytes (none: nothing to hold)


class EmptyChromaDir:
    """A memory directory with no collection left (a forget killed between dropping the user's collection and
    removing the directory named after her leaves one): a ``--user`` forget of that user removes it."""

    store = KIND

    def __init__(self, path: Path) -> None:
        self.path = path
        self.location = str(path)

    def plan(self, subject: Subject) -> StorePlan:
        plan = StorePlan(self.store, self.location, files=files(self.path))
        return guarded(plan, lambda: self._plan(plan, subject))

    def _plan(self, plan: StorePlan, subject: Subject) -> None:
        from praisonmem.core.errors import UsageError
        from praisonmem.core.memory import ChromaMemoryStore

        if subject.kind != SubjectKind.user:
            return
        try:  # the library's own directory name for the user (an id it refuses names none)
            theirs = ChromaMemoryStore(self.path.parent, subject.value).path.name
        except UsageError:
            return
        if theirs == self.path.name:
            plan.erasures.append(Erasure(f"directory:{self.path.name}",
                                         f"Chroma directory {self.path} (named after the user, left empty)"))

    def erase(self, plan: StorePlan) -> int:
        from praisonmem.core.io import chroma as chroma_io

        if not self.path.exists() or not any(e.key.startswith("directory:") for e in plan.erasures):
            return 0
        return int(chroma_io.remove_empty_store(self.path))

    def residue(self, needles: Sequence[str]) -> list[str] | None:
        return []  # a store of files: the proof scans their bytes
