"""``forget`` on the server stores: praisonai's SQL conversation stores (PostgreSQL, MySQL/MariaDB), Upsonic's
PostgresStorage and RedisStorage, the learn stores and praisonai's state store in Redis (and, through
:mod:`.chroma`, the Chroma memory directories ``locate`` found).

Each store is one :class:`~praisonmem.core.forget.model.ForgetStore` over the module that already owns its
writes, so a forget writes exactly as the single-store commands do:

* **Conversation tables** (:mod:`praisonmem.core.sessions.stores.conversation_sql`): the subject's sessions (by
  ``user_id``, ``session_id`` or ``agent_id``) go whole, their messages and praisonmem's side-table rows with
  them, in one transaction that locks each session row first.
* **Upsonic** (:mod:`praisonmem.core.upsonic.postgres_backend`, :mod:`~praisonmem.core.upsonic.redis_backend`):
  the subject's sessions, user memories (a user's row; with ``--agent`` the rows that agent wrote) and the
  usage-ledger entries of that user or of those sessions' runs, in one transaction (Redis: ``WATCH``/``MULTI``,
  every index set the record is in updated with it).
* **Learn in Redis** (:mod:`praisonmem.core.learn.redis`): the library keeps no user id, so only entries whose
  metadata names the subject are found; the plan says so.
* **State in Redis** (:mod:`praisonmem.core.state.redis`): ``run:<session>:…`` and ``agent:<session>`` of the
  subject's sessions, the traces naming the user, session or agent and the spans of those traces,
  compare-and-deleted.

``plan`` reads only (read-only transactions, ``SCAN``); ``erase`` deletes what the plan names and counts an
erasure already gone as done, so a rerun after a kill finishes the job; ``residue`` asks the server where a
needle still occurs (every text column of the store's tables, matched with ``position``/``LOCATE``, never
``LIKE``; every key under the store's prefix, its name and value) and answers table and column, or key, never
the text. A server that cannot be read gives a plan that is ``unreachable`` with the reason; passwords never
appear (every label is the URL masked).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from praisonmem.core.errors import NotFound, PraisonMemError
from praisonmem.core.forget.model import (MIN_NEEDLE, Action, Erasure, ForgetStore, StorePlan, Subject, SubjectKind,
                                          Where)

# the agent's name or id in a record's metadata, as the libraries' callers put it there
AGENT_KEYS = ("agent_id", "agent_name", "agent")


def forget_stores(where: Where) -> list[ForgetStore]:
    """The server stores of ``where.urls`` and of the servers ``where.located`` lists (each URL once per kind of
    store it can hold), and the Chroma memory stores ``where.located`` lists."""
    from praisonmem.core.forget import chroma

    stores: list[ForgetStore] = []
    seen: set[tuple[str, str]] = set()
    for url, role in _urls(where):
        for store in _for_url(url, role):
            if (store.store, store.location) not in seen:
                seen.add((store.store, store.location))
                stores.append(store)
    return stores + chroma.forget_stores(where)


def _urls(where: Where) -> list[tuple[str, str | None]]:
    """Each server URL with the role ``locate`` gave it (``conversation``, ``upsonic``, ``state``) or None."""
    out: list[tuple[str, str | None]] = [(url, None) for url in where.urls]
    for item in where.located:
        url = getattr(item, "_url", "")
        kind = str(getattr(item, "kind", ""))
        if url:
            out.append((url, kind.split("-", 1)[0] or None))
    return out


def _scheme(url: str) -> str:
    from praisonmem.core.locate.places import scheme

    return scheme(url)


def _for_url(url: str, role: str | None) -> list[ForgetStore]:
    kind = _scheme(url)
    out: list[ForgetStore] = []
    if kind == "postgresql":
        if role in (None, "conversation"):
            out.append(ConversationServer(url))
        if role in (None, "upsonic"):
            out.append(UpsonicServer(url))
    elif kind == "mysql" and role in (None, "conversation"):
        out.append(ConversationServer(url))
    elif kind in ("redis", "rediss", "unix"):
        if role in (None, "upsonic"):
            out.append(UpsonicServer(url))
        if role in (None, "state", "learn"):
            out += [LearnRedis(url), StateRedis(url)]
    return out


# ---------------------------------------------------------------- what every store shares


def masked(url: str) -> str:
    from praisonmem.core.io import pgurl

    pgurl.remember(url)
    return pgurl.redact(url)


def older(subject: Subject, epoch: float | None) -> bool | None:
    """Whether a record of time ``epoch`` (seconds) falls under ``--before``: True without one; None when the
    record has no time (it is left alone, and the plan says so)."""
    if subject.before is None:
        return True
    if epoch is None:
        return None
    return float(epoch) < subject.before.timestamp()


def epoch_of(value: Any) -> float | None:
    """A record's time as seconds: a number, or an ISO 8601 text (naive: UTC, as the libraries write it)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and value:
        from praisonmem.core.io.timeutil import epoch_of as parse

        return parse(value)
    return None


