"""The praisonai CLI's stores in the real 4.7.19 home: the per-project store, the REPL/TUI's unified files and
.last_session, the older run_* directories. Listed with their store and counts, shown, searched, and changed
in their owners' protocols (the real praisonai-code classes read the result)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers import snapshot
from tests.indexstate import holding, rows

RUN = "run_20261128_110000_ec9910"
STORES = {"bot_slack_7": "json", "bot_telegram_42": "json", "enc-1": "json", "gw-legacy": "json",
          "proj-sess-1": "project:8ccfb8a2", "tui0001a": "unified", "tui0002b": "unified", "db5b5fab": "unified",
          RUN: "legacy-run"}
UNIFIED_KEYS = ["session_id", "workspace", "created_at", "updated_at", "messages", "metadata", "parent_id",
                "children_ids", "total_input_tokens", "total_output_tokens", "total_cost", "request_count",
                "current_model"]


@pytest.fixture
def run(cli, gateway_home, monkeypatch):
    monkeypatch.chdir(gateway_home.project)
    return lambda *args: cli("--home", gateway_home.home, "session", *args)


DB_ROWS = {"agent-chat-1", "bot_telegram_42", "db5b5fab", "enc-db-1", "gw-1", "gw-legacy", "tui0001a", "tui0002b"}


def listed(run) -> dict[str, dict]:
    """The rows of every store but sessions.db (whose rows tests/cli/commands/test_session_stores.py checks)."""
    return {r["session_id"]: r for r in run("list", "--json").json() if r["store"] != "sessions.db"}


# ---------------------------------------------------------------- reading


def test_list_shows_every_store_once_with_its_counts(run, gateway_home):
    result = run("list", "--json")
    assert (result.exit_code, result.stderr) == (0, "")
    got = {r["session_id"]: r for r in result.json() if r["store"] != "sessions.db"}
    assert {sid: r["store"] for sid, r in got.items()} == STORES
    assert {r["session_id"] for r in result.json() if r["store"] == "sessions.db"} == DB_ROWS
    assert len(result.json()) == len(STORES) + len(DB_ROWS)
    # the gateway imported the REPL/TUI's files: each copy is paired, untouched since, so equal
    assert {sid: (r["paired_with"], r["pair"]) for sid, r in got.items() if r["store"] == "unified"} == {
        sid: (["sessions.db"], "equal") for sid in ("db5b5fab", "tui0001a", "tui0002b")}
    assert {sid: r["message_count"] for sid, r in got.items()} == {
        "bot_slack_7": 2, "bot_telegram_42": 3, "enc-1": 5, "gw-legacy": 2, "proj-sess-1": 2, "tui0001a": 2,
        "tui0002b": 2, "db5b5fab": 1, RUN: 2}
    stats = got["tui0002b"]
    assert (stats["title"], stats["model"], stats["input_tokens"], stats["output_tokens"], stats["total_tokens"],
            stats["cost"], stats["children_ids"], stats["last_session"]) == (
        "Café ✓ stats", "gpt-4o-mini", 1200, 3400, 4600, 0.0131, [], True)
    assert (got["tui0001a"]["children_ids"], got["tui0001a"]["last_session"]) == (["db5b5fab"], False)
    assert got["db5b5fab"]["parent_id"] == "tui0001a"
    assert (got[RUN]["title"], got[RUN]["model"], got[RUN]["file"]) == (
        "old run", "gpt-4o-mini", str(gateway_home.sessions / RUN))
    assert (got["proj-sess-1"]["title"], got["proj-sess-1"]["total_tokens"]) == ("Refactor utils", 33)
    assert [sid for sid, r in got.items() if r["current_project"]] == ["proj-sess-1"]


def test_list_says_which_project_store_is_this_directorys(run, cli, gateway_home, monkeypatch):
    result = run("list")
    assert result.stderr == ("praisonmem: project:8ccfb8a2 is this directory's praisonai project store (git-remote "
                             "github.com/Acme/Demo-Repo)\n")
    assert result.stdout.splitlines()[0].split("\t")[-2:] == ["STORE", "PAIR"]
    monkeypatch.chdir(gateway_home.root)  # not a git repository: another project, with no store here
    elsewhere = cli("--home", gateway_home.home, "session", "list", "--json")
    assert elsewhere.stderr == "" and not any(r["current_project"] for r in elsewhere.json())


def test_the_praisonai_cli_lists_the_same_sessions_with_the_same_counts(run, oracle, gateway_home):
    praisonai = Path(oracle.python).parent / "praisonai"
    theirs = {}
    for extra in ([], ["--all"]):  # --all: the SessionManager runs
        done = subprocess.run([str(praisonai), "--json", "session", "list", *extra], cwd=gateway_home.project,
                              env=oracle.env(gateway_home.home, HOME=str(gateway_home.root)), capture_output=True,
                              text=True, timeout=120, check=True)
        theirs |= {r["session_id"]: r["event_count"] for r in json.loads(done.stdout)["sessions"]}
    mine = {sid: r["message_count"] for sid, r in listed(run).items()}
    assert mine == theirs  # praisonai's CLI reads the JSON files, not sessions.db


def test_show_renders_a_unified_session_and_json_is_its_file(run, gateway_home):
    shown = run("show", "tui0001a", "--store", "unified")
    assert shown.exit_code == 0 and shown.stderr == ""
    assert "\nStore     unified\n" in shown.stdout and "\nCopies    sessions.db holds the same session\n" in shown.stdout
    assert "Refunds take 5 days. PLANTED-TOKEN-UNIFIED" in shown.stdout and "Title     Refund policy chat" in shown.stdout
    assert "Model     gpt-4o" in shown.stdout
    raw = run("show", "tui0002b", "--store", "unified", "--json").stdout
    assert json.loads(raw) == json.loads((gateway_home.sessions / "tui0002b.json").read_text())


def test_show_renders_a_run_and_json_is_what_praisonai_exports(run, gateway_home):
    shown = run("show", RUN)
    assert "legacy question PLANTED-TOKEN-LEGACY" in shown.stdout and "#1 assistant" in shown.stdout
    data = run("show", RUN, "--json").json()
    assert data["metadata"] == json.loads((gateway_home.sessions / RUN / "metadata.json").read_text())
    assert [e["message"] for e in data["events"]] == ["legacy question PLANTED-TOKEN-LEGACY", "legacy answer"]
    assert run("show", str(gateway_home.sessions / RUN)).exit_code == 0  # by its path too


def test_search_finds_text_in_every_store(run):
    found = {(h["session_id"], h["index"]) for h in run("search", "refund policy", "--json").json()}
    assert {("tui0001a", 0), ("db5b5fab", 0)} <= found
    assert [h["session_id"] for h in run("search", "PLANTED-TOKEN-LEGACY", "--json").json()] == [RUN]
    assert [h["session_id"] for h in run("search", "PLANTED-TOKEN-PROJECT", "--json").json()] == ["proj-sess-1"]


def test_export_all_takes_every_store(run):
    exported = json.loads(run("export", "--all").stdout)
    assert sorted(d["session_id"] for d in exported["sessions"]) == sorted([*STORES, *DB_ROWS])
    unified = json.loads(run("export", "--all", "--store", "unified").stdout)
    assert sorted(d["session_id"] for d in unified["sessions"]) == ["db5b5fab", "tui0001a", "tui0002b"]


def test_one_id_in_two_stores_is_ambiguous_and_a_path_chooses(run, gateway_home):
    copy = json.loads((gateway_home.project_store / "proj-sess-1.json").read_text())
    (gateway_home.sessions / "proj-sess-1.json").write_text(json.dumps(copy))  # the TUI writes one id to two stores
    result = run("show", "proj-sess-1")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == ("praisonmem: error: 'proj-sess-1' is in several stores: json (proj-sess-1.json), "
                             "project:8ccfb8a2 (projects/8ccfb8a2/proj-sess-1.json); give --store json or --store "
                             "project:8ccfb8a2\n")
    by_path = run("show", str(gateway_home.project_store / "proj-sess-1.json"))
    assert by_path.exit_code == 0 and "\nStore     project:8ccfb8a2\n" in by_path.stdout
    by_store = run("show", "proj-sess-1", "--store", "project:8ccfb8a2")
    assert by_store.exit_code == 0 and "\nStore     project:8ccfb8a2\n" in by_store.stdout
    assert "\nCopies    json holds the same session\n" in by_store.stdout


# ---------------------------------------------------------------- unified: its own protocol

UNIFIED_LOAD = """
    import json, sys
    from pathlib import Path
    from praisonai_code.cli.session.unified import UnifiedSessionStore
    store = UnifiedSessionStore(session_dir=Path(sys.argv[1]))
    session = store.load(sys.argv[2])
    loaded = session.to_dict()
    session.add_user_message("a TUI turn after praisonmem")
    store.save(session)
    print(json.dumps({"loaded": loaded, "saved": UnifiedSessionStore(session_dir=Path(sys.argv[1])).load(sys.argv[2])
                      .to_dict()}))
