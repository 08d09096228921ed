"""``session search``'s pre-check of a session file's bytes (:mod:`praisonmem.core.sessions.sieve`) and its cut as it
folds (:class:`~praisonmem.core.sessions.search.SearchFold`: the newest sessions first, older ones sending only their
count) change no result: the same as a reference that reads every file in full, scores every message and sorts and
cuts once at the end (``full_search``, with its own ``old_session_hits``), on homes full of what could make a byte
pre-check wrong: JSON escapes of every kind (``\\uXXXX`` spelling ASCII letters, ``\\/``, ``\\n``, quotes),
characters whose lowering is ASCII (U+0130, the Kelvin sign) or depends on its neighbours (final sigma), encrypted
messages (with and without the key), gateway snapshots with structured contents, REPL/TUI files (one with malformed
``messages``, one whose keys are escaped), project stores and unreadable files.
"""

from __future__ import annotations

import json
import random
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from praisonmem.core.io import jsonfile, parallel
from praisonmem.core.paths import resolve
from praisonmem.core.sessions import crypto, search as new
from praisonmem.core.sessions import sieve as searchsieve
from praisonmem.core.sessions.documents import gateway_chat, is_encrypted
from praisonmem.core.sessions.stores import Each, Scanned
from praisonmem.core.sessions.stores.locate import open_store

KEY = crypto.Key("YWRvcHQtdGVzdC1rZXktMzItYnl0ZXMtbG9uZy4uLi4=", "test")

# ---------------------------------------------------------------- every file read in full (reference)


def full_search(paths, query, *, limit=20, store=None, key=None):
    needle = query.strip().lower()
    terms = [t for t in needle.split() if t]
    found = open_store(paths, store).scan(Each(partial(old_session_hits, needle=needle, terms=terms, key=key)))
    hits, unreadable = [], []
    opaque = opaque_sessions = 0
    for record in found:
        if "error" in record:
            unreadable.append((record["file"], record["error"]))
        elif "opaque" in record:
            opaque, opaque_sessions = opaque + record["opaque"], opaque_sessions + 1
        else:
            hits.append(record["hit"])
    total = len(hits)
    new._order(hits)
    if limit:
        del hits[limit:]
    return new.SearchResult([new.hit_record(hit, needle, terms) for hit in hits], total, unreadable, opaque,
                            opaque_sessions)


def old_session_hits(item: Scanned, *, needle: str, terms: list[str], key=None) -> list[Any]:
    if item.doc is None:
        assert item.error is not None
        return [{"file": item.where, "error": item.error.message}]
    doc = item.doc
    cipher = key.cipher() if key else None
    opaque = 0
    texts = []
    gateway = False
    for section, field in ((0, "archived_messages"), (1, "messages")):
        messages = doc.get(field)
        if type(messages) is not list:
            continue
        for index, message in enumerate(messages):
            if type(message) is not dict:
                continue
            content = message.get("content")
            if is_encrypted(content):
                if cipher is None:
                    opaque += 1
                    continue
                content = cipher.decrypt(content, f"session '{item.session_id}'")
            if type(content) is str and content:
                texts.append((section, index, message, content))
            if not gateway and message.get("role") == "system" and type(message.get("metadata")) is dict:
                gateway = True
    if gateway:
        for index, message in enumerate(gateway_chat(doc) or []):
            content = message.get("content")
            if is_encrypted(content):
                if cipher is None:
                    opaque += 1
                    continue
                content = cipher.decrypt(content, f"session '{item.session_id}'")
            if isinstance(content, dict):
                content = jsonfile.dumps(content, compact=True)
            if isinstance(content, str) and content:
                texts.append((2, index, message, content))
    tail: list[Any] = [{"file": str(item.where), "opaque": opaque}] if opaque else []
    if not texts:
        return tail
    lowered_all = "\x00".join(t[3] for t in texts).lower()
    if not any(term in lowered_all for term in terms):
        return tail
    parts = lowered_all.split("\x00")
    if len(parts) != len(texts):
        parts = [t[3].lower() for t in texts]
    updated = doc.get("updated_at")
    when = updated if isinstance(updated, str) else ""
    sid, where, label = item.session_id, str(item.where), item.store
    found: list[Any] = []
    for (section, index, message, content), lowered in zip(texts, parts):
        points = 2.0 if needle in lowered else 0.0
        for term in terms:
            if term in lowered:
                points += 1.0
        if points:
            found.append((points, when, section, index, content, message.get("role"), message.get("timestamp"),
                          updated, sid, where, label))
    return [{"hit": hit} for hit in found] + tail