def distinctive(texts: Iterable[Any], kept: Sequence[str] = ()) -> tuple[str, ...]:
    """The texts of an erased record the proof looks for: strings of :data:`MIN_NEEDLE` characters or more, each
    once, leaving out any that a record of somebody else also holds (finding those would prove nothing)."""
    out: list[str] = []
    for text in texts:
        if isinstance(text, str) and len(text) >= MIN_NEEDLE and text not in out \
                and not any(text in other for other in kept):
            out.append(text)
    return tuple(out)


def contents(value: Any) -> list[str]:
    """The message texts inside a session's JSON (every ``content``/``text`` string, at any depth)."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, inner in node.items():
                if key in ("content", "text") and isinstance(inner, str):
                    found.append(inner)
                else:
                    walk(inner)
        elif isinstance(node, list):
            for inner in node:
                walk(inner)
    walk(value)
    return found


def strings(value: Any) -> list[str]:
    """Every string value inside a JSON value (keys left out)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for inner in value.values() for s in strings(inner)]
    if isinstance(value, list):
        return [s for inner in value for s in strings(inner)]
    return []


def variants(needles: Sequence[str]) -> list[str]:
    """Each needle as it is and as a JSON string's body (escaped ASCII, and UTF-8): how a JSON column or a JSON
    value holds it."""
    out: list[str] = []
    for needle in needles:
        for form in (needle, json.dumps(needle)[1:-1], json.dumps(needle, ensure_ascii=False)[1:-1]):
            if form and form not in out:
                out.append(form)
    return out


def names_subject(record: Any, subject: Subject) -> bool:
    """A record's own fields (or its ``metadata``) name the subject: ``user_id``, ``session_id`` or the agent."""
    if not isinstance(record, dict):
        return False
    keys = {SubjectKind.user: ("user_id",), SubjectKind.session: ("session_id",),
            SubjectKind.agent: AGENT_KEYS}[subject.kind]
    for holder in (record, record.get("metadata")):
        if isinstance(holder, dict) and any(holder.get(k) == subject.value for k in keys):
            return True
    return False


def guarded(plan: StorePlan, read: Callable[[], None]) -> StorePlan:
    """Run a plan's reads: a store that is not there leaves the plan empty; any other failure makes it
    ``unreachable`` with the reason (one line, the password masked by the module that raised it)."""
    try:
        read()
    except NotFound as exc:
        plan.erasures = []
        plan.notes.append(f"nothing of this kind here ({exc})")
    except PraisonMemError as exc:
        plan.erasures = []
        plan.unreachable = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return plan


def _before_note(plan: StorePlan, subject: Subject, undated: int, what: str) -> None:
    if undated and subject.before is not None:
        plan.notes.append(f"{undated} {what} without a time left alone (--before cannot place them)")


# ---------------------------------------------------------------- praisonai's conversation tables


