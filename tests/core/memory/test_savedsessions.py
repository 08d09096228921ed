"""Saved sessions and mem0's history below the CLI: the library's name rule, where mem0's database is."""

from __future__ import annotations

from pathlib import Path

import pytest

from praisonmem.core.errors import UsageError
from praisonmem.core.memory import mem0history, savedsessions


@pytest.mark.parametrize("name", ["standup", "a b", "café", ".hidden", "x.json", "..x"])
def test_names_safe_child_accepts(name):
    assert savedsessions.check_name(name) == name


@pytest.mark.parametrize("name", ["", " ", "\t", ".", "..", "a/b", "a\\b", "a\0b"])
def test_names_safe_child_refuses(name):
    with pytest.raises(UsageError, match="invalid saved session name"):
        savedsessions.check_name(name)


def test_mem0_dir_then_home(monkeypatch, tmp_path):
    monkeypatch.setenv("MEM0_DIR", str(tmp_path / "m"))
    assert mem0history.default_db() == tmp_path / "m" / "history.db"
    monkeypatch.setenv("MEM0_DIR", "")  # mem0 reads it with `or`: empty means unset
    assert mem0history.default_db() == Path.home() / ".mem0" / "history.db"
    monkeypatch.delenv("MEM0_DIR")
    assert mem0history.default_db() == Path.home() / ".mem0" / "history.db"


@pytest.mark.parametrize("text, message", [("", "--db names no file"),
                                           ("sqlite:///x.db", "--db takes the path of mem0's history.db, not a "
                                                              "sqlite:// URL")])
def test_db_option_refuses(text, message):
    with pytest.raises(UsageError) as info:
        mem0history.db_path(text)
    assert info.value.message == message


def test_db_option_expands_home():
    assert mem0history.db_path("~/h.db") == Path.home() / "h.db"
