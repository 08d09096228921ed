"""The lossless mapping between a PraisonAI JSON session document and PraisonAI's SQL conversation rows
(``praison_sessions`` / ``praison_messages``), the rules below.

* **Columns are a projection**, as faithful as the column types allow: what the real store's
  ``get_session``/``get_messages``, an Agent resuming through ``db=`` and SQL users see. No praisonmem key
  ever goes into a column: ``state`` holds the document's non-empty ``runtime_state``/``last_compaction``
  (for SQL readers; NULL when there is none), ``metadata`` the document's.
* **What the columns lose lives beside them**, in praisonmem's own table ``<prefix>praisonmem_extra``
  (:func:`doc_to_rows` returns its rows; see docs/session.md, "Moving sessions between stores"): for the session
  (``message_id`` ``''``) the document's layout (``style``, the source bytes' ``sha256``, the session's
  ``created_at`` and a ``skeleton``: the exact JSON text of the document with every message object
  replaced by ``{"$": row id}``; the whole text when its layout is not the library's), and per message the
  exact message JSON (``msg``) for a message the columns cannot reproduce exactly (a key the row has no
  column for, an int timestamp, NUL, NaN, key order JSONB would change, content longer than MySQL's TEXT,
  ...) and ``archived`` for an archived message (archived messages are rows too, first: they precede the
  active ones in time). Every exact piece is a JSON *string* (ASCII, ``allow_nan``).
* ``created_at`` is strictly increasing in row order (the real store orders by it alone): the original
  float timestamps on a longest increasing run are kept, the others interpolated.
* **Reading back**, rows are the truth for content and the skeleton for layout: unchanged since the
  migration, the bytes are the source's; changed by the real store (appended turns, ``update_session``)
  the change wins and the document is re-serialised in the library's layout.
* **Rows praisonmem did not write** (an Agent's, through ``db=``) become a document in the library's layout;
  what the document has no field for (the row ids, the session's ``name``, ``state`` and times as stored,
  which JSON columns were NULL) goes under the top-level key ``_praisonmem``, which the library's own
  session loader ignores and the way back consumes: SQL → JSON → SQL gives back the rows the library wrote,
  ``state``/``metadata`` as they were, NULL as NULL, and needs nothing in the side table.
* Stores written by an earlier praisonmem (the layout under ``state._praisonmem``, message envelopes and
  ``row_id`` inside ``metadata._praisonmem``) are still read, and are rewritten the new way when changed.
"""

from __future__ import annotations

import bisect
import json
import math
import uuid
from datetime import datetime, timezone
from typing import Any

from praisonmem.core.errors import UsageError
from praisonmem.core.io.timeutil import epoch_of

RESERVED = "_praisonmem"
NS = uuid.UUID("6f1d2c4e-8a3b-5c7d-9e0f-123456789abc")  # praisonmem's namespace for row ids
MIRRORED = ("model", "total_tokens", "cost", "source")  # top-level copies of metadata in the library's layout
ROLE_LIMIT, COLUMN_LIMIT = 50, 255  # the VARCHAR(50) role, VARCHAR(255) ids and names (PostgreSQL, MySQL)
MYSQL_TEXT = 65535  # bytes in MySQL's TEXT content column


# ---------------------------------------------------------------- value rules

def ok_text(s: Any) -> bool:
    """A str that TEXT/VARCHAR columns and JSONB strings take unchanged (no NUL, no lone surrogate)."""
    if not isinstance(s, str) or "\x00" in s:
        return False
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def ok_col(s: Any, limit: int = COLUMN_LIMIT) -> bool:
    return ok_text(s) and len(s) <= limit


def jsonb_safe(v: Any) -> bool:
    """PostgreSQL accepts ``v`` as jsonb (key order and number form may still change)."""
    if v is None or isinstance(v, (bool, int)):
        return True
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, str):
        return ok_text(v)
    if isinstance(v, list):
        return all(jsonb_safe(x) for x in v)
    if isinstance(v, dict):
        return all(ok_text(k) and jsonb_safe(x) for k, x in v.items())
    return False


def _jsonb_order(keys: list[str]) -> list[str]:
    return sorted(keys, key=lambda k: (len(k.encode()), k.encode()))


