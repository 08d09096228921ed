"""Huge session files read a message at a time give what the whole-document path gives.

Every fixture session is forced through the streaming path (``threshold=0``) and compared with the whole-document
path (``threshold=None``): ``session show --tail``, ``export`` in every format, ``rename`` and ``retitle``. A file
the stream reader refuses (torn, invalid, a key given twice) takes the whole-document path: reported as ever,
never overwritten.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from praisonmem.core.errors import PraisonMemError
from praisonmem.core.paths import resolve
from praisonmem.core.sessions import gateway_chat, summarise, view
from praisonmem.core.sessions.crypto import Key
from tests.conftest import FIXTURES, PRAISONAI_FIXTURES, REPO
from tests.helpers import spill

HOMES = [PRAISONAI_FIXTURES / "home", FIXTURES / "praisonai-4.7.19-home" / "home",
         FIXTURES / "praisonai-eras" / "1.5.122" / "home", FIXTURES / "praisonai-eras" / "1.6.157" / "home",
         REPO / "examples" / "gateway-home" / "home"]
KEY = Key((FIXTURES / "praisonai-4.7.19-home" / "session.key").read_text().strip(), "test")


def copied(tmp_path: Path, home: Path) -> Path:
    dest = tmp_path / "home"
    shutil.copytree(home, dest, symlinks=True)
    return dest


def json_sessions(home: Path) -> list[str]:
    return sorted(p.name for p in (home / "sessions").glob("*.json"))


def outcome(call):
    try:
        return call()
    except PraisonMemError as exc:
        return ("error", type(exc).__name__, exc.message)


def shown(home: Path, name: str, threshold: int | None, **options):
    """Everything session show prints of a view: its turns and the header's fields (the document's summary)."""
    def call():
        v = view.show(resolve(home), name, threshold=threshold, **options)
        return {"turns": [dataclasses.asdict(t) for t in v.turns], "hidden": v.hidden_before, "spilled": v.spilled,
                "opaque": v.opaque, "stored_encrypted": v.stored_encrypted, "id": v.session_id, "file": v.file,
                "store": v.store, "copies": v.copies, "selected": v.selected,
                "row": summarise(v.doc, session_id=v.session_id, file=v.file), "chat": gateway_chat(v.doc),
                "checkpoint": v.doc.get("last_compaction"), "streamed": v.raw == b""}
    return outcome(call)


@pytest.mark.parametrize("home", HOMES, ids=lambda p: p.parent.name)
def test_show_tail_streamed_is_the_whole_document_view(tmp_path, home):
    home = copied(tmp_path, home)
    if (home / "sessions" / "my_chat.json").exists():
        spill(home, "my_chat", "my_chat", "a spilled turn", "another")
    names = json_sessions(home)
    assert len(names) >= 5
    streamed_any = False
    for name in names:
        for options in ({"tail": 0}, {"tail": 1}, {"tail": 3}, {"tail": 10_000}, {"tail": 2, "archived": True},
                        {"tail": 2, "working": True}, {"tail": 4, "key": KEY}):
            whole = shown(home, name, None, **options)
            streamed = shown(home, name, 0, **options)
            if isinstance(streamed, dict):
                streamed_any |= streamed.pop("streamed")
                whole.pop("streamed")
            assert streamed == whole, (name, options)
    assert streamed_any


def test_show_tail_of_a_huge_session_is_streamed_below_the_threshold_not(tmp_path):
    home = copied(tmp_path, PRAISONAI_FIXTURES / "home")
    size = (home / "sessions" / "my_chat.json").stat().st_size
    assert shown(home, "my_chat", size, tail=2)["streamed"]
    assert not shown(home, "my_chat", size + 1, tail=2)["streamed"]
    assert not shown(home, "my_chat", 0)["streamed"]  # the whole session: printed as stored


@pytest.mark.parametrize("text", [
    '{"session_id": "x", "messages": [{"role": "user", "content": "hi"}',  # torn
    '{"session_id": "x", "messages": [{"role": "user", "content": "hi"},]}',  # invalid
    '{"session_id": "x", "messages": "a string"}',  # a shape no reader uses
    '[{"session_id": "x"}]',
])
def test_show_tail_of_a_bad_huge_file_reports_it_as_the_whole_document_path_does(tmp_path, text):
    home = tmp_path / "home"
    (home / "sessions").mkdir(parents=True)
    (home / "sessions" / "x.json").write_text(text)
    streamed, whole = shown(home, "x", 0, tail=2), shown(home, "x", None, tail=2)
    assert streamed == whole and streamed[0] == "error"


def test_a_key_given_twice_is_read_as_json_loads_reads_it(tmp_path):
    home = tmp_path / "home"
    (home / "sessions").mkdir(parents=True)
    (home / "sessions" / "x.json").write_text(json.dumps({"session_id": "x", "messages": [
        {"role": "user", "content": "first"}]})[:-1] + ', "messages": [{"role": "user", "content": "second"}]}')
    streamed = shown(home, "x", 0, tail=5)
    assert streamed == shown(home, "x", None, tail=5)
    assert [t["content"] for t in streamed["turns"]] == ["second"] and not streamed["streamed"]


def exported(home: Path, tmp_path: Path, threshold: int | None, names: list[str], fmt: str, **options):
    """The bytes an export writes (its exported_at made one) and its summary, or its error."""
    from praisonmem.core.sessions import transfer

    out = tmp_path / f"out-{threshold}.{fmt}"
    out.unlink(missing_ok=True)

    def call():
        summary = transfer.export(resolve(home), names, every=not names, format=fmt, output=str(out),
                                  threshold=threshold, **options)
        data = out.read_bytes()
        stamp = json.loads(data)["exported_at"].encode() if fmt == "json" else b""
        summary.pop("output")
        return summary, data.replace(stamp, b"STAMP") if stamp else data
    return outcome(call)


@pytest.mark.parametrize("home", HOMES, ids=lambda p: p.parent.name)
@pytest.mark.parametrize("fmt", ["json", "jsonl", "markdown"])
def test_export_streamed_is_byte_for_byte_the_whole_document_export(tmp_path, home, fmt):
    home = copied(tmp_path, home)
    if (home / "sessions" / "my_chat.json").exists():
        spill(home, "my_chat", "my_chat", "a spilled turn", "another")
    names = [n[:-len(".json")] for n in json_sessions(home)]
    for key in (None, KEY):
        for chosen in ([], *[[n] for n in names]):
            whole = exported(home, tmp_path, None, chosen, fmt, key=key)
            streamed = exported(home, tmp_path, 0, chosen, fmt, key=key)
            assert streamed == whole, (chosen, key)


def tree(home: Path) -> dict[str, bytes]:
    """Every file of the home but the lock sidecars, byte for byte."""
    return {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*"))
            if p.is_file() and not p.name.endswith(".lock")}


def changed(tmp_path: Path, source: Path, threshold: int | None, change, monkeypatch, prepare=None):
    """The home after ``change(paths, threshold)``, and its outcome (its records, or its error)."""
    from praisonmem.core.sessions import ops

    monkeypatch.setattr(ops, "now_iso", lambda: "2026-12-02T12:00:00+00:00")
    home = tmp_path / f"home-{threshold}"
    shutil.copytree(source, home, symlinks=True)
    if prepare:
        prepare(home)

    def call():
        outcome = change(resolve(home), threshold)
        return [(c.action, c.detail, {k: str(v).replace(str(home), "HOME") for k, v in c.fields.items()})
                for c in outcome.changes]
    result = outcome(call)
    if result[0] == "error":
        result = (*result[:2], result[2].replace(str(home), "HOME"))
    return result, tree(home)


RENAMES = [("rename", "fresh-id"), ("rename", "kept/chat #1"), ("rename", "日本-é"), ("retitle", "A new title"),
           ("retitle", "")]


def change_of(name: str, kind: str, value: str):
    from praisonmem.core.sessions import ops

    if kind == "rename":
        return lambda paths, threshold: ops.rename(paths, name, value, force=True, threshold=threshold)
    return lambda paths, threshold: ops.retitle(paths, name, value, threshold=threshold)


@pytest.mark.parametrize("home", HOMES[:1] + HOMES[2:4], ids=lambda p: p.parent.name)
def test_rename_and_retitle_streamed_write_the_whole_document_paths_bytes(tmp_path, monkeypatch, home):
    def prepare(h: Path) -> None:
        if (h / "sessions" / "my_chat.json").exists():
            spill(h, "my_chat", "my_chat", "a spilled turn", "another")

    names = [n[:-len(".json")] for n in json_sessions(home)]
    for name in names:
        for kind, value in RENAMES:
            whole = changed(tmp_path / f"{name}-{kind}-{value}", home, None, change_of(name, kind, value), monkeypatch,
                            prepare)
            streamed = changed(tmp_path / f"{name}-{kind}-{value}", home, 0, change_of(name, kind, value), monkeypatch,
                               prepare)
            assert streamed == whole, (name, kind, value)


def crafted(tmp_path: Path, text: str) -> Path:
    home = tmp_path / "crafted"
    (home / "sessions").mkdir(parents=True)
    (home / "sessions" / "odd.json").write_text(text, encoding="utf-8")
    return home


MESSAGES = '[{"role": "user", "content": "hi", "timestamp": 1.5, "metadata": {}}, {"role": "assistant", "content": "yo"}]'
CRAFTED = [
    # keys in an unusual order, odd whitespace, the id spelt with escapes, a key given twice
    '{"messages": %s, "metadata": {"title": "t"},\r\n\t"session_id"  :  "odd", "updated_at": "2026-01-01"}' % MESSAGES,
    '{"session_id": "\\u006fdd", "messages": %s}' % MESSAGES,
    '  {"session_id":"odd","messages":%s,"metadata":null}  \n' % MESSAGES,
    '{"session_id": "odd", "session_id": "other", "messages": %s}' % MESSAGES,
    '{"session_id": "odd", "messages": %s, "messages": []}' % MESSAGES,
    '{"messages": %s}' % MESSAGES,  # no session_id: the rename adds it first
    '{"session_id": "odd", "messages": [], "archived_messages": %s, "metadata": {"n": NaN}}' % MESSAGES,
    '{"session_id": "odd", "messages": [1e400, -0.0, 12345678901234567890123, "\\ud800"]}',
]


@pytest.mark.parametrize("text", CRAFTED)
@pytest.mark.parametrize("kind, value", [("rename", "renamed"), ("rename", "odd"), ("retitle", "T")])
def test_a_crafted_huge_file_is_renamed_as_the_whole_document_path_renames_it(tmp_path, monkeypatch, text, kind,
                                                                               value):
    home = crafted(tmp_path, text)
    whole = changed(tmp_path / "whole", home, None, change_of("odd", kind, value), monkeypatch)
    streamed = changed(tmp_path / "streamed", home, 0, change_of("odd", kind, value), monkeypatch)
    assert streamed == whole
    for name, data in streamed[1].items():
        if name.endswith(".json"):
            json.loads(data)


@pytest.mark.parametrize("text", [
    '{"session_id": "odd", "messages": [{"role": "user", "content": "hi"}',  # torn
    '{"session_id": "odd", "messages": [{"role": "user", "content": "hi"},]}',  # invalid
    '{"session_id": "odd", "messages": [{"role": "user", "content": "hi"}]}garbage',
    '{"session_id": "odd", "messages": {"role": "user"}}',  # not a list
    '{"session_id": "odd", "messages": [{"role": "user", "content": "\xff"}]}',
])
@pytest.mark.parametrize("kind, value", [("rename", "renamed"), ("retitle", "T")])
def test_a_torn_or_invalid_huge_file_is_reported_and_never_overwritten(tmp_path, monkeypatch, text, kind, value):
    home = tmp_path / "bad"
    (home / "sessions").mkdir(parents=True)
    (home / "sessions" / "odd.json").write_bytes(text.encode("utf-8", "surrogateescape").replace(b"\xc3\xbf", b"\xff"))
    before = tree(home)
    whole = changed(tmp_path / "whole", home, None, change_of("odd", kind, value), monkeypatch)
    streamed = changed(tmp_path / "streamed", home, 0, change_of("odd", kind, value), monkeypatch)
    assert streamed == whole
    assert streamed[0][0] == "error" and streamed[1] == before


def test_the_proof_finds_any_difference_from_the_document(tmp_path):
    from praisonmem.core.sessions import streamed

    source = tmp_path / "source.json"
    messages = [{"role": "user", "content": f"turn {i}", "timestamp": float(i)} for i in range(50)]
    source.write_text(json.dumps({"session_id": "a", "messages": messages, "metadata": {"title": "t"}}))
    with streamed.opened(str(source)) as fd:
        doc = {**streamed.skeleton(fd, str(source)), "session_id": "b"}
    good = {"session_id": "b", "messages": messages, "metadata": {"title": "t"}}
    bad = {
        "a message changed": {**good, "messages": [*messages[:7], {**messages[7], "content": "x"}, *messages[8:]]},
        "a message dropped": {**good, "messages": messages[:-1]},
        "a message added": {**good, "messages": [*messages, messages[0]]},
        "the edit missing": {**good, "session_id": "a"},
        "a key added": {**good, "extra": 1},
        "keys reordered": {"messages": messages, "session_id": "b", "metadata": {"title": "t"}},
        "a type changed": {**good, "metadata": {"title": ["t"]}},
    }
    written = tmp_path / "new.json"

    def proof(data: bytes) -> str | None:
        written.write_bytes(data)
        with streamed.opened(str(source)) as fd, streamed.opened(str(written)) as new:
            return streamed.prove(new, fd, doc)

    text = json.dumps(good, indent=2).encode()
    assert proof(text) is None
    for what, other in bad.items():
        assert proof(json.dumps(other, indent=2).encode()) is not None, what
    assert "does not read back" in proof(text[:-1])
    assert "does not read back" in proof(text + b"x")
    assert "does not read back" in proof(text[:-1] + b', "session_id": "b"}')