"""


def test_retitling_a_unified_session_rewrites_it_in_place_as_the_tui_does(run, oracle, gateway_home):
    path = gateway_home.sessions / "tui0002b.json"
    before, inode, mode = json.loads(path.read_text()), path.stat().st_ino, path.stat().st_mode
    result = run("rename", "tui0002b", "--title", "Ünïcode title", "--store", "unified")
    assert result.exit_code == 0, result.stderr
    raw = path.read_bytes()
    doc = json.loads(raw)
    assert (path.stat().st_ino, path.stat().st_mode) == (inode, mode)  # same inode: a waiting TUI writes here
    assert raw == json.dumps(doc, indent=2).encode() and raw.isascii()  # its serialisation
    assert list(doc) == UNIFIED_KEYS
    assert doc == {**before, "metadata": {"title": "Ünïcode title"}, "updated_at": doc["updated_at"]}
    assert "+" not in doc["updated_at"] and doc["updated_at"] > before["updated_at"]  # naive local time, as saved
    assert dict(rows(gateway_home.index)["meta"])["tui0002b"] == doc["updated_at"]
    got = oracle.json(UNIFIED_LOAD, gateway_home.sessions, "tui0002b", home=gateway_home.home)
    assert got["loaded"]["metadata"]["title"] == "Ünïcode title"
    assert got["saved"]["messages"][-1]["content"] == "a TUI turn after praisonmem"


def test_a_unified_session_is_not_renamed(run, gateway_home):
    before = snapshot(gateway_home.home)
    result = run("rename", "tui0001a", "tui-new", "--force", "--store", "unified")
    assert (result.exit_code, result.stdout) == (4, "")
    assert result.stderr == ("praisonmem: error: tui0001a is a REPL/TUI session: the TUI names it by its file and "
                             "keeps the same id in its project store and in its forks' parent_id/children_ids, so "
                             "praisonmem does not rename it (set its title with --title); nothing changed\n")
    assert snapshot(gateway_home.home) == before


HOLD_DATA_LOCK = """
import fcntl, sys, time
handle = open(sys.argv[1], "r+b")  # UnifiedSessionStore.save: LOCK_EX on the data file, opened without truncating
fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(30)
"""


def test_a_unified_file_waits_for_the_tuis_lock(cli, run, gateway_home):
    import sys

    holder = subprocess.Popen([sys.executable, "-c", HOLD_DATA_LOCK, str(gateway_home.sessions / "tui0001a.json")],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "locked"
    try:
        before = snapshot(gateway_home.home)
        result = cli("--home", gateway_home.home, "--lock-timeout", "0.3", "session", "rename", "tui0001a",
                     "--title", "x", "--store", "unified")
        assert snapshot(gateway_home.home) == before
    finally:
        holder.kill()
        holder.wait()
    assert result.exit_code == 4 and "could not lock it within 0.3s (the TUI may be writing it)" in result.stderr


def test_deleting_a_unified_session_removes_its_file_and_index_rows(run, gateway_home):
    last = (gateway_home.sessions / ".last_session").read_bytes()
    assert run("delete", "tui0001a", "--yes", "--force", "--store", "unified").exit_code == 0
    assert not (gateway_home.sessions / "tui0001a.json").exists()
    assert "tui0001a" not in {sid for sid, _ in rows(gateway_home.index)["meta"]}
    # sessions.db keeps its imported copy: that store is not this change's (the gateway imports the JSON files
    # once, then each side is written on its own)
    assert holding(gateway_home.home, b"PLANTED-TOKEN-UNIFIED") == ["sessions/sessions.db"]
    assert (gateway_home.sessions / ".last_session").read_bytes() == last


def test_importing_over_a_unified_file_is_refused(run, gateway_home, tmp_path):
    doc = {"session_id": "tui0001a", "messages": [], "agent_name": "x"}
    payload = tmp_path / "p.json"
    payload.write_text(json.dumps(doc))
    before = snapshot(gateway_home.home)
    result = run("import", payload, "--on-conflict", "replace", "--yes")
    assert (result.exit_code, result.stdout) == (4, "")
    assert result.stderr == (f"praisonmem: error: failed tui0001a: {gateway_home.sessions / 'tui0001a.json'}: this "
                             "file is another store's session (a REPL/TUI session), which a JSON-store write would "
                             "make unloadable for its owner; nothing changed\n")
    assert snapshot(gateway_home.home) == before


# ---------------------------------------------------------------- runs: SessionManager's own changes

RUN_LOAD = """
    import json, sys
    from pathlib import Path
    from praisonai_code.cli.state.sessions import SessionManager
    manager = SessionManager(sessions_dir=Path(sys.argv[1]))
    print(json.dumps({"runs": [m.to_dict() for m in manager.list()], "events": manager.get_events(sys.argv[2])}))
