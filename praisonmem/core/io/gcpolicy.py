"""When praisonmem's core keeps the cyclic garbage collector out of its way, and the one setting that governs it.

Decoded JSON, listing rows and FileMemory stores hold no reference cycles, yet the collector's passes over
them while they grow, and the first young pass after, can cost as much as building them:

* :func:`quiet_gc`: no collection while a large document (:data:`LARGE` bytes or more) is built;
* :func:`no_gc`: none in a block, and what it leaves alive goes to the oldest generation (:func:`to_oldest`).

Each leaves the collector as it found it (one the program turned off stays off) and never changes what is
collectable: only when the passes run.

The setting: :func:`to_oldest` promotes young objects with ``gc.freeze()`` then ``gc.unfreeze()``, and
``unfreeze`` releases every frozen object, the program's own too. A program importing praisonmem that froze
its objects (a pre-fork server sharing pages with its children) must keep them frozen; praisonmem's own
console script froze what its start-up built only to spare the collector, and may release it. So the
policy has one piece of state, kept here and set only by :func:`configure`, which the entry point
(``praisonmem/__main__.py``) calls once: until then (any program that imports ``praisonmem.core``) the safe
default holds, and :func:`to_oldest` promotes only when nothing is frozen. :func:`start_up_frozen` says which
holds. The core reads nothing else of the CLI's.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

LARGE = 1 << 20  # bytes of JSON from which :func:`quiet_gc` turns the collector off while it is decoded
# Below this many young objects a young collection costs less than what unfreezing brings back in the console
# script: the full pass at exit over everything its start-up froze (≈ 8 ms; session list of a small home).
YOUNG_MANY = 10_000

_start_up_frozen = False  # set by configure() only: True in praisonmem's console script


def configure(*, frozen: bool) -> None:
    """Declare how this process uses ``gc.freeze``: ``frozen=True`` when it froze what its start-up built only
    for speed (praisonmem's console script), so :func:`to_oldest` may unfreeze; ``False`` (the default) when
    frozen objects may be the program's own and must stay frozen."""
    global _start_up_frozen
    _start_up_frozen = frozen


def start_up_frozen() -> bool:
    """What :func:`configure` last set (``False`` if it was never called)."""
    return _start_up_frozen


@contextmanager
def quiet_gc(size: int = LARGE) -> Iterator[None]:
    """No cyclic garbage collection while a large document (``size`` bytes, at least :data:`LARGE`) is built:
    decoded JSON has no cycles, and the collector's passes over the growing heap cost as much as the decoding
    (14 MB: 60 ms of 150)."""
    if size < LARGE or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@contextmanager
def no_gc() -> Iterator[None]:
    """No cyclic garbage collection in the block, nor a pass over what it leaves alive just after it: what
    was allocated goes to the oldest generation (:func:`to_oldest`) instead of the young one, whose next pass
    would walk a 60,000-item store still referenced by the caller's frame."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        to_oldest()
        gc.enable()


def to_oldest() -> None:
    """What the collector holds as young now goes to its oldest generation (``freeze`` then ``unfreeze``, both
    O(1)), so no young collection walks it; still collectable as ever. Only for many young objects
    (:data:`YOUNG_MANY`), and only when nothing is frozen or the process froze its start-up for speed
    (:func:`configure`): a program's own frozen objects stay frozen, and its young objects then stay young."""
    if gc.get_count()[0] < YOUNG_MANY:
        return
    if _start_up_frozen or gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
