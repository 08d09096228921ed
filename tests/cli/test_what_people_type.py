"""Inputs people type that the tool should take as meant, or say what is wrong with: ``--redact`` alone, a value
that starts with ``-``, a --user-id that matches nothing; and settings shown as the config file spells them, a
default as what it resolves to."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers import snapshot

SECRET = "sk-proj-" + "Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7"  # an OpenAI project key's shape


@pytest.fixture
def leaky(fixture_home):
    path = fixture_home / "sessions" / "my_chat.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["messages"][0]["content"] = f"my key is {SECRET}"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return fixture_home


@pytest.mark.parametrize("args", [["--redact"], ["--redact", "--format", "json"], ["--format", "jsonl", "--redact"]])
def test_redact_alone_is_redact_standard(cli, leaky, args):
    alone = cli("--home", leaky, "session", "export", "my_chat", *args)
    spelled = cli("--home", leaky, "session", "export", "my_chat", *[a if a != "--redact" else "--redact standard"
                                                                     for a in args][0].split(), *args[1:]) \
        if args[0] == "--redact" else cli("--home", leaky, "session", "export", "my_chat", *args, "standard")
    assert alone.exit_code == spelled.exit_code == 0
    assert SECRET not in alone.stdout and "[REDACTED:" in alone.stdout
    assert _undated(alone.stdout) == _undated(spelled.stdout)


def _undated(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if "exported_at" not in line)


def test_redact_alone_before_output_writes_the_redacted_file(cli, leaky, tmp_path):
    target = tmp_path / "share.json"
    result = cli("--home", leaky, "session", "export", "my_chat", "--redact", "-o", target)
    assert result.exit_code == 0 and SECRET not in target.read_text(encoding="utf-8")
    assert "[REDACTED:" in target.read_text(encoding="utf-8")


def test_redact_with_a_wrong_level_is_still_an_error(cli, leaky):
    result = cli("--home", leaky, "session", "export", "my_chat", "--redact", "strickt")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "praisonmem: error: the secret rules are standard or strict, got 'strickt'\n"


def test_redact_after_double_dash_is_a_session_name(cli, leaky):
    result = cli("--home", leaky, "session", "export", "--", "--redact")
    assert result.exit_code == 3 and result.stdout == ""


@pytest.fixture
def config(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "config.toml"
    monkeypatch.setenv("PRAISONMEM_CONFIG", str(path))
    return path


@pytest.mark.parametrize("key, value, message", [
    ("lock_timeout", "-3", "config lock_timeout must be a number of seconds, 0 or more, got '-3'"),
    ("backup.keep", "-1", "config backup.keep must be a whole number 0 or above, got '-1'"),
])
def test_config_set_takes_a_value_starting_with_a_dash_and_checks_it(cli, config, key, value, message):
    result = cli("config", "set", key, value)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"praisonmem: error: {message}\n")
    assert not config.exists()


def test_config_set_of_a_negative_looking_text_value_is_stored(cli, config):
    result = cli("config", "set", "user_id", "-alice")
    assert (result.exit_code, result.stdout) == (0, f"set user_id = '-alice' in {config}\n")
    assert cli("config", "get", "user_id").stdout == "-alice\n"


def test_settings_are_shown_as_the_config_file_spells_them(cli, config):
    assert cli("config", "set", "pager", "false").stdout == f"set pager = false in {config}\n"
    assert cli("config", "get", "pager").stdout == "false\n"
    assert cli("config", "get", "cache").stdout == "true\n"
    assert cli("config", "get", "pager", "--json").json()["value"] is False  # JSON keeps the data
    rows = {line.split("\t")[0]: line.split("\t")[1:3] for line in cli("config", "show").stdout.splitlines()[1:]}
    assert rows["pager"] == ["false", "config"] and rows["cache"] == ["true", "default"]


def test_a_default_is_shown_as_what_it_resolves_to(cli, config, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for name in ("PRAISONAI_HOME", "PRAISONMEM_MEMORY_DIR", "PRAISONMEM_BACKUP_DIR", "PRAISONMEM_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    rows = {line.split("\t")[0]: line.split("\t")[1:3] for line in cli("config", "show").stdout.splitlines()[1:]}
    where = {r["name"]: r["path"] for r in cli("workspace", "paths", "--json").json()}  # the library's own rules
    assert rows["home"] == [where["data_dir"], "default"] and where["data_dir"].startswith(str(tmp_path))
    assert rows["memory_dir"] == [str(tmp_path / ".praisonai" / "memory"), "default"] == [where["memory_dir"],
                                                                                         "default"]
    assert rows["backup.dir"] == [str(tmp_path / "data" / "praisonmem" / "backups"), "default"]
    assert rows["cache_dir"] == [str(tmp_path / "cache" / "praisonmem"), "default"]
    assert rows["upsonic.db"] == ["", "default"]
    shown = {r["key"]: r["value"] for r in cli("config", "show", "--json").json()}
    assert shown["home"] is None and shown["backup.dir"] is None  # JSON unchanged: null is "not set"


def test_a_mistyped_user_id_is_said(cli, project):
    typo = cli("memory", "list", "--user-id", "alicee")
    assert typo.exit_code == 0
    assert typo.stderr == ("praisonmem: warning: no memory of user 'alicee' (--user-id); the users with memories: "
                           "alice, bob\n")
    assert cli("memory", "list", "--user-id", "alice").stderr == ""


def test_a_mistyped_user_id_from_the_environment_is_said(cli, project, monkeypatch):
    monkeypatch.setenv("PRAISONMEM_USER_ID", "bobb")
    typo = cli("memory", "search", "dark mode")
    assert typo.stderr == ("praisonmem: warning: no memory of user 'bobb' (PRAISONMEM_USER_ID); the users with "
                           "memories: alice, bob\n")
