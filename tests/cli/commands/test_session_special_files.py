"""Files that are no regular file where sessions live, and files praisonmem cannot read.

Only regular files are read, by every command, without blocking: a named pipe (``mkfifo``) or a link to a device
in a sessions directory is listed as unreadable and refused with one line (exit 4), never waited on or read
without end; ``session delete`` of one, or of a file praisonmem cannot read, refuses unless ``--force``. Each
case runs in its own process with a deadline and a memory cap, so a regression fails instead of hanging.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli.test_failure_modes import one_line, run_cli
from tests.helpers import snapshot


@pytest.fixture
def odd_home(fixture_home) -> Path:
    """The real home with a named pipe and a link to /dev/zero among its session files."""
    sessions = fixture_home / "sessions"
    os.mkfifo(sessions / "pipe.json")
    (sessions / "zero.json").symlink_to("/dev/zero")
    return fixture_home


def cli(home: Path, *args: object) -> tuple[int, str, str]:
    done = run_cli("--home", str(home), *map(str, args))
    return done.returncode, done.stdout, done.stderr


def test_a_listing_names_them_unreadable_and_goes_on(odd_home):
    code, out, err = cli(odd_home, "session", "list", "--json")
    assert (code, err) == (0, 'praisonmem: warning: 2 unreadable session files listed with "unreadable": true\n')
    rows = {r["file"]: r["error"] for r in json.loads(out) if r["unreadable"]}
    sessions = odd_home / "sessions"
    assert rows == {str(sessions / "pipe.json"): "is a named pipe, not a regular file",
                    str(sessions / "zero.json"): "is a device, not a regular file"}
    assert cli(odd_home, "session", "search", "hotel")[0] == 0


@pytest.mark.parametrize("name, kind", [("pipe", "a named pipe"), ("zero", "a device")])
def test_show_refuses_with_one_line(odd_home, name, kind):
    path = odd_home / "sessions" / f"{name}.json"
    for given in (name, path):
        for extra in ([], ["--json"]):
            code, out, err = cli(odd_home, "session", "show", given, *extra)
            assert (code, out) == (4, "")
            if extra:
                assert json.loads(err)["error"] == {"code": "not_regular_file", "exit_code": 4,
                                                    "message": f"{path}: is {kind}, not a regular file"}
            else:
                assert err == f"praisonmem: error: {path}: is {kind}, not a regular file\n"


@pytest.mark.parametrize("name, kind", [("pipe", "a named pipe"), ("zero", "a device")])
def test_delete_refuses_without_force_and_force_removes_only_the_entry(odd_home, name, kind):
    path = odd_home / "sessions" / f"{name}.json"
    before = snapshot(odd_home)
    code, out, err = cli(odd_home, "session", "delete", name, "--yes")
    assert (code, out) == (4, "")
    assert err == (f"praisonmem: error: {name}.json: praisonmem cannot read it (is {kind}, not a regular file), so "
                   "it cannot tell what deleting it loses; delete it anyway with --force\n")
    assert snapshot(odd_home) == before
    code, out, err = cli(odd_home, "session", "delete", name, "--yes", "--force")
    assert (code, err) == (0, "")
    assert not os.path.lexists(path) and Path("/dev/zero").is_char_device()


@pytest.mark.parametrize("args", [["session", "export", "--all"], ["session", "export", "pipe"],
                                  ["session", "rename", "pipe", "--title", "x"], ["session", "rename", "zero", "y"],
                                  ["session", "redact", "zero", "--yes"], ["session", "tail", "pipe"]])
def test_every_other_command_refuses_in_one_line(odd_home, args):
    before = snapshot(odd_home)
    code, out, err = cli(odd_home, *args)
    assert (code, out) == (4, "") and "not a regular file" in one_line(err)
    assert snapshot(odd_home) == before


def test_scan_reports_them_and_goes_on(odd_home):
    code, _, err = cli(odd_home, "session", "scan")
    assert code in (0, 1) and "pipe.json" in err and "Traceback" not in err


def test_pipes_elsewhere_in_the_home_never_block(gateway_home):
    sessions = gateway_home.sessions
    (sessions / ".last_session").unlink()
    os.mkfifo(sessions / ".last_session")  # read by every listing
    run = sessions / "run_20261128_110000_ec9910"
    (run / "events.jsonl").unlink()
    os.mkfifo(run / "events.jsonl")
    spill_dir = gateway_home.home / "state" / "session_spill"
    spill_dir.mkdir(parents=True, exist_ok=True)
    os.mkfifo(spill_dir / "bot_slack_7.1796050189520.12503.aaaa0001.json")  # a pipe among the spill files
    assert cli(gateway_home.home, "session", "list")[0] == 0
    code, out, err = cli(gateway_home.home, "session", "show", run.name)
    assert (code, out, err) == (4, "", f"praisonmem: error: {run}/events.jsonl: cannot read it: {run}/events.jsonl: "
                                       "is a named pipe, not a regular file\n")
    assert cli(gateway_home.home, "session", "show", "bot_slack_7")[0] == 0


def test_an_unreadable_session_is_deleted_only_with_force(fixture_home):
    """A file praisonmem cannot read (here a link loop, unreadable even for root) could hold anything: delete
    refuses it without --force; a file that reads but does not parse is the library's to quarantine, and is
    deleted as ever."""
    sessions = fixture_home / "sessions"
    (sessions / "loop.json").symlink_to("loop.json")
    (sessions / "cut.json").write_bytes(b'{"session_id": "cut", "messages": [')
    before = snapshot(fixture_home)
    code, out, err = cli(fixture_home, "session", "delete", "loop", "--yes")
    assert (code, out, err) == (4, "", "praisonmem: error: loop.json: praisonmem cannot read it (too many levels of "
                                       "symbolic links), so it cannot tell what deleting it loses; delete it anyway "
                                       "with --force\n")
    code, out, err = cli(fixture_home, "session", "delete", "loop", "cut", "--yes", "--json")
    assert (code, out) == (4, "") and json.loads(err)["error"]["code"] == "refused"
    assert snapshot(fixture_home) == before  # one unreadable name stops the whole delete: nothing went
    code, out, err = cli(fixture_home, "session", "delete", "loop", "cut", "--yes", "--force", "--json")
    assert code == 0, err
    assert [(c["action"], c["session_id"], c["file"]) for c in json.loads(out)] == [
        ("deleted", None, str(sessions / "loop.json")), ("deleted", None, str(sessions / "cut.json"))]
    assert not os.path.lexists(sessions / "loop.json") and not (sessions / "cut.json").exists()
    code, out, err = cli(fixture_home, "session", "delete", "interrupted-stream", "--yes")
    assert code == 0  # a readable session needs no --force


def test_a_permission_denied_session_is_refused_without_force(cli_inproc, fixture_home, monkeypatch):
    target = fixture_home / "sessions" / "my_chat.json"
    real_open = os.open

    def denied(path, flags, *args, **kwargs):  # root reads anything: the error an unreadable file gives
        if os.fspath(path) == str(target) and not flags & (os.O_WRONLY | os.O_RDWR):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", denied)
    result = cli_inproc("--home", fixture_home, "session", "delete", "my_chat", "--yes")
    assert (result.exit_code, result.stdout) == (4, "")
    assert result.stderr == ("praisonmem: error: my_chat.json: praisonmem cannot read it (permission denied), so it "
                             "cannot tell what deleting it loses; delete it anyway with --force\n")
    assert target.exists()
    forced = cli_inproc("--home", fixture_home, "session", "delete", "my_chat", "--yes", "--force", "--json")
    assert forced.exit_code == 0 and [c["action"] for c in forced.json()] == ["deleted"]
    assert not target.exists()


@pytest.fixture
def cli_inproc(cli):
    return cli


def test_a_session_id_with_a_lone_surrogate_is_shown(fixture_home):
    r"""JSON can hold a lone surrogate (``"\ud800"``), which no file name can: it is shown escaped."""
    sessions = fixture_home / "sessions"
    raw = b'{"session_id": "a\\ud800b", "messages": [{"role": "user", "content": "x \\udc00", "timestamp": 1}]}'
    (sessions / "sur.json").write_bytes(raw)
    code, out, err = cli(fixture_home, "session", "show", "sur")
    assert (code, err) == (0, "")
    assert "a\\ud800b" in out and "x \\udc00" in out
    code, out, err = cli(fixture_home, "session", "show", "sur", "--json")
    assert (code, out, err) == (0, raw.decode() + "\n", "")
    code, out, err = cli(fixture_home, "session", "list", "--json")
    assert code == 0 and "a\ud800b" in [r["session_id"] for r in json.loads(out)]
    code, out, err = cli(fixture_home, "session", "export", "sur", "--format", "markdown")
    assert (code, err) == (0, "") and "a\\ud800b" in out
