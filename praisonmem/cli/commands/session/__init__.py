"""``praisonmem session``: read commands (list, show, search) and the commands
that change sessions (rename, adopt, delete, prune, export, import)."""

from praisonmem.cli.commands.session import read, write  # noqa: F401  (registers the commands)
from praisonmem.cli.commands.session._app import app

__all__ = ["app"]
