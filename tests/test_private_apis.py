"""Every private attribute and method of the standard library that praisonmem relies on, exercised here alone.

A Python release that renames or changes one of them fails this module with a message naming it, before the
code that uses it misbehaves (a hang at Ctrl-C, an archive's header read whole into memory). What it pins:

* ``multiprocessing.pool.Pool``, for ``core/io/parallel.py``'s ``_stop`` (a Ctrl-C while the fork pool works;
  ``Pool.terminate()`` first takes the task queue's lock, which an idle worker holds, so it can wait forever):
  ``pool._state`` and the constants ``multiprocessing.pool.RUN``/``TERMINATE``; ``pool._worker_handler``, the
  thread that keeps the pool full, which stops once its own ``_state`` is ``TERMINATE`` (so no worker is
  started again behind the kill) and it is woken through ``pool._change_notifier`` (it sleeps until a worker
  exits, a result comes or that queue is written); ``pool._pool``, the worker processes (``kill``, ``join``); and
  ``pool._terminate``, the ``multiprocessing.util.Finalize`` whose ``cancel()`` keeps the exit-time
  ``terminate()`` from waiting on the locks the killed workers held.
* ``tarfile.TarInfo``, for ``core/backup/archive.py``'s ``_BoundedTarInfo`` (an untrusted archive's headers
  bounded before tarfile reads them whole): ``_proc_member(self, tarfile)``, which ``TarInfo.fromtarfile`` calls
  for every header (tarfile's source names it the hook a subclass overrides); ``_sparse_structs``, the
  ``(structs, isextended, origsize)`` that ``frombuf`` leaves on a GNU sparse member; and
  ``_proc_gnusparse_10(self, next, pax_headers, tarfile)``, which reads a pax 1.0 sparse map.

Nothing here is skipped on any Python: it runs on whichever interpreter runs the suite. ``pyproject.toml`` admits
CPython 3.11 and later, while this project's machines and CI have 3.11 only (Debian 12's ``python3``; its
archive has no other), so run this module on a newer Python before calling it supported there. (A recent
CPython's ``multiprocessing/pool.py``, read, still has every name above.)
"""

from __future__ import annotations

import gzip
import inspect
import io
import multiprocessing
import tarfile
import threading
import time
from multiprocessing import pool as mp_pool
from multiprocessing import util as mp_util

import pytest

from praisonmem.core.backup import archive
from praisonmem.core.io import parallel

STOP_WAIT = 20.0  # seconds; _stop takes well under one


# ---------------------------------------------------------------- multiprocessing.pool.Pool


@pytest.fixture
def pool():
    made = multiprocessing.get_context("fork").Pool(2)
    yield made
    abandon(made)


def abandon(made: mp_pool.Pool) -> None:
    """The pool gone whatever a test (or a broken ``_stop``) left, never by ``terminate()`` or ``join()``, which
    can wait forever on a lock a killed worker held, here or in the exit-time finalizer."""
    handler = getattr(made, "_worker_handler", None)
    notifier = getattr(made, "_change_notifier", None)
    if handler is not None and notifier is not None:
        handler._state = mp_pool.TERMINATE
        notifier.put(None)
        handler.join(STOP_WAIT)
    for child in multiprocessing.active_children():
        child.kill()
        child.join()
    finalizer = getattr(made, "_terminate", None)
    if finalizer is not None:
        finalizer.cancel()


def test_the_pool_has_the_private_attributes_parallel_stop_uses(pool):
    assert pool._state == mp_pool.RUN, "Pool._state or multiprocessing.pool.RUN changed"
    assert mp_pool.TERMINATE != mp_pool.RUN, "multiprocessing.pool.TERMINATE changed"
    handler = pool._worker_handler
    assert isinstance(handler, threading.Thread) and handler.is_alive(), "Pool._worker_handler is not its thread"
    assert handler._state == mp_pool.RUN, "Pool._worker_handler._state no longer says whether to keep the pool full"
    workers = pool._pool
    assert len(workers) == 2 and all(callable(getattr(w, "kill", None)) and w.is_alive() for w in workers), \
        "Pool._pool is not the list of worker processes"
    assert isinstance(pool._terminate, mp_util.Finalize) and pool._terminate.still_active(), \
        "Pool._terminate is not the exit-time Finalize"


def test_parallel_stop_kills_reaps_and_keeps_the_pool_from_refilling(pool):
    workers = list(pool._pool)
    assert pool.apply(sum, ([1, 2],)) == 3  # the workers have taken work once: the task queue's lock has been used
    deadline = time.monotonic() + STOP_WAIT
    while not pool._change_notifier.empty() and time.monotonic() < deadline:
        time.sleep(0.01)  # the handler has taken the news of the finished task: now idle, nothing would wake it
    assert pool._change_notifier.empty(), "Pool._change_notifier is no longer what wakes the worker handler"
    stopper = threading.Thread(target=parallel._stop, args=(pool,), daemon=True)
    stopper.start()
    stopper.join(STOP_WAIT)
    assert not stopper.is_alive(), ("parallel._stop hangs: the pool's worker handler no longer wakes on "
                                    "Pool._change_notifier and stops when its thread's _state is TERMINATE")
    assert not pool._worker_handler.is_alive()
    assert all(w.exitcode is not None for w in workers), "a worker in Pool._pool was not killed and reaped"
    assert all(w.exitcode is not None for w in pool._pool), "the pool started a worker again behind the kill"
    assert not pool._terminate.still_active(), "Pool._terminate.cancel() did not cancel the exit-time terminate()"