# ---------------------------------------------------------------- homes full of traps for a byte check

WORDS = ["paris", "Paris", "PARIS", "weather", "paris weather", "zebra", "ZEBRA", "ΣΑΣ", "όσος", "Σ", "İstanbul",
         "\u212aelvin", "kelvin", "straße", "ﬁne", "café", "日本", "😀", "a/b", "http://x", "\"quoted\"", "back\\slash",
         "line\nbreak", "tab\there", "bell\x07", "nul\x00x", "system", "«praisonai:enc:v1:»", "1.5}", "{\"t\"", "ǅ",
         "x\u0307", "ı", "I"]
QUERIES = ["paris weather", "zebra", "k", "i", "\u0307", "σ", "ς", "日本", "😀", "/", "a/b", "\"", "\\", "system",
           "praisonai:enc:v1:", "1.5}", ":1.5", "100000.0}", "text", "ǆ", "ﬁ", "fi", "café zebra", "pari", "zzz", "enc", "\x07", "bell"]
TIMES = ["2026-01-01T10:00:00", "2026-01-02T10:00:00", None, 17]


def text(rng: random.Random) -> str:
    return rng.choice([" ", "  ", "\n"]).join(rng.choice(WORDS) for _ in range(rng.randint(1, 6)))


def message(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.03:
        return rng.choice(["not a message", 5, None])
    if roll < 0.08:
        return {"role": "user", "content": rng.choice([None, 3, ["paris"], {"text": "zebra"}, ""])}
    body: Any = text(rng)
    if roll < 0.14:
        body = KEY.cipher().encrypt(body)
    return {"role": rng.choice(["user", "assistant", "tool"]), "content": body,
            "timestamp": rng.choice([1700000000.0, "2026-01-01", None])}


def gateway_messages(rng: random.Random) -> list[dict[str, Any]]:
    chat = [{"message_id": f"m{i}", "sender_id": rng.choice(["agent", "u1"]),
             "content": rng.choice([text(rng), {"type": "text", "text": text(rng), "n": 1.5, "e": 1e5}]),
             "timestamp": 1700000000 + i} for i in range(rng.randint(1, 3))]
    return [{"role": "system", "content": "Session initialized", "metadata": {
        "session_data": {"agent_id": "agent", "messages": chat[:upto]}}} for upto in range(1, len(chat) + 1)]


def document(rng: random.Random, sid: str) -> dict[str, Any]:
    doc: dict[str, Any] = {"session_id": sid, "messages": [message(rng) for _ in range(rng.randint(0, 6))]}
    if rng.random() < 0.3:
        doc["archived_messages"] = [message(rng) for _ in range(rng.randint(1, 4))]
    if rng.random() < 0.1:
        doc["messages"] += gateway_messages(rng)
    if rng.random() < 0.1:
        doc["metadata"] = {"title": text(rng)}
    doc["updated_at"] = rng.choice(TIMES)
    return doc


SAFE_LETTERS = "pwzkioh"  # in no JSON literal (true, false, null) nor number: \u-escaping them anywhere is valid


def encoded(rng: random.Random, doc: Any) -> str:
    """``doc`` as JSON, spelt in one of the many ways a writer may spell it."""
    raw = json.dumps(doc, indent=rng.choice([2, None]), ensure_ascii=rng.random() < 0.3)
    if rng.random() < 0.2:
        raw = raw.replace("/", "\\/")
    if rng.random() < 0.2:
        for letter in rng.sample(SAFE_LETTERS + SAFE_LETTERS.upper(), 3):
            raw = raw.replace(letter, f"\\u{ord(letter):04x}")
    return raw


def trap_home(root: Path, count: int, seed: int) -> Path:
    rng = random.Random(seed)
    sessions = root / "sessions"
    project = sessions / "projects" / "8ccfb8a2"
    project.mkdir(parents=True)
    for i in range(count):
        (sessions / f"s{i:04d}.json").write_text(encoded(rng, document(rng, f"s{i:04d}")), encoding="utf-8")
    for i in range(count // 10):
        (project / f"p{i:03d}.json").write_text(encoded(rng, document(rng, f"p{i:03d}")), encoding="utf-8")
    for i in range(count // 10):  # REPL/TUI sessions (written with ASCII escapes, as the TUI writes them)
        doc = {"session_id": f"u{i:03d}", "workspace": "/w", "current_model": "m", "updated_at": rng.choice(TIMES),
               "messages": [message(rng) for _ in range(rng.randint(0, 5))]}
        (sessions / f"u{i:03d}.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")
    (sessions / "u-bad.json").write_text(json.dumps({"session_id": "u-bad", "workspace": "/w", "current_model": "m",
                                                      "messages": 3}), encoding="utf-8")
    escaped = json.dumps({"session_id": "u-esc", "workspace": "/w", "current_model": "m",
                          "messages": [{"role": "user", "content": "paris zebra k i"}]})
    (sessions / "u-esc.json").write_text(escaped.replace('"current_model"', '"\\u0063urrent_model"'), encoding="utf-8")
    (sessions / "broken.json").write_text('{"messages": [', encoding="utf-8")
    (sessions / "wrong.json").write_text('{"messages": 3}', encoding="utf-8")
    (sessions / "list.json").write_text('["zebra"]', encoding="utf-8")
    (sessions / "latin1.json").write_bytes(b'{"messages": [{"role": "user", "content": "caf\xe9 zebra"}]}')
    for name, number in (("long-int", "1" * 25), ("longer-int", "1" * 400), ("too-long-int", "1" * 5000),
                         ("nan", "NaN"), ("huge", "1e999")):  # what orjson and the standard library read apart
        (sessions / f"{name}.json").write_text(f'{{"session_id": "{name}", "n": {number}, "messages": '
                                               f'[{{"role": "user", "content": "paris", "timestamp": {number}}}]}}',
                                               encoding="utf-8")
    deep = "[" * 995 + "]" * 995  # deeper than the standard library reads, not than orjson
    (sessions / "deep.json").write_text(f'{{"messages": [], "x": {deep}}}', encoding="utf-8")
    return root


def same(paths, query, limit, store=None, key=None):
    want = full_search(paths, query, limit=limit, store=store, key=key)
    got = new.search(paths, query, limit=limit, store=store, key=key)
    assert (got.total, got.opaque, got.opaque_sessions) == (want.total, want.opaque, want.opaque_sessions), query
    assert got.unreadable == want.unreadable, (query, limit)
    assert json.dumps(got.hits, ensure_ascii=False) == json.dumps(want.hits, ensure_ascii=False), (query, limit)
    return got


@pytest.mark.parametrize("pool", [False, True], ids=["serial", "pool"])
def test_a_home_full_of_traps_gives_exactly_the_old_results(tmp_path, monkeypatch, pool):
    home = trap_home(tmp_path / "home", 200, seed=21)
    if pool:
        monkeypatch.setattr(parallel, "MIN_ITEMS", 1)
        monkeypatch.setattr(parallel, "workers_for", lambda count: 2)
        monkeypatch.setattr(parallel, "CHUNKS_PER_WORKER", 9)
    paths = resolve(home, env={})
    totals: dict[str, int] = {}
    stores = set()
    for query in QUERIES:
        for limit, key in ((1, None), (3, KEY), (20, None), (10_000, None), (10_000, KEY)):
            got = same(paths, query, limit, key=key)
            totals[query] = max(totals.get(query, 0), got.total)
            stores |= {h["store"] for h in got.hits}
        for store in ("json", "unified", "project:8ccfb8a2"):
            same(paths, query, 20, store=store)
    assert stores == {"json", "unified", "project:8ccfb8a2"}
    assert totals["zzz"] == 0 and all(totals[q] for q in ("zebra", "k", "i", "\u0307", "σ", "/", "1.5}", ":1.5", "\x07"))
    unreadable = new.search(paths, "zebra").unreadable
    assert [Path(f).name for f, _ in unreadable].count("u-bad.json") == 1  # read once, reported once
    assert {h["session_id"]: h["store"] for h in new.search(paths, "paris zebra", limit=0).hits}["u-esc"] == "unified"


def test_the_fixture_homes_give_exactly_the_old_results(fixture_home, gateway_home):
    for home in (fixture_home, gateway_home.home):
        paths = resolve(home, env={})
        for query in ("hello", "the", "a", "paris", "session", "alfama", "e", "zzz", "system", "/"):
            for limit in (2, 20):
                same(paths, query, limit)


def test_each_session_file_is_read_once(tmp_path, monkeypatch):
    # before: the REPL/TUI store's own scan read every file of sessions/ again, after the JSON store's
    home = trap_home(tmp_path / "home", 60, seed=3)
    reads: list[str] = []
    read_bytes = jsonfile.read_bytes
    monkeypatch.setattr(jsonfile, "read_bytes", lambda path: reads.append(str(path)) or read_bytes(path))
    new.search(resolve(home, env={}), "paris", limit=5)
    files = [str(p) for p in (home / "sessions").rglob("*.json")]
    assert sorted(reads) == sorted(files)


def test_a_file_whose_bytes_rule_out_a_hit_is_parsed_but_not_searched(tmp_path, monkeypatch):
    sessions = tmp_path / "home" / "sessions"
    sessions.mkdir(parents=True)
    for i in range(20):
        doc = {"session_id": f"s{i}", "messages": [{"role": "user", "content": f"paris {i} Ünïcode"}]}
        (sessions / f"s{i:02d}.json").write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    (sessions / "zz-broken.json").write_text('{"messages": [', encoding="utf-8")
    searched: list[str | None] = []
    hits = new.session_hits
    monkeypatch.setattr(new, "session_hits", lambda item, **kw: searched.append(item.session_id) or hits(item, **kw))
    result = new.search(resolve(tmp_path / "home", env={}), "zebra", limit=5)
    assert (result.total, searched) == (0, [None])  # only the unreadable file, to report it
    broken = str(sessions / "zz-broken.json")
    assert result.unreadable == [(broken, f"{broken}: invalid JSON at line 1 column 15: expecting value")]
    searched.clear()
    assert new.search(resolve(tmp_path / "home", env={}), "PARIS 7", limit=5).total == 20
    assert len(searched) == 21


def test_the_characters_lowering_to_ascii_are_all_found():
    want = sorted(chr(i).encode() for i in range(0x80, 0x110000)
                  if not 0xD800 <= i < 0xE000 and any(ord(c) < 128 for c in chr(i).lower()))
    assert list(searchsieve.ascii_lowering()) == want and len(want) >= 2


def test_the_shape_decoder_accepts_only_what_the_standard_library_reads_alike():
    from praisonmem.core.io import fastjson

    cases = ['{"a": [1, {"b": "c"}]}', '{"n": ' + "1" * 25 + "}", '{"n": ' + "1" * 400 + "}",
             '{"n": ' + "1" * 5000 + "}", '{"n": NaN}', '{"n": 1e999}', "[" * 995 + "]" * 995, '"\\ud800"',
             '{"a": 1, "a": 2}', "[1,]", "\ufeff{}"]
    for text in cases:
        shape = fastjson.loads_shape(text.encode("utf-8"))
        try:
            want = json.loads(text)
        except (ValueError, RecursionError):
            assert shape is fastjson.REFUSED, text[:20]
            continue
        if shape is not fastjson.REFUSED:  # the same containers, keys and strings; numbers may differ
            assert json.dumps(shape, default=str).replace("1.1111111111111111e+24", "1" * 25) == json.dumps(want)
    assert fastjson.loads_shape(b"[" * 995 + b"]" * 995) is fastjson.REFUSED
    assert fastjson.loads_shape(('{"n": ' + "1" * 25 + "}").encode()) == {"n": float("1" * 25)}


def test_no_sieve_for_words_an_escape_could_spell():
    for word in ("a/b", "\"", "\\", "\x08", "σ", "xς"):
        assert searchsieve.sieve_for([word]) is None
    assert searchsieve.sieve_for(["paris", "日本"]) is not None


# ---------------------------------------------------------------- the pre-check is exact (property)

ALPHABET = "aAkKzZpPiIıİ\u212aΣσςé日😀/\\\"\n\t\x08\x07\x00 :{}1.5ǅ\u0307ß"
contents = st.one_of(st.text(alphabet=ALPHABET, max_size=30), st.sampled_from(["system", "praisonai:enc:v1:x"]),
                     st.none(), st.integers(), st.dictionaries(st.text(alphabet=ALPHABET, max_size=5),
                                                               st.text(alphabet=ALPHABET, max_size=10), max_size=2))
messages = st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "system", "assistant"]),
                                           "content": contents}), max_size=4)


