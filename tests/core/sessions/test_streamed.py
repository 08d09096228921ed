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
