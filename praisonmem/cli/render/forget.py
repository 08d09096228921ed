"""Human rendering of ``praisonmem forget``: the plan store by store (every item), then the proof per store,
the backups and one summary line."""

from __future__ import annotations

from typing import Any

from praisonmem.cli.output import Output, plural

VERDICT_HEADERS = ("STORE", "PATH", "REMOVED", "VERIFIED", "DETAIL")
VERBS = {"remove": "remove", "rewrite": "rewrite"}


def render_plan(out: Output, result: Any) -> None:
    """Every store with something of the subject (what would be removed or rewritten), every store that could
    not be read and why, the notes; then the backups that hold the subject (a dry run looks at them)."""
    planned = result.planned
    shown = 0
    for plan in planned.plans:
        if not (plan.erasures or plan.unreachable or plan.notes or plan.unverifiable):
            continue
        shown += 1
        out.styled((plan.store, "bold"), "  ", plan.location)
        if plan.unreachable:
            out.line(f"  could not be read: {plan.unreachable}")
        for erasure in plan.erasures:
            out.line(f"  {VERBS[erasure.action.value]}: {erasure.what}")
        for note in plan.notes:
            out.line(f"  note: {note}")
        if plan.unverifiable:
            out.line(f"  cannot be verified: {plan.unverifiable}")
    for note in planned.notes:
        out.line(f"note: {note}")
    _backups(out, result.backups)
    who = f"--{planned.subject.kind.value} {planned.subject.value}"
    touched = sum(1 for p in planned.plans if p.erasures)
    verb = "would remove or rewrite" if result.dry_run else "to remove or rewrite"
    out.line(f"{who}: {verb} {plural(planned.count, 'record')} in {plural(touched, 'store')}; {plural(len(planned.plans), 'store')} "
             f"looked at" + (f", {shown - touched} with notes" if shown > touched else ""), style="dim")


def render_result(out: Output, result: Any) -> None:
    rows = [[v.store, v.path, str(v.removed), v.verified.value, v.detail or ""] for v in result.verdicts]
    if rows:
        out.line("")
        out.table(VERDICT_HEADERS, rows, optional=("DETAIL",))
    _backups(out, result.backups)
    counts: dict[str, int] = {}
    for verdict in result.verdicts:
        counts[verdict.verified.value] = counts.get(verdict.verified.value, 0) + 1
    parts = [f"{counts.get(k, 0)} {k}" for k in ("absent", "residue", "unverified")]
    tail = "verified" if result.ok else "NOT verified"
    if result.ok and counts.get("unverified") and result.allow_unverified:
        tail = "accepted with unverified stores (--allow-unverified)"
    out.line(f"{plural(sum(v.removed for v in result.verdicts), 'record')} removed; {', '.join(parts)}; {tail}",
             style="dim" if result.ok else "bold")


def _backups(out: Output, backups: list[dict[str, Any]]) -> None:
    for backup in backups:
        if backup.get("rewritten"):
            done = backup["rewritten"]
            if done.get("problem"):
                out.line(f"backup {backup['archive']}: not rewritten ({done['problem']})")
            else:
                out.line(f"backup {backup['archive']}: rewritten without the subject "
                         f"({plural(len(done['dropped']), 'member')} dropped, {len(done['rewritten'])} rewritten)")
        elif backup.get("problem"):
            out.line(f"backup {backup['archive']}: could not be checked ({backup['problem']})")
        elif backup.get("members"):
            names = ", ".join(m["name"] for m in backup["members"][:5])
            more = f" and {len(backup['members']) - 5} more" if len(backup["members"]) > 5 else ""
            out.line(f"backup {backup['archive']} holds the subject: {names}{more} (--include-backups "
                     "rewrites it)")