class ConversationServer:
    """praisonai's SQL conversation store on PostgreSQL or MySQL/MariaDB (default prefix and schema)."""

    def __init__(self, url: str) -> None:
        from praisonmem.core.io import mysqlurl

        self.url = url
        self.mysql = mysqlurl.is_mysql(url)
        self.store = "conversation-mysql" if self.mysql else "conversation-postgresql"
        self.location = masked(url)
        self._conv: Any = None

    def _open(self) -> Any:
        if self._conv is None:
            from praisonmem.core.io import mysqlurl, pgurl
            from praisonmem.core.sessions.stores.conversation_sql import (ConversationMy, ConversationPg,
                                                                           ConversationStore)

            backend = ConversationMy(mysqlurl.parse(self.url)) if self.mysql else ConversationPg(pgurl.parse(self.url))
            self._conv = ConversationStore(backend)
        return self._conv

    def close(self) -> None:
        if self._conv is not None:
            self._conv.close()
            self._conv = None

    def plan(self, subject: Subject) -> StorePlan:
        plan = StorePlan(self.store, self.location)
        return guarded(plan, lambda: self._plan(plan, subject))

    def _plan(self, plan: StorePlan, subject: Subject) -> None:
        conv = self._open()
        b = conv.backend
        column = {SubjectKind.user: "user_id", SubjectKind.session: "session_id",
                  SubjectKind.agent: "agent_id"}[subject.kind]
        with b.reading() as conn:
            rows = conn.execute(b.q(f"SELECT session_id, updated_at, created_at FROM {conv.s} WHERE {column} = ? "
                                    "ORDER BY session_id"), (subject.value,)).fetchall()
            undated = 0
            ids = []
            for sid, updated, created in rows:
                inside = older(subject, updated if updated is not None else created)
                undated += inside is None
                if inside:
                    ids.append(sid)
            texts: dict[str, list[str]] = {sid: [sid] for sid in ids}
            counts = dict.fromkeys(ids, 0)
            for start in range(0, len(ids), 500):
                chunk = ids[start:start + 500]
                inn, params = b.ids_in(len(chunk)), b.ids_param(chunk)
                for sid, content in conn.execute(b.q(f"SELECT session_id, content FROM {conv.m} WHERE session_id {inn}"),
                                                 params):
                    counts[sid] += 1
                    if isinstance(content, str):
                        texts[sid].append(content)
                if b.has_extra:
                    for sid, text in conn.execute(b.q(f"SELECT session_id, json FROM {conv.x} WHERE session_id {inn}"),
                                                  params):
                        try:
                            texts[sid] += contents(json.loads(text))
                        except ValueError:
                            continue
            kept = self._shared(conn, ids, [t for ts in texts.values() for t in ts])
        for sid in ids:
            plan.erasures.append(Erasure(f"session:{sid}", f"session {sid}, {counts[sid]} messages", Action.remove,
                                         distinctive(texts[sid], kept)))
        _before_note(plan, subject, undated, "sessions")

    def _shared(self, conn: Any, ids: list[str], texts: list[str]) -> list[str]:
        """Those of ``texts`` that a message of another session also holds (the proof cannot look for them)."""
        conv = self._open()
        candidates = sorted({t for t in texts if len(t) >= MIN_NEEDLE})
        if not candidates:
            return []
        b = conv.backend
        other = f"session_id NOT IN ({', '.join('?' * len(ids))})" if self.mysql else "NOT (session_id = ANY(?))"
        params: list[Any] = list(ids) if self.mysql else [list(ids)]
        found = []
        for text in candidates:
            hit = "LOCATE(CAST(? AS BINARY), CAST(content AS BINARY)) > 0" if self.mysql else "position(? in content) > 0"
            row = conn.execute(b.q(f"SELECT 1 FROM {conv.m} WHERE {other} AND {hit} LIMIT 1"),
                               (*params, text)).fetchone()
            if row is not None:
                found.append(text)
        return found

    def erase(self, plan: StorePlan) -> int:
        conv = self._open()
        refs = [conv.ref(e.key.split(":", 1)[1]) for e in plan.erasures if e.key.startswith("session:")]
        if not refs:
            return 0
        with conv.transaction(refs) as tx:
            for ref in refs:
                if tx.lock(ref):  # gone already: a rerun after a kill
                    tx.delete(ref)
        return len(refs)

    def residue(self, needles: Sequence[str]) -> list[str] | None:
        forms = variants(needles)
        if not forms:
            return []
        conv = self._open()
        b = conv.backend
        try:
            with b.reading() as conn:
                tables = [(b.sessions, conv.s), (b.messages, conv.m)] + ([(b.extra, conv.x)] if b.has_extra else [])
                found = []
                for name, quoted in tables:
                    columns = [c for c, t in (b.table_columns(conn, name) or {}).items() if _texty(t)]
                    found += [f"{name}.{c}" for c in self._hits(conn, quoted, columns, forms)]
                return found
        except NotFound:
            return []
        except PraisonMemError:
            return None

    def _hits(self, conn: Any, table: str, columns: list[str], forms: list[str]) -> list[str]:
        if not columns:
            return []
        if self.mysql:
            test = "LOCATE(CAST(%s AS BINARY), CAST(CAST(`{c}` AS CHAR) AS BINARY)) > 0"
        else:
            test = 'position(%s in "{c}"::text) > 0'
        parts = [f"max(CASE WHEN {' OR '.join([test.format(c=c)] * len(forms))} THEN 1 ELSE 0 END)" for c in columns]
        row = conn.execute(f"SELECT {', '.join(parts)} FROM {table}", tuple(forms) * len(columns)).fetchone()
        return [c for c, hit in zip(columns, row or ()) if hit]


