"""How ``session scan`` and ``check --secrets`` show findings: one line each, the secret masked."""

from __future__ import annotations

from typing import Any

from praisonmem.cli.output import Output, note, plural, warn


def where(finding: dict[str, Any]) -> str:
    """``json history_x #3 messages[3].content``: the store, the record, the message and the field."""
    index = finding["message_index"]
    message = "" if index is None else (f" #a{index}" if finding["archived"] else f" #{index}")
    return f"{finding['store']} {finding['record'] or finding['file']}{message} {finding['field']}"


def render_findings(out: Output, findings: list[dict[str, Any]], unreadable: list[str], raw: list[str]) -> None:
    """The findings on stdout, after :func:`warn_unscanned`."""
    warn_unscanned(unreadable, raw)
    for f in findings:
        out.styled((f"{f['kind']:<20}", "bold red"), (f"{where(f)}: ", "cyan"), f["excerpt"])


def warn_unscanned(unreadable: list[str], raw: list[str]) -> None:
    """Each file searched as raw bytes (a note), and each that could not be scanned (on stderr even with -q:
    it fails the scan)."""
    for path in raw:
        note(f"{path}: does not parse; searched as raw bytes")
    for reason in unreadable:
        warn(f"not scanned (unreadable): {reason}", always=True)


def summary(report: Any) -> str:
    """``N secrets found (standard rules) in …``, and what could not be scanned."""
    searched = ", ".join(f"{n} {what.replace('_', ' ')}" for what, n in report.scanned.items()) or "nothing"
    text = f"{plural(len(report.findings), 'secret')} found ({report.level} rules) in {searched}"
    if report.unreadable:
        text += f"; {plural(len(report.unreadable), 'file')} could not be scanned"
    return text
