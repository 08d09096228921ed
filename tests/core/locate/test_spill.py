"""``locate`` and the spill dir: the turns praisonaiagents 1.7.17 saved aside after a failed write
(``<state>/state/session_spill/<safe id>.<ms>.<pid>.<hex>.json``, merged into the session on its next load) are a
store of their own, never sessions: counted as spill files and the sessions they wait for, reached by ``check``,
wherever such records lie."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.compat.conftest import run_library
from tests.helpers import snapshot

# Each write fails as a full disk would for the library: the session's path is taken by a directory, so its
# save returns False and the library spills the turn it could not write.
SPILL = """
    import os, sys
    from praisonaiagents.session.store import DefaultSessionStore
    store = DefaultSessionStore()
    for session_id, content in zip(sys.argv[1::2], sys.argv[2::2]):
        path = store._get_session_path(session_id)
        os.makedirs(path, exist_ok=True)
        assert store.add_message(session_id, "user", content) is False
    for session_id in sys.argv[1::2]:
        path = store._get_session_path(session_id)
        if os.path.isdir(path):
            os.rmdir(path)
"""


@pytest.fixture(scope="module")
def spilled(tmp_path_factory) -> Path:
    """A home whose library spilled three turns: two for ``chat``, one for ``x/y`` (its file stem ``x_y``)."""
    home = tmp_path_factory.mktemp("spilled") / "home"
    (home / "sessions").mkdir(parents=True)
    run_library(SPILL, "chat", "the disk was full", "chat", "and still full", "x/y", "a third turn", home=home)
    return home


def spill_files(home: Path) -> list[Path]:
    return sorted((home / "state" / "session_spill").iterdir())


def stores(cli, *args: str) -> list[dict]:
    result = cli("locate", *args, "--json")
    assert (result.exit_code, result.stderr) == (0, ""), result.stderr
    return json.loads(result.stdout)["stores"]


def test_the_library_s_spill_dir_is_a_spill_store_not_a_session_dir(cli, spilled, monkeypatch):
    files = spill_files(spilled)
    assert [json.loads(f.read_text())["session_id"] for f in files] == ["chat", "chat", "x/y"]  # as it wrote them
    before = snapshot(spilled)
    monkeypatch.setenv("PRAISONAI_HOME", str(spilled))
    spill_dir = spilled / "state" / "session_spill"
    found = [s for s in stores(cli, str(spilled / "sessions")) if s["path"].startswith(str(spilled))]
    assert found == [{
        "path": str(spill_dir), "kind": "session-spill", "library": "praisonaiagents",
        "size": sum(f.stat().st_size for f in files), "modified": max(f.stat().st_mtime for f in files),
        "holds": {"spill_files": 3, "sessions": 2}, "command": f"praisonmem check {spill_dir}", "flags": []}]
    assert snapshot(spilled) == before
    checked = cli("check", str(spill_dir), "--json")  # the command it names reads every record
    assert sorted(f["file"] for f in checked.json()["findings"]) == [str(f) for f in files]


def test_a_leftover_temp_of_the_spill_writer_is_part_of_the_spill_dir(cli, spilled, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(spilled, home)
    temp = home / "state" / "session_spill" / "tmpab12cd.tmp"  # mkstemp's, left by a crash before its rename
    temp.write_text('{"session_id": "chat", "spil')
    [store] = [s for s in stores(cli, str(home)) if s["path"].startswith(str(home))]
    assert (store["kind"], store["holds"]) == ("session-spill", {"spill_files": 3, "sessions": 2})
    assert store["size"] == sum(f.stat().st_size for f in spill_files(home))


def test_spill_records_among_session_files_are_not_counted_as_sessions(cli, spilled, tmp_path):
    """A sessions dir that holds spill records (moved there by hand, or a copy of both dirs in one) still has only
    its own sessions; the records are a spill store of their own that no command takes by that dir's name."""
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for name in ("alpha", "beta"):
        (sessions / f"{name}.json").write_text(json.dumps({"session_id": name, "messages": []}))
    for f in spill_files(spilled):
        shutil.copy2(f, sessions / f.name)
    found = sorted((s["kind"], s["holds"], s["command"], s["size"]) for s in stores(cli, str(sessions)))
    spill_size = sum(f.stat().st_size for f in spill_files(spilled))
    session_size = sum((sessions / f"{n}.json").stat().st_size for n in ("alpha", "beta"))
    assert found == [
        ("session-dir", {"sessions": 2}, f"praisonmem session list --store {sessions}", session_size),
        ("session-spill", {"spill_files": 3, "sessions": 2}, None, spill_size)]


def test_a_copy_of_a_spill_dir_elsewhere_is_a_spill_store(cli, spilled, tmp_path):
    """An old spill dir kept beside a project (or a backup's unpacked tree): the same records, the same kind."""
    copy = tmp_path / "project" / "old-home" / "state" / "session_spill"
    shutil.copytree(spilled / "state" / "session_spill", copy)
    found = [(s["path"], s["kind"], s["holds"]) for s in stores(cli, str(tmp_path / "project"))]
    assert found == [(str(copy), "session-spill", {"spill_files": 3, "sessions": 2})]


def test_a_record_for_a_session_whose_id_starts_with_an_underscore_is_counted(cli, tmp_path):
    spill_dir = tmp_path / "state" / "session_spill"
    spill_dir.mkdir(parents=True)
    record = {"session_id": "_draft", "spilled_at": "2026-11-30T14:49:49.520912+00:00",
              "messages": [{"role": "user", "content": "q", "timestamp": 1.0, "metadata": {}}]}
    (spill_dir / "_draft.1796050189520.12503.e94e5eea.json").write_text(json.dumps(record))
    found = [(s["kind"], s["holds"]) for s in stores(cli, str(tmp_path))]
    assert found == [("session-spill", {"spill_files": 1, "sessions": 1})]
