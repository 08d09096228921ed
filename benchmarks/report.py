#!/usr/bin/env python3
"""Markdown from run_all.py --json files: one run's table, or before and after side by side.

    python benchmarks/report.py before.json               # the goals table with every case's medians
    python benchmarks/report.py before.json after.json    # each row before and after

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
            f"{env.get('praisonmem', '?')} at commit `{env['commit'][:12]}` ({env.get('branch', '?')}){dirty}, "
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
    for row in doc["rows"]:
        for label, m in row["details"].get("medians", {}).items():
            if label == "floor":
                continue
            rss = "-" if m["rss_mib"] is None else f"{m['rss_mib']:.0f}"
            cpu = "-" if m["cpu"] is None else f"{m['cpu']:.3f}"
            out.append(f"| {row['work']} | {label} | {m['wall']:.3f} | {cpu} | {rss} |")
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path, nargs="?")
    args = ap.parse_args()
    first = json.loads(args.before.read_text(encoding="utf-8"))
    print(both(first, json.loads(args.after.read_text(encoding="utf-8"))) if args.after else one(first))


if __name__ == "__main__":
    main()