WORD_CHARS = "aAkKzZpPiIıİ\u212aΣé日😀:{}1.5ǅ\u0307ß"  # none an escape spells: the sieve decides
words_ = st.text(alphabet=WORD_CHARS, min_size=1, max_size=4) | st.text(alphabet=ALPHABET, min_size=1, max_size=4)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(active=messages, archived=messages, words=st.lists(words_, min_size=1, max_size=3),
       seed=st.integers(0, 2**32))
def test_a_file_the_sieve_rules_out_holds_no_hit(active, archived, words, seed):
    rng = random.Random(seed)
    needle = " ".join(words).strip().lower()
    terms = needle.split()
    sieve = searchsieve.sieve_for(terms)
    if sieve is None or not terms:
        return
    doc = {"session_id": "s", "messages": active, "archived_messages": archived}
    if rng.random() < 0.3:  # a gateway snapshot around the active messages
        doc["messages"] = [{"role": "system", "content": "x", "metadata": {"session_data": {
            "agent_id": "a", "messages": [{"sender_id": "a", **m} for m in active]}}}]
    raw = encoded(rng, doc).encode("utf-8")
    if sieve.may_hit(raw):
        return
    parsed = jsonfile.parse_object(raw, "x.json")
    for key in (None, KEY):
        assert old_session_hits(Scanned("x.json", "s", parsed, None, store="json"), needle=needle, terms=terms,
                                key=key) == []


