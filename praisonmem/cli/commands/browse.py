"""``praisonmem browse``: a terminal UI over every store of the home (Textual, the ``tui`` extra; read-only but
for the write actions, which ask first).

Textual is imported only here, inside the command, so no other command pays for it, and a missing Textual is
one line naming the extra to install.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from praisonmem.cli.options import StoreChoice, store_options
from praisonmem.cli.state import state_of
from praisonmem.core import sessions
from praisonmem.core.errors import IOFailure, UsageError

INSTALL_HINT = "the terminal UI needs Textual: pip install 'praisonmem[tui]'"

app = typer.Typer(add_completion=False)

KeyFileOption = Annotated[str | None, typer.Option(
    "--key-file", metavar="PATH", help="The key of encrypted sessions (a private file holding the Fernet key; "
                                       "default: PRAISONAI_SESSION_KEY).")]


@store_options
def browse_command(
    ctx: typer.Context,
    store: StoreChoice = StoreChoice(),
    key_file: KeyFileOption = None,
) -> int:
    """Browse every store of the home in a full-screen terminal UI.

    Its session stores, FileMemory users, learn stores and Upsonic database
    on the left, the selected node's items in the middle, the selected item
    on the right, rendered as its show command renders it (a session also as
    "next turn", the working history the agent resumes with).

    Keys (? shows them all): / search (as session search), Enter open, Esc
    back, f filter (agent, user, scope, store, since), w follow the open
    session live (as session watch), t the "next turn" tab, r rename, d
    delete, x redact, e export (each shows its plan and asks first), q quit.
    Browsing changes nothing in the home. Needs a terminal, and Textual
    (the tui extra).

    Example:

        praisonmem browse
        praisonmem browse --store sessions.db --key-file ~/.praisonai/session.key
    """
    import importlib.util

    if importlib.util.find_spec("textual") is None:
        raise IOFailure(INSTALL_HINT)
    state = state_of(ctx)
    paths = state.paths  # a --home that does not exist: not found, before anything else is looked at
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError("browse is a full-screen terminal UI: run it on a terminal (stdin and stdout), or use "
                         "'session list', 'session show' and 'session search' in a script")
    from praisonmem.tui.source import Options

    options = Options(paths=paths, store=store.where(ctx), key=sessions.session_key(key_file),
                      lock_timeout=state.lock_timeout, cache=state.cache, upsonic_db=state.setting("upsonic.db"))
    if state.no_color:
        os.environ["NO_COLOR"] = "1"  # Textual reads it when the app is made
    from praisonmem.tui.app import BrowseApp

    browser = BrowseApp(options)
    browser.run(mouse=True)
    if browser.crash is not None:  # a bug: the terminal is restored; said in the one line every command uses
        raise browser.crash
    return browser.return_code or 0


app.command("browse")(browse_command)
