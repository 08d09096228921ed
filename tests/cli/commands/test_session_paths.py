"""A SESSION given as a path is taken only when it names a session file directly in one of the session directories
of the home (``sessions/``, ``sessions/projects/<id>/``) or of ``--store``: a path anywhere else is a usage error
(exit 2), a file there that is no session document is refused (exit 4); either way nothing is read or written.
(A project directory's ``package.json`` once went for ``session delete package.json``.)"""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path

import pytest

from tests.helpers import snapshot

PACKAGE = '{\n  "name": "my-app",\n  "version": "1.0.0"\n}\n'


@pytest.fixture(autouse=True)
def deadline():
    """A command that took the path would start watching it for ever: fail after 15 s instead."""
    def expired(signum, frame):
        raise AssertionError("praisonmem ran for 15 s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(15)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def project_dir(tmp_path, monkeypatch) -> Path:
    """cwd: a project with a package.json, as the attack found it."""
    path = tmp_path / "my-app"
    path.mkdir()
    (path / "package.json").write_text(PACKAGE)
    monkeypatch.chdir(path)
    return path


def outside_line(name: str, *directories: Path) -> str:
    shown = ", ".join(str(d) for d in directories)
    return (f"praisonmem: error: {name}: not in a sessions directory ({shown}); a SESSION given as a path must name "
            "a session file directly in one of them\n")


COMMANDS = [
    ["session", "delete", "{s}", "--yes"],
    ["session", "delete", "{s}", "--yes", "--force"],
    ["session", "rename", "{s}", "renamed"],
    ["session", "rename", "{s}", "--title", "hello"],
    ["session", "redact", "{s}", "--yes"],
    ["session", "show", "{s}"],
    ["session", "show", "{s}", "--json"],
    ["session", "export", "{s}"],
    ["session", "scan", "{s}"],
    ["session", "tail", "{s}"],
    ["session", "watch", "{s}"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: "-".join(a[1:3] + a[4:5]))
def test_a_file_outside_the_sessions_directories_is_a_usage_error_and_untouched(cli, fixture_home, project_dir, args):
    before = snapshot(project_dir), snapshot(fixture_home)
    result = cli("--home", fixture_home, *[a.format(s="package.json") for a in args])
    assert (result.exit_code, result.stdout) == (2, "")
    if "--json" in args:
        assert json.loads(result.stderr)["error"]["exit_code"] == 2
    else:
        assert result.stderr == outside_line("package.json", fixture_home / "sessions")
    assert (snapshot(project_dir), snapshot(fixture_home)) == before  # no .lock beside it either
    assert (project_dir / "package.json").read_text() == PACKAGE


def test_migrate_and_upsonic_convert_take_no_outside_path(cli, fixture_home, project_dir, tmp_path):
    before = snapshot(project_dir)
    moved = cli("--home", fixture_home, "session", "migrate", "--from", "json", "--to", tmp_path / "elsewhere",
                "package.json", "--move", "--yes")
    assert (moved.exit_code, moved.stderr) == (2, outside_line("package.json", fixture_home / "sessions"))
    converted = cli("--home", fixture_home, "upsonic", "convert", "package.json", "--from-praisonai",
                    "--db", tmp_path / "up.db")
    assert (converted.exit_code, converted.stderr) == (2, outside_line("package.json", fixture_home / "sessions"))
    assert snapshot(project_dir) == before and not (tmp_path / "elsewhere").exists()


def test_a_session_document_outside_is_refused_too(cli, fixture_home, tmp_path):
    """Even a real session file is not taken from elsewhere: praisonmem changes files of the home only."""
    elsewhere = tmp_path / "copy"
    elsewhere.mkdir()
    shutil.copy(fixture_home / "sessions" / "my_chat.json", elsewhere / "my_chat.json")
    before = snapshot(elsewhere)
    result = cli("--home", fixture_home, "session", "rename", elsewhere / "my_chat.json", "--title", "x")
    assert (result.exit_code, result.stderr) == (2, outside_line(str(elsewhere / "my_chat.json"),
                                                                 fixture_home / "sessions"))
    assert snapshot(elsewhere) == before


def test_no_escape_through_dotdot_or_a_linked_directory(cli, fixture_home, project_dir):
    sessions = fixture_home / "sessions"
    (sessions / "linked").symlink_to(project_dir, target_is_directory=True)
    (sessions / "package.json").write_text('{"session_id": "package", "messages": []}')  # a real one, in place
    shutil.copy(project_dir / "package.json", project_dir.parent / "package.json")
    before = snapshot(project_dir.parent)
    for name in (f"{sessions}/linked/package.json",  # the file is the project's
                 f"{sessions}/linked/../package.json",  # the system resolves linked/.. to the project's parent
                 f"{sessions}/../../{project_dir.name}/package.json"):
        result = cli("--home", fixture_home, "session", "delete", name, "--yes", "--force")
        assert (result.exit_code, result.stderr) == (2, outside_line(name, sessions)), name
    assert snapshot(project_dir.parent) == before
    assert (sessions / "package.json").exists()


def test_a_path_in_the_sessions_directory_works_however_it_is_written(cli, fixture_home, monkeypatch):
    sessions = fixture_home / "sessions"
    done = cli("--home", fixture_home, "session", "rename", f"{sessions}/../sessions/my_chat.json", "--title", "T")
    assert (done.exit_code, done.stderr) == (0, "")
    assert json.loads((sessions / "my_chat.json").read_text())["metadata"]["title"] == "T"
    monkeypatch.chdir(sessions)
    shown = cli("--home", fixture_home, "session", "show", "my_chat.json", "--json")
    assert shown.exit_code == 0 and shown.stdout.encode() == (sessions / "my_chat.json").read_bytes() + b"\n"
    # the same session named twice, by path and by id, is one target
    deleted = cli("--home", fixture_home, "session", "delete", "./my_chat.json", "my_chat", "--yes", "--force",
                  "--json")
    assert [c["file"] for c in deleted.json()] == [str(sessions / "my_chat.json")]
    assert not (sessions / "my_chat.json").exists()


def test_a_file_in_the_sessions_directory_that_is_no_session_is_refused(cli, fixture_home):
    sessions = fixture_home / "sessions"
    (sessions / "pkg.json").write_text(PACKAGE)
    (sessions / "list.json").write_text("[1, 2]")
    cases = {
        sessions / "pkg.json": f"{sessions}/pkg.json: not a session document (required key 'session_id' is "
                               "missing); a SESSION given as a path must name a session document",
        sessions / "my_chat.json.lock": f"{sessions}/my_chat.json.lock: not a session file (sessions are <id>.json "
                                        "files); a SESSION given as a path must name a session document",
        sessions / ".." / "sessions" / "compacted-demo.json.lock":
            f"{sessions}/compacted-demo.json.lock: not a session file (sessions are <id>.json files); a SESSION "
            "given as a path must name a session document",
    }
    before = snapshot(fixture_home)
    for path, line in cases.items():
        for args in (["rename", path, "--title", "x"], ["rename", path, "other"], ["delete", path, "--yes", "--force"],
                     ["redact", path, "--yes"], ["show", path]):
            result = cli("--home", fixture_home, "session", *args)
            assert (result.exit_code, result.stdout, result.stderr) == (4, "", f"praisonmem: error: {line}\n"), args
    assert snapshot(fixture_home) == before  # no pkg.json.lock, nothing rewritten
    # JSON that is no object is a session file the library fails on: reported as unreadable, as by its stem
    shown = cli("--home", fixture_home, "session", "show", sessions / "list.json")
    assert (shown.exit_code, shown.stderr) == (4, f"praisonmem: error: {sessions}/list.json: top-level JSON value "
                                                  "is an array, not an object\n")


def test_an_unreadable_file_in_place_is_reported_as_by_its_stem(cli, fixture_home):
    """A file there that cannot be read or parsed is a session the library fails on (check reports it so): named
    by its path, it is reported exactly as when it is named by its stem."""
    sessions = fixture_home / "sessions"
    (sessions / "cut.json").write_bytes(b'{"session_id": "cut", "messages": [')
    by_path = cli("--home", fixture_home, "session", "show", sessions / "cut.json")
    by_stem = cli("--home", fixture_home, "session", "show", "cut")
    assert by_path.exit_code == by_stem.exit_code == 4 and by_path.stderr == by_stem.stderr
    assert "invalid JSON" in by_path.stderr


def test_the_praisonai_cli_stores_take_paths_only_in_place(cli, gateway_home, tmp_path):
    sessions = gateway_home.sessions
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copytree(sessions / "run_20261128_110000_ec9910", outside / "run_20261128_110000_ec9910")
    shutil.copy(sessions / "tui0001a.json", outside / "tui0001a.json")
    shutil.copy(gateway_home.project_store / "proj-sess-1.json", outside / "proj-sess-1.json")
    directories = [sessions, *sorted((sessions / "projects").iterdir())]
    before = snapshot(outside)
    for name in (outside / "run_20261128_110000_ec9910", outside / "run_20261128_110000_ec9910" / "metadata.json",
                 outside / "tui0001a.json", outside / "proj-sess-1.json"):
        result = cli("--home", gateway_home.home, "session", "delete", name, "--yes", "--force")
        assert (result.exit_code, result.stderr) == (2, outside_line(str(name), *directories)), name
    assert snapshot(outside) == before
    # in place, each store takes its own by path
    for name, store in ((sessions / "run_20261128_110000_ec9910", "legacy-run"),
                        (sessions / "run_20261128_110000_ec9910" / "metadata.json", "legacy-run"),
                        (sessions / "tui0001a.json", "unified"),
                        (gateway_home.project_store / "proj-sess-1.json", gateway_home.project_store.name)):
        shown = cli("--home", gateway_home.home, "session", "show", name, "--tail", "1")
        assert shown.exit_code == 0, (name, shown.stderr)
        assert store in shown.stdout


def test_a_store_directory_takes_paths_in_it_only(cli, fixture_home, tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    shutil.copy(fixture_home / "sessions" / "my_chat.json", store / "mine.json")
    result = cli("session", "show", fixture_home / "sessions" / "my_chat.json", "--store", store)
    assert (result.exit_code, result.stderr) == (2, outside_line(str(fixture_home / "sessions" / "my_chat.json"),
                                                                 store))
    assert cli("session", "show", store / "mine.json", "--store", store).exit_code == 0
    # a file there is judged as a session file whatever its name (check would take this one for FileMemory's)
    (store / "short_term.json").write_text("[]")
    (store / "config.json").write_text(PACKAGE)
    for name, why in (("short_term.json", "top-level JSON value is an array, not an object"),
                      ("config.json", None)):
        result = cli("session", "rename", store / name, "--title", "x", "--store", store)
        assert result.exit_code == 4, result.stderr
        if why is None:
            assert result.stderr == (f"praisonmem: error: {store}/config.json: not a session document (required key "
                                     "'session_id' is missing); a SESSION given as a path must name a session "
                                     "document\n")
        else:
            assert why in result.stderr
    assert not (store / "config.json.lock").exists()


def test_an_id_with_a_slash_is_still_an_id(cli, fixture_home):
    """A name that is no path to anything is a session id, sanitised as the library does."""
    result = cli("--home", fixture_home, "session", "show", "support/ticket #1234", "--json")
    assert result.exit_code == 0
    assert result.json()["session_id"] == "support/ticket #1234"