def _texty(sql_type: str) -> bool:
    t = sql_type.lower()
    return any(w in t for w in ("char", "text", "json"))


# ---------------------------------------------------------------- Upsonic on PostgreSQL and Redis


class UpsonicServer:
    """Upsonic's PostgresStorage tables (schema ``public``) or RedisStorage keys (prefix ``upsonic``)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.redis = _scheme(url) in ("redis", "rediss", "unix")
        self.store = "upsonic-redis" if self.redis else "upsonic-postgresql"
        self.location = masked(url)
        self._backend: Any = None

    def _open(self) -> Any:
        if self._backend is None:
            from praisonmem.core.upsonic.store import Store

            self._backend = Store(self.url).backend
        return self._backend

    def plan(self, subject: Subject) -> StorePlan:
        plan = StorePlan(self.store, self.location)
        return guarded(plan, lambda: self._plan(plan, subject))

    def _plan(self, plan: StorePlan, subject: Subject) -> None:
        from praisonmem.core.upsonic.store import decode_session_row, decode_user_row

        backend = self._open()
        sessions = [decode_session_row(r) for r in _or_empty(lambda: backend.session_rows(None))]
        users = [decode_user_row(r) for r in _or_empty(lambda: backend.user_rows(None))]
        usage = _or_empty(backend.usage_entries)
        field = {SubjectKind.user: "user_id", SubjectKind.session: "session_id",
                 SubjectKind.agent: "agent_id"}[subject.kind]
        undated = 0
        mine, theirs = [], []
        for row in sessions:
            inside = older(subject, row.get("updated_at") or row.get("created_at")) if row.get(field) == subject.value \
                else False
            undated += inside is None
            (mine if inside else theirs).append(row)
        user_field = {SubjectKind.user: "user_id", SubjectKind.agent: "agent_id"}.get(subject.kind)
        my_users, their_users = [], []
        for row in users:
            inside = older(subject, row.get("updated_at") or row.get("created_at")) \
                if user_field and row.get(user_field) == subject.value else False
            undated += inside is None
            (my_users if inside else their_users).append(row)
        runs = {str(run) for row in mine if isinstance(row.get("runs"), dict) for run in row["runs"]}
        my_usage, their_usage = [], []
        for entry in usage:
            named = (subject.kind == SubjectKind.user and entry.get("user_id") == subject.value) or \
                (entry.get("run_id") is not None and str(entry.get("run_id")) in runs)
            inside = older(subject, epoch_of(entry.get("timestamp"))) if named else False
            undated += inside is None
            (my_usage if inside else their_usage).append(entry)
        kept = [json.dumps(r, ensure_ascii=False, default=str) for r in theirs + their_users + their_usage]
        for row in mine:
            texts = [row["session_id"], row.get("summary"), *contents(row.get("messages")), *contents(row.get("runs"))]
            plan.erasures.append(Erasure(f"session:{row['session_id']}",
                                         f"Upsonic session {row['session_id']} ({row.get('session_type')})",
                                         Action.remove, distinctive(texts, kept)))
        for row in my_users:
            plan.erasures.append(Erasure(f"user:{row['user_id']}", f"Upsonic user memory of {row['user_id']}",
                                         Action.remove, distinctive(strings(row.get("user_memory")), kept)))
        for entry in my_usage:
            plan.erasures.append(Erasure(f"usage:{entry['entry_id']}", f"usage entry {entry['entry_id']}"))
        _before_note(plan, subject, undated, "records")

    def erase(self, plan: StorePlan) -> int:
        backend = self._open()
        keys = [e.key.split(":", 1) for e in plan.erasures]
        if not keys:
            return 0
        # only the tables with something to remove: a table named here that is missing would be created
        need = tuple(table for table, kind in (("sessions", "session"), ("users", "user"))
                     if any(k == kind for k, _ in keys))
        with backend.transaction(need, create=False) as tx:
            usage = [key for kind, key in keys if kind == "usage"]
            for kind, key in keys:
                if kind == "session":
                    tx.delete("sessions", key)
                elif kind == "user":
                    tx.delete("users", key)
            if usage:
                if self.redis:
                    for entry_id in usage:
                        tx.delete_usage_entry(entry_id)
                else:
                    tx.delete_usage_entries(usage)
        return len(keys)

    def residue(self, needles: Sequence[str]) -> list[str] | None:
        forms = variants(needles)
        if not forms:
            return []
        try:
            backend = self._open()
            if self.redis:
                return redis_residue(backend.url, backend.label, [f"{backend.prefix}:"], forms)
            return self._pg_residue(backend, forms)
        except PraisonMemError:
            return None

    @staticmethod
    def _pg_residue(backend: Any, forms: list[str]) -> list[str]:
        from praisonmem.core.io import pgurl
        from praisonmem.core.upsonic.postgres_backend import quote
        from praisonmem.core.upsonic.schema import USAGE_ENTRY_TABLE

        found = []
        with pgurl.transaction(backend.url, read_only=True, lock_timeout=backend.timeout) as conn:
            for name in (backend.session_table, backend.user_memory_table, USAGE_ENTRY_TABLE):
                columns = [c for c, t in (pgurl.columns(conn, backend.schema, name) or {}).items() if _texty(t)]
                if not columns:
                    continue
                test = "position(%s in {c}::text) > 0"
                parts = [f"max(CASE WHEN {' OR '.join([test.format(c=quote(c))] * len(forms))} THEN 1 ELSE 0 END)"
                         for c in columns]
                row = conn.execute(f"SELECT {', '.join(parts)} FROM {quote(backend.schema)}.{quote(name)}",
                                   tuple(forms) * len(columns)).fetchone()
                found += [f"{backend.schema}.{name}.{c}" for c, hit in zip(columns, row or ()) if hit]
        return found


def _or_empty(read: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """A table's rows, none when that table is not there (the other may be)."""
    try:
        return read()
    except NotFound:
        return []


