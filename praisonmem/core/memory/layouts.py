"""Memory that older praisonaiagents releases left where 1.7.17 does not look, and the fix for each
(``praisonmem migrate`` and ``check`` list them):

* **Episodic files named by a raw date** (before 1.7.15: ``episodic/2026-3-5.json``). 1.7.17 reads only
  the normalised name (``2026-03-05.json``), so the entries are invisible, and its ``cleanup_episodic``,
  which parses the raw name fine, unlinks the file once it is past the retention. Fix: merge them into the
  normalised file, each entry once (an entry whose id is there already with the same data is not added
  again; one whose id is there with other data is kept as well, so nothing is lost), then remove the raw
  file. Written under praisonmem's per-user lock, the normalised file first, so an interruption leaves
  entries twice, never lost, and a rerun only removes what is merged.
* **Shared SQLite memory** (1.7.0 and before: one ``short_term.db``/``long_term.db`` for every user, told
  apart by ``metadata.user_id``). 1.7.1+ opens ``<tier>_<user>.db`` for a named user. Fix: split, i.e. copy
  each user's rows into that user's file, with their content, metadata and time as stored, in one
  transaction per file; rows without a user stay where they are (1.7.17 still reads the shared files for a
  ``Memory`` without a ``user_id``). The shared files are never changed or deleted: removing them is left
  to the user, once they have looked. A rerun copies nothing twice.

Each fix is a :class:`~praisonmem.core.result.Plan` carried out by the store that owns the files.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from praisonmem.core.errors import PraisonMemError, UsageError
from praisonmem.core.io import jsonfile
from praisonmem.core.io.sqlite import hot_journal
from praisonmem.core.memory.filememory import FileMemoryStore, legacy_user_reason, user_lock, users
from praisonmem.core.memory.sqlitememory import TABLES, SqliteMemoryStore, metadata_user_id, user_suffix
from praisonmem.core.result import Action, Change, Outcome, Plan


@dataclass(frozen=True)
class EpisodicMerge:
    """Raw-date episodic files of one user and day, and the plan that merges them into the normalised file."""

    user_id: str
    day: str  # the normalised date, the file 1.7.17 reads
    sources: list[Path]  # the raw-date files, in name order
    target: Path
    entries: int | None  # entries in the raw files (None: one does not parse)
    already: int | None  # of those, already in the normalised file
    problem: str | None
    plan: Plan


@dataclass(frozen=True)
class SqliteSplit:
    """One user's rows in a shared SQLite memory file, and the plan that copies them into the user's file
    (``problem``: the shared file cannot be read; its plan fails with that)."""

    user_id: str | None
    tier: str
    source: Path
    target: Path | None
    rows: int  # rows of this user not yet in the per-user file
    plan: Plan
    problem: str | None = None
    interrupted: bool = False  # the user's file has a hot journal: an earlier copy was killed mid-write


# ---------------------------------------------------------------- episodic files under raw dates


def raw_day(stem: str) -> str | None:
    """The normalised date of a raw-date file name (``2026-3-5`` → ``2026-03-05``); ``None`` for a name that
    is already normal or no date at all."""
    try:
        day = datetime.strptime(stem, "%Y-%m-%d").strftime("%Y-%m-%d")
    except ValueError:
        return None
    return None if day == stem else day


def merged_episodes(current: list[dict[str, Any]], raw: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """``current`` and then each raw entry it does not already hold as it is; and how many it held."""
    merged = list(current)
    already = 0
    for item in raw:
        if item in merged:
            already += 1
        else:
            merged.append(item)
    return merged, already


def raw_date_merges(memory_dir: Path, timeout: float = jsonfile.LOCK_TIMEOUT) -> list[EpisodicMerge]:
    """Every user's raw-date episodic files, grouped by the day they belong to. Users whose directory is a raw
    pre-1.6.58 id are left out: 1.7.17 reads nothing there, whatever the file names (``check`` says so)."""
    found = []
    for user in users(memory_dir):
        if legacy_user_reason(user):
            continue
        store = FileMemoryStore.at(memory_dir, user, timeout=timeout)
        if not store.episodic_dir.is_dir():
            continue
        days: dict[str, list[Path]] = defaultdict(list)
        for path in sorted(store.episodic_dir.glob("*.json")):
            day = raw_day(path.stem)
            if day is not None and path.is_file():
                days[day].append(path)
        found += [_merge(store, day, sources) for day, sources in sorted(days.items())]
    return found


def _merge(store: FileMemoryStore, day: str, sources: list[Path]) -> EpisodicMerge:
    target = store.episodic_dir / f"{day}.json"
    try:
        entries, already = _counts(store, day, sources)
        problem = None
    except PraisonMemError as exc:
        entries = already = None
        problem = exc.message

    def run(dry_run: bool, progress: Any) -> Outcome:
        change = Change(Action.merged, ", ".join(p.name for p in sources) + f" → {target.name}", dry_run=dry_run,
                        where=str(store.user_dir), fields={"user_id": store.user_id, "date": day,
                                                           "file": str(target),
                                                           "merged": [str(p) for p in sources]})
        try:
            if dry_run:
                moved, held = _counts(store, day, sources)
            else:
                with user_lock(store.user_dir, store.timeout):
                    moved, held = _merge_locked(store, day, sources)
        except PraisonMemError as exc:
            return Outcome([change.fail(exc)])
        change.detail = f"{moved} entr{'y' if moved == 1 else 'ies'}" + (f", {held} already there" if held else "")
        change.fields.update(entries=moved, already=held)
        return Outcome([change])

    return EpisodicMerge(store.user_id, day, sources, target, entries, already, problem, Plan(None, run))


def _counts(store: FileMemoryStore, day: str, sources: list[Path]) -> tuple[int, int]:
    current = store.episodes(day)
    raw = [item for path in sources for item in store.read_items(path)]
    return len(raw), merged_episodes(current, raw)[1]


def _merge_locked(store: FileMemoryStore, day: str, sources: list[Path]) -> tuple[int, int]:
    """Re-read everything under the lock (a file that does not parse refuses the merge), write, remove."""
    present = [p for p in sources if p.exists()]
    raw = [item for path in present for item in store.read_items(path)]
    current = store.episodes(day)
    merged, already = merged_episodes(current, raw)
    unchanged = merged == current and (store.episodic_dir / f"{day}.json").exists()  # a rerun: only remove
    store.replace_episodes(day, None if unchanged else merged, present)
    return len(raw), already


# ---------------------------------------------------------------- shared SQLite memory


def shared_splits(project_dir: Path, timeout: float = 5.0) -> list[SqliteSplit]:
    """Each user's rows in the shared ``short_term.db``/``long_term.db`` that are not yet in the user's own file.
    A user id the library refuses as a file suffix (``/``, ``..``) has no file to go to and is left out."""
    found = []
    shared = SqliteMemoryStore(project_dir, "", timeout=timeout)
    for tier in TABLES:
        try:
            found += _tier_splits(shared, project_dir, tier, timeout)
        except PraisonMemError as exc:
            found.append(_unreadable(shared.files[tier], tier, exc))
    return found


def _tier_splits(shared: SqliteMemoryStore, project_dir: Path, tier: str, timeout: float) -> list[SqliteSplit]:
    by_user: dict[str, list[tuple[str, Any, Any]]] = defaultdict(list)
    for _, content, metadata, stamp in shared.rows(tier, committed=True):
        owner = metadata_user_id(metadata)
        if owner is not None:
            by_user[owner].append((content, metadata, stamp))
    found = []
    for owner, rows in sorted(by_user.items()):
        try:
            own = SqliteMemoryStore(project_dir, owner, timeout=timeout, suffix=user_suffix(owner))
        except UsageError:
            continue
        missing = _missing(own, tier, rows)
        if missing:
            found.append(_split(shared.files[tier], own, tier, owner, rows, len(missing)))
    return found


def _unreadable(source: Path, tier: str, exc: PraisonMemError) -> SqliteSplit:
    def run(dry_run: bool, progress: Any) -> Outcome:
        raise exc

    return SqliteSplit(None, tier, source, None, 0, Plan(None, run), exc.message)


def _missing(own: SqliteMemoryStore, tier: str, rows: list[tuple[str, Any, Any]]) -> list[tuple[str, Any, Any]]:
    present = Counter((content, metadata, stamp) for _, content, metadata, stamp in own.rows(tier, committed=True))
    missing = []
    for row in rows:
        if present[row] > 0:
            present[row] -= 1
        else:
            missing.append(row)
    return missing


def _split(source: Path, own: SqliteMemoryStore, tier: str, owner: str, rows: list[tuple[str, Any, Any]],
           count: int) -> SqliteSplit:
    target = own.files[tier]

    def run(dry_run: bool, progress: Any) -> Outcome:
        change = Change(Action.copied, f"{source.name} → {target.name}", dry_run=dry_run, where=str(source.parent),
                        fields={"user_id": owner, "source": str(source), "file": str(target)})
        try:
            copied = len(_missing(own, tier, rows)) if dry_run else own.add_rows(tier, rows)
        except PraisonMemError as exc:
            return Outcome([change.fail(exc)])
        change.detail = f"{copied} row{'' if copied == 1 else 's'} of user '{owner}'"
        change.fields["rows"] = copied
        return Outcome([change])

    return SqliteSplit(owner, tier, source, target, count, Plan(None, run), interrupted=hot_journal(target))
