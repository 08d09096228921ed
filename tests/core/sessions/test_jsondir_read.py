"""The JSON store reads a session file without a buffered file object: the same bytes, and for every failure the
very error :func:`jsonfile.read_bytes` gives."""

from __future__ import annotations

import os

import pytest

from praisonmem.core.errors import PraisonMemError
from praisonmem.core.io import jsonfile
from praisonmem.core.sessions.stores import jsondir


def outcome(read, path):
    try:
        return ("ok", read(path))
    except PraisonMemError as exc:
        return (type(exc).__name__, str(exc))


@pytest.mark.parametrize("size", [0, 1, 8192, 65535, 65536, 65537, 3 * 65536 + 7])
def test_the_same_bytes_at_every_size(tmp_path, size):
    path = tmp_path / "s.json"
    data = os.urandom(size)
    path.write_bytes(data)
    assert jsondir._read_bytes(path) == data == jsonfile.read_bytes(path)
    assert jsondir._read_bytes(str(path)) == data


def test_the_same_errors(tmp_path):
    loop = tmp_path / "loop.json"
    loop.symlink_to("loop.json")
    directory = tmp_path / "dir.json"
    directory.mkdir()
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "nowhere")
    for path in (tmp_path / "missing.json", loop, directory, dangling, tmp_path):
        expected = outcome(jsonfile.read_bytes, path)
        assert expected[0] != "ok"
        assert outcome(jsondir._read_bytes, path) == expected


def test_load_reports_what_it_always_did(tmp_path):
    cases = {"broken.json": b'{"messages": [', "array.json": b"[]", "bad-messages.json": b'{"messages": 3}',
             "latin1.json": b'{"t": "\xe9"}', "good.json": b'{"session_id": "g", "messages": []}'}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        via_jsonfile = outcome(lambda p: jsondir.validate(jsonfile.read_object(p), p), tmp_path / name)
        assert outcome(jsondir.load, tmp_path / name) == via_jsonfile
