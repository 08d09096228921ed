"""Where ``memory search`` keeps its cache, how to turn it off, and that the output never depends on it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from praisonmem.core.io import cache as cachemod


@pytest.fixture
def project(cli, tmp_path, monkeypatch):
    """A FileMemory user in the cwd's ./.praisonai/memory, written by praisonmem, its files trusted at once."""
    monkeypatch.setattr(cachemod, "GRANULARITY_NS", 0)
    monkeypatch.chdir(tmp_path)
    for text, flags in (("User prefers dark mode", ["--long"]), ("dark chocolate", []), ("tea", [])):
        assert cli("--no-cache", "memory", "store", text, *flags, "--user-id", "u").exit_code == 0
    assert cli("--no-cache", "episodic", "add", "dark night", "--user-id", "u").exit_code == 0
    return tmp_path


def bins(root: Path) -> list[Path]:
    return sorted((root / "memory-search").glob("*.bin"))


def search(cli, *flags: str, query: str = "dark") -> str:
    result = cli(*flags, "memory", "search", query, "--user-id", "u", "--json")
    assert result.exit_code == 0, result.stderr
    return result.stdout


def test_the_cache_lives_in_the_user_cache_dir_privately(cli, project):
    expected = search(cli, "--no-cache")
    assert search(cli) == expected
    root = Path(os.environ["HOME"]) / ".cache" / "praisonmem"
    assert len(bins(root)) == 3  # short_term, long_term, today's episodes (no entities.json)
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert stat.S_IMODE((root / "memory-search").stat().st_mode) == 0o700
    assert {stat.S_IMODE(p.stat().st_mode) for p in bins(root)} == {0o600}
    assert search(cli) == expected


def test_xdg_cache_home_and_praisonmem_cache_dir_move_it(cli, project, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    search(cli)
    assert len(bins(tmp_path / "xdg" / "praisonmem")) == 3
    monkeypatch.setenv("PRAISONMEM_CACHE_DIR", str(tmp_path / "mine"))
    search(cli)
    assert len(bins(tmp_path / "mine")) == 3


def test_config_cache_dir_moves_it_and_the_environment_wins(cli, project, config, monkeypatch, tmp_path):
    config.write_text(f'cache_dir = "{tmp_path / "configured"}"\n')
    search(cli)
    assert len(bins(tmp_path / "configured")) == 3
    monkeypatch.setenv("PRAISONMEM_CACHE_DIR", str(tmp_path / "env"))
    search(cli)
    assert len(bins(tmp_path / "env")) == 3


@pytest.mark.parametrize("how", ["--no-cache", "config cache = false", "PRAISONMEM_CACHE=0"])
def test_the_cache_can_be_turned_off(cli, project, config, monkeypatch, tmp_path, how):
    monkeypatch.setenv("PRAISONMEM_CACHE_DIR", str(tmp_path / "cache"))
    flags = []
    if how == "--no-cache":
        flags = ["--no-cache"]
    elif how.startswith("config"):
        config.write_text("cache = false\n")
    else:
        monkeypatch.setenv("PRAISONMEM_CACHE", "0")
    expected = search(cli, *flags)
    assert not (tmp_path / "cache").exists()
    monkeypatch.delenv("PRAISONMEM_CACHE", raising=False)
    config.write_text("")
    assert search(cli) == expected
    assert len(bins(tmp_path / "cache")) == 3


def test_a_cache_that_cannot_be_written_is_no_error(cli, project, monkeypatch, tmp_path):
    (tmp_path / "blocked").write_text("a file, not a directory")
    monkeypatch.setenv("PRAISONMEM_CACHE_DIR", str(tmp_path / "blocked"))
    result = cli("memory", "search", "dark", "--user-id", "u", "--json")
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout == search(cli, "--no-cache")


def test_bad_cache_settings_are_usage_errors(cli, project, config, monkeypatch):
    monkeypatch.setenv("PRAISONMEM_CACHE", "maybe")
    result = cli("memory", "search", "dark", "--user-id", "u")
    assert (result.exit_code, result.stderr) == (
        2, "praisonmem: error: config PRAISONMEM_CACHE (environment) must be true or false, got 'maybe'\n")


def test_memory_writes_drop_the_entries_of_the_files_they_replace(cli, project, monkeypatch, tmp_path):
    monkeypatch.setenv("PRAISONMEM_CACHE_DIR", str(tmp_path / "cache"))
    search(cli)
    assert len(bins(tmp_path / "cache")) == 3
    [hit] = [h for h in cli("memory", "search", "chocolate", "--user-id", "u", "--json").json()]
    assert cli("memory", "delete", hit["item"]["id"], "--user-id", "u", "--yes").exit_code == 0
    assert len(bins(tmp_path / "cache")) == 2  # short_term.json was rewritten: its entry held the deleted text
    assert b"chocolate" not in b"".join(p.read_bytes() for p in bins(tmp_path / "cache"))
    assert cli("--no-cache", "memory", "reset", "--all", "--user-id", "u", "--yes").exit_code == 0
    assert bins(tmp_path / "cache") == []  # even with --no-cache, a write forgets what it replaced
    assert search(cli) == "[]\n"


def test_a_cache_dir_others_can_write_is_not_used_with_one_note(cli, project, monkeypatch, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    monkeypatch.setenv("PRAISONMEM_CACHE_DIR", str(shared))
    result = cli("memory", "search", "dark", "--user-id", "u", "--json")
    assert result.exit_code == 0 and result.stdout == search(cli, "--no-cache")
    assert result.stderr == (f"praisonmem: not using the cache dir {shared}: it can be written by others (group or "
                             "other write permission), so its entries cannot be trusted\n")
    assert list(shared.iterdir()) == [] and stat.S_IMODE(shared.stat().st_mode) == 0o777