@pytest.mark.parametrize("pool", [False, True], ids=["serial", "pool"])
def test_cutting_every_few_results_while_searching_backwards_changes_nothing(tmp_path, monkeypatch, pool):
    monkeypatch.setattr(new, "CUT_AT", 5)
    if pool:
        monkeypatch.setattr(parallel, "MIN_ITEMS", 1)
        monkeypatch.setattr(parallel, "workers_for", lambda count: 2)
        monkeypatch.setattr(parallel, "CHUNKS_PER_WORKER", 3)
    paths = resolve(trap_home(tmp_path / "home", 120, seed=8), env={})
    for query in ("paris weather", "zebra", "k", "σ", "日本", "zzz"):
        for limit in (1, 2, 7, 20, 500):
            same(paths, query, limit)


def growing_home(root: Path, count: int) -> Path:
    """Sessions whose names and updated_at grow together (as the library's timestamps make them), each with
    five hits of the best score."""
    sessions = root / "sessions"
    sessions.mkdir(parents=True)
    for i in range(count):
        doc = {"session_id": f"g{i:04d}", "updated_at": f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}",
               "messages": [{"role": "user", "content": f"paris weather {j}"} for j in range(5)]}
        (sessions / f"g{i:04d}.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


def test_sessions_older_than_the_shown_hits_send_only_their_count(tmp_path, monkeypatch):
    # before: every one of the 1,500 hits was built as a tuple and cut afterwards
    paths = resolve(growing_home(tmp_path / "home", 300), env={})
    built: list[int] = []
    hits = new.session_hits

    def counting(item, **kw):
        found = hits(item, **kw)
        built.append(len(found.hits))
        return found

    monkeypatch.setattr(new, "session_hits", counting)
    result = new.search(paths, "Paris Weather", limit=5)
    assert result.total == 1500 and len(built) == 300 and sum(built) <= 80
    assert [(h["session_id"], h["index"]) for h in result.hits] == [("g0299", i) for i in range(5)]
    monkeypatch.setattr(new, "session_hits", hits)
    same(paths, "paris weather", 5)
