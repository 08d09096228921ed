"""Settings: flag > environment > config file > default, for every key; the file's validation."""

from __future__ import annotations

import pytest

from praisonmem.core.config import KEYS, Settings, load_file, set_value, unset_value
from praisonmem.core.errors import UsageError

# key: (flag value, env text, env value, config TOML, config value, default)
CASES = {
    "home": ("/flag", "/env", "/env", 'home = "/cfg"', "/cfg", None),
    "memory_dir": ("/flag", "/env", "/env", 'memory_dir = "/cfg"', "/cfg", None),
    "user_id": ("flag", " env ", "env", 'user_id = "cfg"', "cfg", "default"),
    "provider": ("sqlite", "file", "file", 'provider = "sqlite"', "sqlite", "file"),
    "output": ("json", "json", "json", 'output = "json"', "json", "table"),
    "lock_timeout": (1.5, "2.5", 2.5, "lock_timeout = 3.5", 3.5, 5.0),
    "upsonic.db": ("/flag.db", "/env.db", "/env.db", '[upsonic]\ndb = "/cfg.db"', "/cfg.db", None),
    "store": ("json", "sqlite:///env.db", "sqlite:///env.db", 'store = "postgresql://u@h/cfg"', "postgresql://u@h/cfg",
              None),
    "backup.dir": ("/flag", "/env", "/env", '[backup]\ndir = "/cfg"', "/cfg", None),
    "backup.keep": (1, "2", 2, "[backup]\nkeep = 3", 3, 0),
    "cache": (False, "yes", True, "cache = false", False, True),
    "cache_dir": ("/flag", "/env", "/env", 'cache_dir = "/cfg"', "/cfg", None),
    "pager": (False, "less -R", "less -R", "pager = false", False, True),
}


def test_every_key_has_a_case():
    assert set(CASES) == set(KEYS)


@pytest.mark.parametrize("key", sorted(CASES))
def test_precedence_flag_env_config_default(key, tmp_path):
    flag, env_text, env_value, toml, config_value, default = CASES[key]
    path = tmp_path / "config.toml"
    env = {KEYS[key].env: env_text}
    assert Settings(env={}, path=path).get(key).value == default
    assert Settings(env={}, path=path).get(key).source == "default"
    path.write_text(toml + "\n")
    assert Settings(env={}, path=path).get(key) .value == config_value
    assert Settings(env={}, path=path).get(key).source == "config"
    assert Settings(env=env, path=path).get(key).value == env_value
    assert Settings(env=env, path=path).get(key).source == f"env {KEYS[key].env}"
    assert Settings(env=env, path=path).get(key, flag).value == flag
    assert Settings(env=env, path=path).get(key, flag).source == "flag"


def stored(outcome) -> object:
    [change] = outcome.changes
    return change.fields["value"]


def test_set_get_unset_round_trip_keeps_other_keys(tmp_path):
    path = tmp_path / "sub" / "config.toml"
    assert stored(set_value(path, "backup.keep", "4")) == 4
    assert stored(set_value(path, "upsonic.db", "/x/data.db")) == "/x/data.db"
    assert stored(set_value(path, "lock_timeout", "2")) == 2.0
    assert load_file(path) == {"backup.keep": 4, "upsonic.db": "/x/data.db", "lock_timeout": 2.0}
    assert [c.to_json() for c in unset_value(path, "backup.keep").changes] == [
        {"action": "unset", "key": "backup.keep", "removed": True, "path": str(path), "dry_run": False,
         "detail": None}]
    assert [c.to_json() for c in unset_value(path, "backup.keep").changes] == [
        {"action": "skipped", "key": "backup.keep", "removed": False, "path": str(path), "dry_run": False,
         "detail": "was not set"}]
    assert load_file(path) == {"upsonic.db": "/x/data.db", "lock_timeout": 2.0}
    assert path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("toml, message", [
    ("home = \n", "is not valid TOML: Invalid value (at line 1, column 8)"),
    ("[backup\nkeep = 1\n", "(at line 1, column 8)"),
    ("colour = 'red'\n", "unknown key 'colour'"),
    ("[backup]\nkeep = -1\n", "config backup.keep must be a whole number 0 or above, got -1"),
    ("output = 'yaml'\n", "config output must be 'table' or 'json', got 'yaml'"),
    ("lock_timeout = -1\n", "config lock_timeout must be a number of seconds, 0 or more, got -1"),
    ("lock_timeout = inf\n", "config lock_timeout must be a number of seconds, 0 or more, got inf"),
    ("provider = 'bogus'\n", "config provider must be an installed provider (file, sqlite"),
    ("user_id = '../x'\n", "config user_id: user_id must not contain path separators"),
])
def test_invalid_files_name_the_line_or_the_key(tmp_path, toml, message):
    path = tmp_path / "config.toml"
    path.write_text(toml)
    with pytest.raises(UsageError) as info:
        load_file(path)
    assert message in info.value.message


def test_the_provider_takes_the_library_s_own_name_for_chroma(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("provider = 'rag'\n")
    assert load_file(path) == {"provider": "rag"}  # praisonaiagents' Memory(config={"provider": "rag"})
    assert Settings(env={"PRAISONMEM_PROVIDER": "rag"}).get("provider").value == "rag"


def test_invalid_environment_values_name_the_variable():
    with pytest.raises(UsageError, match="PRAISONMEM_LOCK_TIMEOUT \\(environment\\) must be a number"):
        Settings(env={"PRAISONMEM_LOCK_TIMEOUT": "soon"}).get("lock_timeout")


def test_set_refuses_unknown_keys_and_bad_values(tmp_path):
    with pytest.raises(UsageError, match="unknown config key 'nope'"):
        set_value(tmp_path / "c.toml", "nope", "1")
    with pytest.raises(UsageError, match="backup.keep must be a whole number"):
        set_value(tmp_path / "c.toml", "backup.keep", "many")
    assert not (tmp_path / "c.toml").exists()
