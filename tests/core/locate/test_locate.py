"""``locate`` over a machine the real libraries wrote (see :mod:`.machine`): every store with its kind, library,
counts, command and flags; no decoy; nothing changed on disk; homes, mem0's dir and configured stores; servers
masked and checked."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.core.locate.machine import build
from tests.helpers import snapshot


@pytest.fixture(scope="module")
def machine(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("machine")
    return root, build(root)


@pytest.fixture
def on_machine(machine, monkeypatch):
    root, facts = machine
    monkeypatch.setenv("HOME", str(root / "home"))
    monkeypatch.delenv("MEM0_DIR", raising=False)
    monkeypatch.chdir(root / "work")
    return root, facts


def unreadable(monkeypatch, *paths: Path) -> None:
    """Root reads every directory whatever its mode, so the error an unreadable one gives is raised here."""
    real = os.scandir
    denied = {str(p) for p in paths}

    def scandir(path="."):
        if os.fspath(path) in denied:
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)


def rows(out: str, root: Path) -> list[tuple[str, str, str, dict, list[str]]]:
    return [(s["path"].removeprefix(f"{root}/"), s["kind"], s["library"], s["holds"], s["flags"])
            for s in json.loads(out)["stores"]]


def expected(facts: dict[str, str]) -> list[tuple[str, str, str, dict, list[str]]]:
    gw = "home/.praisonai/sessions"
    p = "work/project"
    return [
        ("home/.mem0/history.db", "mem0-history", "mem0", {"rows": 2, "memories": 1, "messages": 0}, []),
        ("home/.praison/sessions", "session-dir", "praisonaiagents", {"sessions": 12}, ["orphan", "unreachable"]),
        ("home/.praisonai/learn", "learn-files", "praisonaiagents", {"users": 1, "stores": 4}, []),
        (gw, "session-dir", "praisonaiagents", {"sessions": 7, "encrypted": 1}, []),
        (f"{gw}/projects/8ccfb8a2", "project-sessions", "praisonai", {"sessions": 1}, []),
        (f"{gw}/projects/8ccfb8a2/sessions_index.db", "session-index", "praisonaiagents", {"sessions": 1}, []),
        (f"{gw}/sessions.db", "gateway-transcripts", "praisonaiagents", {"sessions": 8}, []),
        (f"{gw}/sessions_index.db", "session-index", "praisonaiagents", {"sessions": 7}, []),
        (f"{p}/.praisonai/chroma_db_alice", "chroma-memory", "praisonaiagents",
         {"collection": "memory_store_alice", "items": 2}, []),
        (f"{p}/.praisonai/knowledge/chroma", "chroma-knowledge", "praisonaiagents",
         {"collection": "praisonai_knowledge", "items": 1}, []),
        (f"{p}/.praisonai/long_term_carol.db", "sqlite-memory", "praisonaiagents", {"items": 1, "user": "carol"}, []),
        (f"{p}/.praisonai/memory", "filememory", "praisonaiagents", {"users": 2}, []),
        (f"{p}/.praisonai/memory/{facts['orphan']}", "filememory-user", "praisonaiagents", {"users": 1}, ["orphan"]),
        (f"{p}/.praisonai/short_term_carol.db", "sqlite-memory", "praisonaiagents", {"items": 1, "user": "carol"}, []),
        (f"{p}/knowledge.db", "knowledge-sqlite", "praisonaiagents", {"items": 1}, []),
        (f"{p}/learn/learn.db", "learn-sqlite", "praisonaiagents", {"rows": 1}, []),
        (f"{p}/praisonai_conversations", "conversation-json", "praisonai", {"sessions": 2}, []),
        (f"{p}/praisonai_conversations.db", "conversation-sqlite", "praisonai", {"sessions": 5, "messages": 17}, []),
        (f"{p}/storage.db", "praisonai-storage", "praisonai", {"rows": 1}, []),
        (f"{p}/upsonic.db", "upsonic-sqlite", "upsonic", {"sessions": 1, "users": 1}, []),
        (f"{p}/upsonic_json_db", "upsonic-json", "upsonic", {"sessions": 1, "users": 1}, []),
    ]


def test_every_store_is_found_by_its_content_and_no_decoy(cli, on_machine, monkeypatch):
    root, facts = on_machine
    decoys = root / "work" / "decoys"
    unreadable(monkeypatch, decoys / "unreadable")
    result = cli("locate", "--json")
    assert result.exit_code == 1, result.stderr  # one directory could not be read
    assert rows(result.stdout, root) == expected(facts)
    document = json.loads(result.stdout)
    assert document["skipped"] == [{"path": str(decoys / "unreadable"), "reason": "permission denied"}]
    assert document["servers"] == []
    assert result.stderr == ""


def test_the_commands_sizes_and_times_are_the_stores(cli, on_machine):
    root, facts = on_machine
    p = root / "work" / "project"
    stores = {s["path"]: s for s in json.loads(cli("locate", "--json").stdout)["stores"]}
    upsonic = stores[str(p / "upsonic.db")]
    assert upsonic["command"] == f"praisonmem upsonic sessions --db {p}/upsonic.db"
    assert (upsonic["size"], upsonic["modified"]) == ((p / "upsonic.db").stat().st_size,
                                                      (p / "upsonic.db").stat().st_mtime)
    chroma = stores[str(p / ".praisonai" / "chroma_db_alice")]
    files = [f for f in (p / ".praisonai" / "chroma_db_alice").rglob("*") if f.is_file()]
    assert chroma["size"] == sum(f.stat().st_size for f in files)
    assert chroma["modified"] == max(f.stat().st_mtime for f in files)
    assert chroma["command"] == (f"praisonmem memory list --provider chroma --chroma-path {p}/.praisonai/chroma_db_alice "
                                 "--user-id alice")
    assert stores[str(p / ".praisonai" / "knowledge" / "chroma")]["command"] == \
        f"praisonmem knowledge list --path {p}/.praisonai/knowledge/chroma"
    memory = p / ".praisonai" / "memory"
    assert stores[str(memory)]["command"] == f"praisonmem --memory-dir {memory} memory users"
    assert stores[str(memory / facts["orphan"])]["command"] == \
        f"praisonmem --memory-dir {memory} memory list --user-id {facts['orphan']}"
    assert stores[str(p / ".praisonai" / "short_term_carol.db")]["command"] == \
        f"praisonmem --memory-dir {memory} memory list --provider sqlite --user-id carol"
    home = root / "home"
    assert stores[str(home / ".mem0" / "history.db")]["command"] == \
        f"praisonmem memory list --provider mem0-history --db {home}/.mem0/history.db"
    assert stores[str(p / "praisonai_conversations")]["command"] == \
        f"praisonmem session list --store {p}/praisonai_conversations"
    assert stores[str(p / "storage.db")]["command"] is None  # praisonmem cannot reach praisonai's storage.db
    project = home / ".praisonai" / "sessions" / "projects" / "8ccfb8a2"
    assert stores[str(project)]["command"] == \
        f"praisonmem --home {home}/.praisonai session list --store project:8ccfb8a2"
    assert stores[str(p / "learn" / "learn.db")]["command"] == f"praisonmem learn list --db {p}/learn/learn.db"
    assert stores[str(home / ".praisonai" / "learn")]["command"] == \
        f"praisonmem --home {home}/.praisonai learn list --backend file"


def test_locate_changes_nothing(cli, on_machine):
    root, _ = on_machine
    before = snapshot(root)
    assert cli("locate", "--json").exit_code == 0
    assert cli("locate").exit_code == 0
    after = snapshot(root)
    assert sorted(after) == sorted(before)  # no -wal, -shm, -journal or lock file appeared
    assert after == before  # not a byte, a mode or an mtime (directories' included)


def test_a_hot_journal_is_skipped_and_left_alone(cli, tmp_path, monkeypatch):
    work = tmp_path / "w"
    work.mkdir()
    db = work / "upsonic.db"
    shutil.copy(Path(__file__).resolve().parents[2] / "fixtures" / "upsonic-0.77.3" / "data.db", db)
    (work / "upsonic.db-journal").write_bytes(b"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7" + b"\0" * 504)  # a hot header
    before = snapshot(work)
    result = cli("locate", str(work), "--json")
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["stores"] == []
    assert [s["path"] for s in document["skipped"]] == [str(db)]
    assert "hot journal" in document["skipped"][0]["reason"]
    assert snapshot(work) == before


def test_depth_bounds_the_walk(cli, on_machine):
    root, _ = on_machine
    shallow = {s["path"] for s in json.loads(cli("locate", "--depth", "1", "--json").stdout)["stores"]}
    p = root / "work" / "project"
    assert str(p / "upsonic.db") in shallow  # work/project: one level below the cwd
    assert str(p / "learn" / "learn.db") not in shallow  # two levels
    assert str(root / "home" / ".praisonai" / "sessions") in shallow  # a home's sessions dir: one level below it
    zero = json.loads(cli("locate", "--depth", "0", "--json").stdout)["stores"]
    assert [s for s in zero if s["path"].startswith(str(root / "work"))] == []


def test_other_home_candidates_and_configured_absent_places(cli, tmp_path, monkeypatch):
    home = Path(os.environ["HOME"])
    shutil.copytree(Path(__file__).resolve().parents[2] / "fixtures" / "praisonai-1.7.17" / "home" / "sessions",
                    home / ".praisonai" / "sessions")
    (home / ".mem0").mkdir()
    shutil.copy(Path(__file__).resolve().parents[2] / "fixtures" / "upsonic-0.77.3" / "data.db",
                home / ".mem0" / "other.db")  # whatever is in the default mem0 dir is walked too
    monkeypatch.setenv("PRAISONAI_HOME", str(tmp_path / "nohome"))
    monkeypatch.setenv("MEM0_DIR", str(tmp_path / "mem0"))
    monkeypatch.setenv("PRAISONMEM_UPSONIC_DB", str(tmp_path / "missing-upsonic.db"))
    result = cli("locate", "--json")
    assert result.exit_code == 0, result.stderr
    got = [(s["path"], s["kind"], s["flags"], s["size"], s["modified"], s["holds"], s["command"])
           for s in json.loads(result.stdout)["stores"]]
    assert got == sorted([
        (str(home / ".mem0" / "other.db"), "upsonic-sqlite", ["unreachable"],
         (home / ".mem0" / "other.db").stat().st_size, (home / ".mem0" / "other.db").stat().st_mtime,
         {"sessions": 4, "users": 2}, f"praisonmem upsonic sessions --db {home}/.mem0/other.db"),
        (str(home / ".praisonai" / "sessions"), "session-dir", ["unreachable"], got[1][3], got[1][4],
         {"sessions": 12}, f"praisonmem session list --store {home}/.praisonai/sessions"),
        (str(tmp_path / "mem0" / "history.db"), "mem0-history", ["absent"], 0, None, {}, None),
        (str(tmp_path / "missing-upsonic.db"), "upsonic-sqlite", ["absent"], 0, None, {}, None),
        (str(tmp_path / "nohome"), "home", ["absent"], 0, None, {}, None),
    ])


def test_configured_servers_are_listed_masked_and_checked(cli, monkeypatch):
    monkeypatch.setenv("PRAISONAI_CONVERSATION_STORE", "postgres")
    monkeypatch.setenv("PRAISONAI_CONVERSATION_URL", "postgresql://bob:pg-Secret-1@127.0.0.1:1/app")
    monkeypatch.setenv("PRAISONAI_STATE_URL", "redis://:rd-Secret-2@127.0.0.1:1/0")
    listed = cli("locate", "--json")
    assert listed.exit_code == 0, listed.stderr
    assert json.loads(listed.stdout)["servers"] == [
        {"url": "redis://:***@127.0.0.1:1/0", "kind": "state-redis", "library": "praisonai",
         "source": "env PRAISONAI_STATE_URL", "command": "praisonmem state list --store 'redis://:***@127.0.0.1:1/0'",
         "reachable": None, "reason": None},
        {"url": "postgresql://bob:***@127.0.0.1:1/app", "kind": "conversation-postgresql", "library": "praisonai",
         "source": "env PRAISONAI_CONVERSATION_URL",
         "command": "praisonmem session list --store 'postgresql://bob:***@127.0.0.1:1/app'",
         "reachable": None, "reason": None}]
    checked = cli("locate", "--connect", "--json")
    assert checked.exit_code == 0
    servers = json.loads(checked.stdout)["servers"]
    assert [s["reachable"] for s in servers] == [False, False]
    for server in servers:
        assert server["reason"] and "\n" not in server["reason"]
    assert "Secret" not in checked.stdout + checked.stderr
    human = cli("locate", "--connect")
    assert "Secret" not in human.stdout + human.stderr
    assert "no: " in human.stdout


def test_a_live_postgres_and_a_mysql_from_its_parts(cli, pg, monkeypatch):
    monkeypatch.setenv("PRAISONMEM_STORE", pg.rw_url)
    monkeypatch.setenv("PRAISONAI_CONVERSATION_STORE", "mysql")
    for name, value in (("MYSQL_HOST", "127.0.0.1"), ("MYSQL_PORT", "1"), ("MYSQL_USER", "amy"),
                        ("MYSQL_PASSWORD", "my-Secret-3"), ("MYSQL_DATABASE", "chat")):
        monkeypatch.setenv(name, value)
    result = cli("locate", "--connect", "--json")
    assert result.exit_code == 0, result.stderr
    servers = json.loads(result.stdout)["servers"]
    assert [(s["kind"], s["source"], s["reachable"]) for s in servers] == [
        ("conversation-postgresql", "env PRAISONMEM_STORE", True),
        ("conversation-mysql", "env MYSQL_HOST/MYSQL_PORT/MYSQL_USER/MYSQL_DATABASE", False)]
    assert servers[1]["url"] == "mysql://amy:***@127.0.0.1:1/chat"
    assert "Secret" not in result.stdout + result.stderr
    from urllib.parse import urlsplit

    assert urlsplit(pg.rw_url).password not in result.stdout + result.stderr


@pytest.mark.parametrize("state", ["crashed", "live"])
def test_a_wal_database_a_writer_has_open_or_left_is_counted_and_left_alone(cli, tmp_path, state):
    from tests.realhomes import copy_gateway_home
    from tests.sqlitestate import crashed_wal, live_wal

    gateway = copy_gateway_home(tmp_path / "g", project=False)
    db = gateway.db
    insert = ("INSERT INTO sessions (session_id, data, agent_name, gateway_session_id, agent_id, updated_at) "
              "VALUES ('new-one', '{}', NULL, NULL, NULL, 0)")
    names = ["sessions.db", "sessions.db-wal", "sessions.db-shm"]

    def run() -> tuple[dict, int, dict, dict]:
        before = snapshot(gateway.home)
        result = cli("locate", str(gateway.home / "sessions"), "--depth", "0", "--json")
        assert result.exit_code == 0, result.stderr
        size = sum((db.parent / n).stat().st_size for n in names)
        store = [s for s in json.loads(result.stdout)["stores"] if s["kind"] == "gateway-transcripts"][0]
        return store, size, before, snapshot(gateway.home)

    if state == "crashed":
        crashed_wal(db, insert)
        store, size, before, after = run()
    else:
        with live_wal(db, insert):
            store, size, before, after = run()
        # a reader beside a live writer shares its -shm, whose read marks every reader updates (SQLite's own)
        for snap in (before, after):
            del snap["sessions/sessions.db-shm"]
    assert store["holds"] == {"sessions": 9}  # the committed frames still in -wal are read
    assert store["size"] == size  # the database and its sidecars together
    assert after == before


def test_a_chosen_memory_dir_the_xdg_state_dir_and_a_json_conversation_store(cli, tmp_path, monkeypatch):
    fixtures = Path(__file__).resolve().parents[2] / "fixtures" / "praisonai-1.7.17"
    memory = tmp_path / "elsewhere" / ".praisonai" / "memory"
    shutil.copytree(fixtures / "project" / ".praisonai" / "memory", memory)
    state = tmp_path / "xdg-state"
    shutil.copytree(fixtures / "home" / "state", state / "praisonai" / "state")
    monkeypatch.setenv("XDG_STATE_HOME", str(state))  # no home exists: the state dir is XDG's
    monkeypatch.setenv("PRAISONMEM_MEMORY_DIR", str(memory))
    monkeypatch.setenv("PRAISONAI_CONVERSATION_STORE", "json")
    empty = tmp_path / "empty"
    empty.mkdir()
    result = cli("locate", str(empty), "--json")
    assert result.exit_code == 0, result.stderr
    got = [(s["path"], s["kind"], s["flags"], s["holds"]) for s in json.loads(result.stdout)["stores"]]
    assert got == [
        (str(Path.cwd() / "praisonai_conversations"), "conversation-json", ["absent"], {}),
        (str(memory), "filememory", [], {"users": 2, "users_with_saved_sessions": 1}),
        (str(state / "praisonai" / "state" / "session_spill"), "session-spill", [], {"spill_files": 1, "sessions": 1}),
    ]
    monkeypatch.setenv("PRAISONMEM_MEMORY_DIR", str(tmp_path / "nothing-here"))
    stores = json.loads(cli("locate", str(empty), "--json").stdout)["stores"]
    assert (str(tmp_path / "nothing-here"), "filememory", ["absent"]) in [(s["path"], s["kind"], s["flags"])
                                                                        for s in stores]


def test_a_dir_holding_the_homes_walks_each_once_and_keeps_their_flags(cli, on_machine):
    root, facts = on_machine
    from_home = json.loads(cli("locate", "--json").stdout)["stores"]
    whole = json.loads(cli("locate", str(root), "--json").stdout)["stores"]
    assert [s for s in whole if s["path"].startswith(str(root / "home"))] == \
        [s for s in from_home if s["path"].startswith(str(root / "home"))]
    assert rows(json.dumps({"stores": whole}), root) == sorted(expected(facts) + [
        ("outside/upsonic.db", "upsonic-sqlite", "upsonic", {"sessions": 1, "users": 1}, []),
        ("outside/upsonic_json_db", "upsonic-json", "upsonic", {"sessions": 1, "users": 1}, []),
        ("work/decoys/unreadable/upsonic.db", "upsonic-sqlite", "upsonic", {"sessions": 1, "users": 1}, [])],
        key=lambda row: (row[0], row[1]))


def test_each_file_is_visited_once(on_machine):
    import stat

    from praisonmem.core.config import Settings
    from praisonmem.core.locate import locate
    from praisonmem.core.paths import resolve

    root, _ = on_machine
    expected_files = 0
    for here, dirs, files in os.walk(root):  # links are not followed, as by locate
        dirs[:] = [d for d in dirs if d not in (".git", "node_modules", "__pycache__")
                   and not (Path(here) / d / "pyvenv.cfg").exists()]
        expected_files += sum(1 for f in files if stat.S_ISREG(os.lstat(Path(here) / f).st_mode))
    report = locate(resolve(), Settings(), [str(root)])
    assert report.files_visited == expected_files  # the homes inside the DIR are not walked a second time

