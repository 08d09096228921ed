"""The root command: --version, the error contract (one line, the exit code, JSON with --json), lazy sub-commands."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from praisonmem import __version__


def test_version(cli):
    result = cli("--version")
    assert (result.exit_code, result.stdout) == (0, f"praisonmem {__version__}\n")


def test_python_dash_m_and_console_script_agree():
    out = subprocess.run([sys.executable, "-m", "praisonmem", "--version"], capture_output=True, text=True)
    assert (out.returncode, out.stdout) == (0, f"praisonmem {__version__}\n")


def test_output_into_a_closed_pipe_exits_quietly(fixture_home):
    proc = subprocess.Popen([sys.executable, "-m", "praisonmem", "--home", str(fixture_home), "session", "show",
                             "compacted-demo", "--archived"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()  # like `| head -1`
    assert proc.wait(timeout=30) in (0, 141)
    assert proc.stderr.read() == b""


def test_usage_error_is_one_line_with_exit_2(cli):
    result = cli("session", "list", "--bogus")
    assert result.exit_code == 2
    assert result.stderr == ("praisonmem: error: no such option: --bogus (possible options: --columns, --user) "
                             "(see 'praisonmem session list --help')\n")


def test_usage_error_as_json(cli):
    result = cli("session", "list", "--limit", "-1", "--json")
    assert result.exit_code == 2
    error = json.loads(result.stderr)
    assert set(error) == {"error"} and error["error"]["code"] == "usage" and error["error"]["exit_code"] == 2
    assert "--limit" in error["error"]["message"]


def test_not_found_as_json(cli, fixture_home):
    result = cli("--home", fixture_home, "session", "show", "nope", "--json")
    assert (result.exit_code, result.stdout) == (3, "")
    assert json.loads(result.stderr) == {"error": {
        "code": "not_found", "message": f"no session 'nope' in any store of {fixture_home / 'sessions'} (json)",
        "exit_code": 3}}


def test_no_arguments_prints_help(cli):
    result = cli()
    assert "Usage" in result.stdout + result.stderr


IMPORTED = """
import sys
from praisonmem.cli.app import run
assert run(sys.argv[1:]) == 0
heavy = ("rich", "filelock", "tarfile", "sqlite3", "multiprocessing", "tomli_w", "pydantic", "hashlib", "tempfile",
         "platformdirs", "orjson", "tomllib", "json", "base64", "_hashlib")
