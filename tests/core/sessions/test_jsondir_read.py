"""The JSON store reads a session file through :func:`jsonfile.read_bytes` (one ``read`` of a regular file, no
buffered file object): the same bytes at every size, and for every failure the error it always gave."""

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
    assert jsonfile.read_bytes(path) == data == jsonfile.read_bytes(str(path))


def test_a_file_that_grows_while_it_is_read_is_read_to_its_end(tmp_path, monkeypatch):
    path = tmp_path / "s.json"
    path.write_bytes(b"x" * 10)
    real = os.fstat

    def stale(fd):  # a size taken before an agent appended: the read must not stop there
        st = real(fd)
        return os.stat_result((*st[:6], 4, *st[7:]))

    monkeypatch.setattr(os, "fstat", stale)
    assert jsonfile.read_bytes(path) == b"x" * 10


def test_the_errors_it_always_gave(tmp_path):
    loop = tmp_path / "loop.json"
    loop.symlink_to("loop.json")
    directory = tmp_path / "dir.json"
    directory.mkdir()
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "nowhere")
    assert [outcome(jsonfile.read_bytes, p) for p in (tmp_path / "missing.json", loop, directory, dangling, tmp_path)] \
        == [("NotFound", f"{tmp_path}/missing.json: no such file"),
            ("IOFailure", f"{loop}: too many levels of symbolic links"),
            ("IOFailure", f"{directory}: is a directory, not a file"),
            ("NotFound", f"{dangling}: no such file"),
            ("IOFailure", f"{tmp_path}: is a directory, not a file")]


def test_load_reports_what_it_always_did(tmp_path):
    cases = {"broken.json": b'{"messages": [', "array.json": b"[]", "bad-messages.json": b'{"messages": 3}',
             "latin1.json": b'{"t": "\xe9"}', "good.json": b'{"session_id": "g", "messages": []}'}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        via_jsonfile = outcome(lambda p: jsondir.validate(jsonfile.read_object(p), p), tmp_path / name)
        assert outcome(jsondir.load, tmp_path / name) == via_jsonfile
