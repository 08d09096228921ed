"""config commands, and each setting's flag, environment variable and config key wired through the CLI."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

from tests.conftest import FIXTURES


def test_set_get_unset_round_trip(cli, config):
    assert cli("config", "path").stdout == f"{config}\n"
    assert cli("config", "set", "provider", "sqlite").exit_code == 0
    assert cli("config", "get", "provider").stdout == "sqlite\n"
    assert cli("config", "get", "provider", "--json").json() == {"key": "provider", "value": "sqlite",
                                                                "source": "config"}
    assert cli("config", "unset", "provider").exit_code == 0
    assert cli("config", "get", "provider").stdout == "file\n"
    assert cli("config", "get", "upsonic.db").exit_code == 3
    unset = cli("config", "get", "upsonic.db", "--json")
    assert (unset.exit_code, unset.stdout) == (3, "")
    assert json.loads(unset.stderr)["error"]["code"] == "not_found"
    rows = {r["key"]: r for r in cli("config", "show", "--json").json()}
    assert rows["provider"]["source"] == "default" and rows["lock_timeout"]["value"] == 5.0


def test_malformed_toml_exits_2_with_the_line_and_config_still_works(cli, config):
    config.write_text('home = "/x"\n[backup\n')
    result = cli("session", "list")
    assert result.exit_code == 2
    assert "is not valid TOML" in result.stderr and "(at line 2, column 8)" in result.stderr
    assert cli("config", "path").exit_code == 0  # the way to find and fix it keeps working


def test_bad_values_exit_2_naming_the_key(cli, config):
    bad = cli("config", "set", "backup.keep", "lots")
    assert bad.exit_code == 2 and "config backup.keep must be a whole number" in bad.stderr
    unknown = cli("config", "set", "colour", "red")
    assert unknown.exit_code == 2 and "unknown config key 'colour'" in unknown.stderr


def assert_precedence(observe, config, monkeypatch, *, default, toml: tuple[str, object],
                      env: tuple[str, str, object], flag: tuple[list[str], object]) -> None:
    """``observe(*flags)`` sees the default, then the config file's value, then the environment's, then the flag's."""
    assert observe() == default
    config.write_text(toml[0])
    assert observe() == toml[1]
    monkeypatch.setenv(env[0], env[1])
    assert observe() == env[2]
    assert observe(*flag[0]) == flag[1]


def test_home_precedence(cli, config, monkeypatch, tmp_path):
    def data_source(*args: str) -> tuple[str, str]:
        row = {r["name"]: r for r in cli(*args, "workspace", "paths", "--json").json()}["data_dir"]
        return row["path"], row["source"]

    default = (str(Path(os.environ["HOME"]) / ".praisonai"), "default ~/.praisonai")
    assert_precedence(data_source, config, monkeypatch, default=default,
                      toml=(f'home = "{tmp_path / "cfg"}"\n', (str(tmp_path / "cfg"), "config home")),
                      env=("PRAISONAI_HOME", str(tmp_path / "env"), (str(tmp_path / "env"), "PRAISONAI_HOME")),
                      flag=(["--home", str(tmp_path / "flag")], (str(tmp_path / "flag"), "--home")))


def test_memory_dir_precedence(cli, config, monkeypatch, tmp_path):
    def source(*args: str) -> str:
        return {r["name"]: r for r in cli(*args, "workspace", "paths", "--json").json()}["memory_dir"]["source"]

    assert_precedence(source, config, monkeypatch, default="default ./.praisonai/memory (project dir, as the library "
                                                           "writes)",
                      toml=(f'memory_dir = "{tmp_path / "cfg"}"\n', "config memory_dir"),
                      env=("PRAISONMEM_MEMORY_DIR", str(tmp_path / "env"), "PRAISONMEM_MEMORY_DIR"),
                      flag=(["--memory-dir", str(tmp_path / "flag")], "--memory-dir"))


def test_user_id_precedence(cli, config, monkeypatch, tmp_path):
    def stored_under(*args: str) -> str:
        cli("--memory-dir", tmp_path / "m", "memory", "store", "x", *args)
        made = sorted(p.name for p in (tmp_path / "m").iterdir())
        shutil.rmtree(tmp_path / "m")
        return made[0]

    assert_precedence(stored_under, config, monkeypatch, default="default", toml=('user_id = "cfg"\n', "cfg"),
                      env=("PRAISONMEM_USER_ID", "env", "env"), flag=(["--user-id", "flag"], "flag"))


def test_provider_precedence(cli, config, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)

    def provider_used(*args: str) -> str:
        cli("memory", "store", "x", "--user-id", "u", *args)
        used = "sqlite" if any(tmp_path.glob(".praisonai/*.db")) else "file"
        shutil.rmtree(tmp_path / ".praisonai", ignore_errors=True)
        return used

    assert_precedence(provider_used, config, monkeypatch, default="file", toml=('provider = "sqlite"\n', "sqlite"),
                      env=("PRAISONMEM_PROVIDER", "file", "file"), flag=(["--provider", "sqlite"], "sqlite"))


