"""``backup create`` takes the home's ``learn/learn.db`` (praisonaiagents' sqlite learn backend) as a consistent
snapshot, even while an agent has it open mid-write (its ``-wal`` never copied on its own), and ``restore`` puts it
back where the library opens it: the library reads every store as it was."""

from __future__ import annotations

import sqlite3
import tarfile
from pathlib import Path

from tests.compat.test_learn_sqlite import library_add, library_read

OPEN_WRITER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("INSERT INTO learn_store (key, data) VALUES ('threads', '{}') ON CONFLICT(key) DO NOTHING")
print("open", flush=True)
sys.stdin.read()
"""


def test_learn_db_is_backed_up_as_a_snapshot_and_restored_where_the_library_reads_it(cli, tmp_path):
    import subprocess
    import sys

    home = tmp_path / "home"
    db = home / "learn" / "learn.db"
    library_add(home, db, ("persona", "Prefers tea", None), ("insights", "Asks about travel ☕", None))
    stores = library_read(home, db)
    # an agent keeps it open, its last write still in the -wal
    agent = subprocess.Popen([sys.executable, "-c", OPEN_WRITER, str(db)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert agent.stdout.readline().strip() == "open"
        assert Path(f"{db}-wal").exists()
        made = cli("--home", home, "--memory-dir", tmp_path / "none", "backup", "create", "-o", tmp_path / "b",
                   "--json")
    finally:
        agent.communicate("")
    assert made.exit_code == 0, made.stderr
    archive = Path(made.json()["path"])
    with tarfile.open(archive) as tar:
        names = tar.getnames()
    assert "home/learn/learn.db" in names and not any(n.startswith("home/learn/learn.db-") for n in names)
    assert cli("backup", "verify", archive).exit_code == 0
    target = tmp_path / "restored"
    restored = cli("backup", "restore", archive, "--to", target, "--yes")
    assert restored.exit_code == 0, restored.stderr
    copy = target / "home" / "learn" / "learn.db"
    conn = sqlite3.connect(f"{copy.absolute().as_uri()}?mode=ro&immutable=1", uri=True)
    try:
        assert conn.execute("PRAGMA quick_check").fetchall() == [("ok",)]
        assert conn.execute("SELECT data FROM learn_store WHERE key = 'threads'").fetchone() == ("{}",)
    finally:
        conn.close()
    assert library_read(target / "home", copy) == stores
    # restored over the home's own, replacing it: the library reads the backup's stores
    library_add(home, db, ("persona", "Added after the backup", None))
    back = cli("--home", home, "--memory-dir", tmp_path / "none", "backup", "restore", archive, "--on-conflict", "replace", "--yes")
    assert back.exit_code == 0, back.stderr
    assert library_read(home, db) == stores


def test_a_learn_db_of_another_program_is_left_out_and_one_with_a_view_refuses_the_backup(cli, tmp_path):
    home = tmp_path / "home"
    (home / "learn").mkdir(parents=True)
    db = home / "learn" / "learn.db"
    (home / "learn" / "private" / "u").mkdir(parents=True)
    (home / "learn" / "private" / "u" / "persona.json").write_text("{}")  # something else to back up
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE other (x)")
    conn.commit()
    conn.close()
    made = cli("--home", home, "--memory-dir", tmp_path / "none", "backup", "create", "-o", tmp_path / "b", "-v",
               "--json")
    assert made.exit_code == 0, made.stderr
    with tarfile.open(made.json()["path"]) as tar:
        assert "home/learn/learn.db" not in tar.getnames()
    assert "home/learn/learn.db: a learn.db without the learn_store table the library writes" in made.stderr
    db.unlink()
    conn = sqlite3.connect(db)
    conn.execute("CREATE VIEW learn_store AS SELECT 1 AS key")
    conn.commit()
    conn.close()
    refused = cli("--home", home, "--memory-dir", tmp_path / "none", "backup", "create", "-o", tmp_path / "c")
    assert (refused.exit_code, refused.stdout, refused.stderr.count("\n")) == (4, "", 1)
    assert refused.stderr.startswith(f"praisonmem: error: {db}: ") and refused.stderr.endswith("backup not written\n")
    assert not (tmp_path / "c").exists() or not any((tmp_path / "c").iterdir())