print()
print(" ".join(sorted(m for m in sys.modules if m.startswith("praisonmem") or m in heavy)))
"""
BASE = {"praisonmem", "praisonmem.cli", "praisonmem.cli.app", "praisonmem.cli.commands", "praisonmem.cli.options",
        "praisonmem.cli.output", "praisonmem.cli.state", "praisonmem.cli.streams", "praisonmem.core",
        "praisonmem.core.config",
        "praisonmem.core.errors", "praisonmem.core.io", "praisonmem.core.io.safetext", "praisonmem.core.lazy",
        "praisonmem.core.paths", "praisonmem.core.layout", "praisonmem.core.sessions",
        "praisonmem.core.io.inputfile"}  # the config file is read as every input file is: bounded, regular only


def imported_by(tmp_path, *args: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", IMPORTED, *args], cwd=tmp_path, capture_output=True, text=True,
                          check=True)
    return set(done.stdout.splitlines()[-1].split())


def test_workspace_id_imports_only_its_own_modules(tmp_path):
    """Start-up cost: `workspace id` loads its group and the sessions package's workspace module, nothing else
    (no other group, no file store, no Rich, no filelock, no hashlib, tempfile or platformdirs)."""
    own = {"praisonmem.cli.commands.workspace", "praisonmem.core.sessions.workspace",
           "praisonmem.core.sessions.scopes", "praisonmem.core.io.digest"}  # history ids' SHA-256, without OpenSSL
    assert imported_by(tmp_path, "workspace", "id", "--json") == BASE | own | {"json"}
    assert imported_by(tmp_path, "workspace", "id") == BASE | own  # text: no JSON module at all


def test_session_list_imports_the_json_store_and_nothing_it_does_not_use(tmp_path, fixture_home):
    assert imported_by(tmp_path, "--home", str(fixture_home), "session", "list", "--json") == BASE | {
        "praisonmem.cli.commands.session", "praisonmem.cli.progress", "praisonmem.cli.prompts",
        "praisonmem.core.io.jsonfile", "praisonmem.core.io.parallel",
        "praisonmem.core.sessions.documents", "praisonmem.core.sessions.listing",
        "praisonmem.core.sessions.stores", "praisonmem.core.sessions.stores.home",
        "praisonmem.core.sessions.stores.jsondir", "praisonmem.core.sessions.stores.unified",
        "praisonmem.core.sessions.stores.projects", "praisonmem.core.sessions.stores.runs",
        "praisonmem.core.sessions.stores.locate",
        "praisonmem.core.sessions.stores.names",
        "praisonmem.core.sessions.workspace", "praisonmem.core.sessions.scopes",
        "praisonmem.core.io.fastjson", "orjson", "json",  # the one JSON reader, and the writer of --json
        "praisonmem.core.io.gcpolicy",  # the collector kept out of the way of 100,000 rows
        "praisonmem.core.io.cache", "praisonmem.core.sessions.listcache",  # the rows kept between calls
        "praisonmem.core.io.digest"}  # history ids (the scope of each history_* file), without OpenSSL


def test_session_show_imports_neither_the_listing_nor_the_writers(tmp_path, fixture_home):
    """`session show` of a session no other store holds: no listing (nor its cache), no workspace rules, no
    transfer/ops/result."""
    assert imported_by(tmp_path, "--home", str(fixture_home), "session", "show", "my_chat") == BASE | {
        "praisonmem.cli.commands.session", "praisonmem.cli.progress", "praisonmem.cli.prompts",
        "praisonmem.cli.render", "praisonmem.cli.render.transcript",
        "praisonmem.core.io.jsonfile", "praisonmem.core.io.parallel", "praisonmem.core.io.fastjson", "orjson", "json",
        "praisonmem.core.io.gcpolicy",  # fastjson's, for a large file
        "praisonmem.core.sessions.documents", "praisonmem.core.sessions.view", "praisonmem.core.sessions.crypto",
        "praisonmem.core.sessions.stores", "praisonmem.core.sessions.stores.home",
        "praisonmem.core.sessions.stores.jsondir", "praisonmem.core.sessions.stores.unified",
        "praisonmem.core.sessions.stores.projects", "praisonmem.core.sessions.stores.runs",
        "praisonmem.core.sessions.stores.locate",
        "praisonmem.core.sessions.stores.names",
        "praisonmem.core.sessions.scopes", "praisonmem.core.io.digest"}  # --scope's choices, not the workspace rules


def test_a_built_command_has_its_annotations_evaluated_once(tmp_path):
    """Start-up cost: Typer would evaluate each annotation string four times while building a command."""
    code = ("import sys\n"
            "from praisonmem.cli.app import run, root\n"
            "from praisonmem.cli.commands import workspace\n"
            "assert run(['workspace', 'id', '--json']) == 0\n"
            "for f in (root, workspace.workspace_id_command):\n"
            "    print(sorted(k for k, v in f.__annotations__.items() if isinstance(v, str)))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-2:] == ["[]", "[]"]


def test_the_entry_point_freezes_what_the_imports_built(tmp_path):
    """Start-up cost: the console script imports with the collector off and moves the imported modules' objects
    out of its way before the command runs (gc.freeze); what the command creates is collected as ever."""
    code = ("import gc, sys\n"
            "import praisonmem.cli.app as app\n"
            "from praisonmem.core.io import gcpolicy\n"
            "print(gcpolicy.start_up_frozen())\n"
            "app.main = lambda: print(gc.get_freeze_count() > 0, gc.isenabled(), app.FREEZE_BUILT,\n"
            "                         gcpolicy.start_up_frozen())\n"
            "from praisonmem.__main__ import entry\n"
            "entry()\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert done.stdout == "False\nTrue True True True\n"  # the core may then unfreeze what start-up froze


def test_a_call_builds_only_the_sub_command_it_names(tmp_path):
    code = ("import sys\n"
            "from praisonmem.cli.app import SUBCOMMANDS, run\n"
            "assert run(['workspace', 'id', '--json']) == 0\n"
            "print(sorted(n for n, m in SUBCOMMANDS.items() if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "['workspace']"


def test_root_help_lists_every_sub_command_in_order(cli):
    from praisonmem.cli.app import SUBCOMMANDS

    panel = cli("--help").stdout.split("Commands", 1)[1]
    first_words = [line.strip("│ ").split(" ", 1)[0] for line in panel.splitlines()]
    assert [word for word in first_words if word in SUBCOMMANDS] == list(SUBCOMMANDS)


def test_memory_search_imports_neither_sqlite_nor_the_writers_tools(tmp_path):
    """The file provider's search: no sqlite3, no AutoMemory patterns, no lock library, no OpenSSL, no tempfile."""
    found = imported_by(tmp_path, "memory", "search", "dark", "--json")
    assert not found & {"sqlite3", "filelock", "hashlib", "tempfile", "platformdirs", "rich",
                        "praisonmem.core.memory.sqlitememory", "praisonmem.core.memory.automemory"}
    assert {"praisonmem.core.memory.search", "praisonmem.core.io.cache"} <= found


