"""The Chroma provider's pure rules: the user suffix is praisonaiagents' own, the word score is FileMemory's,
and a damaged export file is refused whole, naming the line."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from praisonmem.core.errors import UsageError
from praisonmem.core.memory.chroma import EXPORT_FORMAT, read_export, suffix, words_score


@settings(deadline=None)  # the first example imports praisonaiagents
@given(st.text(max_size=12))
def test_the_user_suffix_is_the_librarys(user):
    from praisonaiagents.memory.memory import Memory

    try:
        expected = Memory._path_safe_suffix(user)
    except ValueError:
        with pytest.raises(UsageError):
            suffix(user)
        return
    assert suffix(user) == expected


@pytest.mark.parametrize(("query", "text", "score"), [
    ("Green TEA", "alice likes green tea", 1.0),
    ("tea morning", "green tea", 0.4),
    ("coffee", "green tea", None),
    ("", "anything", 1.0),
])
def test_word_score(query, text, score):
    assert words_score(query, text) == score


HEADER = json.dumps({"format": EXPORT_FORMAT, "collection": "memory_store", "metadata": {}, "count": 1})


def parse_export(lines: list[str], name: str) -> tuple[dict, list[dict]]:
    """``lines`` as a file ``name`` in the working directory, read as ``memory import`` reads it."""
    with open(name, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return read_export(name)


@pytest.mark.parametrize(("lines", "message"), [
    ([HEADER, "{"], "x:2: not JSON"),
    ([HEADER, "[]"], "x:2: not a JSON object"),
    ([HEADER, json.dumps({"id": "a", "embedding": []})], "x:2: 'embedding' must be a non-empty list of numbers"),
    ([HEADER, json.dumps({"id": "a", "embedding": [True]})], "x:2: 'embedding' must be a non-empty list of numbers"),
    ([HEADER, json.dumps({"id": "a", "metadata": {"k": [1]}, "embedding": [0.5]})],
     "x:2: 'metadata' must be an object of strings, numbers and booleans"),
    ([HEADER, json.dumps({"id": "a", "embedding": [1]}), json.dumps({"id": "a", "embedding": [1]})],
     "x:3: id 'a' appears twice"),
    ([json.dumps({"id": "a", "embedding": [1]})], "x: not a praisonmem Chroma export"),
    ([json.dumps({"format": "other"})], "x: format 'other' is not"),
])
def test_a_damaged_export_is_refused_naming_the_line(lines, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as caught:
        parse_export(lines, "x")
    assert str(caught.value).startswith(message)


def test_an_export_parses_to_its_records(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    header, records = parse_export([HEADER, json.dumps({"id": "a", "document": "t", "metadata": {"k": 1},
                                                        "embedding": [0.25, -1]})], "x")
    assert header["collection"] == "memory_store"
    assert records == [{"id": "a", "document": "t", "metadata": {"k": 1}, "embedding": [0.25, -1]}]
