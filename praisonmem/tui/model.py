"""What the browser has selected, and the hook its write actions go through.

:class:`Selection` names one item the way the commands name it: the home's :class:`~praisonmem.core.paths.Paths`,
the ``store`` argument the core's session functions take (a home's label such as ``json`` or ``sessions.db``, a
``Location`` for a ``--store`` elsewhere, or ``None``), the session key, the lock timeout and praisonmem's cache,
then the node kind and the item's id. A browser action on it calls the same core function as the command would,
with these same arguments.

The hook. On ``r`` (rename/retitle), ``d`` (delete), ``x`` (redact) and ``e`` (export) the app calls::

    praisonmem.tui.actions.perform(app, key, selection)   # -> None

* ``app`` is the running :class:`praisonmem.tui.app.BrowseApp` (a Textual ``App``); ``key`` one of
  :data:`ACTION_KEYS`; ``selection`` what is selected when the key is pressed (never ``None``: the app says
  "nothing selected" itself).
* ``perform`` is called on the app's event loop and returns at once: it pushes its screens (plan, confirmation,
  forms) with ``app.push_screen`` and does the write in a thread worker (``app.run_worker(..., thread=True)``),
  never blocking the loop.
* Once a write has been made (or refused), it shows the ``Outcome`` or the one error line the CLI would print
  (``app.notify``; ``severity="error"`` for an error) and calls ``app.refresh_selection(new_item)`` on the event
  loop (``app.call_from_thread`` from a worker): the app re-lists the node and re-renders the detail pane, keeping
  ``new_item`` selected (the new id after a rename, ``None`` to keep the current row or, if it is gone, the row in
  its place). A cancelled action changes nothing and need not refresh.
* A kind the actions do not handle (``selection.kind`` not ``"session"``, say) is told with ``app.notify`` and
  changes nothing.

The app imports :mod:`praisonmem.tui.actions` only when such a key is pressed; without it the key says
"not available".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from praisonmem.core.io.cache import Cache
    from praisonmem.core.paths import Paths
    from praisonmem.core.sessions import Key

Kind = Literal["session", "memory", "learn", "upsonic"]
ACTION_KEYS = ("r", "d", "x", "e")  # rename/retitle, delete, redact, export


@dataclass(frozen=True)
class Selection:
    """One selected item, named as the commands name it.

    ``kind`` and ``item``:

    * ``"session"``: ``item`` is the session id; ``store`` the store holding this copy (the label ``session list``
      shows in STORE, or the ``--store`` location); ``title`` its title.
    * ``"memory"``: ``item`` is the memory id; ``context`` has ``provider`` (``file``, ``sqlite``, ...),
      ``user_id`` and ``tier`` (``short_term``, ``long_term``, ...).
    * ``"learn"``: ``item`` is the entry id; ``context`` has ``scope``, ``user_id`` and ``store`` (the learn
      store's name).
    * ``"upsonic"``: ``item`` is the Upsonic session id; ``context`` has ``db`` (the storage's path or URL).
    """

    paths: Paths
    kind: Kind
    item: str
    store: Any = None  # the core's ``store`` argument: a label, a Location, or None for every store of the home
    key: Key | None = None  # the session key (--key-file or PRAISONAI_SESSION_KEY); None: encrypted stays opaque
    lock_timeout: float = 5.0  # seconds a write waits for the owner's lock (--lock-timeout, as the commands)
    cache: Cache | None = None  # praisonmem's cache: a session write drops session list's entry from it
    title: str | None = None  # the session's title as stored (unescaped: escape it before showing it)
    context: Mapping[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        """``session 'id' (json)``: how a message names the item (not escaped)."""
        where = f" ({self.store})" if self.store is not None else ""
        return f"{self.kind} '{self.item}'{where}"