def test_every_change_action_has_its_wording():
    from praisonmem.cli.output import UNFINISHED, WOULD
    from praisonmem.core.result import Action

    assert set(WOULD) == {action.value for action in Action}
    assert set(UNFINISHED) <= set(WOULD)


def test_workspace_id_outside_any_repository_asks_no_git(tmp_path, monkeypatch):
    import subprocess

    from praisonmem.core.sessions import workspace

    monkeypatch.chdir(tmp_path)
    assert not workspace._maybe_in_repository(str(tmp_path.resolve()))
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("git was run"))
    workspace._resolve.cache_clear()
    assert workspace.workspace_id() == f"dir:{tmp_path.resolve()}"


@pytest.mark.parametrize("marker", [".git", "HEAD", "GIT_DIR"])
def test_workspace_id_asks_git_wherever_a_repository_may_be(tmp_path, monkeypatch, marker):
    import subprocess

    from praisonmem.core.sessions import workspace

    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    if marker == "GIT_DIR":
        monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere.git"))
    else:
        (tmp_path / marker).write_text("")  # a file is enough: worktrees' .git is one, bare repos have HEAD
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: calls.append(a) or subprocess.CompletedProcess(a, 128))
    workspace._resolve.cache_clear()
    assert workspace.workspace_id(inner) == f"dir:{inner.resolve()}"
    assert len(calls) == 1


def test_memory_store_imports_the_file_store_and_not_the_search_or_openssl(tmp_path):
    """Start-up cost: `memory store --long` (a new user: its directories and config.json made too) loads the file
    store and its writer's tools, not the search index, OpenSSL (ids by CPython's own SHA-256), sqlite3 or Rich."""
    assert imported_by(tmp_path, "memory", "store", "x", "--long") == BASE - {"praisonmem.core.sessions"} | {
        "praisonmem.cli.commands.memory", "praisonmem.cli.prompts", "praisonmem.core.memory",
        "praisonmem.core.memory.filememory", "praisonmem.core.memory.filememory_config",
        "praisonmem.core.memory.filememory_io", "praisonmem.core.memory.ops", "praisonmem.core.memory.providers",
        "praisonmem.core.io.jsonfile", "praisonmem.core.io.fastjson", "orjson", "json", "praisonmem.core.io.timeutil",
        "praisonmem.core.io.gcpolicy",  # no collection over a large store while it is rewritten
        "praisonmem.core.result", "praisonmem.core.io.cache",  # a write drops the file's cached search index
        "praisonmem.core.io.digest"}  # the new id