# ---------------------------------------------------------------- Redis: the raw search, learn and state


def redis_residue(url: str, label: str, prefixes: Sequence[str], forms: Sequence[str],
                  skip: Sequence[str] = ()) -> list[str]:
    """The keys under ``prefixes`` (not under ``skip``) whose name or value holds one of ``forms``, by ``SCAN``
    and a pipelined read of each key's value whatever its type."""
    from praisonmem.core.state.redis import RedisState, glob_escape

    needles = [f.encode("utf-8") for f in forms]
    state = RedisState(url, "")
    state.label = label
    found: list[str] = []
    try:
        with state.client("nothing read") as client:
            keys = sorted({k for p in prefixes for k in client.scan_iter(match=glob_escape(p) + "*", count=500)
                           if not any(k.startswith(s.encode("utf-8")) for s in skip)})
        for start in range(0, len(keys), 500):
            batch = keys[start:start + 500]
            for raw in state.read(batch):
                if any(n in b"\0".join(_parts(raw.key, raw.value)) for n in needles):
                    found.append(f"key {raw.key.decode('utf-8', 'replace')}")
    finally:
        state.close()
    return found


def _parts(key: bytes, value: Any) -> list[bytes]:
    if isinstance(value, bytes):
        return [key, value]
    if isinstance(value, dict):
        return [key, *value.keys(), *value.values()]
    if isinstance(value, list):
        return [key, *(v[0] if isinstance(v, tuple) else v for v in value)]
    return [key]


