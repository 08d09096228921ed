"""The journal of a forget: its plan, written before the first erase, so a rerun after a kill finishes it.

One journal at a time, ``forget/journal.json`` in praisonmem's state dir (``$XDG_STATE_HOME/praisonmem``
when absolute, else ``~/.local/state/praisonmem``): the directory 0700, the file 0600, replaced
atomically. It names the subject, the ``--in`` directories, and each store with the keys of its
erasures; never a record's text (the texts are what is being erased) and never a server URL (it
may hold a password). A rerun of the same subject adds the journalled keys to its fresh plan, so a
store whose records were erased before the kill is still erased (which finishes any scrub the kill
interrupted) and the run ends where an uninterrupted one does. The journal is removed when a run
ends verified. A journal of another subject stops a new forget until it is finished: two erasures
interleaved could leave either unproven.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from praisonmem.core.errors import CorruptFile, Refused, io_failure
from praisonmem.core.forget.model import Action, Erasure, StorePlan, Subject, SubjectKind

FORMAT = 1
NAME = "journal.json"


def state_dir(env: Mapping[str, str] | None = None) -> Path:
    """praisonmem's state dir (platformdirs' ``user_state_dir`` on Linux)."""
    env = os.environ if env is None else env
    xdg = env.get("XDG_STATE_HOME", "")
    if os.path.isabs(xdg):
        return Path(xdg) / "praisonmem"
    return Path(env.get("HOME") or os.path.expanduser("~")) / ".local" / "state" / "praisonmem"


def journal_path(env: Mapping[str, str] | None = None) -> Path:
    return state_dir(env) / "forget" / NAME


def subject_json(subject: Subject) -> dict[str, Any]:
    return {"kind": subject.kind.value, "value": subject.value,
            "before": None if subject.before is None else subject.before.isoformat()}


def subject_of(record: Any, path: Path) -> Subject:
    try:
        before = record.get("before")
        return Subject(SubjectKind(record["kind"]), str(record["value"]),
                       None if before is None else datetime.fromisoformat(before))
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise CorruptFile(str(path), "not a forget journal praisonmem can read; remove it once nothing "
                                     "is left to finish") from exc


def finishing_command(subject: Subject, dirs: Sequence[str]) -> str:
    """The command that finishes the journalled forget (server stores are named again by the user)."""
    words = ["praisonmem", "forget", f"--{subject.kind.value}", subject.value]
    if subject.before is not None:
        words += ["--before", subject.before.isoformat()]
    for directory in dirs:
        words += ["--in", directory]
    return " ".join(shlex.quote(w) for w in words) + " --yes"


class Journal:
    """The journal file: :meth:`load`, :meth:`write`, :meth:`remove`."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = journal_path() if path is None else path

    def load(self) -> dict[str, Any] | None:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise io_failure(str(self.path), exc) from exc
        try:
            record = json.loads(raw)
        except ValueError as exc:
            raise CorruptFile(str(self.path), "not a forget journal praisonmem can read; remove it once "
                                              "nothing is left to finish") from exc
        if not isinstance(record, dict) or record.get("format") != FORMAT:
            raise CorruptFile(str(self.path), "not a forget journal of this praisonmem version")
        subject_of(record.get("subject"), self.path)
        return record

    def refuse_other(self, subject: Subject) -> dict[str, Any] | None:
        """The journal of ``subject`` left by a killed run (``None``: none); :class:`Refused` when the journal
        is another subject's, naming the command that finishes it."""
        record = self.load()
        if record is None:
            return None
        left = subject_of(record["subject"], self.path)
        if left != subject:
            raise Refused(f"an interrupted forget of --{left.kind.value} {left.value} is not finished "
                          f"({self.path}); finish it first: {finishing_command(left, record.get('dirs') or [])} "
                          "(with the same --store/--db if it had them)")
        return record

    def write(self, subject: Subject, plans: Sequence[StorePlan], dirs: Sequence[str]) -> None:
        from praisonmem.core.io import jsonfile

        record = {"format": FORMAT, "subject": subject_json(subject), "dirs": list(dirs),
                  "stores": [{"store": p.store, "location": _shown(p.location),
                              "keys": [e.key for e in p.erasures],
                              "rewrite": [e.key for e in p.erasures if e.action is Action.rewrite]}
                             for p in plans if p.erasures]}
        jsonfile.makedirs(self.path.parent)
        try:
            os.chmod(self.path.parent, 0o700)
        except OSError as exc:
            raise io_failure(str(self.path.parent), exc) from exc
        jsonfile.replace_atomically(self.path, json.dumps(record, indent=1).encode(), mode=0o600)

    def remove(self) -> None:
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise io_failure(str(self.path), exc) from exc
        from praisonmem.core.io.jsonfile import fsync_dir

        fsync_dir(self.path.parent)


def _shown(location: str) -> str:
    """A location as the journal keeps it: a URL without its password."""
    from praisonmem.core.io import pgurl

    if pgurl.is_url(location):
        try:
            return pgurl.mask(location)  # type: ignore[attr-defined]
        except AttributeError:
            return location.split("://", 1)[0] + "://…"
    return location


def add_unfinished(plans: list[StorePlan], record: dict[str, Any] | None) -> None:
    """Add to ``plans`` each journalled key its store's fresh plan no longer finds (erased before the kill),
    so that store's erase runs again and finishes whatever the kill left (a scrub, a sidecar)."""
    if record is None:
        return
    journalled = {(s.get("store"), s.get("location")): s for s in record.get("stores") or []
                  if isinstance(s, dict)}
    for plan in plans:
        entry = journalled.get((plan.store, _shown(plan.location)))
        if entry is None:
            continue
        have = {e.key for e in plan.erasures}
        rewrite = set(entry.get("rewrite") or [])
        for key in entry.get("keys") or []:
            if isinstance(key, str) and key not in have:
                plan.erasures.append(Erasure(key, f"{key} (erased by the interrupted run; finishing)",
                                             Action.rewrite if key in rewrite else Action.remove))
