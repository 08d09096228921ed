"""How ``check`` shows its findings to people: ``SEVERITY  path`` on one line, the message under it, ``fix:`` and
the command on a line of their own, a blank line between findings. On a terminal the message wraps at spaces to
its width and the command breaks only between arguments (`` \\`` at each break, so it pastes whole); a path is
never broken. Piped, each message and command is one line."""

from __future__ import annotations

from typing import Any

from praisonmem.cli.output import Output, plural, shell_lines, wrap

STYLES = {"error": "bold red", "warning": "yellow", "info": "dim"}
LABEL = 9  # "warning" and two spaces: the message is indented under the path


def finding_lines(finding: Any, width: int | None) -> list[tuple[str, str | None]]:
    """One finding as ``(line, style)`` pairs; ``width`` a terminal's, None when piped (nothing wrapped)."""
    indent = " " * LABEL
    lines: list[tuple[str, str | None]] = [(f"{finding.severity:<{LABEL - 2}}  {finding.file}",
                                            STYLES[finding.severity])]
    for part in str(finding.message).split("\n"):
        pieces = [part] if width is None else wrap(part, width, LABEL)
        lines.extend((indent + piece, None) for piece in pieces)
    if finding.fix:
        fix = str(finding.fix)
        pieces = [fix] if width is None else shell_lines(fix, width, LABEL, first=width - LABEL - len("fix: "))
        lines.append((f"{indent}fix: {pieces[0]}", "bold"))
        lines.extend((indent + "     " + piece, "bold") for piece in pieces[1:])
    return lines


def render_findings(out: Output, report: Any) -> None:
    width = out.console.width if out.tty else None
    for n, finding in enumerate(report.findings):
        if n:
            out.line()
        for text, style in finding_lines(finding, width):
            out.line(text, style=style)
    if report.findings:
        out.line()
    out.line(summary(report), style="bold")


def summary(report: Any) -> str:
    return (f"checked {plural(report.files_checked, 'file')} in {plural(len(report.roots), 'location')}: "
            f"{plural(report.count('error'), 'error')}, {plural(report.count('warning'), 'warning')}, "
            f"{plural(report.count('info'), 'note')}")