def jsonb_stable(v: Any) -> bool:
    """``v`` comes back from jsonb equal and with the same ``json.dumps`` text (key order, number form)."""
    if isinstance(v, float):
        return math.isfinite(v) and not (v == 0 and math.copysign(1, v) < 0) and "e" not in repr(v)
    if isinstance(v, list):
        return all(jsonb_stable(x) for x in v)
    if isinstance(v, dict):
        keys = list(v)
        return (all(ok_text(k) for k in keys) and keys == _jsonb_order(keys)
                and all(jsonb_stable(x) for x in v.values()))
    return jsonb_safe(v)


def clean_text(s: str) -> str:
    """The column copy of a str TEXT cannot hold: NUL and lone surrogates become U+FFFD."""
    return "".join("\ufffd" if c == "\x00" or 0xD800 <= ord(c) <= 0xDFFF else c for c in s)


def iso_epoch(s: Any) -> float | None:
    """An ISO time as epoch seconds (naive = UTC); None when it is missing, not a string or does not parse."""
    return epoch_of(s) if isinstance(s, str) else None


def epoch_iso(x: Any) -> str | None:
    if not isinstance(x, (int, float)) or isinstance(x, bool) or not math.isfinite(x):
        return None
    try:
        return datetime.fromtimestamp(x, timezone.utc).isoformat()
    except (OverflowError, OSError, ValueError):
        return None


def exact(v: Any) -> str:
    """The exact JSON text of ``v``: ASCII (so no column or JSONB rule touches it), NaN kept."""
    return json.dumps(v, ensure_ascii=True, allow_nan=True, separators=(",", ":"))


def dumps_style(doc: Any, style: str) -> str:
    if style == "indent2":
        from praisonmem.core.io import fastjson

        fast = fastjson.dumps_indented(doc)
        if fast is not None:
            return fast.decode("utf-8")
    if style == "compact":
        return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(doc, indent=2, ensure_ascii=False)


# ---------------------------------------------------------------- ordering

def assign_created_at(ts: list[Any]) -> list[float]:
    """Strictly increasing ``created_at`` in row order, keeping as many original float timestamps as
    possible (a longest strictly increasing subsequence) and interpolating the rest."""
    n = len(ts)
    good = [i for i, t in enumerate(ts) if type(t) is float and math.isfinite(t)]
    tails: list[float] = []
    tail_idx: list[int] = []
    prev = [-1] * n
    for i in good:
        t = ts[i]
        p = bisect.bisect_left(tails, t)
        if p == len(tails):
            tails.append(t)
            tail_idx.append(i)
        else:
            tails[p], tail_idx[p] = t, i
        prev[i] = tail_idx[p - 1] if p else -1
    keep: set[int] = set()
    i = tail_idx[-1] if tail_idx else -1
    while i != -1:
        keep.add(i)
        i = prev[i]
    out: list[float | None] = [ts[k] if k in keep else None for k in range(n)]
    i = 0
    while i < n:
        if out[i] is not None:
            i += 1
            continue
        j = i
        while j < n and out[j] is None:
            j += 1
        lo, hi, k = (out[i - 1] if i > 0 else None), (out[j] if j < n else None), j - i
        if lo is None and hi is None:
            lo, hi = 0.0, float(k + 1)
        elif lo is None:
            lo = hi - (k + 1) * 1e-3
        elif hi is None:
            hi = lo + (k + 1) * 1e-3
        for m in range(k):
            v = lo + (hi - lo) * (m + 1) / (k + 1)
            base = out[i + m - 1] if i + m > 0 else None
            if base is not None and v <= base:
                v = math.nextafter(base, math.inf)
            out[i + m] = v
        i = j
    result = [float(v) for v in out]  # type: ignore[arg-type]
    for a in range(1, n):  # no room left between two kept neighbours: push forward
        if result[a] <= result[a - 1]:
            result[a] = math.nextafter(result[a - 1], math.inf)
    return result


# ---------------------------------------------------------------- document -> rows

def _plain_metadata(md: Any) -> bool:
    return isinstance(md, dict) and RESERVED not in md and jsonb_stable(md)


def _fits(content: Any, text_limit: int | None) -> bool:
    return text_limit is None or len(content.encode("utf-8")) <= text_limit


def plain_message(m: Any, created_at: float, text_limit: int | None = None) -> bool:
    """The columns rebuild this message exactly (its keys, their order and their types), so it needs no ``msg``
    in the side table."""
    if not isinstance(m, dict):
        return False
    want = ["role", "content", "timestamp", "metadata"]
    if "tool_calls" in m:
        want.append("tool_calls")
    if "tool_call_id" in m:
        want.append("tool_call_id")
    ts = m.get("timestamp")
    return (list(m) == want and ok_col(m["role"], ROLE_LIMIT) and ok_text(m["content"])
            and _fits(m["content"], text_limit)
            and type(ts) is float and ts == created_at and not (ts == 0 and math.copysign(1, ts) < 0)
            and _plain_metadata(m["metadata"])
            and ("tool_calls" not in m or (isinstance(m["tool_calls"], list) and bool(m["tool_calls"])
                                          and jsonb_stable(m["tool_calls"])))
            and ("tool_call_id" not in m or ok_col(m["tool_call_id"])))


