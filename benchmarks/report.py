#!/usr/bin/env python3
"""Markdown from run_all.py --json files: one run's table, or before and after side by side.

    python benchmarks/report.py before.json               # the goals table with every case's medians
    python benchmarks/report.py before.json after.json    # each row before and after
    python benchmarks/report.py --ratios a.json b.json ... # each row's ratio in several runs (noise)

Rows are matched by their "work" text, so both runs must be of the same sizes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def value(row: dict) -> str:
    v = row["ours_value"]
    if row["unit"] == "MiB":
        return f"{v:.0f} MiB"
    return f"{v * 1000:.0f} ms" if v < 1 else f"{v:.2f} s"


def ref(row: dict) -> str:
    v = row["ref_value"]
    if v is None:
        return "-"
    if row["unit"] == "MiB":
        return f"{v:.0f} MiB"
    return f"{v * 1000:.0f} ms" if v < 1 else f"{v:.2f} s"


def ratio(row: dict | None) -> str:
    return "-" if row is None or row["ratio"] is None else f"{row['ratio']:.2f}"


def verdict(row: dict | None) -> str:
    return "-" if row is None else ("pass" if row["passed"] else "FAIL")


def header(doc: dict, name: str) -> str:
    env = doc["environment"]
    dirty = " (uncommitted changes in praisonmem/)" if env.get("dirty") else ""
    return (f"{name}: {env['date']}, {env['cpu']} × {env['cpus']}, Python {env['python']}, "
            f"{env.get('praisonmem', '?')} at commit `{env['commit'][:12]}` ({env.get('branch', '?')}"
            f"{', praisonmem/ last changed in `' + env['code_commit'][:12] + '`' if env.get('code_commit') else ''}){dirty}, "
            f"{doc['seconds'] / 60:.0f} min, load average at the end {env['loadavg'][0]:.1f}")


def one(doc: dict) -> str:
    out = [header(doc, "Run"), "",
           "| work | praisonmem | reference | ratio | goal | result | noise | cpu ratio | asserted |",
           "|---|---:|---:|---:|---|---|---:|---:|---|"]
    for row in doc["rows"]:
        cpu = "-" if row.get("cpu_ratio") is None else f"{row['cpu_ratio']:.2f}"
        out.append(f"| {row['work']} | {value(row)} | {ref(row)} | {ratio(row)} | {row['goal']} | {verdict(row)} "
                   f"| ±{row['noise'] * 100:.0f}% | {cpu} | {row['checked'] or '-'} |")
    out += ["", "Every case's median (wall s / cpu s / peak RSS MiB):", "",
            "| work | case | wall | cpu | peak RSS |", "|---|---|---:|---:|---:|"]
    shown = []
    for row in doc["rows"]:
        medians = row["details"].get("medians", {})
        if medians in shown:  # rows measured together (start-up) share their cases
            continue
        shown.append(medians)
        work = row["work"].split(":")[0] if row["work"].startswith("start-up") else row["work"]
        for label, m in medians.items():
            if label == "floor":
                continue
            rss = "-" if m["rss_mib"] is None else f"{m['rss_mib']:.0f}"
            cpu = "-" if m["cpu"] is None else f"{m['cpu']:.3f}"
            out.append(f"| {work} | {label} | {m['wall']:.3f} | {cpu} | {rss} |")
    return "\n".join(out)


def both(before: dict, after: dict) -> str:
    later = {row["work"]: row for row in after["rows"]}
    out = [header(before, "Before"), "", header(after, "After"), "",
           "| work | goal | before | ratio | after | ratio | result |", "|---|---|---:|---:|---:|---:|---|"]
    for row in before["rows"]:
        new = later.get(row["work"])
        out.append(f"| {row['work']} | {row['goal']} | {value(row)} vs {ref(row)} | {ratio(row)} "
                   f"| {value(new) + ' vs ' + ref(new) if new else '-'} | {ratio(new)} | {verdict(new)} |")
    return "\n".join(out)


def ratios(docs: list[dict]) -> str:
    rows = {row["work"]: row["goal"] for doc in docs for row in doc["rows"]}
    by_run = [{row["work"]: row for row in doc["rows"]} for doc in docs]
    out = ["| work | goal | " + " | ".join(f"run {n + 1}" for n in range(len(docs))) + " | spread |",
           "|---|---|" + "---:|" * (len(docs) + 1)]
    for work, goal in rows.items():
        values = [run[work]["ratio"] for run in by_run if work in run and run[work]["ratio"] is not None]
        spread = f"±{(max(values) - min(values)) / 2 / sorted(values)[len(values) // 2] * 100:.0f}%" if values else "-"
        out.append(f"| {work} | {goal} | " + " | ".join(ratio(run.get(work)) for run in by_run) + f" | {spread} |")
    notes = [f"run {n + 1}: {header(doc, 'run')[5:]}" for n, doc in enumerate(docs)]
    return "\n".join(out + [""] + notes)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path, nargs="*")
    ap.add_argument("--ratios", action="store_true", help="the ratios of every file given, side by side")
    args = ap.parse_args()
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in [args.before, *args.after]]
    if args.ratios:
        print(ratios(docs))
    elif len(docs) == 2:
        print(both(*docs))
    elif len(docs) == 1:
        print(one(docs[0]))
    else:
        ap.error("give one file, two (before, after), or --ratios and any number")


if __name__ == "__main__":
    main()
