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
from collections.abc import Callable, Sequence
from typing import Any

from praisonmem.core.errors import NotFound, PraisonMemError
from praisonmem.core.forget.match import (before_note, contents, distinctive, epoch_of, guarded, names_subject, older,
                                          strings, variants)
from praisonmem.core.forget.model import (MIN_NEEDLE, Action, Erasure, ForgetStore, StorePlan, Subject, SubjectKind,
                                          Where)


def forget_stores(where: Where) -> list[ForgetStore]:
    """The server stores of ``where.urls`` and of the servers ``where.located`` lists (each URL once per kind of
    store it can hold), and the Chroma memory stores ``where.located`` lists."""
    from praisonmem.core.forget import chroma

    stores: list[ForgetStore] = []
    seen: set[tuple[str, str]] = set()
    for url, role in _urls(where):
        for store in _for_url(url, role, where.key):
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
    """``postgresql``, ``mysql``, ``redis`` (``rediss``, ``unix``) or the URL's own scheme, as ``locate`` names it."""
    head = url.split("://", 1)[0].lower().split("+", 1)[0]
    return {"postgres": "postgresql"}.get(head, head)


def _for_url(url: str, role: str | None, key: bytes | None = None) -> list[ForgetStore]:
    kind = _scheme(url)
    out: list[ForgetStore] = []
    if kind == "postgresql":
        if role in (None, "conversation"):
            out.append(ConversationServer(url, key))
        if role in (None, "upsonic"):
            out.append(UpsonicServer(url))
    elif kind == "mysql" and role in (None, "conversation"):
        out.append(ConversationServer(url, key))
    elif kind in ("redis", "rediss", "unix"):
        if role in (None, "upsonic"):
            out.append(UpsonicServer(url))
        if role in (None, "state", "learn"):
            out += [LearnRedis(url), StateRedis(url)]
    return out


def masked(url: str) -> str:
    from praisonmem.core.io import pgurl

    pgurl.remember(url)
    return pgurl.redact(url)


# ---------------------------------------------------------------- praisonai's conversation tables


class ConversationServer:
    """praisonai's SQL conversation store on PostgreSQL or MySQL/MariaDB (default prefix and schema)."""

    def __init__(self, url: str, key: bytes | None = None) -> None:
        from praisonmem.core.io import mysqlurl

        self.url = url
        self.key = key  # the session key: an encrypted message's text is then a needle too
        self.mysql = mysqlurl.is_mysql(url)
        self.store = "conversation-mysql" if self.mysql else "conversation-postgresql"
        self.location = masked(url)
        self._conv: Any = None

    def _open(self) -> Any:
        if self._conv is None:
            from praisonmem.core.sessions import open_store

            # a location opens as a home of that one store: the conversation tables (default prefix and schema)
            [self._conv] = open_store(None, self.url).stores.values()
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
                sql = f"SELECT session_id, content FROM {conv.m} WHERE session_id {inn}"
                for sid, content in conn.execute(b.q(sql), params):
                    counts[sid] += 1
                    if isinstance(content, str):
                        texts[sid] += self._opened(content, plan)
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
        before_note(plan, subject, undated, "sessions")

    def _opened(self, content: str, plan: StorePlan) -> list[str]:
        """A message's stored text, and its clear text when it is encrypted and the key was given."""
        from praisonmem.core.sessions import Key, is_encrypted

        if not is_encrypted(content):
            return [content]
        if self.key is None:
            note = "encrypted messages: looked for by their stored (encrypted) text only; no session key given"
            if note not in plan.notes:
                plan.notes.append(note)
            return [content]
        try:
            return [content, Key(self.key.decode("utf-8"), "the session key").cipher().decrypt(content)]
        except (PraisonMemError, UnicodeDecodeError) as exc:  # another key's message, or no session key at all
            plan.unverifiable = f"an encrypted message the session key does not open ({exc})"
            return [content]

    def _shared(self, conn: Any, ids: list[str], texts: list[str]) -> list[str]:
        """Those of ``texts`` that a message of another session also holds (the proof cannot look for them)."""
        conv = self._open()
        candidates = sorted({t for t in texts if len(t) >= MIN_NEEDLE and "\x00" not in t})
        if not candidates:
            return []
        b = conv.backend
        other = f"session_id NOT IN ({', '.join('?' * len(ids))})" if self.mysql else "NOT (session_id = ANY(?))"
        params: list[Any] = list(ids) if self.mysql else [list(ids)]
        found = []
        for text in candidates:
            hit = "LOCATE(CAST(? AS BINARY), CAST(content AS BINARY)) > 0" if self.mysql else \
                "position(? in content) > 0"
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
        # a NUL cannot be in a PostgreSQL text (psycopg refuses it as a parameter): its JSON form can
        forms = [f for f in variants(needles) if "\x00" not in f]
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
            from praisonmem.core.upsonic import Store

            self._backend = Store(self.url).backend
        return self._backend

    def plan(self, subject: Subject) -> StorePlan:
        plan = StorePlan(self.store, self.location)
        return guarded(plan, lambda: self._plan(plan, subject))

    def _plan(self, plan: StorePlan, subject: Subject) -> None:
        from praisonmem.core.upsonic import decode

        backend = self._open()
        # the JSON columns the plan reads, decoded as every backend's reader does
        sessions = [{**r, **{k: decode(r.get(k)) for k in ("messages", "runs")}}
                    for r in _or_empty(lambda: backend.session_rows(None))]
        users = [{**r, "user_memory": decode(r.get("user_memory"))} for r in _or_empty(lambda: backend.user_rows(None))]
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
        kept = [t for r in theirs + their_users + their_usage for t in strings(r)]
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
        before_note(plan, subject, undated, "records")

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
            return backend.holding(forms)
        except PraisonMemError:
            return None