def project_message(m: dict[str, Any], created_at: float, text_limit: int | None = None) -> dict[str, Any]:
    """A message's row (without id and session_id): the columns only, nothing of praisonmem's."""
    role, content = m.get("role"), m.get("content")
    if isinstance(content, str):
        content = content if ok_text(content) else clean_text(content)
    elif content is not None:
        content = exact(content)
    if isinstance(content, str) and not _fits(content, text_limit):
        content = content.encode("utf-8")[:text_limit].decode("utf-8", "ignore")  # the whole text: the side table
    tc, md = m.get("tool_calls"), m.get("metadata")
    md = {k: v for k, v in md.items() if k != RESERVED} if isinstance(md, dict) and jsonb_safe(md) else {}
    if not ok_col(role, ROLE_LIMIT):
        role = clean_text(role)[:ROLE_LIMIT] if isinstance(role, str) else ""
    return {"role": role, "content": content,
            "tool_calls": tc if isinstance(tc, list) and tc and jsonb_safe(tc) else None,
            "tool_call_id": m.get("tool_call_id") if ok_col(m.get("tool_call_id")) else None,
            "metadata": md, "created_at": created_at}


def _row_id_of(m: dict[str, Any]) -> str | None:
    """The row id an earlier praisonmem kept inside a message's metadata."""
    md = m.get("metadata")
    env = md.get(RESERVED) if isinstance(md, dict) else None
    rid = env.get("row_id") if isinstance(env, dict) else None
    return rid if ok_col(rid) and rid else None


def _layout(text: str, doc: Any, raw: bytes) -> str:
    from praisonmem.core.io import fastjson

    if fastjson.dumps_indented(doc) == raw:  # the library's layout, by orjson when it provably agrees
        return "indent2"
    for style in ("indent2", "compact"):
        try:
            if dumps_style(doc, style) == text:
                return style
        except (ValueError, UnicodeEncodeError):
            break
    return "verbatim"


def _origin(doc: dict[str, Any]) -> dict[str, Any]:
    """The top-level ``_praisonmem`` of a document made from rows praisonmem did not write (else ``{}``)."""
    info = doc.get(RESERVED)
    return info if isinstance(info, dict) and isinstance(info.get("row"), dict) else {}


def _kept_ids(doc: dict[str, Any], seq: list[tuple[str, int, dict[str, Any]]]) -> list[str | None]:
    """Per message, the row id the document's origin records for it (when its timestamp still matches)."""
    pairs = _origin(doc).get("rows")
    pairs = pairs if isinstance(pairs, list) else []
    out: list[str | None] = []
    for n, (key, i, m) in enumerate(seq):
        pair = pairs[i] if key == "messages" and i < len(pairs) else None
        ok = (isinstance(pair, list) and len(pair) == 2 and ok_col(pair[0]) and pair[0]
              and type(m.get("timestamp")) is type(pair[1]) and m.get("timestamp") == pair[1])
        out.append(pair[0] if ok else None)
    return out


def _kept_times(seq: list[tuple[str, int, dict[str, Any]]], ids: list[str], ties_by_id: bool) -> list[float] | None:
    """The messages' own timestamps when every one came from a row and they are in the order the rows are read
    back (by time; messages at the same instant in the order written, or by id where the store orders them so),
    so the library's times, ties included, stay as it wrote them."""
    ts = [m.get("timestamp") for _, _, m in seq]
    if not all(type(t) is float and math.isfinite(t) for t in ts):
        return None
    keys: list[Any] = list(zip(ts, ids)) if ties_by_id else ts
    return ts if keys == sorted(keys) and len(set(ids)) == len(ids) else None  # type: ignore[return-value]


