"""How ``session scan`` and ``check --secrets`` show findings: one line each, the secret masked."""

from __future__ import annotations

from typing import Any

from praisonmem.cli.output import Output, warn


def where(finding: dict[str, Any]) -> str:
    """``json history_x #3 messages[3].content``: the store, the record, the message and the field."""
    index = finding["message_index"]
    message = "" if index is None else (f" #a{index}" if finding["archived"] else f" #{index}")
    return f"{finding['store']} {finding['record'] or finding['file']}{message} {finding['field']}"


def render_findings(out: Output, findings: list[dict[str, Any]], unreadable: list[str]) -> None:
    for reason in unreadable:
        warn(f"not scanned (unreadable): {reason}")
    for f in findings:
        out.styled((f"{f['kind']:<20}", "bold red"), (f"{where(f)}: ", "cyan"), f["excerpt"])


def summary(findings: list[dict[str, Any]], scanned: dict[str, int], level: str) -> str:
    searched = ", ".join(f"{n} {what.replace('_', ' ')}" for what, n in scanned.items()) or "nothing"
    return f"{len(findings)} secret(s) found ({level} rules) in {searched}"