def test_output_precedence(cli, config, monkeypatch, fixture_home):
    def is_json(*args: str) -> bool:
        out = cli("--home", fixture_home, "session", "list", *args).stdout
        return out.startswith("[")

    assert not is_json()
    config.write_text('output = "json"\n')
    assert is_json()
    monkeypatch.setenv("PRAISONMEM_OUTPUT", "table")
    assert not is_json()
    assert is_json("--json")
    monkeypatch.setenv("PRAISONMEM_OUTPUT", "json")
    assert json.loads(cli("check", str(fixture_home)).stdout)["ok"] in (True, False)  # a command, not a group
    error = cli("--home", fixture_home, "session", "show", "nope")
    assert json.loads(error.stderr)["error"]["code"] == "not_found"


def test_lock_timeout_precedence(cli, config, monkeypatch):
    def value(*args: str) -> tuple[float, str]:
        row = {r["key"]: r for r in cli(*args, "config", "show", "--json").json()}["lock_timeout"]
        return row["value"], row["source"]

    assert value() == (5.0, "default")
    config.write_text("lock_timeout = 2\n")
    assert value() == (2, "config")
    monkeypatch.setenv("PRAISONMEM_LOCK_TIMEOUT", "1.5")
    assert value() == (1.5, "env PRAISONMEM_LOCK_TIMEOUT")
    from praisonmem.cli.state import State

    assert State(lock_timeout_flag=0.25).lock_timeout == 0.25


def test_upsonic_db_precedence(cli, config, monkeypatch, tmp_path):
    dbs = {}
    for name in ("cfg", "env", "flag"):
        dbs[name] = tmp_path / f"{name}.db"
        shutil.copy(FIXTURES / "upsonic-0.77.3" / "data.db", dbs[name])
        conn = sqlite3.connect(dbs[name])
        conn.execute("UPDATE upsonic_sessions SET user_id = ? WHERE session_id = 'session_004'", (name,))
        conn.commit()
        conn.close()

    def used(*args: str) -> str:
        rows = cli("upsonic", "sessions", "--json", *args).json()
        return next(r["user_id"] for r in rows if r["session_id"] == "session_004")

    assert cli("upsonic", "sessions").exit_code == 2
    config.write_text(f'[upsonic]\ndb = "{dbs["cfg"]}"\n')
    assert used() == "cfg"
    monkeypatch.setenv("PRAISONMEM_UPSONIC_DB", str(dbs["env"]))
    assert used() == "env"
    assert used("--db", str(dbs["flag"])) == "flag"


def test_backup_dir_and_keep_precedence(cli, config, monkeypatch, fixture_home, tmp_path):
    def made_in(*args: str) -> str:
        result = cli("--home", fixture_home, "backup", "create", "--json", "--include", "learn", *args)
        return Path(result.json()["path"]).parent.name

    assert made_in().startswith("backups")  # the platformdirs default under the test HOME
    config.write_text(f'[backup]\ndir = "{tmp_path / "cfg"}"\nkeep = 1\n')
    assert made_in() == "cfg"
    monkeypatch.setenv("PRAISONMEM_BACKUP_DIR", str(tmp_path / "env"))
    assert made_in() == "env"
    assert made_in("-o", str(tmp_path / "flag")) == "flag"
    for _ in range(2):
        made_in()
    assert len(list((tmp_path / "env").iterdir())) == 1  # keep = 1 from the config
    monkeypatch.setenv("PRAISONMEM_BACKUP_KEEP", "2")
    for _ in range(3):
        made_in()
    assert len(list((tmp_path / "env").iterdir())) == 2
    for _ in range(3):
        made_in("--keep", "3")
    assert len(list((tmp_path / "env").iterdir())) == 3


def test_a_database_url_in_upsonic_db_is_validated_and_its_password_never_shown(cli, config, monkeypatch):
    bad = cli("config", "set", "upsonic.db", "mysql://u:Hunter2x@h/db")
    assert (bad.exit_code, bad.stderr) == (2, "praisonmem: error: config upsonic.db: unsupported database URL "
                                              "mysql://u:***@h/db: praisonmem opens postgresql://…, sqlite:///PATH "
                                              "or a file path\n")
    assert not config.exists()
    monkeypatch.setenv("PRAISONMEM_UPSONIC_DB", "postgresql://u:Hunter2x@h/db")
    for args in (["config", "show"], ["config", "show", "--json"], ["config", "get", "upsonic.db", "--json"],
                 ["workspace", "paths"], ["workspace", "paths", "--json"]):
        result = cli(*args)
        assert result.exit_code == 0 and "Hunter2x" not in result.stdout + result.stderr, args
    assert cli("config", "get", "upsonic.db").stdout == "postgresql://u:***@h/db\n"
    monkeypatch.setenv("PRAISONMEM_UPSONIC_DB", "sqlite:///agents.db")
    paths = {r["name"]: r for r in cli("workspace", "paths", "--json").json()}
    assert paths["upsonic_db"] == {"name": "upsonic_db", "path": str(Path.cwd() / "agents.db"),
                                   "source": "env PRAISONMEM_UPSONIC_DB", "exists": False}
