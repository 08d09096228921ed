"""``praisonmem forget`` end to end over sessions the real praisonaiagents wrote: the plan, the confirmation,
the erase, the proof and the exit codes; bad usage changes nothing."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import snapshot

ALICE = ["alice's passport number is X1234567", "alice lives at 17 Crooked Lane, Sheffield"]
BOB = ["bob prefers window seats on trains", "bob's cat is called Marmalade"]


def write_sessions(sessions_dir: Path, *sessions: tuple[str, str, list[str]]) -> None:
    from praisonaiagents.session.store import DefaultSessionStore

    store = DefaultSessionStore(session_dir=str(sessions_dir))
    for sid, user, texts in sessions:
        store.set_agent_info(sid, agent_name="Helper", user_id=user)
        for text in texts:
            store.add_user_message(sid, text)
            store.add_assistant_message(sid, "noted: " + text)


@pytest.fixture
def home(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "home"
    write_sessions(root / "sessions", ("s-alice-1", "alice", ALICE), ("s-bob-1", "bob", BOB),
                   ("s-alice-2", "alice", ALICE[:1]))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return root


def forget(cli, home: Path, *args: str):
    return cli("--home", home, "forget", *args)


def bob_files(home: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (home / "sessions").iterdir() if p.name.startswith("s-bob")}


def holding(root: Path, needles: list[str]) -> list[str]:
    """Files under ``root`` holding any 8-character piece of ``needles``."""
    pieces = {n[i:i + 8].encode() for n in needles for i in range(len(n) - 7)}
    return sorted(str(p) for p in root.rglob("*") if p.is_file() and any(x in p.read_bytes() for x in pieces))


@pytest.mark.parametrize("args, message", [
    ((), "give exactly one of --user, --session or --agent"),
    (("--user", "alice", "--agent", "Helper"), "give exactly one of --user, --session or --agent (got --user, --agent)"),
    (("--user", " "), "--user must not be blank"),
    (("--user", "alice", "--before", "last tuesday"),
     "--before: 'last tuesday' is not a date (YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS][+HH:MM])"),
])
def test_bad_usage_is_one_line_exit_2_and_changes_nothing(cli, home, tmp_path, args, message) -> None:
    before = snapshot(tmp_path)
    result = forget(cli, home, *args, "--yes")
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"praisonmem: error: {message}\n")
    assert snapshot(tmp_path) == before


def test_off_a_terminal_without_yes_it_refuses_and_changes_nothing(cli, home, tmp_path) -> None:
    before = snapshot(tmp_path)
    result = forget(cli, home, "--user", "alice")
    assert (result.exit_code, result.stdout) == (4, "")
    assert result.stderr == ("praisonmem: error: forget --user alice: remove or rewrite 2 records in 1 store: "
                             "not confirmed, nothing changed (pass --yes in a non-interactive run, or --dry-run to "
                             "see what would change)\n")
    assert snapshot(tmp_path) == before


def test_dry_run_changes_nothing_and_names_every_item_the_real_run_removes(cli, home, tmp_path) -> None:
    before = snapshot(tmp_path)
    dry = forget(cli, home, "--user", "alice", "--dry-run", "--json")
    assert dry.exit_code == 0, dry.stderr
    assert snapshot(tmp_path) == before
    human = forget(cli, home, "--user", "alice", "--dry-run")
    assert snapshot(tmp_path) == before
    assert human.stdout.splitlines()[:3] == [
        f"session-dir  {home / 'sessions'}",
        "  remove: session s-alice-1 (4 messages) in s-alice-1.json",
        "  remove: session s-alice-2 (2 messages) in s-alice-2.json"]
    real = forget(cli, home, "--user", "alice", "--yes", "--json")
    assert real.exit_code == 0, real.stderr
    planned = {(p["store"], p["path"], i["key"]) for p in json.loads(dry.stdout)["plan"] for i in p["items"]}
    done = {(p["store"], p["path"], i["key"]) for p in json.loads(real.stdout)["plan"] for i in p["items"]}
    assert planned == done == {("session-dir", str(home / "sessions"), "s-alice-1"),
                               ("session-dir", str(home / "sessions"), "s-alice-2")}


def test_forget_a_user_removes_every_byte_of_theirs_and_leaves_bob_byte_identical(cli, home, tmp_path) -> None:
    bob = bob_files(home)
    result = forget(cli, home, "--user", "alice", "--yes", "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] is True
    (sessions,) = [s for s in report["stores"] if s["store"] == "session-dir"]
    assert (sessions["removed"], sessions["verified"]) == (2, "absent")
    assert holding(tmp_path, ALICE) == []
    assert bob_files(home) == bob
    assert not (tmp_path / "state" / "praisonmem" / "forget" / "journal.json").exists()


def test_the_library_loads_bob_and_finds_nothing_of_alice(cli, home) -> None:
    from praisonaiagents.session.store import DefaultSessionStore

    assert forget(cli, home, "--user", "alice", "--yes").exit_code == 0
    store = DefaultSessionStore(session_dir=str(home / "sessions"))
    assert [m["content"] for m in store.get_chat_history("s-bob-1")] == [
        BOB[0], "noted: " + BOB[0], BOB[1], "noted: " + BOB[1]]
    assert not store.session_exists("s-alice-1")


def test_an_unknown_file_holding_the_text_is_residue_named_exit_1(cli, home, tmp_path) -> None:
    stray = home / "notes" / "export.txt"
    stray.parent.mkdir()
    stray.write_text("copied from the chat: " + ALICE[1] + "\n")
    result = forget(cli, home, "--user", "alice", "--yes", "--json")
    assert result.exit_code == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] is False
    residue = [(s["store"], s["path"]) for s in report["stores"] if s["verified"] == "residue"]
    assert residue[0] == ("copy", str(stray)) and [r[0] for r in residue[1:]] == ["sweep"]
    assert "s-alice-1" in report["stores"][-2]["detail"] and ALICE[1] not in result.stdout


@pytest.fixture
def immutable(tmp_path):
    made: list[Path] = []

    def make(path: Path) -> Path:
        subprocess.run(["chattr", "+i", str(path)], check=True)
        made.append(path)
        return path

    yield make
    for path in made:
        if path.exists():
            subprocess.run(["chattr", "-i", str(path)], check=True)


def test_a_read_only_copy_of_a_session_is_named_exit_1_and_a_rerun_finishes(cli, home, tmp_path, immutable) -> None:
    copies = tmp_path / "elsewhere" / "chats"
    copies.mkdir(parents=True)
    copy = copies / "s-alice-1.json"
    copy.write_bytes((home / "sessions" / "s-alice-1.json").read_bytes())
    immutable(copy)
    result = forget(cli, home, "--user", "alice", "--in", tmp_path / "elsewhere", "--yes", "--json")
    assert result.exit_code == 1
    assert str(copy) in result.stderr.splitlines()[0]
    report = json.loads(result.stdout)
    (stuck,) = [s for s in report["stores"] if s["path"] == str(copies)]
    assert stuck["verified"] == "residue" and "s-alice-1" in stuck["detail"]
    assert not (home / "sessions" / "s-alice-1.json").exists()
    journal = tmp_path / "state" / "praisonmem" / "forget" / "journal.json"
    assert journal.exists()  # not verified: the journal stays for the rerun
    subprocess.run(["chattr", "-i", str(copy)], check=True)
    again = forget(cli, home, "--user", "alice", "--in", tmp_path / "elsewhere", "--yes", "--json")
    assert again.exit_code == 0, again.stdout
    assert holding(tmp_path, ALICE) == [] and not journal.exists()


def test_a_journal_of_another_subject_refuses_with_the_command_that_finishes_it(cli, home, tmp_path) -> None:
    from praisonmem.core.forget.journal import Journal
    from praisonmem.core.forget.model import Erasure, StorePlan, Subject, SubjectKind

    journal = Journal()
    journal.write(Subject(SubjectKind.user, "bob"), [StorePlan("session-dir", str(home / "sessions"),
                                                               [Erasure("s-bob-1", "session s-bob-1")])], [])
    before = snapshot(tmp_path)
    result = forget(cli, home, "--user", "alice", "--yes")
    assert (result.exit_code, result.stdout) == (4, "")
    assert result.stderr == (f"praisonmem: error: an interrupted forget of --user bob is not finished "
                             f"({journal.path}); finish it first: praisonmem forget --user bob --yes "
                             "(with the same --store/--db if it had them)\n")
    assert snapshot(tmp_path) == before
    assert oct(journal.path.stat().st_mode & 0o777) == "0o600"
    assert oct(journal.path.parent.stat().st_mode & 0o777) == "0o700"
    assert b"window seats" not in journal.path.read_bytes()


def test_a_session_held_by_a_running_agent_refuses_exit_4_with_the_stores_message(cli, home, tmp_path) -> None:
    from tests.helpers import hold_flock

    holder = hold_flock(home / "sessions" / "s-alice-1.json.lock", 30)
    try:
        result = forget(cli, home, "--user", "alice", "--yes", "--json")
    finally:
        holder.kill()
        holder.wait()
    assert result.exit_code == 4
    assert "s-alice-1.json" in result.stderr and "lock" in result.stderr
    again = forget(cli, home, "--user", "alice", "--yes")
    assert again.exit_code == 0, again.stderr
    assert holding(tmp_path, ALICE) == []


def on_a_terminal(home: Path, answer: bytes, *args: str) -> tuple[int, str, str]:
    """``praisonmem forget`` with stdin and stderr on a pseudo-terminal (so it asks), ``answer`` typed; the exit
    code, stdout and what the terminal showed."""
    import pty
    import sys

    from tests.conftest import REPO
    from tests.helpers import read_pty

    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "praisonmem", "--home", str(home), "forget", *args],
                            env={**os.environ, "PYTHONPATH": str(REPO)}, stdin=slave, stdout=subprocess.PIPE,
                            stderr=slave)
    os.close(slave)
    os.write(master, answer)
    shown = read_pty(master, proc, list(args))
    out = proc.stdout.read().decode()
    return proc.wait(timeout=60), out, shown.decode(errors="replace")


def test_on_a_terminal_it_asks_and_no_keeps_everything(home, tmp_path) -> None:
    before = snapshot(home)
    code, out, shown = on_a_terminal(home, b"n\n", "--user", "alice")
    assert code == 4
    assert "Forget --user alice: remove or rewrite 2 records in 1 store? [y/N]" in shown
    assert "not confirmed; nothing changed" in shown
    assert "remove: session s-alice-1 (4 messages) in s-alice-1.json" in out  # the plan was shown first
    assert snapshot(home) == before


def test_on_a_terminal_yes_forgets(home, tmp_path) -> None:
    code, out, shown = on_a_terminal(home, b"y\n", "--user", "alice")
    assert code == 0, shown
    assert out.splitlines()[-1].endswith("; verified")
    assert holding(tmp_path, ALICE) == []


def test_a_subject_nobody_holds_is_verified_and_nothing_changes(cli, home, tmp_path) -> None:
    before = snapshot(tmp_path / "home")
    result = forget(cli, home, "--user", "carol", "--yes", "--json")
    assert result.exit_code == 0, result.stdout
    report = json.loads(result.stdout)
    assert report["ok"] is True and all(p["items"] == [] for p in report["plan"])
    assert {s["verified"] for s in report["stores"]} == {"absent"}
    assert snapshot(tmp_path / "home") == before
    assert not (tmp_path / "state").exists()  # nothing to erase: no journal written


def archive_members(archive: Path) -> dict[str, bytes]:
    import tarfile

    with tarfile.open(archive) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def test_a_backup_holding_the_user_is_named_and_with_include_backups_rewritten_without_them(cli, home, tmp_path,
                                                                                           monkeypatch) -> None:
    monkeypatch.setenv("PRAISONMEM_BACKUP_DIR", str(tmp_path / "backups"))
    made = cli("--home", home, "backup", "create")
    assert made.exit_code == 0, made.stderr
    (archive,) = (tmp_path / "backups").glob("*.tar.gz")
    members = archive_members(archive)
    assert any(ALICE[0].encode() in raw for raw in members.values())
    first = forget(cli, home, "--user", "alice", "--yes", "--json")
    assert first.exit_code == 1
    (held,) = json.loads(first.stdout)["backups"]
    assert held["archive"] == str(archive) and held["holds"] is True and held["rewritten"] is None
    assert {m["name"] for m in held["members"]} >= {"home/sessions/s-alice-1.json", "home/sessions/s-alice-2.json"}
    second = forget(cli, home, "--user", "alice", "--include-backups", "--yes", "--json")
    assert second.exit_code == 0, second.stdout
    (done,) = json.loads(second.stdout)["backups"]
    assert done["holds"] is False and done["rewritten"]["problem"] is None
    after = archive_members(archive)
    assert not any(piece.encode() in raw for raw in after.values() for text in ALICE
                   for piece in (text[i:i + 8] for i in range(len(text) - 7)))
    bob = [name for name in members if "s-bob-1" in name]
    assert bob and all(after[name] == members[name] for name in bob)
    assert set(after) == set(members) - {n for n in members if "s-alice" in n} | {n for n in after if "manifest" in n}


@pytest.mark.parametrize("option", ["--in", "--store", "--db"])
def test_a_place_that_does_not_exist_is_one_line_exit_3_and_changes_nothing(cli, home, tmp_path, option) -> None:
    before = snapshot(tmp_path)
    missing = tmp_path / "nowhere"
    result = forget(cli, home, "--user", "alice", option, missing, "--yes")
    message = f"{missing}: no such directory" if option == "--in" else f"{missing}: no such file or directory"
    assert (result.exit_code, result.stdout, result.stderr) == (3, "", f"praisonmem: error: {message}\n")
    assert snapshot(tmp_path) == before
