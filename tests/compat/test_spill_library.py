"""Spilled turns against the real library (praisonaiagents 1.7.17): turns its write failures saved to the spill dir,
which its next load of the session merges in (and makes a new session of, when the file is gone).

* ``session delete`` removes them with the session, so the library's next load does not bring it back;
* ``session export`` (json) and ``session migrate`` (also ``--move``) carry them, merged as that load merges
  them: the library loading the copy sees the turns it would have seen loading the source.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.compat.conftest import last_json, run_library
from tests.helpers import snapshot, spill

LOAD = """
    import json, os, sys
    from praisonaiagents.session.store import DefaultSessionStore
    from praisonaiagents.paths import get_sessions_dir, get_session_spill_dir
    store = DefaultSessionStore(session_dir=sys.argv[1] or str(get_sessions_dir()))
    session = store.get_session(sys.argv[2])
    spill_dir = get_session_spill_dir()
    print(json.dumps({"messages": [m.to_dict() for m in session.messages],
                      "file": os.path.exists(store._get_session_path(sys.argv[2])),
                      "spill": sorted(os.listdir(spill_dir)) if os.path.isdir(spill_dir) else []}))
"""


def library_load(home: Path, session_id: str, session_dir: Path | None = None) -> dict:
    """What the library loads for ``session_id`` from a copy of ``home`` (the load merges and deletes spill files)."""
    copy = home.parent / f"{home.name}-library-{len(list(home.parent.iterdir()))}"
    shutil.copytree(home, copy, symlinks=True)
    where = "" if session_dir is None else str(copy / session_dir.relative_to(home))
    return last_json(run_library(LOAD, where, session_id, home=copy))


def spill_record(home: Path, session_id: str, stem: str, token: str, messages: list[dict]) -> Path:
    """A spill file in the library's one-line format (its name: ``<stem>.<ms>.<pid>.<hex>.json``)."""
    path = home / "state" / "session_spill" / f"{stem}.1796050189520.12503.{token}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"session_id": session_id, "spilled_at": "2026-11-30T14:49:49.520912+00:00", "messages": messages}
    path.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    return path


def tricky_spill(home: Path) -> list[Path]:
    """Spilled turns for my_chat that only the library's own comparison merges right: a copy of a turn already in
    the file with its content's keys in another order (the same turn to the library), one that differs from it
    only by a timestamp of another type (another turn), and two new turns across two files, one repeated."""
    path = home / "sessions" / "my_chat.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["messages"].append({"role": "user", "content": {"type": "text", "text": "a dict content"},
                            "timestamp": 1796050100.0, "metadata": {}})
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    return [
        spill_record(home, "my_chat", "my_chat", "aaaa0001", [
            {"role": "user", "content": {"text": "a dict content", "type": "text"}, "timestamp": 1796050100.0,
             "metadata": {"note": "same turn"}},
            {"role": "user", "content": {"type": "text", "text": "a dict content"}, "timestamp": 1796050100,
             "metadata": {}},
            {"role": "assistant", "content": "spilled answer", "timestamp": 1796050189.5, "extra": "dropped"}]),
        spill_record(home, "my_chat", "my_chat", "bbbb0002", [
            {"content": "spilled question", "timestamp": 1796050190.5},
            {"role": "assistant", "content": "spilled answer", "timestamp": 1796050189.5}]),
    ]


def test_the_library_does_not_bring_a_deleted_session_back(cli, fixture_home):
    spilled = spill(fixture_home, "my_chat", "my_chat", "a turn the disk refused")
    other = spill(fixture_home, "compacted-demo", "compacted-demo", "another session's turn")
    assert library_load(fixture_home, "my_chat")["messages"][-1]["content"] == "a turn the disk refused"

    before = snapshot(fixture_home)
    planned = cli("--home", fixture_home, "session", "delete", "my_chat", "--dry-run", "--json")
    assert planned.exit_code == 0 and snapshot(fixture_home) == before
    assert planned.json()[0]["detail"] == "1 spilled turn in 1 spill file deleted with it"
    done = cli("--home", fixture_home, "session", "delete", "my_chat", "--yes", "--json")
    assert done.exit_code == 0, done.stderr
    assert [(c["action"], c["detail"]) for c in done.json()] == [
        ("deleted", "1 spilled turn in 1 spill file deleted with it")]
    assert not spilled.exists() and other.exists()

    after = library_load(fixture_home, "my_chat")
    assert (after["messages"], after["file"]) == ([], False)


def test_delete_takes_every_spill_file_the_library_would_merge_into_the_file(cli, fixture_home):
    """The library loading ``support/ticket #1234`` or ``support_ticket #1234`` reads the same file: turns spilled
    under either id would make it anew."""
    one = spill(fixture_home, "support/ticket #1234", "support_ticket__1234", "by the raw id")
    two = spill(fixture_home, "support_ticket #1234", "support_ticket__1234", "by another id of the same file")
    named_alike = spill(fixture_home, "support_ticket__12345", "support_ticket__12345", "another file's")
    done = cli("--home", fixture_home, "session", "delete", "support/ticket #1234", "--yes", "--json")
    assert done.json()[0]["detail"] == "2 spilled turns in 2 spill files deleted with it"
    assert (one.exists(), two.exists(), named_alike.exists()) == (False, False, True)
    for session_id in ("support/ticket #1234", "support_ticket #1234"):
        assert library_load(fixture_home, session_id)["file"] is False


