"""What a write killed between its commit and its scrub leaves in sessions.db (the real 4.7.19 gateway home), and
who finishes it: the rerun of the same command (which then finds no session, or no secret), any praisonmem
write on the database, and ``praisonmem migrate``, which ``check`` names; a read or a dry run changes nothing.

A writer that commits and dies before its checkpoint is made with :func:`tests.sqlitestate.crashed_wal`: its
frames stay in -wal, and the main file keeps the page versions from before it, the removed text with them.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.helpers import snapshot
from tests.sqlitestate import crashed_wal


def files_holding(root: Path, token: str) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and token.encode() in p.read_bytes())


def killed_after_delete(gateway_home) -> None:
    """A delete of gw-1 committed (secure_delete on, as praisonmem's) by a writer killed before its checkpoint."""
    crashed_wal(gateway_home.db, "DELETE FROM sessions WHERE session_id = ?", "gw-1")
    assert files_holding(gateway_home.home, "PLANTED-TOKEN-DBONLY") == ["sessions/sessions.db"]


def residue_findings(cli, home) -> list[dict]:
    return [f for f in cli("check", home, "--json").json()["findings"] if f["code"] == "sessions_db.residue"]


def test_the_gateway_homes_database_as_written_has_no_residue(cli, gateway_home):
    assert residue_findings(cli, gateway_home.home) == []


def test_check_names_the_frames_a_killed_writer_left_and_the_command_that_clears_them(cli, gateway_home):
    killed_after_delete(gateway_home)
    before = snapshot(gateway_home.root)
    [finding] = residue_findings(cli, gateway_home.home)
    assert snapshot(gateway_home.root) == before
    assert finding["severity"] == "warning" and finding["file"] == str(gateway_home.db)
    assert finding["message"].startswith("sessions.db-wal holds ")
    assert finding["message"].endswith(" frames a writer left without checkpointing them (it was killed): the older "
                                       "page versions there and in the main file may keep text deleted since: scrub "
                                       "it, as a delete does")
    assert finding["fix"] == f"praisonmem --home {gateway_home.home} migrate"
    listed = cli("--home", gateway_home.home, "migrate", "--dry-run", "--json").json()
    assert [(f["kind"], f["subject"]) for f in listed if f["kind"] == "sessions_db.residue"] == [
        ("sessions_db.residue", str(gateway_home.db))]
    assert snapshot(gateway_home.root) == before
    assert cli("--home", gateway_home.home, "migrate", "--yes").exit_code == 0
    assert files_holding(gateway_home.home, "PLANTED-TOKEN-DBONLY") == []
    assert residue_findings(cli, gateway_home.home) == []


def test_rerunning_the_killed_delete_clears_its_text_though_the_session_is_gone(cli, gateway_home):
    killed_after_delete(gateway_home)
    before = snapshot(gateway_home.root)
    dry = cli("--home", gateway_home.home, "session", "delete", "gw-1", "--store", "sessions.db", "--dry-run")
    assert (dry.exit_code, dry.stdout) == (3, "") and snapshot(gateway_home.root) == before
    rerun = cli("--home", gateway_home.home, "session", "delete", "gw-1", "--store", "sessions.db", "--yes")
    assert (rerun.exit_code, rerun.stdout) == (3, "")
    assert rerun.stderr == f"praisonmem: error: no session 'gw-1' in {gateway_home.db}\n"
    assert files_holding(gateway_home.home, "PLANTED-TOKEN-DBONLY") == []
    assert not Path(f"{gateway_home.db}-wal").exists()


def test_rerunning_the_killed_redaction_clears_the_old_text_though_no_secret_is_left(cli, gateway_home):
    conn = sqlite3.connect(f"file:{gateway_home.db}?mode=ro&immutable=1", uri=True)
    [(data,)] = conn.execute("SELECT data FROM sessions WHERE session_id = 'agent-chat-1'")
    conn.close()
    assert "PLANTED-TOKEN-AGENTDB" in data
    crashed_wal(gateway_home.db, "UPDATE sessions SET data = ? WHERE session_id = 'agent-chat-1'",
                data.replace("PLANTED-TOKEN-AGENTDB", "[REDACTED:api_key]"))
    rerun = cli("--home", gateway_home.home, "session", "redact", "agent-chat-1", "--store", "sessions.db", "--yes",
                "--json")
    assert rerun.exit_code == 0, rerun.stderr
    assert [(c["action"], c["detail"]) for c in rerun.json()] == [("skipped", "no secrets found")]
    assert files_holding(gateway_home.home, "PLANTED-TOKEN-AGENTDB") == []


def test_any_write_on_the_database_finishes_the_scrub_and_a_read_changes_nothing(cli, gateway_home):
    killed_after_delete(gateway_home)
    before = snapshot(gateway_home.root)
    assert cli("--home", gateway_home.home, "session", "list", "--store", "sessions.db").exit_code == 0
    assert cli("--home", gateway_home.home, "session", "show", "agent-chat-1", "--store", "sessions.db").exit_code == 0
    assert snapshot(gateway_home.root) == before
    retitle = cli("--home", gateway_home.home, "session", "rename", "agent-chat-1", "--title", "kept",
                  "--store", "sessions.db")
    assert retitle.exit_code == 0, retitle.stderr
    assert files_holding(gateway_home.home, "PLANTED-TOKEN-DBONLY") == []


def test_free_pages_another_writer_left_unzeroed_are_named_and_cleared(cli, gateway_home):
    conn = sqlite3.connect(gateway_home.db, isolation_level=None)
    conn.execute("PRAGMA secure_delete=OFF")  # as SQLite builds without SQLITE_SECURE_DELETE write
    doc = json.loads(conn.execute("SELECT data FROM sessions WHERE session_id = 'gw-legacy'").fetchone()[0])
    for content in ("OLD-VERSION " + "x" * 20000, "short now"):
        doc["messages"][-1]["content"] = content
        conn.execute("UPDATE sessions SET data = ? WHERE session_id = 'gw-legacy'", (json.dumps(doc),))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    [finding] = residue_findings(cli, gateway_home.home)
    assert finding["message"].endswith(" free pages of sessions.db still hold bytes a writer freed without zeroing "
                                       "them, deleted rows' text among them: scrub it, as a delete does")
    assert int(finding["message"].split(" ", 1)[0]) >= 4  # 20 kB of overflow pages
    assert cli("--home", gateway_home.home, "migrate", "--yes").exit_code == 0
    assert files_holding(gateway_home.home, "OLD-VERSION") == []
    assert residue_findings(cli, gateway_home.home) == []
