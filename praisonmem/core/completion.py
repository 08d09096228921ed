"""``praisonmem completion install``: where each shell looks for a user's completion script, and writing it there.

* bash (bash-completion 2, which loads a command's script the first time it is completed):
  ``$BASH_COMPLETION_USER_DIR/completions/praisonmem``, else
  ``${XDG_DATA_HOME:-~/.local/share}/bash-completion/completions/praisonmem``.
* zsh: ``${ZDOTDIR:-~}/.zfunc/_praisonmem``; that directory must be on ``fpath`` before ``compinit`` runs (the
  note says so: zsh has no per-user directory it always reads).
* ``BASH_COMPLETION_USER_DIR`` and ``ZDOTDIR`` must be absolute: the shells use them as they are, so a ``~`` in
  one is a directory named ``~`` (a usage error here, never such a directory created).
* fish: ``${XDG_CONFIG_HOME:-~/.config}/fish/completions/praisonmem.fish``, which fish loads by itself.

The script is written atomically (a temp file beside it, renamed over it), 0600 in directories created 0700: only
the user's own shell reads it. A symlink or anything but a regular file there is refused, as for ``-o FILE``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from praisonmem.core.errors import Refused, UsageError
from praisonmem.core.result import Action, Change, Outcome, Plan

SHELLS = ("bash", "zsh", "fish")


def install_path(shell: str, env: Mapping[str, str] | None = None) -> Path:
    """The file ``shell`` loads praisonmem's completions from, for this user."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or os.path.expanduser("~"))

    def base(variable: str, default: Path) -> Path:
        value = env.get(variable)
        return Path(value) if value and os.path.isabs(value) else default  # XDG: a relative value is ignored

    if shell == "bash":
        user_dir = _absolute(env, "BASH_COMPLETION_USER_DIR", "bash-completion")
        root = user_dir or base("XDG_DATA_HOME", home / ".local" / "share") / "bash-completion"
        return root / "completions" / "praisonmem"
    if shell == "zsh":
        return (_absolute(env, "ZDOTDIR", "zsh") or home) / ".zfunc" / "_praisonmem"
    if shell == "fish":
        return base("XDG_CONFIG_HOME", home / ".config") / "fish" / "completions" / "praisonmem.fish"
    raise UsageError(f"unknown shell '{shell}' (choose {', '.join(SHELLS)})")


def _absolute(env: Mapping[str, str], variable: str, reader: str) -> Path | None:
    """``$variable`` as the shell reads it, which is as it is: a value that is not an absolute path (``~/x``,
    ``~user/x``, ``x``) names a directory relative to wherever the shell runs, so writing there (or to what
    praisonmem would make of the ``~``) installs a script the shell never loads."""
    value = env.get(variable)
    if not value:
        return None
    if not os.path.isabs(value):
        raise UsageError(f"{variable}={value!r} is not an absolute path ({reader} reads it as it is, without "
                         "expanding '~'): set it to an absolute path or unset it; nothing written")
    return Path(value)


def plan_install(shell: str, script: str, env: Mapping[str, str] | None = None) -> Plan:
    """Write ``script`` where ``shell`` finds it; a file already holding it is left alone."""
    from praisonmem.core.io import jsonfile, outfile

    target = install_path(shell, env)
    data = script.encode("utf-8")
    if outfile.kind(target) != "file":  # a FIFO or device there is not where a shell reads a script from
        raise Refused(f"{target}: is not a regular file; nothing written")
    current = target.read_bytes() if target.exists() else None
    notes = [f"zsh reads it once {target.parent} is on fpath: add 'fpath=({target.parent} $fpath)' before "
             "'compinit' in ~/.zshrc"] if shell == "zsh" else []
    fields = {"shell": shell, "path": str(target)}

    def run(dry_run: bool, progress: object) -> Outcome:
        if current == data:
            return Outcome([Change(Action.skipped, str(target), "already up to date", dry_run, fields=fields)],
                           notes)
        if not dry_run:
            jsonfile.replace_atomically(target, data)
        detail = f"{shell} completion" + ("; it replaces an older script" if current is not None else "")
        return Outcome([Change(Action.wrote, str(target), detail, dry_run, fields=fields)], notes)

    return Plan(None, run)
