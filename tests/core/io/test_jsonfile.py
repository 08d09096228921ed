"""core/jsonfile.py: byte-compatible serialisation and the library's write protocol."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import time

import pytest

from praisonmem.core.io import jsonfile
from praisonmem.core.errors import CorruptFile, IOFailure, LockTimeout, NotFound
from tests.conftest import PRAISONAI_FIXTURES
from tests.helpers import hold_flock, rewrite

LIBRARY_JSON = sorted(
    p for p in PRAISONAI_FIXTURES.rglob("*.json")
    if "session_spill" not in p.parts  # spill records are one-line, written by a different dump
    and p.parent.name != "expected" and p.name not in ("vectors.json", "manifest.json")
)


def test_fixture_set_is_not_empty():
    names = {p.name for p in LIBRARY_JSON}
    assert {"history_fea3173a.json", "café-日本.json", "531bcd72-9714-4bca-8431-340003ceed28.json",
            "short_term.json", "entities.json", "persona.json"} <= names


@pytest.mark.parametrize("path", LIBRARY_JSON, ids=lambda p: str(p.relative_to(PRAISONAI_FIXTURES)))
def test_every_library_file_round_trips_byte_for_byte(path):
    raw = path.read_bytes()
    assert jsonfile.serialise(jsonfile.read(path)) == raw


def test_compact_hierarchical_documents_stay_compact():
    path = PRAISONAI_FIXTURES / "home/sessions/531bcd72-9714-4bca-8431-340003ceed28.json"
    doc = jsonfile.read_object(path)
    assert jsonfile.is_compact_document(doc)
    assert b"\n" not in jsonfile.serialise(doc)


@pytest.mark.parametrize("value", [
    {"f": 0.0, "g": 18.0, "h": 1796050120.4611511, "e": 6e-06, "big": 1e16, "i": 7},
    {"s": "ünï \"q\" \\ \n\t\r\b\f \x01 \x7f \u2028 🎉"},
    {"nan": float("nan"), "inf": float("inf")},
    {"empty_list": [], "empty_obj": {}, "nested": [{"a": [1, {"b": None}]}]},
    {"z": 1, "a": 2, "m": 3},
])
def test_serialisation_equals_json_dump(value, tmp_path):
    with open(tmp_path / "ref.json", "w", encoding="utf-8") as handle:
        json.dump(value, handle, indent=2, ensure_ascii=False)
    assert jsonfile.serialise(value) == (tmp_path / "ref.json").read_bytes()
    assert not jsonfile.serialise(value).endswith(b"\n")


def test_a_locked_rewrite_writes_0600_atomically_and_keeps_the_lock_file(tmp_path):
    target = tmp_path / "sessions" / "s.json"
    rewrite(target, lambda cur: {"session_id": "s", "messages": []})
    assert target.read_bytes() == b'{\n  "session_id": "s",\n  "messages": []\n}'
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    lock = target.with_name("s.json.lock")
    assert lock.exists() and lock.stat().st_size == 0
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(lock.stat().st_mode) == 0o666 & ~umask
    assert sorted(p.name for p in target.parent.iterdir()) == ["s.json", "s.json.lock"]


def test_a_locked_rewrite_rereads_under_the_lock_and_keeps_unknown_keys(tmp_path):
    target = tmp_path / "s.json"
    target.write_text(json.dumps({"zeta": 1, "session_id": "s", "custom": {"k": [1]}}), encoding="utf-8")
    seen = {}

    def mutate(current):
        seen.update(current)
        current["messages"] = []
        return current

    rewrite(target, mutate)
    assert seen == {"zeta": 1, "session_id": "s", "custom": {"k": [1]}}
    assert list(json.loads(target.read_text(encoding="utf-8"))) == ["zeta", "session_id", "custom", "messages"]


def test_a_locked_rewrite_that_returns_none_writes_nothing(tmp_path):
    target = tmp_path / "s.json"
    target.write_bytes(b'{"a": 1}')
    before = target.stat()
    assert rewrite(target, lambda cur: None) is None
    assert target.read_bytes() == b'{"a": 1}'
    assert target.stat().st_mtime_ns == before.st_mtime_ns


@pytest.mark.parametrize("content, reason", [
    (b'{"session_id": "broken", "messages": [', "invalid JSON at line 1 column 39: expecting value"),
    (b'{"session_id": "cut', "invalid JSON: unterminated string starting at line 1 column 16"),
    (b'{"a": 1}\n{"b": 2}', "invalid JSON at line 2 column 1: extra data"),
    (b'{"a": "\xff\xfe"}', "not valid UTF-8 (byte 7"),
    (b'[1, 2]', "top-level JSON value is an array, not an object"),
    (b'"text"', "top-level JSON value is a string, not an object"),
    (b'', "invalid JSON at line 1 column 1"),
])
def test_a_locked_rewrite_never_overwrites_a_file_that_does_not_parse(tmp_path, content, reason):
    target = tmp_path / "broken.json"
    target.write_bytes(content)
    called = []
    with pytest.raises(CorruptFile) as info:
        rewrite(target, lambda cur: called.append(cur) or {"x": 1})
    assert reason in info.value.message
    assert called == []
    assert target.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.json", "broken.json.lock"]


def test_failed_replace_leaves_no_temp_file(tmp_path):
    target = tmp_path / "s.json"
    target.mkdir()  # os.replace of a file over a directory fails
    with jsonfile.locked(target):
        with pytest.raises(IOFailure):
            jsonfile.write_locked(target, {"a": 1})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json", "s.json.lock"]


def test_temp_file_name_never_ends_in_json(tmp_path, monkeypatch):
    names = []
    real_replace = os.replace

    def spy(src, dst):
        names.append(os.path.basename(src))
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    rewrite(tmp_path / "s.json", lambda cur: {"a": 1})
    assert len(names) == 1 and names[0].startswith(".s.json.") and names[0].endswith(".tmp")


def test_read_takes_no_lock_and_writes_nothing(tmp_path):
    target = tmp_path / "s.json"
    target.write_bytes(b'{"a": 1}')
    assert jsonfile.read_object(target) == {"a": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]


def test_read_of_a_missing_file_is_not_found(tmp_path):
    with pytest.raises(NotFound):
        jsonfile.read(tmp_path / "nope.json")


def test_lock_held_by_another_process_times_out_with_nothing_changed(tmp_path):
    target = tmp_path / "s.json"
    target.write_bytes(b'{"a": 1}')
    holder = hold_flock(tmp_path / "s.json.lock", 5)
    try:
        started = time.monotonic()
        with pytest.raises(LockTimeout, match="could not lock .* within 0.3s"):
            rewrite(target, lambda cur: {"a": 2}, timeout=0.3)
        assert time.monotonic() - started < 2
    finally:
        holder.kill()
        holder.wait()
    assert target.read_bytes() == b'{"a": 1}'


def test_praisonmem_lock_is_a_bsd_flock(tmp_path):
    """A flock(LOCK_NB) from another process fails while praisonmem holds the lock."""
    target = tmp_path / "s.json"
    probe = textwrap.dedent("""
        import fcntl, sys
        handle = open(sys.argv[1], "w")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print("blocked")
        else:
            print("acquired")
    """)
    with jsonfile.locked(target):
        inside = subprocess.run([sys.executable, "-c", probe, f"{target}.lock"],
                                capture_output=True, text=True, check=True).stdout.strip()
    after = subprocess.run([sys.executable, "-c", probe, f"{target}.lock"],
                           capture_output=True, text=True, check=True).stdout.strip()
    assert (inside, after) == ("blocked", "acquired")
    assert (tmp_path / "s.json.lock").exists()


def test_jsonfile_locked_many_takes_locks_in_sorted_order(tmp_path, monkeypatch):
    order = []
    real = jsonfile.locked

    def spy(path, timeout=5.0):
        order.append(os.path.basename(path))
        return real(path, timeout)

    monkeypatch.setattr(jsonfile, "locked", spy)
    with jsonfile.locked_many([tmp_path / "b.json", tmp_path / "a.json"]):
        pass
    assert order == ["a.json", "b.json"]


def test_a_ctrl_c_just_after_the_temp_file_is_created_leaves_no_temp_file(tmp_path, monkeypatch):
    target = tmp_path / "s.json"
    target.write_bytes(b"{}")
    real_open = os.open

    def open_then_interrupt(path, flags, *args, **kwargs):
        fd = real_open(path, flags, *args, **kwargs)
        if str(path).endswith(".tmp"):
            raise KeyboardInterrupt  # as Python raises it at the first check after the open returned
        return fd

    monkeypatch.setattr(os, "open", open_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        jsonfile.replace_atomically(target, b"{\"new\": 1}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"] and target.read_bytes() == b"{}"
