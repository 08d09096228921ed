"""Temp files a killed write left: the next write of the same file removes its own (``.<name>.<random>.tmp``) once
they are a minute old, under that file's lock, and nothing else; ``check`` reports every other one, with what
left it and, once no write can be using it, the command that removes it."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest



@pytest.fixture
def later(monkeypatch):
    """The clock two minutes on: every temp file made so far is more than a minute old."""
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 120)


def temps(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def test_config_set_removes_what_a_killed_config_write_left_and_nothing_else(cli, config, later):
    config.write_text('store = "json"\n')
    for name in (".config.toml.k1ll3d_a.tmp", ".config.toml.zz9yy8xx.tmp",  # its own: both go
                 ".config.toml.short.tmp", "config.toml.tmp", ".other.toml.k1ll3d_a.tmp", "tmpk1ll3d_a.tmp"):
        (config.parent / name).write_text('upsonic.db = "postgresql://u:pw@h/d"\n')
    os.symlink("/nonexistent", config.parent / ".config.toml.linklink.tmp")  # not a regular file: left alone
    assert cli("config", "set", "output", "json").exit_code == 0
    assert temps(config.parent) == [".config.toml.linklink.tmp", ".config.toml.short.tmp", ".other.toml.k1ll3d_a.tmp",
                                    "config.toml.tmp", "tmpk1ll3d_a.tmp"]


def test_a_temp_file_younger_than_a_minute_may_be_a_live_writes_and_stays(cli, config):
    config.write_text('store = "json"\n')
    (config.parent / ".config.toml.k1ll3d_a.tmp").write_text("")
    # restore sets its temp file's mtime to the archived one before the rename: the age is the inode's change time
    (config.parent / ".config.toml.restored.tmp").write_text("")
    os.utime(config.parent / ".config.toml.restored.tmp", (1, 1))
    assert cli("config", "set", "output", "json").exit_code == 0
    assert temps(config.parent) == [".config.toml.k1ll3d_a.tmp", ".config.toml.restored.tmp"]


def test_a_session_write_removes_that_sessions_leftovers_only(cli, fixture_home, later):
    sessions = fixture_home / "sessions"
    for name in (".my_chat.json.k1ll3d_a.tmp", ".compacted-demo.json.k1ll3d_a.tmp", "tmpk1ll3d_a.tmp"):
        (sessions / name).write_text('{"session_id": "my_chat"}')
    assert cli("--home", fixture_home, "session", "rename", "my_chat", "--title", "kept").exit_code == 0
    assert temps(sessions) == [".compacted-demo.json.k1ll3d_a.tmp", "tmpk1ll3d_a.tmp"]


def test_deleting_a_session_removes_the_copies_of_it_a_killed_write_left(cli, fixture_home, later):
    sessions = fixture_home / "sessions"
    (sessions / ".my_chat.json.k1ll3d_a.tmp").write_bytes((sessions / "my_chat.json").read_bytes())
    assert cli("--home", fixture_home, "session", "delete", "my_chat", "--force", "--yes").exit_code == 0
    assert temps(sessions) == []


def test_check_says_what_left_each_temp_file_and_how_to_remove_it(cli, fixture_home, later):
    sessions = fixture_home / "sessions"
    for name in (".my_chat.json.k1ll3d_a.tmp", "tmpk1ll3d_a.tmp", "odd.tmp"):
        (sessions / name).write_text("{}")
    report = cli("check", fixture_home, "--json").json()
    found = {Path(f["file"]).name: (f["severity"], f["message"], f["fix"]) for f in report["findings"]
             if f["code"] == "leftover.temp"}
    assert found == {
        ".my_chat.json.k1ll3d_a.tmp": (
            "warning", "temp copy of my_chat.json left by a write of it that was killed before its rename "
                       "(praisonmem's atomic replace, or FileMemory's): it holds what was being written; praisonmem's "
                       "next write of my_chat.json removes it", f"rm -- {sessions / '.my_chat.json.k1ll3d_a.tmp'}"),
        "tmpk1ll3d_a.tmp": (
            "warning", "temp file the library's session store left when its atomic write was killed before the "
                       "rename: it holds what was being written", f"rm -- {sessions / 'tmpk1ll3d_a.tmp'}"),
        "odd.tmp": ("warning", "temp file left by an interrupted write", f"rm -- {sessions / 'odd.tmp'}"),
    }


def test_check_tells_a_killed_restores_temp_file_by_its_name(cli, fixture_home, later):
    from praisonmem.core.backup.restore import temp_name

    left = fixture_home / "sessions" / temp_name("my_chat.json")
    left.write_text("{}")
    [finding] = [f for f in cli("check", fixture_home, "--json").json()["findings"] if f["code"] == "leftover.temp"]
    assert (finding["file"], finding["fix"]) == (str(left), f"rm -- {left}")
    assert finding["message"] == ("temp file of a backup restore that was killed before its rename: it holds the file "
                                  "being restored; the next restore writing into this directory removes it once the "
                                  "process that made it is gone")


def test_check_gives_no_command_for_a_temp_file_a_write_may_still_be_using(cli, fixture_home):
    (fixture_home / "sessions" / ".my_chat.json.k1ll3d_a.tmp").write_text("{}")
    [finding] = [f for f in cli("check", fixture_home, "--json").json()["findings"] if f["code"] == "leftover.temp"]
    assert finding["fix"] is None
    assert finding["message"].endswith(" s ago, so that write may still be under way")


def test_check_of_the_resolved_home_reports_a_killed_config_writes_temp_file(cli, config, fixture_home, later,
                                                                             monkeypatch):
    config.write_text('store = "json"\n')
    left = config.parent / ".config.toml.k1ll3d_a.tmp"
    left.write_text('upsonic.db = "postgresql://u:pw@h/d"\n')
    monkeypatch.setenv("PRAISONAI_HOME", str(fixture_home))
    findings = [f for f in cli("check", "--json").json()["findings"] if f["code"] == "leftover.temp"]
    assert [(f["file"], f["fix"]) for f in findings] == [(str(left), f"rm -- {left}")]
    assert findings[0]["message"].startswith("temp copy of config.toml left by a write of it that was killed")
    named = cli("check", fixture_home, "--json").json()["findings"]  # a PATH given: only that tree
    assert [f for f in named if f["code"] == "leftover.temp"] == []


def test_carrying_a_spill_file_removes_what_a_killed_carry_of_it_left(cli, fixture_home, later):
    from tests.helpers import spill

    record = spill(fixture_home, "my_chat", "my_chat", "a turn spilled after a failed write")
    moved = record.with_name("kept" + record.name[len("my_chat"):])  # the name the rename carries it to
    left = moved.with_name(f".{moved.name}.k1ll3d_a.tmp")
    left.write_text(record.read_text())
    assert cli("--home", fixture_home, "session", "rename", "my_chat", "kept", "--force").exit_code == 0
    assert moved.is_file() and not left.exists()
