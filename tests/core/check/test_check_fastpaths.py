"""The shortcuts ``check`` takes over the 10k home find exactly what the step-by-step rules find:
the C-level pass that clears a session's plain turns, the lock sidecars told from the directory listing, and
the name-only history finder that reads only ``history_*`` files."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from praisonmem.core.check import rules, walk
from praisonmem.core.paths import resolve
from praisonmem.core.sessions import adopt, is_encrypted, legacy_ids, open_store
from praisonmem.core.sessions import documents as session_documents
from praisonmem.core.sessions.stores import jsondir
from praisonmem.core.sessions.stores.home import refs_named
from tests.core.check.test_check_pool import SerialChecker

ABSENT = object()
CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
SEALED = "praisonai:enc:v1:abc"
FIELDS = {
    "role": ["user", "assistant", "system", "tool", "bot", None, 1, ["user"], ABSENT],
    "content": ["hi", "", SEALED, None, 3, ["x"], ABSENT],
    "timestamp": [1, 1.5, 0, True, "noon", None, ABSENT],
    "metadata": [{}, {"partial": True}, {"partial": 1}, {"partial": False}, {"k": [1]}, None, [], "m", ABSENT],
    "tool_calls": [[CALL], [], None, SEALED, "s", [1], [{"id": "c2"}], 0, ABSENT],
    "tool_call_id": ["c1", "zz", None, 3, ABSENT],
    "extra": ["x", ABSENT],
}
PLAIN = {"role": "user", "content": "hi", "timestamp": 1.5, "metadata": {}}


@st.composite
def message(draw, odd):
    if draw(st.floats(0, 1)) < odd / 4:
        return draw(st.sampled_from(["text", 1, None, [], True]))
    out = {}
    for key, values in FIELDS.items():
        value = draw(st.sampled_from(values)) if draw(st.floats(0, 1)) < odd else PLAIN.get(key, ABSENT)
        if value is not ABSENT:
            out[key] = value
    return out


@st.composite
def documents(draw):
    odd = draw(st.sampled_from([0.0, 0.02, 0.1, 0.4]))  # how often a field is not the plain one
    turns = st.lists(message(odd), max_size=8)
    doc = {"session_id": draw(st.sampled_from(["s", "s-1_a", "s/1", "", "-", "日本"])), "messages": draw(turns)}
    if draw(st.booleans()):
        doc["archived_messages"] = draw(turns)
    return doc


def findings(doc):
    found = []
    rules.session(json.loads(json.dumps(doc)), doc["session_id"] if len(doc["session_id"]) > 1 else "s",
                  lambda *f: found.append(f))
    return found


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=documents())
def test_the_plain_turn_shortcuts_find_what_the_turn_by_turn_rules_find(doc, monkeypatch):
    fast = findings(doc)
    with monkeypatch.context() as m:  # the rules as they were: every turn checked, every value looked at
        m.setattr(rules, "plain_turns", lambda messages: None)
        m.setattr(rules, "plain_message", lambda message: False)
        m.setattr(rules, "_has_tool_turns", lambda messages: True)
        m.setattr(session_documents, "_safe_stem", lambda session_id: False)
        m.setattr(rules, "_sealed", lambda messages, key: sum(1 for x in messages if is_encrypted(x.get(key))))
        slow = findings(doc)
    assert fast == slow


def test_plain_turns_are_cleared_and_odd_ones_are_not():
    plain = [{"role": "user", "content": "hi", "timestamp": 1.5, "metadata": {}},
             {"role": "assistant", "content": SEALED, "timestamp": 2}]
    assert rules.plain_turns(plain) == (1, False) and all(map(rules.plain_message, plain))
    assert rules.plain_turns([*plain, {"role": "tool", "content": "42", "timestamp": 3}]) == (1, True)
    for odd in ({"partial": True}, None):
        turn = {**plain[0], "metadata": odd}
        assert rules.plain_turns([*plain, turn]) is None and not rules.plain_message(turn)
    partial_one = {**plain[0], "metadata": {"partial": 1}}  # no finding (only ``True`` is partial) ...
    assert rules.plain_message(partial_one) and rules.plain_turns([partial_one]) is None  # ... told turn by turn
    for key, value in (("role", "bot"), ("role", ["user"]), ("content", None), ("timestamp", True),
                       ("tool_calls", []), ("extra", 1)):
        turn = {**plain[0], key: value}
        assert rules.plain_turns([*plain, turn]) is None and not rules.plain_message(turn)
    for key in ("role", "content", "timestamp"):
        turn = {k: v for k, v in plain[0].items() if k != key}
        assert rules.plain_turns([*plain, turn]) is None and not rules.plain_message(turn)
    assert rules.plain_turns([]) == (0, False) and rules.plain_turns(["text"]) is None


@pytest.mark.parametrize("sid", ["bench-00001", "a_b", "日本", "x", "", "-", "_-", "a b", "a/b", "a.b", "é", "٣"])
def test_a_safe_stem_is_told_as_safe_file_stem_tells_it(sid):
    from praisonmem.core.sessions import safe_file_stem

    # only a shortcut: an id of nothing but '-' and '_' (or none) is left to safe_file_stem itself
    assert session_documents._safe_stem(sid) == (safe_file_stem(sid) == sid and sid.strip("-_") != "")


def test_lock_sidecars_are_told_from_the_listing_as_the_serial_walk_told_them(tmp_path):
    sessions = tmp_path / "home" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "there.json").write_text('{"session_id": "there", "messages": []}')
    (sessions / "dir.json").mkdir()  # a directory named like a session: it exists
    (sessions / "link.json").symlink_to(tmp_path / "missing.json")  # a dangling link: it does not
    (sessions / "alive.json").symlink_to(sessions / "there.json")
    for name in ("there", "dir", "link", "alive", "gone"):
        (sessions / f"{name}.json.lock").write_text("")
    (sessions / "lockdir.json.lock").mkdir()  # a directory named like a lock, no session beside it
    (sessions / "linked.json.lock").symlink_to(sessions / "there.json.lock")
    new, old = walk.Checker(), SerialChecker()
    for checker in (new, old):
        checker.path(sessions)
    assert [f.to_json() for f in new.report.findings] == [f.to_json() for f in old.report.findings]
    locks = sorted(os.path.basename(f.file) for f in new.report.findings if f.code == "leftover.lock")
    assert locks == ["gone.json.lock", "link.json.lock", "linked.json.lock", "lockdir.json.lock"]


def test_the_name_only_history_finder_reads_only_history_files(tmp_path, monkeypatch):
    sessions = tmp_path / "home" / "sessions"
    sessions.mkdir(parents=True)
    legacy = legacy_ids("Old Bot")["sha256"]
    (sessions / f"{legacy}.json").write_text(json.dumps({"session_id": legacy, "agent_name": "Old Bot",
                                                         "messages": []}))
    unified = {"session_id": "history_00000000", "workspace": "/w", "current_model": "m", "messages": []}
    (sessions / "history_00000000.json").write_text(json.dumps(unified))  # the REPL/TUI's: not the JSON store's
    for i in range(5):
        (sessions / f"chat{i}.json").write_text(json.dumps({"session_id": f"chat{i}", "messages": []}))
    paths = resolve(tmp_path / "home", env={})
    store = open_store(paths, "json")
    looked_at: list[str] = []
    real = jsondir.is_foreign
    monkeypatch.setattr(jsondir, "is_foreign", lambda path, foreign: looked_at.append(path) or real(path, foreign))
    named = refs_named(store, "history_")
    assert sorted(os.path.basename(p) for p in looked_at) == ["history_00000000.json", f"{legacy}.json"]
    assert named == [r for r in store.refs() if store.name(r).startswith("history_")]
    assert [str(r) for r in named] == [str(sessions / f"{legacy}.json")]
    looked_at.clear()
    assert [(name, [str(r) for r in refs]) for name, refs in adopt.legacy_sessions(paths)] == [
        ("Old Bot", [str(sessions / f"{legacy}.json")])]
    assert all(os.path.basename(p).startswith("history_") for p in looked_at)


@pytest.mark.parametrize("prefix", ["history_", "chat", "", "zzz"])
def test_refs_named_is_refs_filtered_by_name(tmp_path, prefix):
    sessions = tmp_path / "home" / "sessions"
    sessions.mkdir(parents=True)
    for name in ("history_a", "chat1", "chat2", "b"):
        (sessions / f"{name}.json").write_text(json.dumps({"session_id": name, "messages": []}))
    store = open_store(resolve(tmp_path / "home", env={}), "json")
    assert refs_named(store, prefix) == [r for r in store.refs() if store.name(r).startswith(prefix)]