class LearnRedis:
    """The learn stores in Redis (``praison:learn:<store>``): the entries whose metadata names the subject."""

    store = "learn-redis"

    def __init__(self, url: str) -> None:
        self.url = url
        self.location = masked(url)

    def _open(self) -> Any:
        from praisonmem.core.learn.redis import DEFAULT_PREFIX, RedisBackend

        return RedisBackend(self.url, DEFAULT_PREFIX)

    def plan(self, subject: Subject) -> StorePlan:
        plan = StorePlan(self.store, self.location)
        return guarded(plan, lambda: self._plan(plan, subject))

    def _plan(self, plan: StorePlan, subject: Subject) -> None:
        backend = self._open()
        entries, unreadable = backend.entries()
        if unreadable:
            plan.unverifiable = unreadable[0]
        undated = 0
        mine, kept = [], []
        for e in entries:
            inside = older(subject, epoch_of(e.entry.get("updated_at") or e.entry.get("created_at"))) \
                if names_subject(e.entry, subject) else False
            undated += inside is None
            if inside:
                mine.append(e)
            else:
                kept.append(json.dumps(e.entry, ensure_ascii=False, default=str))
        for e in mine:
            plan.erasures.append(Erasure(f"entry:{e.store}:{e.entry.get('id')}",
                                         f"learn {e.store} entry {e.entry.get('id')}", Action.rewrite,
                                         distinctive([e.entry.get("content")], kept)))
        if entries and subject.kind == SubjectKind.user:
            plan.notes.append("the library keeps no user id in Redis learn stores (every user shares them): only "
                              "entries whose metadata names the user were found")
        _before_note(plan, subject, undated, "entries")

    def erase(self, plan: StorePlan) -> int:
        backend = self._open()
        by_store: dict[str, set[str]] = {}
        for e in plan.erasures:
            _, store, entry_id = e.key.split(":", 2)
            by_store.setdefault(store, set()).add(entry_id)
        for store, ids in sorted(by_store.items()):
            def drop(data: dict[str, Any], ids: set[str] = ids) -> bool:
                gone = [k for k in data if k in ids]
                for k in gone:
                    del data[k]
                return bool(gone)
            backend.edit(store, "", "", drop, 10.0, create=False)
        return len(plan.erasures)

    def residue(self, needles: Sequence[str]) -> list[str] | None:
        from praisonmem.core.learn.redis import DEFAULT_PREFIX

        forms = variants(needles)
        if not forms:
            return []
        try:
            return redis_residue(self.url, self.location, [DEFAULT_PREFIX], forms)
        except PraisonMemError:
            return None


