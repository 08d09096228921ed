"""The praisonai 4.7.19 fixtures (the gateway home, the conversation store) are what their generators wrote,
and the helpers copy them faithfully."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from tests.realhomes import (CONVERSATIONS_4719, HOME_4719, PROJECT_ID, copy_conversations_db,
                             copy_gateway_home, manifest)
from tests.sqlitestate import crashed_wal, live_wal, shm_lock_holder

ERAS = Path(__file__).resolve().parents[1] / "fixtures" / "praisonai-eras"


def files_under(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("fixture, tree", [(HOME_4719, "home"), (CONVERSATIONS_4719, "")])
def test_every_shipped_file_is_in_the_manifest_with_its_hash(fixture, tree):
    listed = {f["path"]: f["sha256"] for f in manifest(fixture)["files"] if "sha256" in f}
    shipped = files_under(fixture / tree)
    for own in ("README.md", "expected.json", "manifest.json"):
        shipped.pop(own, None)
    assert shipped == listed


def test_no_sqlite_sidecars_are_shipped():
    for fixture in (HOME_4719, CONVERSATIONS_4719, ERAS):
        stray = [p for p in fixture.rglob("*") if p.name.endswith(("-wal", "-shm", "-journal"))]
        assert stray == []


def test_the_home_copy_gets_the_library_modes(tmp_path):
    gh = copy_gateway_home(tmp_path / "g")
    for entry in gh.manifest["files"]:
        path = gh.home / entry["path"].rstrip("/")
        assert oct(path.stat().st_mode & 0o777) == entry["mode"], entry["path"]
    assert oct(gh.key_file.stat().st_mode & 0o777) == "0o600"
    modes = {e["path"]: e["mode"] for e in gh.manifest["files"]}
    assert modes["sessions/sessions.db"] == "0o644" and modes["sessions/bot_slack_7.json"] == "0o600"
    assert (gh.project_store / "proj-sess-1.json").is_file()
    db = copy_conversations_db(tmp_path / "c")
    assert oct(db.stat().st_mode & 0o777) == "0o644"


def test_the_project_remote_gives_the_store_id(gateway_home):
    import subprocess

    url = subprocess.run(["git", "remote", "get-url", "origin"], cwd=gateway_home.project, check=True,
                         capture_output=True, text=True).stdout.strip()
    assert url == gateway_home.manifest["project"]["git_remote_origin"]
    assert [PROJECT_ID, "git-remote"] == gateway_home.manifest["project"]["identity"]
    assert gateway_home.project_store.name == PROJECT_ID == "8ccfb8a2"


def test_manifest_facts_hold_on_the_bytes(gateway_home):
    m = gateway_home.manifest
    for token, where in m["planted_tokens"].items():
        found = sorted(str(p.relative_to(gateway_home.home)) for p in gateway_home.home.rglob("*")
                       if p.is_file() and token.encode() in p.read_bytes())
        assert found == where["files"], token
    assert m["planted_tokens"]["PLANTED-TOKEN-ENC"]["files"] == []
    con = sqlite3.connect(f"file:{gateway_home.db}?mode=ro&immutable=1", uri=True)
    ids = {r[0] for r in con.execute("SELECT session_id FROM sessions")}
    assert {k for k, v in m["json_db_pairs"].items() if v != "json-only"} == ids
    assert gateway_home.db.read_bytes()[18:20] == b"\x02\x02"  # WAL header, closed cleanly


def test_live_and_crashed_wal_states(gateway_home):
    db = gateway_home.db
    assert shm_lock_holder(db) is None and not Path(f"{db}-wal").exists()
    with live_wal(db, "UPDATE sessions SET updated_at = updated_at || '' WHERE session_id = ?", "gw-1") as pid:
        assert Path(f"{db}-wal").stat().st_size > 0
        assert shm_lock_holder(db) == pid
    assert not Path(f"{db}-wal").exists()  # the writer closed: checkpointed and removed
    crashed_wal(db, "DELETE FROM sessions WHERE session_id = ?", "gw-1")
    assert Path(f"{db}-wal").stat().st_size > 0 and Path(f"{db}-shm").exists()
    assert shm_lock_holder(db) is None
    # the main file still has the row; only a WAL replay shows the delete
    con = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    assert con.execute("SELECT count(*) FROM sessions WHERE session_id = 'gw-1'").fetchone() == (1,)
    con.close()
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    assert con.execute("SELECT count(*) FROM sessions WHERE session_id = 'gw-1'").fetchone() == (0,)


def test_era_sqlite_memory_headers():
    """1.5.122 short_term.db files are WAL-format without sidecars; the rest are rollback-journal."""
    heads = {str(p.relative_to(ERAS)): p.read_bytes()[18:20] for p in sorted(ERAS.rglob("*.db"))}
    assert {k for k, v in heads.items() if v == b"\x02\x02"} == {
        "1.5.122/plain/.praisonai/short_term.db", "1.5.122/repo/.praisonai/short_term.db"}
    assert len(heads) == 8 and set(heads.values()) == {b"\x01\x01", b"\x02\x02"}


def test_expected_files_parse():
    for fixture in (HOME_4719, CONVERSATIONS_4719):
        assert json.loads((fixture / "expected.json").read_text(encoding="utf-8"))["note"]