def _or_empty(read: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """A table's rows, none when that table is not there (the other may be)."""
    try:
        return read()
    except NotFound:
        return []


# ---------------------------------------------------------------- Redis: the raw search, learn and state


def redis_residue(url: str, label: str, prefixes: Sequence[str], forms: Sequence[str],
                  skip: Sequence[str] = ()) -> list[str]:
    """The keys under ``prefixes`` (not under ``skip``) whose name or value holds one of ``forms``: ``SCAN`` in
    bounded steps (never ``KEYS``), each value read by its type (strings, hashes, sets, lists, sorted sets: an
    index set's members are ids)."""
    from praisonmem.core.io import redisurl

    needles = [f.encode("utf-8") for f in forms]
    glob = str.maketrans({c: "\\" + c for c in "*?[]\\"})
    found: list[str] = []
    with redisurl.errors(label, "nothing read"):
        client = redisurl.connect(url)
        try:
            keys = sorted({k for p in prefixes for k in client.scan_iter(match=p.translate(glob) + "*", count=500)
                           if not any(k.startswith(s.encode("utf-8")) for s in skip)})
            for key in keys:
                if any(n in b"\0".join(_parts(key, _value(client, key))) for n in needles):
                    found.append(f"key {key.decode('utf-8', 'replace')}")
        finally:
            client.close()
    return found


def _value(client: Any, key: bytes) -> Any:
    kind = client.type(key)
    kind = kind.decode() if isinstance(kind, bytes) else str(kind)
    if kind == "string":
        return client.get(key)
    if kind == "hash":
        return client.hgetall(key)
    if kind == "set":
        return list(client.smembers(key))
    if kind == "list":
        return client.lrange(key, 0, -1)
    if kind == "zset":
        return client.zrange(key, 0, -1)
    return None


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
    prefix = "praison:learn:"  # the library's (LearnManager's) own, which ``learn --backend redis`` reads

    def __init__(self, url: str, paths: Any = None) -> None:
        self.url = url
        self.paths = paths
        self.location = masked(url)

    def _source(self) -> Any:
        from praisonmem.core.learn import Source

        return Source(backend="redis", url=self.url, prefix=self.prefix)

    def plan(self, subject: Subject) -> StorePlan:
        plan = StorePlan(self.store, self.location)
        return guarded(plan, lambda: self._plan(plan, subject))

    def _plan(self, plan: StorePlan, subject: Subject) -> None:
        from praisonmem.core.learn import list_entries

        entries, unreadable = list_entries(self.paths, source=self._source())
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
                kept += strings(e.entry)
        for e in mine:
            plan.erasures.append(Erasure(f"entry:{e.store}:{e.entry.get('id')}",
                                         f"learn {e.store} entry {e.entry.get('id')}", Action.rewrite,
                                         distinctive([e.entry.get("content")], kept)))
        if entries and subject.kind == SubjectKind.user:
            plan.notes.append("the library keeps no user id in Redis learn stores (every user shares them): only "
                              "entries whose metadata names the user were found")
        before_note(plan, subject, undated, "entries")

    def erase(self, plan: StorePlan) -> int:
        from praisonmem.core.learn import plan_delete_entry

        for e in plan.erasures:
            entry_id = e.key.split(":", 2)[2]
            try:  # each one a compare-and-write of its store's key
                plan_delete_entry(self.paths, entry_id, source=self._source()).run()
            except NotFound:  # gone already: a rerun after a kill
                continue
        return len(plan.erasures)

    def residue(self, needles: Sequence[str]) -> list[str] | None:
        forms = variants(needles)
        if not forms:
            return []
        try:
            return redis_residue(self.url, self.location, [self.prefix], forms)
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

    def _values(self) -> dict[str, tuple[Any, Any]]:
        """Each state key (``learn:`` left out) by its library name: how it is listed, and its decoded value."""
        from praisonmem.core.state import Kind, list_keys

        return {k.name: (k, k.value) for k in list_keys(self.url, prefix=self.prefix) if k.kind != Kind.learn}

    def plan(self, subject: Subject) -> StorePlan:
        plan = StorePlan(self.store, self.location)
        return guarded(plan, lambda: self._plan(plan, subject))

    def _plan(self, plan: StorePlan, subject: Subject) -> None:
        values = self._values()
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
        kept = [t for n, (_, v) in values.items() if n not in mine for t in strings(v)]
        for name in mine:
            value = values[name][1]
            texts = [name.split(":", 1)[-1]]
            if isinstance(value, dict):
                texts += [value.get("input_content"), value.get("output_content"), value.get("session_id")]
            plan.erasures.append(Erasure(f"key:{name}", f"state key {name}", Action.remove,
                                         distinctive(texts, kept)))
        before_note(plan, subject, undated, "keys")

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
            others = {field(t, "session_id") for t in traces - chosen
                      if field(t, "user_id") not in (None, subject.value)}
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
        from praisonmem.core.state import plan_delete

        names = [e.key.split(":", 1)[1] for e in plan.erasures if e.key.startswith("key:")]
        present = [n for n in names if n in self._values()]  # gone already: a rerun after a kill
        if present:  # compare-and-delete: a writer that changed one meanwhile refuses them all
            plan_delete(self.url, present, prefix=self.prefix).run()
        return len(names)

    def residue(self, needles: Sequence[str]) -> list[str] | None:
        forms = variants(needles)
        if not forms:
            return []
        try:
            return redis_residue(self.url, self.location, [self.prefix], forms, skip=[self.learn])
        except PraisonMemError:
            return None