"""


def test_retitling_a_run_sets_its_name_as_session_manager_does(run, oracle, gateway_home):
    meta_path = gateway_home.sessions / RUN / "metadata.json"
    before = json.loads(meta_path.read_text())
    assert run("rename", RUN, "--title", "  Renamed run  ").exit_code == 0
    after = json.loads(meta_path.read_text())
    assert after == {**before, "name": "Renamed run", "updated_at": after["updated_at"]}
    assert after["updated_at"].endswith("+00:00") and after["updated_at"] > before["updated_at"]
    assert meta_path.read_bytes() == json.dumps(after, indent=2).encode()
    assert oct(meta_path.stat().st_mode & 0o777) == "0o644"
    got = oracle.json(RUN_LOAD, gateway_home.sessions, RUN, home=gateway_home.home)
    assert [r["name"] for r in got["runs"]] == ["Renamed run"] and len(got["events"]) == 2
    assert run("rename", RUN, "--title", "").exit_code == 0
    assert json.loads(meta_path.read_text())["name"] is None


def test_a_run_is_not_renamed_to_another_id(run, gateway_home):
    result = run("rename", RUN, "run_other", "--force")
    assert result.exit_code == 4 and "its id is its run id and its directory's name" in result.stderr


def test_deleting_a_run_removes_its_directory_and_only_what_praisonai_wrote(run, gateway_home):
    stray = gateway_home.sessions / RUN / "notes.txt"
    stray.write_text("mine")
    before = snapshot(gateway_home.home)
    refused = run("delete", RUN, "--yes", "--force")
    assert (refused.exit_code, refused.stdout) == (4, "")
    assert "holds files praisonai's SessionManager did not write (notes.txt); not deleted" in refused.stderr
    assert snapshot(gateway_home.home) == before
    stray.unlink()
    assert run("delete", RUN, "--yes", "--force").exit_code == 0
    assert not (gateway_home.sessions / RUN).exists()
    assert holding(gateway_home.home, b"PLANTED-TOKEN-LEGACY") == []


# ---------------------------------------------------------------- the project store


def test_a_project_session_is_changed_in_its_own_directory(run, gateway_home):
    assert run("rename", "proj-sess-1", "proj-sess-2", "--force").exit_code == 0
    assert (gateway_home.project_store / "proj-sess-2.json").is_file()
    assert not (gateway_home.sessions / "proj-sess-2.json").exists()
    assert [sid for sid, _ in rows(gateway_home.project_store / "sessions_index.db")["meta"]] == ["proj-sess-2"]
    assert run("delete", "proj-sess-2", "--yes", "--force").exit_code == 0
    assert holding(gateway_home.home, b"PLANTED-TOKEN-PROJECT") == []
