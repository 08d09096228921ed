"""Data/state/memory dir precedence, exactly as praisonaiagents/paths.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from praisonmem.core.errors import UsageError
from praisonmem.core.paths import resolve


@pytest.fixture
def home(tmp_path) -> Path:
    h = tmp_path / "user"
    h.mkdir()
    return h


def test_home_flag_wins_over_everything(home):
    (home / ".praisonai").mkdir()
    p = resolve("/flag/home", env={"PRAISONAI_HOME": "/env/home", "XDG_DATA_HOME": "/xdg"}, user_home=home)
    assert p.data.path == Path("/flag/home") and p.data.source == "--home"
    assert p.state.path == Path("/flag/home")
    assert p.sessions_dir == Path("/flag/home/sessions")
    assert p.spill_dir == Path("/flag/home/state/session_spill")
    assert p.learn_dir == Path("/flag/home/learn")


def test_praisonai_home_is_expanded_but_relative_stays_relative(home):
    p = resolve(env={"PRAISONAI_HOME": "rel/dir"}, user_home=home)
    assert p.data.path == Path("rel/dir") and p.data.source == "PRAISONAI_HOME"
    p = resolve(env={"PRAISONAI_HOME": "~/custom", "HOME": str(home)}, user_home=home)
    assert p.data.path == Path("~/custom").expanduser()


def test_empty_praisonai_home_is_ignored(home):
    p = resolve(env={"PRAISONAI_HOME": ""}, user_home=home)
    assert p.data.source == "default ~/.praisonai"


def test_existing_praisonai_then_legacy_praison(home):
    (home / ".praison").mkdir()
    p = resolve(env={"XDG_DATA_HOME": "/xdg"}, user_home=home)
    assert p.data.path == home / ".praison" and "legacy" in p.data.source
    assert p.state.path == home / ".praison"
    (home / ".praisonai").mkdir()
    p = resolve(env={"XDG_DATA_HOME": "/xdg"}, user_home=home)
    assert p.data.path == home / ".praisonai"


def test_xdg_data_home_only_when_absolute(home):
    p = resolve(env={"XDG_DATA_HOME": "/xdg/data", "XDG_STATE_HOME": "/xdg/state"}, user_home=home)
    assert p.data.path == Path("/xdg/data/praisonai")
    assert p.state.path == Path("/xdg/state/praisonai")
    assert p.spill_dir == Path("/xdg/state/praisonai/state/session_spill")
    p = resolve(env={"XDG_DATA_HOME": "relative", "XDG_STATE_HOME": "rel"}, user_home=home)
    assert p.data.path == home / ".praisonai"
    assert p.state.path == home / ".local/state/praisonai"


def test_fresh_install_defaults(home):
    p = resolve(env={}, user_home=home)
    assert p.data.path == home / ".praisonai"
    assert p.spill_dir == home / ".local/state/praisonai/state/session_spill"


def test_memory_dir_flag_else_project_dir():
    assert resolve(env={}).memory_dir == Path(".praisonai/memory")
    assert resolve(memory_dir="/m", env={}).memory_dir == Path("/m")
    assert resolve(env={}).project_dir == Path(".praisonai")


def test_memory_dir_ignores_praisonai_home():
    assert resolve(env={"PRAISONAI_HOME": "/h"}).memory_dir == Path(".praisonai/memory")


def test_home_that_is_a_file_is_refused(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(UsageError, match="is not a directory"):
        resolve(str(f), env={}).require_home()


def test_rows_name_every_path_with_its_rule(home):
    rows = resolve("/h", env={}, user_home=home).rows()
    assert [r["name"] for r in rows] == [
        "data_dir", "sessions_dir", "state_dir", "spill_dir", "learn_dir", "memory_dir", "sqlite_memory_dir"]
    assert all(set(r) == {"name", "path", "source", "exists"} for r in rows)
    assert rows[0] == {"name": "data_dir", "path": "/h", "source": "--home", "exists": False}


@pytest.mark.parametrize("kind", ["config", "cache"])
@pytest.mark.parametrize("xdg, home", [(None, "/home/u"), ("/xdg", "/home/u"), ("", "/home/u"), ("rel/xdg", "/home/u"),
                                       ("  ", "/home/u"), (None, "relative-home"), (None, ""), (None, None),
                                       ("/xdg/with space ", "/h")])
def test_user_dir_is_platformdirs_own_answer(monkeypatch, kind, xdg, home):
    """The XDG rule computed without platformdirs, or platformdirs itself where the rule is not plain."""
    import platformdirs

    from praisonmem.core.paths import user_dir

    variable = {"config": "XDG_CONFIG_HOME", "cache": "XDG_CACHE_HOME"}[kind]
    for name, value in ((variable, xdg), ("HOME", home)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    expected = getattr(platformdirs, f"user_{kind}_dir")("praisonmem")
    assert user_dir(kind) == Path(expected)
