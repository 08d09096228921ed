"""What every command that changes something returns (after pipx's ``OperationResult``).

A :class:`Change` is one thing that was done, or with ``dry_run`` would be done; an
:class:`Outcome` is all of them and knows the exit code; a :class:`Plan` is a change
decided before anything is written, so the CLI can ask its question in between.
The human wording ("renamed …", "would rename …") lives in one place,
``praisonmem.cli.output.render_outcome``; here there is only data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from praisonmem.core.errors import EXIT_OK, EXIT_PROBLEMS, PraisonMemError

Progress = Callable[[int, int], None] | None


class Action(StrEnum):
    """What a change did (its JSON ``action``): always the past tense, ``dry_run`` says whether it happened."""

    renamed = "renamed"
    retitled = "retitled"
    untitled = "untitled"
    adopt_moved = "adopt-moved"
    adopt_copied = "adopt-copied"
    adopt_merged = "adopt-merged"
    adopt_replaced = "adopt-replaced"
    added = "added"
    copied = "copied"
    deleted = "deleted"
    imported = "imported"
    inserted = "inserted"
    kept = "kept"
    merged = "merged"
    removed = "removed"
    redacted = "redacted"
    replaced = "replaced"
    restored = "restored"
    set = "set"
    stored = "stored"
    unset = "unset"
    updated = "updated"
    wrote = "wrote"
    skipped = "skipped"
    failed = "failed"


@dataclass
class Change:
    """One thing a command did, or would do with ``dry_run``.

    ``target`` names what changed for the human line and ``where`` the files involved
    (``a.json → b.json``); ``fields`` are the JSON record's own keys (a session record's
    ``target`` key is the file it moved to). A failure keeps its exit code.
    """

    action: Action
    target: str
    detail: str | None = None
    dry_run: bool = False
    where: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    exit_code: int = EXIT_OK

    @property
    def failed(self) -> bool:
        return self.action is Action.failed

    def fail(self, exc: PraisonMemError) -> Change:
        self.action, self.detail, self.exit_code = Action.failed, exc.message, exc.exit_code
        return self

    def to_json(self) -> dict[str, Any]:
        """``action``, the ``fields``, ``dry_run`` and ``detail`` (``fields`` may say ``detail`` otherwise)."""
        record = {"action": self.action.value, **self.fields}
        record.setdefault("dry_run", self.dry_run)
        record.setdefault("detail", self.detail)
        return record


@dataclass
class Outcome:
    """The changes of one command, and what to say on stderr besides them."""

    changes: list[Change] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 when nothing failed; the reason's code when everything failed for one reason (a lock timeout: 4);
        1 when only some failed."""
        failed = [c for c in self.changes if c.failed]
        if not failed:
            return EXIT_OK
        codes = {c.exit_code or EXIT_PROBLEMS for c in failed}
        return codes.pop() if len(failed) == len(self.changes) and len(codes) == 1 else EXIT_PROBLEMS

    def to_json(self) -> list[dict[str, Any]]:
        return [c.to_json() for c in self.changes]


@dataclass
class Plan:
    """A change decided before anything is written: ``question`` is asked first (``None``: nothing is
    destroyed, so nothing to ask), ``notes`` and ``warnings`` are said before it, ``run`` carries it out or, with
    ``dry_run``, reports what it would do."""

    question: str | None
    execute: Callable[[bool, Progress], Outcome]
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # said before the question too, as warnings

    def run(self, *, dry_run: bool = False, progress: Progress = None) -> Outcome:
        return self.execute(dry_run, progress)