def doc_to_rows(raw: bytes, *, postgres: bool, text_limit: int | None = None, avoid: frozenset[str] = frozenset(),
                ties_by_id: bool = False) -> tuple[str, dict[str, Any], list[dict[str, Any]], list[tuple[str, int, str]]]:
    """``(session_id, session row, message rows, side-table rows)`` for a document's stored bytes (a side row:
    ``(message_id, archived, json)``, ``''`` for the session); :class:`UsageError` for a session the tables
    cannot hold (its id is not a str, too long for PostgreSQL/MySQL (``postgres``), or has NUL).
    ``text_limit``: the content column's size in bytes (MySQL's TEXT); ``avoid``: row ids another session holds
    (a rename writes the new session before it deletes the old one), made anew."""
    text = raw.decode("utf-8", "surrogatepass")
    doc = json.loads(text)
    sid = doc.get("session_id") if isinstance(doc, dict) else None
    if not isinstance(sid, str) or not ok_text(sid) or (postgres and len(sid) > COLUMN_LIMIT) or not sid:
        shown = sid if isinstance(sid, str) else type(sid).__name__
        raise UsageError(f"session id {shown[:80]!r} cannot be a conversation-store key "
                         f"(a non-empty str without NUL{', at most 255 characters' if postgres else ''})")
    seq: list[tuple[str, int, dict[str, Any]]] = []
    for key in ("archived_messages", "messages"):
        if isinstance(doc.get(key), list):
            seq += [(key, i, m) for i, m in enumerate(doc[key]) if isinstance(m, dict)]
    origin = _kept_ids(doc, seq)  # the rows these messages came from (their NULL columns are kept by this id)
    kept = [None if k in avoid else k for k in origin]
    ids: list[str] = []
    seen: set[str] = set()
    for n, ((key, i, m), rid) in enumerate(zip(seq, kept)):
        rid = rid or _row_id_of(m)
        if rid is None or rid in seen or rid in avoid:
            rid = str(uuid.uuid5(NS, f"{sid}\x1f{n}"))
        seen.add(rid)
        ids.append(rid)
    created = (_kept_times(seq, ids, ties_by_id) if all(kept) and seq else None) or \
        assign_created_at([m.get("timestamp") for _, _, m in seq])
    cols = _origin(doc).get("cols")
    cols = cols if isinstance(cols, dict) else {}
    refs: dict[tuple[str, int], str] = {}
    rows: list[dict[str, Any]] = []
    extras: list[tuple[str, int, str]] = []
    for (key, i, m), rid, was, ca in zip(seq, ids, origin, created):
        refs[(key, i)] = rid
        archived = key == "archived_messages"
        row = project_message(m, ca, text_limit)
        col = cols.get(was) if isinstance(cols.get(was), dict) else {}
        if "metadata" in col and row["metadata"] == {}:  # NULL (or not an object) as the row had it
            row["metadata"] = col["metadata"]
        if "tool_calls" in col and m.get("tool_calls") in (None, col["tool_calls"]):
            row["tool_calls"] = col["tool_calls"]
        rows.append({"id": rid, **row})
        env: dict[str, Any] = {}
        if archived:
            env["archived"] = True
        if not plain_message(m, ca, text_limit):
            env["msg"] = exact(m)
        if env:
            extras.append((rid, int(archived), exact({"v": 1, **env})))
    session = project_session(doc)
    if _origin(doc) and foreign_doc(sid, session, rows) == text:
        return sid, session, rows, []  # the rows alone give these bytes back: nothing beside them
    skel = dict(doc)
    for key in ("messages", "archived_messages"):
        if isinstance(doc.get(key), list):
            skel[key] = [{"$": refs[(key, i)]} if isinstance(m, dict) else m for i, m in enumerate(doc[key])]
    import hashlib  # here: reading a store (a listing) needs none of it, and its import loads OpenSSL

    style = _layout(text, doc, raw)
    senv: dict[str, Any] = {"v": 1, "source": "praisonai-json", "style": style,
                            "sha256": hashlib.sha256(raw).hexdigest(), "created_at": session["created_at"],
                            "skeleton": exact(skel)}
    if style == "verbatim":
        senv["verbatim"] = exact(text)  # a JSON string literal: ASCII, whatever the file holds
    return sid, session, rows, [("", 0, exact(senv)), *extras]


def _doc_state(doc: dict[str, Any], *, legacy: bool = False) -> dict[str, Any] | None:
    """The ``state`` column of a document from a JSON store: its non-empty ``runtime_state`` and
    ``last_compaction`` (an earlier praisonmem copied them even when empty), NULL when there is none."""
    state = {k: doc[k] for k in ("runtime_state", "last_compaction")
             if k in doc and jsonb_safe(doc[k]) and (legacy or doc[k])}
    return state if state or legacy else None


