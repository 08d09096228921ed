"""``praisonmem session``: read commands (list, show, search) and the commands
that change sessions (rename, adopt, delete, prune, export, import)."""

from praisonmem.cli.session import read, write  # noqa: F401  (registers the commands)
from praisonmem.cli.session._app import app

__all__ = ["app"]
