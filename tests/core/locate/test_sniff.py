"""A JSON document's kind from its first bytes: the outer object's keys (or the first element's), the first nested
object's keys, nothing past a cut, and the scan stops once a store's keys are complete."""

from __future__ import annotations

import json
import os

import pytest

from praisonmem.core.locate.sniff import HEAD, read_head, shape


@pytest.mark.parametrize(("text", "outer", "keys", "inner"), [
    ('{"session_id": "a", "messages": [{"role": "user"}], "agent_name": "x"}', "{", ["session_id", "messages"], []),
    ('{"a": {"b": 1, "c": [{"d": 2}]}, "e": "x', "{", ["a", "e"], ["b", "c"]),
    ('{"a": ["x", "y"], "b\\u0041": 1, "s": "a \\" quote, \\"k\\": 1", "t": 2}', "{", ["a", "bA", "s", "t"], []),
    ('[{"session_id": "s", "x": {"k": 1}, "session_type": "agent", "later": 1}, {"zz": 1}]', "[",
     ["session_id", "x", "session_type"], ["k"]),
    ('[1, {"a": 2}]', "[", ["a"], []),
    ("[]", "[", [], []),
    ("  \n{}", "{", [], []),
    ('{"persona_1": {"id": "p", "content": "c"}}', "{", ["persona_1"], ["id", "content"]),
    ("not json", "", [], []),
    ('{"cut": "abc', "{", ["cut"], []),  # a key whose value the head cuts is still a key
    ('{"a": 1, "cu', "{", ["a"], []),  # a key the head cuts is not one
])
def test_shape(text, outer, keys, inner):
    found = shape(text.encode())
    assert (found.outer, found.keys, found.inner) == (outer, keys, inner)


@pytest.mark.parametrize(("text", "values"), [
    ('{"session_id": "a\\u00e9", "spilled_at": "t", "messages": []}', {"session_id": "a\u00e9", "spilled_at": "t"}),
    ('{"n": 1, "x": {"session_id": "inner"}, "l": ["v"], "s": "kept"}', {"s": "kept"}),  # the outer object's only
    ('{"k": "a, \\"q\\": \\"b", "e": ""}', {"k": 'a, "q": "b', "e": ""}),
    ('{"cut": "abc', {}),  # a value the head cuts is not one
    ('[{"id": "1", "content": "c"}]', {}),  # an array's first element: keys only
])
def test_values(text, values):
    assert shape(text.encode()).values == values


def test_a_long_document_costs_one_head(tmp_path):
    doc = {"session_id": "s", "messages": [{"role": "user", "content": "x" * 100_000}]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    head = read_head(str(path))
    assert head is not None and len(head) == HEAD
    assert shape(head).keys == ["session_id", "messages"]


def test_read_head_opens_regular_files_only(tmp_path):
    os.mkfifo(tmp_path / "pipe.json")  # would block an open without O_NONBLOCK; never read
    os.symlink(tmp_path / "target.json", tmp_path / "link.json")
    (tmp_path / "target.json").write_text("{}", encoding="utf-8")
    assert read_head(str(tmp_path / "pipe.json")) is None
    assert read_head(str(tmp_path / "link.json")) is None
    assert read_head(str(tmp_path)) is None
    assert read_head(str(tmp_path / "target.json")) == b"{}"