def project_session(doc: dict[str, Any], *, legacy: bool = False) -> dict[str, Any]:
    """The session row's columns for a document: from the rows it came from where it did (its top-level
    ``_praisonmem.row``), else projected."""
    md = doc.get("metadata")
    origin = _origin(doc)
    row = origin.get("row")
    old = md.get(RESERVED, {}).get("row") if isinstance(md, dict) and isinstance(md.get(RESERVED), dict) else None
    if isinstance(md, dict):
        md = {k: v for k, v in md.items() if k != RESERVED}
    state = _doc_state(doc, legacy=legacy)
    name = next((v for v in ((md or {}).get("title") if isinstance(md, dict) else None, doc.get("title"))
                 if isinstance(v, str) and v), None)  # documents.title_of: metadata.title, else the hierarchy's
    created, updated = iso_epoch(doc.get("created_at")), iso_epoch(doc.get("updated_at"))
    metadata = md if isinstance(md, dict) and jsonb_safe(md) else None
    if row is not None:  # a session made from rows: its columns back as they were
        name = doc["title"] if isinstance(doc.get("title"), str) and doc["title"] else row.get("name")
        state = row.get("state") if jsonb_safe(row.get("state")) else None
        created, updated = row.get("created_at"), row.get("updated_at")
        if "metadata" in row and metadata == {}:
            metadata = row["metadata"] if jsonb_safe(row["metadata"]) else None
    elif isinstance(old, dict):  # the same, as an earlier praisonmem kept it (inside metadata)
        name = old.get("name")
        if isinstance(old.get("state"), dict):
            state = {**old["state"], **(state or {})}
        created, updated = old.get("created_at", created), old.get("updated_at", updated)
    return {"user_id": doc.get("user_id") if ok_col(doc.get("user_id")) else None,
            "agent_id": doc.get("agent_name") if ok_col(doc.get("agent_name")) else None,
            "name": name if ok_col(name) else None, "metadata": metadata,
            "state": state, "created_at": _time(created), "updated_at": _time(updated)}