def test_prune_deletes_spill_files_with_the_sessions(cli, fixture_home):
    spilled = spill(fixture_home, "my_chat", "my_chat", "a turn the disk refused")
    done = cli("--home", fixture_home, "session", "prune", "--older-than", "0d", "--yes", "--json")
    assert done.exit_code == 0 and "my_chat" in [c["session_id"] for c in done.json() if c["action"] == "deleted"]
    assert not spilled.exists() and library_load(fixture_home, "my_chat")["file"] is False


def test_export_then_import_gives_the_library_what_it_loads_from_the_source(cli, fixture_home, tmp_path):
    tricky_spill(fixture_home)
    source = library_load(fixture_home, "my_chat")
    contents = [m["content"] for m in source["messages"][-4:]]
    assert contents == [{"type": "text", "text": "a dict content"}, {"type": "text", "text": "a dict content"},
                        "spilled answer", "spilled question"]  # what the library itself merges

    out = tmp_path / "export.json"
    exported = cli("--home", fixture_home, "session", "export", "my_chat", "-o", out)
    assert exported.exit_code == 0, exported.stderr
    session = json.loads(out.read_text(encoding="utf-8"))["sessions"][0]
    stored = json.loads((fixture_home / "sessions" / "my_chat.json").read_text(encoding="utf-8"))
    assert session["messages"][:len(stored["messages"])] == stored["messages"]  # the stored turns as stored
    assert session["messages"][len(stored["messages"]):] == source["messages"][len(stored["messages"]):]
    assert {k: v for k, v in session.items() if k != "messages"} == {k: v for k, v in stored.items()
                                                                     if k != "messages"}

    other = tmp_path / "other-home"
    (other / "sessions").mkdir(parents=True)
    imported = cli("--home", other, "session", "import", out)
    assert imported.exit_code == 0, imported.stderr
    assert library_load(other, "my_chat")["messages"] == source["messages"]


def test_markdown_and_jsonl_exports_carry_the_spilled_turns_too(cli, fixture_home):
    spill(fixture_home, "my_chat", "my_chat", "a turn the disk refused")
    lines = cli("--home", fixture_home, "session", "export", "my_chat", "--format", "jsonl").stdout.splitlines()
    assert json.loads(lines[-1])["content"] == "a turn the disk refused"
    assert "a turn the disk refused" in cli("--home", fixture_home, "session", "export", "my_chat",
                                            "--format", "markdown").stdout


def test_migrate_carries_the_spilled_turns_and_move_takes_them(cli, fixture_home, tmp_path):
    files = tricky_spill(fixture_home)
    source = library_load(fixture_home, "my_chat")
    target = tmp_path / "target"
    copied = cli("--home", fixture_home, "session", "migrate", "--from", "json", "--to", target, "my_chat",
                 "--verify", "--json")
    assert copied.exit_code == 0, copied.stderr
    assert [(r["action"], r.get("verified")) for r in copied.json()["records"]] == [("copied", True)]
    assert all(p.exists() for p in files)  # a copy leaves the source and its spill files alone
    empty_home = tmp_path / "library-home"
    empty_home.mkdir()
    assert last_json(run_library(LOAD, str(target), "my_chat", home=empty_home))["messages"] == source["messages"]

    again = cli("--home", fixture_home, "session", "migrate", "--from", "json", "--to", target, "my_chat", "--json")
    assert [r["action"] for r in again.json()["records"]] == ["unchanged"]  # the merge gives the same document

    moved = cli("--home", fixture_home, "session", "migrate", "--from", "json", "--to", tmp_path / "moved",
                "my_chat", "--move", "--yes", "--json")
    assert moved.exit_code == 0, moved.stderr
    assert [r.get("moved") for r in moved.json()["records"]] == [True]
    assert not any(p.exists() for p in files)
    after = library_load(fixture_home, "my_chat")
    assert (after["messages"], after["file"]) == ([], False)
    assert last_json(run_library(LOAD, str(tmp_path / "moved"), "my_chat", home=empty_home))["messages"] \
        == source["messages"]


def test_a_session_without_spilled_turns_goes_across_byte_for_byte(cli, fixture_home, tmp_path):
    spill(fixture_home, "compacted-demo", "compacted-demo", "not my_chat's")
    target = tmp_path / "target"
    assert cli("--home", fixture_home, "session", "migrate", "--from", "json", "--to", target, "my_chat").exit_code == 0
    assert (target / "my_chat.json").read_bytes() == (fixture_home / "sessions" / "my_chat.json").read_bytes()
