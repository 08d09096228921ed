"""``session search`` keeps only what it shows and shows exactly what it showed before.

The reference below is the search as it was before (commit bb94b9c: every hit's snippet and per-character
highlights built in the workers, every hit sent back, sorted, then cut), kept verbatim; the new one must
give the very same result (hits, their order, total, unreadable files) on the fixture homes and on
generated homes full of ties, in the serial path and through the fork pool, for every limit.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from praisonmem.core.io import jsonfile, parallel
from praisonmem.core.paths import resolve
from praisonmem.core.sessions import search as new
from praisonmem.core.sessions.documents import gateway_chat, is_encrypted, messages_of
from praisonmem.core.sessions.stores import Each, Scanned
from praisonmem.core.sessions.stores.locate import open_store

# ---------------------------------------------------------------- the search before (reference)

SECTIONS = ("archived", "active", "gateway")


def old_search(paths, query, *, limit=20, store=None):
    needle = query.strip().lower()
    terms = [t for t in needle.split() if t]
    hits, unreadable = [], []
    for item in open_store(paths, store).scan(Each(partial(old_session_hits, needle=needle, terms=terms))):
        if "error" in item:
            unreadable.append((item["file"], item["error"]))
        else:
            hits.append(item)
    hits.sort(key=lambda h: (SECTIONS.index(h["section"]), h["index"]))
    hits.sort(key=lambda h: h["updated_at"] if isinstance(h["updated_at"], str) else "", reverse=True)
    hits.sort(key=lambda h: h["score"], reverse=True)
    total = len(hits)
    return new.SearchResult(hits[:limit] if limit else hits, total, unreadable)


def old_score(content, needle, terms):
    lowered = content.lower()
    points = 2.0 if needle in lowered else 0.0
    return points + sum(1.0 for term in terms if term in lowered)


def old_session_hits(item: Scanned, *, needle, terms):
    if item.doc is None:
        return [{"file": item.where, "error": item.error.message}]
    doc, path, sid = item.doc, item.where, item.session_id
    found = []
    sections = (("archived", messages_of(doc, "archived_messages")), ("active", messages_of(doc)),
                ("gateway", gateway_chat(doc) or []))
    for section, messages in sections:
        for index, message in enumerate(messages):
            if not isinstance(message, dict):
                continue
            content = message.get("content")
            if section == "gateway" and isinstance(content, dict):
                content = jsonfile.dumps(content, compact=True)
            if not isinstance(content, str) or not content or is_encrypted(content):
                continue
            points = old_score(content, needle, terms)
            if not points:
                continue
            snippet, spans = old_snippet_of(content, needle, terms)
            found.append({"session_id": sid, "file": str(path), "store": item.store, "index": index,
                          "archived": section == "archived", "section": section, "role": message.get("role"),
                          "score": points, "timestamp": message.get("timestamp"), "updated_at": doc.get("updated_at"),
                          "snippet": snippet, "highlights": spans})
    return found


def old_snippet_of(content, needle, terms, width=120):
    text = " ".join(content.split())
    lowered = text.lower()
    same_length = len(lowered) == len(text)
    pos = lowered.find(needle)
    if pos < 0:
        pos = min((p for p in (lowered.find(t) for t in terms) if p >= 0), default=0)
    start = max(0, pos - width // 2) if len(text) > width else 0
    end = min(len(text), start + width)
    snippet = text[start:end]
    spans = old_spans(lowered[start:end], [needle, *terms]) if same_length else []
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(text) else ""
    shift = len(prefix)
    return prefix + snippet + suffix, [[s + shift, e + shift] for s, e in spans]


def old_spans(lowered, needles):
    marks = [False] * len(lowered)
    for needle in needles:
        at = lowered.find(needle)
        while needle and at >= 0:
            for i in range(at, at + len(needle)):
                marks[i] = True
            at = lowered.find(needle, at + len(needle))
    spans = []
    for i, marked in enumerate(marks):
        if marked and (not spans or spans[-1][1] != i):
            spans.append([i, i + 1])
        elif marked:
            spans[-1][1] = i + 1
    return spans


# ---------------------------------------------------------------- generated homes full of ties

WORDS = ["paris", "Paris", "PARIS", "weather", "WEATHER", "paris weather", "Paris  Weather", "parisparis",
         "weatherweather", "ΣΑΣ", "όσος", "Σ", "İstanbul", "\u212a", "kelvin", "straße", "STRASSE", "ﬁne", "café",
         "日本", "x\x00paris", "\"quoted\"", "a:b", "zebra?", "lisbon", "hotel", "\t\n"]
TIMES = ["2026-01-01T10:00:00", "2026-01-02T10:00:00", "2026-01-02T10:00:00.5", None, 17, ""]
QUERIES = ["paris weather", "PARIS", "weather", "σ", "ς", "i", "k", "ß", "ss", "  paris  ", "café", "日本",
           "\"", "a:b", "zzz", "e", "paris weather paris", "fi", "\u0307"]


def content(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.05:
        return rng.choice([None, 3, ["paris"], {"text": "paris"}, ""])
    if roll < 0.08:
        return "praisonai:enc:v1:paris weather"
    words = [rng.choice(WORDS) for _ in range(rng.randint(1, 12))]
    if rng.random() < 0.15:  # long enough for a cut snippet, the match far in
        words = ["filler"] * rng.randint(20, 60) + words + ["tail"] * rng.randint(0, 40)
    return rng.choice([" ", "  ", "\n"]).join(words)


def message(rng: random.Random) -> Any:
    if rng.random() < 0.03:
        return rng.choice(["not a message", 5, None])
    return {"role": rng.choice(["user", "assistant", "tool"]), "content": content(rng),
            "timestamp": rng.choice([1700000000.0, "2026-01-01", None])}


def gateway_messages(rng: random.Random) -> list[dict[str, Any]]:
    chat = [{"message_id": f"m{i}", "sender_id": rng.choice(["agent", "u1"]),
             "content": rng.choice([content(rng), {"type": "text", "text": content(rng), "n": 1.5}]),
             "timestamp": 1700000000 + i} for i in range(rng.randint(1, 4))]
    snapshots = []
    for upto in range(1, len(chat) + 1):
        snapshots.append({"role": "system", "content": "Session initialized", "metadata": {
            "session_data": {"agent_id": "agent", "messages": chat[:upto]}}})
    return snapshots


def document(rng: random.Random, sid: str) -> dict[str, Any]:
    doc: dict[str, Any] = {"session_id": sid, "messages": [message(rng) for _ in range(rng.randint(0, 8))]}
    if rng.random() < 0.3:
        doc["archived_messages"] = [message(rng) for _ in range(rng.randint(1, 5))]
    if rng.random() < 0.1:
        doc["messages"] += gateway_messages(rng)
    when = rng.choice(TIMES)
    if when != "":
        doc["updated_at"] = when
    return doc


def generated_home(root: Path, count: int, seed: int) -> Path:
    rng = random.Random(seed)
    sessions = root / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        doc = document(rng, f"s{i:04d}")
        (sessions / f"s{i:04d}.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    (sessions / "broken.json").write_text('{"messages": [', encoding="utf-8")
    (sessions / "wrong.json").write_text('{"messages": 3}', encoding="utf-8")
    return root


def same(paths, query, limit, store=None):
    want = old_search(paths, query, limit=limit, store=store)
    got = new.search(paths, query, limit=limit, store=store)
    assert got.total == want.total, (query, limit)
    assert got.unreadable == want.unreadable, (query, limit)
    assert got.hits == want.hits, (query, limit)
    # the bytes the command prints (--json): same keys in the same order, same float/int types
    assert json.dumps(got.hits, ensure_ascii=False) == json.dumps(want.hits, ensure_ascii=False)
    return got


@pytest.mark.parametrize("pool", [False, True], ids=["serial", "pool"])
def test_a_generated_home_gives_exactly_the_old_results(tmp_path, monkeypatch, pool):
    home = generated_home(tmp_path / "home", 300, seed=13)
    if pool:  # chunks of a few files each, so the cut runs in many workers' chunks and again on merging
        monkeypatch.setattr(parallel, "MIN_ITEMS", 1)
        monkeypatch.setattr(parallel, "workers_for", lambda count: 2)
        monkeypatch.setattr(parallel, "CHUNKS_PER_WORKER", 20)
    paths = resolve(home, env={})
    totals = {}
    for query in QUERIES:
        for limit in (0, 1, 3, 20, 10_000):
            totals[query] = same(paths, query, limit).total
    assert totals["paris weather"] > 200 and totals["zzz"] == 0  # the queries do find things (and not)
    assert totals["σ"] > 0 and totals["k"] > 0 and totals["\u0307"] > 0  # final sigma, Kelvin, İ's dot
    hits = new.search(paths, "paris weather", limit=0).hits
    assert any((a["score"], a["updated_at"]) == (b["score"], b["updated_at"]) and a["session_id"] != b["session_id"]
               for a, b in zip(hits, hits[1:]))  # ties across sessions, which only scan order breaks


def test_the_cut_inside_a_chunk_keeps_scan_order_among_ties(tmp_path, monkeypatch):
    monkeypatch.setattr(new, "CUT_AT", 5)  # cut after every few hits
    rng = random.Random(7)
    sessions = tmp_path / "home" / "sessions"
    sessions.mkdir(parents=True)
    for i in range(60):  # every hit ties with every other: same score, same updated_at, same place
        doc = {"session_id": f"t{i:03d}", "updated_at": "2026-01-01", "messages": [
            {"role": "user", "content": "paris"}, {"role": "user", "content": rng.choice(["paris", "lisbon"])}]}
        (sessions / f"t{i:03d}.json").write_text(json.dumps(doc), encoding="utf-8")
    paths = resolve(tmp_path / "home", env={})
    for limit in (0, 1, 7, 20, 59, 61, 200):
        got = same(paths, "paris", limit)
    assert [h["session_id"] for h in got.hits[:3]] == ["t000", "t001", "t002"]


def test_one_lowering_per_session_is_each_content_lowered():
    # what session_hits relies on: lowering the NUL-joined contents gives each content lowered
    tricky = ["ΑΣ", "Σ", "ΣΑ", "Α.Σ", "Α'Σ", "ΑΣ'", "İ", "\u212a", "ß", "ﬁ", "Ǆ", "ᾼ", "ΑΣ\u0301", "\u0301Σ", "x"]
    rng = random.Random(1)
    for _ in range(3000):
        parts = ["".join(rng.choice(tricky) for _ in range(rng.randint(1, 4))) for _ in range(rng.randint(1, 4))]
        assert "\x00".join(parts).lower().split("\x00") == [p.lower() for p in parts], parts


def test_highlights_are_the_merged_runs_of_the_per_character_marks():
    rng = random.Random(3)
    for _ in range(3000):
        text = "".join(rng.choice("ab a") for _ in range(rng.randint(0, 30)))
        needles = ["".join(rng.choice("ab ") for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(1, 3))]
        assert new._spans(text, needles) == old_spans(text, needles), (text, needles)


def test_the_fixture_homes_give_exactly_the_old_results(fixture_home, gateway_home):
    for home in (fixture_home, gateway_home.home):
        paths = resolve(home, env={})
        for query in ("hello", "the", "a", "paris", "session", "alfama", "e", "zzz"):
            for limit in (0, 2, 20):
                same(paths, query, limit)


def test_sessions_db_hits_and_json_hits_merge_as_before(gateway_home, monkeypatch):
    home = gateway_home.home
    generated_home(home, 120, seed=5)  # JSON files beside the real sessions.db
    db = home / "sessions" / "sessions.db"
    rng = random.Random(9)
    with sqlite3.connect(db) as conn:  # rows that tie with the JSON files' hits
        for i in range(40):
            doc = document(rng, f"db{i:03d}")
            conn.execute("INSERT INTO sessions (session_id, data, agent_name, gateway_session_id, agent_id, "
                         "updated_at) VALUES (?, ?, NULL, NULL, NULL, ?)",
                         (f"db{i:03d}", json.dumps(doc), doc.get("updated_at") if isinstance(doc.get("updated_at"), str) else None))
    conn.close()
    monkeypatch.setattr(parallel, "MIN_ITEMS", 1)
    monkeypatch.setattr(parallel, "workers_for", lambda count: 2)
    paths = resolve(home, env={})
    stores_hit = set()
    for query in ("paris weather", "σ", "weather", "k", "zzz"):
        for limit in (0, 1, 5, 20, 1000):
            got = same(paths, query, limit)
            stores_hit |= {h["store"] for h in got.hits}
        for store in ("json", "sessions.db"):
            same(paths, query, 20, store=store)
    assert stores_hit == {"json", "sessions.db", "project:8ccfb8a2", "unified", "legacy-run"}  # every store of the home
