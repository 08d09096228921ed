"""``jsonfile.locked_quick``: the sidecar flock taken without filelock keeps filelock's rule for a sidecar that is
deleted while a writer waits for it (the writer must not end up holding a lock on a file nobody else can see);
and ``jsonfile.flock_polled`` is the one place that polls a flock."""

from __future__ import annotations

import fcntl
import os
import threading
import time

import pytest

from praisonmem.core.errors import LockTimeout
from praisonmem.core.io import jsonfile
from tests.conftest import REPO


def hold(lock_path) -> int:
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_a_sidecar_deleted_while_waiting_is_opened_again_and_waited_on(tmp_path):
    target = tmp_path / "store.json"
    lock_path = f"{target}.lock"
    first = hold(lock_path)  # A holds the sidecar
    got = threading.Event()
    release = threading.Event()

    def writer() -> None:  # B waits for it
        with jsonfile.locked_quick(target, timeout=10):
            got.set()
            release.wait(10)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        time.sleep(0.2)
        os.unlink(lock_path)  # someone deletes the sidecar; C creates a new one and holds it
        second = hold(lock_path)
        os.close(first)  # A lets go of the deleted one
        assert not got.wait(0.6), "the writer took a lock on a deleted sidecar while another writer held the new one"
        os.close(second)
        assert got.wait(5)
    finally:
        release.set()
        thread.join(10)


def test_a_sidecar_deleted_while_waiting_keeps_the_first_deadline(tmp_path):
    target = tmp_path / "store.json"
    lock_path = f"{target}.lock"
    first = hold(lock_path)
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            with jsonfile.locked_quick(target, timeout=0.8):
                pass
        except BaseException as exc:  # noqa: BLE001 - the test looks at it
            errors.append(exc)

    start = time.monotonic()
    thread = threading.Thread(target=writer)
    thread.start()
    time.sleep(0.2)
    os.unlink(lock_path)
    second = hold(lock_path)
    os.close(first)
    thread.join(10)
    elapsed = time.monotonic() - start
    os.close(second)
    assert len(errors) == 1 and isinstance(errors[0], LockTimeout)
    assert str(errors[0]) == (f"{target}: could not lock {lock_path} within 0.8s (an agent may be writing it); "
                              "nothing changed")
    assert elapsed < 1.6


@pytest.mark.parametrize("timeout", [0.3, -1])
def test_an_uncontended_sidecar_is_locked_at_once_and_released(tmp_path, timeout):
    target = tmp_path / "store.json"
    with jsonfile.locked_quick(target, timeout=timeout):
        probe = os.open(f"{target}.lock", os.O_RDWR)
        with pytest.raises(BlockingIOError):
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
    fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.close(probe)


def test_flock_polled_is_the_one_flock_poller():
    # a second poller would drift from the first (its poll interval, timeout message, errors); every other
    # module calls jsonfile.flock_polled, and takes a flock without LOCK_NB only to release it (LOCK_UN)
    pollers = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "praisonmem").rglob("*.py")
                     if "LOCK_NB" in p.read_text(encoding="utf-8"))
    assert pollers == ["praisonmem/core/io/jsonfile.py"]
    takers = [f"{p.relative_to(REPO)}: {line.strip()}" for p in (REPO / "praisonmem").rglob("*.py")
              if p.name != "jsonfile.py" for line in p.read_text(encoding="utf-8").splitlines()
              if "fcntl.flock(" in line and "LOCK_UN" not in line]
    assert takers == []