# ---------------------------------------------------------------- tarfile.TarInfo


def parameters(function) -> list[str]:
    return list(inspect.signature(function).parameters)


def test_the_tarinfo_hooks_keep_their_signatures():
    assert parameters(tarfile.TarInfo._proc_member) == ["self", "tarfile"], "TarInfo._proc_member changed"
    assert parameters(tarfile.TarInfo._proc_gnusparse_10) == ["self", "next", "pax_headers", "tarfile"], \
        "TarInfo._proc_gnusparse_10 changed"


class Recording(tarfile.TarInfo):
    """The hooks ``_BoundedTarInfo`` overrides, recorded as tarfile calls them."""

    calls: list[tuple[str, bytes | str]] = []

    def _proc_member(self, tarfile_):
        Recording.calls.append(("_proc_member", self.type))
        return super()._proc_member(tarfile_)

    def _proc_gnusparse_10(self, next, pax_headers, tarfile_):
        Recording.calls.append(("_proc_gnusparse_10", next.name))
        return super()._proc_gnusparse_10(next, pax_headers, tarfile_)


def gz_archive(*members: tuple[tarfile.TarInfo, bytes], format: int = tarfile.GNU_FORMAT) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=format) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)


def member(name: str, data: bytes, **pax: str) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.pax_headers = dict(pax)
    return info, data


def read_all(blob: bytes, tarinfo: type[tarfile.TarInfo]) -> list[str]:
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz", tarinfo=tarinfo) as tar:
        return [m.name for m in tar.getmembers()]


def test_proc_member_is_called_for_every_header_a_long_name_s_too():
    long_name = "d/" + "n" * 200
    blob = gz_archive(member("a", b"1"), member(long_name, b"2"))
    Recording.calls = []
    assert read_all(blob, Recording) == ["a", long_name]
    assert Recording.calls == [("_proc_member", tarfile.REGTYPE), ("_proc_member", tarfile.GNUTYPE_LONGNAME),
                               ("_proc_member", tarfile.REGTYPE)], "TarInfo.fromtarfile no longer calls _proc_member"


def test_a_long_name_header_over_the_bound_is_refused_by_proc_member(monkeypatch):
    monkeypatch.setattr(archive, "HEADER_MAX", 100)
    with pytest.raises(tarfile.ReadError, match="extended header"):
        read_all(gz_archive(member("d/" + "n" * 200, b"2")), archive._BoundedTarInfo)


def gnu_sparse_block(name: str, extended: bool) -> bytes:
    """A GNU sparse ('S') header, all hole, its map continued in an extension block when ``extended``."""
    block = bytearray(512)
    block[0:len(name)] = name.encode()
    block[100:108] = b"%07o\0" % 0o600
    block[108:116] = block[116:124] = b"%07o\0" % 0
    block[124:136] = block[136:148] = b"%011o\0" % 0
    block[156:157] = b"S"
    block[257:265] = b"ustar  \0"
    block[386:398], block[398:410] = b"%011o\0" % 8, b"%011o\0" % 0
    block[482:483] = b"\1" if extended else b"\0"
    block[483:495] = b"%011o\0" % 8
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block)
    extension = bytes(512) if extended else b""
    return bytes(block) + extension


def test_frombuf_leaves_the_sparse_structs_bounded_tarinfo_reads():
    for extended in (False, True):
        info = tarfile.TarInfo.frombuf(gnu_sparse_block("s", extended)[:512], tarfile.ENCODING, "surrogateescape")
        structs, isextended, origsize = info._sparse_structs
        assert (bool(isextended), origsize) == (extended, 8), "TarInfo._sparse_structs changed"


def test_an_extended_gnu_sparse_map_is_refused_by_proc_member():
    blob = gzip.compress(gnu_sparse_block("s", True) + bytes(1024), mtime=0)
    with pytest.raises(tarfile.ReadError, match="extended map"):
        read_all(blob, archive._BoundedTarInfo)
    assert read_all(gzip.compress(gnu_sparse_block("s", False) + bytes(1024), mtime=0), archive._BoundedTarInfo) \
        == ["s"]  # a plain sparse member still reaches the archive's own check, which names it


def pax_sparse_10() -> bytes:
    sparse_map = b"0\n".ljust(512, b"\0")  # no data chunks: all hole
    return gz_archive(member("s", sparse_map, **{"GNU.sparse.major": "1", "GNU.sparse.minor": "0",
                                                 "GNU.sparse.name": "s", "GNU.sparse.realsize": "8"}),
                      format=tarfile.PAX_FORMAT)


def test_proc_gnusparse_10_is_what_reads_a_pax_sparse_map():
    Recording.calls = []
    assert read_all(pax_sparse_10(), Recording) == ["s"]
    assert ("_proc_gnusparse_10", "s") in Recording.calls, "a pax 1.0 sparse map is no longer read by _proc_gnusparse_10"
    with pytest.raises(tarfile.ReadError, match="pax sparse file"):
        read_all(pax_sparse_10(), archive._BoundedTarInfo)
