"""The layout of a backup: which files each root holds, one rule that ``backup create`` archives by and
``backup restore`` accepts by.

Below each root (``home/sessions/``, ``home/state/session_spill/``, ``home/learn/``, ``memory/``) only the
names the stores themselves write are admitted:

* ``home/sessions/``: a file directly there, or in one of its store directories (``projects/<8 hex>/``,
  the praisonai CLI's project stores, and ``run_<date>_<time>_<6 hex>/``, its old runs);
* ``home/state/session_spill/``: a file directly there;
* ``home/learn/<scope>/<user>/<store>.json`` and its ``<store>.archive.json`` (the library's stores and
  scopes only);
* ``memory/[<user dir>/]``: FileMemory's files (``config.json``, ``short_term.json``, …) and the
  ``*.json`` files of its ``episodic/``, ``sessions/`` and ``checkpoints/``; a user directory is up to
  :data:`~praisonmem.core.memory.NESTING` levels deep (releases before 1.6.58 nested ``team/alice``), or
  the base itself.

No empty, ``.`` or ``..`` component, no absolute path, no lock or temp file. A restore therefore never
writes ``authorized_keys`` or ``.bashrc``, whatever an archive lists.
"""

from __future__ import annotations

import re

from praisonmem.core import learn, memory

# (prefix inside the archive, the manifest root it comes from, whether files sit in sub-directories)
LAYOUT = (
    ("home/sessions/", "sessions", False),
    ("home/state/session_spill/", "spill", False),
    ("home/learn/", "learn", True),
    ("memory/", "memory", True),
)
# The store directories inside sessions/: a praisonai CLI project store, an old SessionManager run.
SESSION_SUBDIRS = (re.compile(r"projects/[0-9a-f]{8}"), re.compile(r"run_\d{8}_\d{6}_[0-9a-f]{6}"))
SKIPPED_SUFFIXES = (".lock", ".tmp")  # create never archives these
LEARN_FILES = frozenset(name for store in learn.STORES for name in (f"{store}.json", f"{store}.archive.json"))


def session_path_ok(parts: list[str] | tuple[str, ...]) -> bool:
    """A file (path below ``sessions/``) directly there or in ``projects/<id>/`` or ``run_…/``."""
    if len(parts) == 1:
        return True
    return any(pattern.fullmatch("/".join(parts[:-1])) for pattern in SESSION_SUBDIRS)


def memory_user(parts: list[str] | tuple[str, ...]) -> tuple[str, ...] | None:
    """The user directory (its path below the FileMemory base; ``()``: the base itself) of a file FileMemory
    writes at ``parts``; ``None`` when FileMemory writes no such file."""
    if parts and parts[-1] in memory.MEMORY_FILES:
        user = tuple(parts[:-1])
    elif len(parts) >= 2 and parts[-2] in memory.SUBDIRS and parts[-1].endswith(".json"):
        user = tuple(parts[:-2])
    else:
        return None
    return user if len(user) <= memory.NESTING else None


def learn_path_ok(parts: list[str] | tuple[str, ...]) -> bool:
    """``<scope>/<user>/<store>.json`` (or its ``.archive.json``), the library's scopes and stores only."""
    return len(parts) == 3 and parts[0] in learn.SCOPES and parts[2] in LEARN_FILES


def file_reason(root: str, parts: list[str] | tuple[str, ...]) -> str | None:
    """Why a file at ``parts`` below ``root``'s prefix is not one the store writes; ``None`` when it is."""
    if root == "sessions" and not session_path_ok(parts) or root == "spill" and len(parts) > 1:
        prefix = next(p for p, r, _ in LAYOUT if r == root)
        return f"in a sub-directory of {prefix}, which backups never hold"
    if parts[-1].endswith(SKIPPED_SUFFIXES):
        return "a lock or temp file, which backups never hold"
    if root == "learn" and not learn_path_ok(parts):
        return "not a learn store (<scope>/<user>/<store>.json of " + ", ".join(learn.STORES) + ")"
    if root == "memory" and memory_user(parts) is None:
        return (f"not a file FileMemory writes ({', '.join(memory.MEMORY_FILES)}, or a .json file in "
                f"{', '.join(d + '/' for d in memory.SUBDIRS[:-1])} or {memory.SUBDIRS[-1]}/, in a user directory "
                f"at most {memory.NESTING} levels deep)")
    return None


def dir_ok(root: str, parts: tuple[str, ...]) -> bool:
    """Whether a directory at ``parts`` below ``root`` can hold files of the layout (what create walks into)."""
    if root == "sessions":
        joined = "/".join(parts)
        return not parts or parts == ("projects",) or any(p.fullmatch(joined) for p in SESSION_SUBDIRS)
    if root == "spill":
        return not parts
    if root == "learn":
        return len(parts) < 2 or (len(parts) == 2 and parts[0] in learn.SCOPES)
    return len(parts) <= memory.NESTING + 1


def layout_reason(name: str, roots: set[str]) -> str | None:
    """Why ``name`` is not a path ``backup create`` writes for these roots; ``None`` when it is."""
    if name.startswith("/"):
        return "an absolute path"
    if ".." in name.split("/"):
        return "a path with '..'"
    if "\0" in name:
        return "a path with a NUL byte"
    for prefix, root, _ in LAYOUT:
        if not name.startswith(prefix):
            continue
        rest = name[len(prefix):].split("/")
        if root not in roots:
            return f"under {prefix} but the manifest has no '{root}' root"
        if any(part in ("", ".") for part in rest):
            return "a path with an empty or '.' component"
        return file_reason(root, rest)
    return "outside the backup layout (" + ", ".join(prefix for prefix, _, _ in LAYOUT) + ")"


def split(name: str) -> tuple[str, tuple[str, ...]]:
    """``(root, parts below its prefix)`` of a path already in the layout."""
    for prefix, root, _ in LAYOUT:
        if name.startswith(prefix):
            return root, tuple(name[len(prefix):].split("/"))
    raise ValueError(name)