def _time(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


# ---------------------------------------------------------------- rows -> document

def message_from_row(r: dict[str, Any]) -> dict[str, Any]:
    md = r["metadata"] if isinstance(r["metadata"], dict) else {}
    md = {k: v for k, v in md.items() if k != RESERVED}
    m: dict[str, Any] = {"role": r["role"], "content": r["content"], "timestamp": r["created_at"], "metadata": md}
    if r["tool_calls"]:
        m["tool_calls"] = r["tool_calls"]
    if r["tool_call_id"] is not None:
        m["tool_call_id"] = r["tool_call_id"]
    return m


def _loaded(text: Any) -> dict[str, Any] | None:
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def envelope(srow: dict[str, Any], extras: dict[str, tuple[int, str]] | None = None
             ) -> tuple[dict[str, Any] | None, bool]:
    """The session's layout (from the side table, else where an earlier praisonmem kept it: ``state``) and
    whether it is the earlier kind. One made for an earlier session of the same id (the library deleted it,
    its side rows stayed, and made a new one) does not count."""
    side = _loaded((extras or {}).get("", (0, None))[1])
    if side is not None and isinstance(side.get("skeleton"), str):
        return (side, False) if side.get("created_at") == srow.get("created_at") else (None, False)
    state = srow.get("state")
    env = state.get(RESERVED) if isinstance(state, dict) else None
    return (env, True) if isinstance(env, dict) and isinstance(env.get("skeleton"), str) else (None, False)


def rows_to_doc(session_id: str, srow: dict[str, Any], mrows: list[dict[str, Any]],
                extras: dict[str, tuple[int, str]] | None = None, *, text_limit: int | None = None
                ) -> tuple[str, bool]:
    """The document's text and whether it changed in the store since praisonmem wrote it (``drift``);
    ``mrows`` in ``created_at, id`` order, ``extras`` the session's side-table rows by message id."""
    extras = extras or {}
    env, legacy = envelope(srow, extras)
    if env is None:
        return foreign_doc(session_id, srow, mrows), False
    skel = json.loads(env["skeleton"])
    by_id = {r["id"]: r for r in mrows}
    drift = False
    current = {k: srow[k] for k in ("user_id", "agent_id", "name", "metadata", "created_at", "updated_at")}
    current["state"] = ({k: v for k, v in srow["state"].items() if k != RESERVED}
                        if legacy and isinstance(srow["state"], dict) else srow["state"])
    if current != project_session(skel, legacy=legacy):
        drift = True
        skel["user_id"], skel["agent_name"] = srow["user_id"], srow["agent_id"]
        if isinstance(srow["metadata"], dict):
            skel["metadata"] = srow["metadata"]
    used: set[str] = set()
    for key in ("messages", "archived_messages"):
        if not isinstance(skel.get(key), list):
            continue
        out = []
        for e in skel[key]:
            if not (isinstance(e, dict) and list(e) == ["$"]):
                out.append(e)
                continue
            r = by_id.get(e["$"])
            if r is None:
                drift = True  # deleted by someone else
                continue
            used.add(r["id"])
            env_m = _loaded(extras[r["id"]][1]) if r["id"] in extras else None
            if env_m is None and isinstance(r["metadata"], dict) and isinstance(r["metadata"].get(RESERVED), dict):
                env_m = r["metadata"][RESERVED]  # an earlier praisonmem's, inside the row
            if isinstance(env_m, dict) and isinstance(env_m.get("msg"), str):
                m = json.loads(env_m["msg"])
                again = project_message(m, r["created_at"], text_limit)
                have = {k: r[k] for k in again}
                if isinstance(have["metadata"], dict):
                    have["metadata"] = {k: v for k, v in have["metadata"].items() if k != RESERVED}
                if have != again:
                    drift, m = True, message_from_row(r)
            else:
                m = message_from_row(r)
            out.append(m)
        skel[key] = out
    extra = [r for r in mrows if r["id"] not in used]
    if extra:  # appended by the real store after the migration
        drift = True
        if not isinstance(skel.get("messages"), list):
            skel["messages"] = []
        skel["messages"].extend(message_from_row(r) for r in extra)
    if drift:
        last = max([srow["updated_at"] or 0.0] + [r["created_at"] or 0.0 for r in mrows])
        if epoch_iso(last) and (iso_epoch(skel.get("updated_at")) or 0.0) < last:
            skel["updated_at"] = epoch_iso(last)
        return dumps_style(skel, "indent2"), True
    if env.get("style") == "verbatim" and isinstance(env.get("verbatim"), str):
        return json.loads(env["verbatim"]), False
    return dumps_style(skel, env.get("style", "indent2")), False


def foreign_doc(session_id: str, srow: dict[str, Any], mrows: list[dict[str, Any]]) -> str:
    """A session the real store wrote (no layout kept beside it), as a document in the library's layout; what
    the document has no field for goes under its top-level ``_praisonmem`` (see the module docstring)."""
    times = [r["created_at"] for r in mrows if isinstance(r["created_at"], (int, float))]
    first = min(times) if times else None
    created = epoch_iso(srow["created_at"]) or epoch_iso(first) or epoch_iso(0.0)
    # the row's updated_at, as the library's list_sessions (and session list) show it; the newest turn without one
    last = srow["updated_at"] if epoch_iso(srow["updated_at"]) else max(times or [0.0])
    metadata = srow["metadata"] if isinstance(srow["metadata"], dict) else {}
    metadata = {k: v for k, v in metadata.items() if k != RESERVED}
    row: dict[str, Any] = {"name": srow["name"], "state": srow["state"], "created_at": srow["created_at"],
                           "updated_at": srow["updated_at"]}
    if not isinstance(srow["metadata"], dict):
        row["metadata"] = srow["metadata"]
    cols: dict[str, dict[str, Any]] = {}
    for r in mrows:
        c = {}
        if not isinstance(r["metadata"], dict):
            c["metadata"] = r["metadata"]
        if r["tool_calls"] is not None and not (isinstance(r["tool_calls"], list) and r["tool_calls"]):
            c["tool_calls"] = r["tool_calls"]
        if c:
            cols[r["id"]] = c
    info: dict[str, Any] = {"v": 1, "row": row, "rows": [[r["id"], r["created_at"]] for r in mrows]}
    if cols:
        info["cols"] = cols
    doc: dict[str, Any] = {
        "session_id": session_id,
        "messages": [message_from_row(r) for r in mrows],
        "created_at": created, "updated_at": epoch_iso(last) or created,
        "agent_name": srow["agent_id"], "user_id": srow["user_id"], "metadata": metadata,
        "gateway_session_id": None, "agent_id": None, "runtime_state": {}, "archived_messages": []}
    for key in MIRRORED:
        if key in metadata:
            doc[key] = metadata[key]
    if isinstance(srow["name"], str) and srow["name"]:
        doc["title"] = srow["name"]  # what session show/list call the title (after metadata.title), as in SQL
    doc[RESERVED] = info
    return dumps_style(doc, "indent2")