def test_check_imports_neither_the_secret_rules_nor_sqlite_nor_the_session_writers(tmp_path):
    """Start-up cost: `check HOME` of a home with nothing to migrate declares --level without compiling the secret
    rules, looks for a search index without loading SQLite, and asks the migration finders without loading
    adoption's, the listing's or the writers' modules (nor asking git for the workspace id)."""
    sessions = tmp_path / "home" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "chat.json").write_text(json.dumps({"session_id": "chat", "messages": []}))
    assert imported_by(tmp_path, "check", str(tmp_path / "home"), "--json") == BASE | {
        "praisonmem.cli.commands.check", "praisonmem.cli.progress", "praisonmem.core.check",
        "praisonmem.core.check.rules", "praisonmem.core.check.secrets", "praisonmem.core.check.walk",
        "praisonmem.core.secrets", "praisonmem.core.secrets.levels",  # --level's choices, not the rules
        "praisonmem.core.io.jsonfile", "praisonmem.core.io.fastjson", "orjson", "json", "praisonmem.core.io.timeutil",
        "praisonmem.core.io.gcpolicy", "praisonmem.core.io.parallel", "praisonmem.core.learn", "praisonmem.core.memory", "praisonmem.core.result",
        "praisonmem.core.sessions.documents", "praisonmem.core.sessions.stores",
        "praisonmem.core.sessions.stores.home", "praisonmem.core.sessions.stores.jsondir",
        "praisonmem.core.sessions.stores.unified",  # the REPL/TUI files, checked by their own rules
        "praisonmem.core.sessions.stores.projects", "praisonmem.core.sessions.stores.runs",
        "praisonmem.core.sessions.stores.locate", "praisonmem.core.sessions.stores.names",
        "praisonmem.core.migrate", "praisonmem.core.sessions.histories", "praisonmem.core.sessions.dbimport",
        "praisonmem.core.sessions.workspace", "praisonmem.core.sessions.scopes", "praisonmem.core.io.digest"}


LOCATE = BASE - {"praisonmem.core.sessions"} | {"praisonmem.cli.commands.locate", "praisonmem.core.locate", "praisonmem.core.locate.model",
          "praisonmem.core.locate.places", "praisonmem.core.locate.run", "praisonmem.core.locate.sniff",
          "praisonmem.core.locate.sqlitekind", "praisonmem.core.locate.walk"}


def test_locate_loads_sqlite_only_when_it_meets_a_database_and_no_server_driver(tmp_path):
    """Start-up cost: `locate --json` of a tree of JSON files loads neither SQLite nor the URL parsers nor the
    server checks (nor Rich: --json); SQLite only once a file may be a database."""
    tree = tmp_path / "tree"
    (tree / "sessions").mkdir(parents=True)
    (tree / "sessions" / "chat.json").write_text(json.dumps({"session_id": "chat", "messages": []}))
    (tree / "notes.txt").write_text("x")
    assert imported_by(tmp_path, "locate", str(tree), "--json") == LOCATE | {"json"}
    (tree / "app.db").write_bytes(b"")  # empty: not SQLite, not opened as a database
    assert imported_by(tmp_path, "locate", str(tree), "--json") == LOCATE | {"json"}
    sqlite3 = __import__("sqlite3")
    sqlite3.connect(tree / "other.db").execute("CREATE TABLE t (x)").connection.commit()
    assert imported_by(tmp_path, "locate", str(tree), "--json") == LOCATE | {
        "json", "sqlite3", "praisonmem.core.io.sqlite", "tempfile"}  # its read-only connection (a private copy)