class StateRedis:
    """praisonai's state store in Redis (prefix ``praison:``; its ``learn:`` keys are :class:`LearnRedis`'s)."""

    store = "state-redis"
    prefix = "praison:"
    learn = "praison:learn:"

    def __init__(self, url: str) -> None:
        self.url = url
        self.location = masked(url)

    def _open(self) -> Any:
        from praisonmem.core.state.redis import RedisState

        state = RedisState(self.url, self.prefix)
        state.label = self.location
        return state

    def _values(self, state: Any) -> dict[str, tuple[Any, Any]]:
        """Each state key (``learn:`` left out) by its library name: its raw read and its decoded value."""
        from praisonmem.core.state.model import Unreadable, decode_string

        keys = [k for k in state.scan() if not k.startswith(self.learn.encode("utf-8"))]
        out = {}
        for raw in state.read(keys):
            name = raw.key.decode("utf-8", "replace")[len(self.prefix):]
            try:
                value = decode_string(raw.value) if raw.type == "string" else None
            except Unreadable:
                value = None
            out[name] = (raw, value)
        return out

    def plan(self, subject: Subject) -> StorePlan:
        plan = StorePlan(self.store, self.location)
        return guarded(plan, lambda: self._plan(plan, subject))

    def _plan(self, plan: StorePlan, subject: Subject) -> None:
        state = self._open()
        try:
            values = self._values(state)
        finally:
            state.close()
        chosen = self.matching(values, subject)
        undated = 0
        mine = []
        for name in sorted(chosen):
            value = values[name][1]
            when = value.get("ended_at") or value.get("started_at") if isinstance(value, dict) else None
            inside = older(subject, epoch_of(when))
            undated += inside is None
            if inside:
                mine.append(name)
        kept = [json.dumps(v, ensure_ascii=False, default=str) for n, (_, v) in values.items() if n not in mine]
        for name in mine:
            value = values[name][1]
            texts = [name.split(":", 1)[-1]]
            if isinstance(value, dict):
                texts += [value.get("input_content"), value.get("output_content"), value.get("session_id")]
            plan.erasures.append(Erasure(f"key:{name}", f"state key {name}", Action.remove,
                                         distinctive(texts, kept)))
        _before_note(plan, subject, undated, "keys")

    @staticmethod
    def matching(values: dict[str, tuple[Any, Any]], subject: Subject) -> set[str]:
        """The state keys of the subject: its traces (by user, session or agent), their spans, and the runs and
        lifecycle record of its sessions (a session some other user's trace also names is left to them)."""
        def field(name: str, key: str) -> Any:
            value = values[name][1]
            return value.get(key) if isinstance(value, dict) else None

        traces = {n for n in values if n.startswith("trace:")}
        sessions: set[str] = set()
        chosen: set[str] = set()
        if subject.kind == SubjectKind.session:
            sessions.add(subject.value)
            chosen |= {t for t in traces if field(t, "session_id") == subject.value}
        elif subject.kind == SubjectKind.user:
            chosen |= {t for t in traces if field(t, "user_id") == subject.value}
            others = {field(t, "session_id") for t in traces - chosen if field(t, "user_id") not in (None, subject.value)}
            sessions |= {field(t, "session_id") for t in chosen if field(t, "session_id")} - others
        else:
            chosen |= {t for t in traces if field(t, "agent_name") == subject.value}
            sessions |= {n.split(":", 1)[1] for n in values
                         if n.startswith("agent:") and field(n, "agent_name") == subject.value}
        chosen |= {n for n in values if names_subject(values[n][1], subject)}
        for name in values:
            head, _, rest = name.partition(":")
            if (head == "agent" and rest in sessions) or (head == "run" and rest.split(":", 1)[0] in sessions):
                chosen.add(name)
        trace_ids = {field(t, "trace_id") or t.split(":", 1)[1] for t in chosen if t.startswith("trace:")}
        chosen |= {n for n in values if n.startswith("span:") and field(n, "trace_id") in trace_ids}
        return chosen

    def erase(self, plan: StorePlan) -> int:
        names = [e.key.split(":", 1)[1] for e in plan.erasures if e.key.startswith("key:")]
        if not names:
            return 0
        state = self._open()
        try:
            raws = [r for r in state.read([state.full(n) for n in names])]
            if raws:
                state.delete(raws)  # compare-and-delete: a writer that changed one meanwhile refuses it all
        finally:
            state.close()
        return len(names)

    def residue(self, needles: Sequence[str]) -> list[str] | None:
        forms = variants(needles)
        if not forms:
            return []
        try:
            return redis_residue(self.url, self.location, [self.prefix], forms, skip=[self.learn])
        except PraisonMemError:
            return None
