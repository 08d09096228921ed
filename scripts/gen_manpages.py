#!/usr/bin/env python3
"""Regenerate man/ from the app: praisonmem(1) and one page per command group.

Walks the Click command tree that Typer builds (click-man does not work with
current Typer), so every command, argument and option in the CLI appears in a
page, with the docstrings as descriptions and their ``Example:`` blocks under
EXAMPLES. Output is deterministic (no build date). ``--check`` compares instead
of writing (exit 1 on drift).
"""

from __future__ import annotations

import argparse
import enum
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import typer  # noqa: E402
from _generated import write_or_check  # noqa: E402

from praisonmem import __version__  # noqa: E402
from praisonmem.cli.app import app  # noqa: E402
from praisonmem.core.config import CONFIG_ENV, KEYS  # noqa: E402
from praisonmem.core.errors import EXIT_CODES  # noqa: E402

ENVIRONMENT = [
    ("PRAISONAI_HOME", "The PraisonAI data dir (sessions, spill, learn stores), read as the library reads it: "
                       "~ is expanded and a relative value stays relative to the current directory. --home wins."),
    ("PRAISONAI_GLOBAL_SESSIONS", "1, true or yes (any case, not trimmed): global scope for history ids, as the "
                                  "library. workspace id --global forces it."),
    ("NO_COLOR", "Any non-empty value turns colour off (as --no-color)."),
    (CONFIG_ENV, "The config file to use instead of the platform default."),
    ("XDG_DATA_HOME, XDG_STATE_HOME", "Used, when absolute, for the PraisonAI data and state dirs of a fresh "
                                      "install, as the library does."),
    ("PRAISONMEM_DEBUG", "Show the Python traceback of an internal error (exit 70)."),
] + [(spec.env, f"Sets the config key {spec.name} (a flag wins): {spec.help}.") for spec in KEYS.values()
     if spec.env != "PRAISONAI_HOME"] + [
    ("PRAISONAI_SESSION_KEY", "The Fernet key of encrypted sessions, as PraisonAI keeps it (--key-file wins); "
                              "without it encrypted values stay opaque."),
    ("PAGER", "The pager when PRAISONMEM_PAGER (config key pager) names none; without either, less -FRX when "
              "installed. cat or an empty value: no pager."),
    ("LINES, COLUMNS", "The terminal's size, when set, for deciding whether output is longer than the screen."),
    ("PRAISONAI_CONVERSATION_STORE", "The session store, as PraisonAI reads it (sqlite, postgresql, mysql, json): "
                                     "the default of --store when neither the flag nor the config key store is "
                                     "set."),
    ("PRAISONAI_CONVERSATION_URL, POSTGRES_URL", "The URL of that store, as PraisonAI reads it (the first set)."),
    ("MYSQL_URL, MYSQL_HOST, MYSQL_PORT, MYSQL_USER, MYSQL_DATABASE, MYSQL_PASSWORD",
     "Where locate looks for a MySQL conversation store, as praisonai declares them."),
    ("PRAISONAI_STATE_STORE, PRAISONAI_STATE_URL, REDIS_URL", "Where locate looks for praisonai's state store."),
    ("PGPASSWORD, PGCONNECT_TIMEOUT, PGAPPNAME", "Read by libpq for a postgresql:// store; praisonmem masks "
                                                 "PGPASSWORD in every message, and sets a 10 s connect timeout and "
                                                 "the application name praisonmem unless these do."),
    ("PSYCOPG_IMPL", "psycopg's choice of implementation; when set to anything but binary, a postgresql:// "
                     "listing reads through psycopg itself, not through the libpq psycopg-binary bundles."),
    ("MEM0_DIR", "mem0's directory (default ~/.mem0): where the mem0 provider finds its history.db."),
    ("GIT_DIR", "The repository whose root names a workspace (git:<sha>), as git reads it."),
    ("HOME", "The home directory: ~ in paths, and praisonmem's state dir (~/.local/state/praisonmem)."),
]

FILES = [
    ("~/.praisonai/sessions/*.json", "PraisonAI sessions, each with a persistent .json.lock sidecar "
                                     "(or under $PRAISONAI_HOME, ~/.praison, $XDG_DATA_HOME/praisonai)."),
    ("~/.praisonai/state/session_spill/", "Turns salvaged after a failed write, merged by the library on the "
                                          "session's next load."),
    ("~/.praisonai/learn/<scope>/<user>/<store>.json", "Learn stores."),
    ("./.praisonai/memory/<user>/", "FileMemory: config.json, short_term.json, long_term.json, entities.json, "
                                    "summaries.json, episodic/YYYY-MM-DD.json. Relative to the project "
                                    "(the current directory), not PRAISONAI_HOME."),
    ("./.praisonai/short_term[_<user>].db, long_term[_<user>].db", "SQLite memory (provider sqlite)."),
    ("~/.config/praisonmem/config.toml", "praisonmem's settings (see praisonmem-config(1))."),
    ("~/.local/share/praisonmem/backups/", "Default place for backups (config backup.dir)."),
]

MAIN_EXAMPLES = [
    "praisonmem session list --scope legacy",
    "praisonmem session adopt --all --dry-run",
    "praisonmem memory search \"dark mode\" --user-id alice --json",
    "praisonmem check ./fixtures/home --strict",
    "# crontab: a nightly backup at 02:30, keeping two weeks",
    "30 2 * * * praisonmem backup create -o ~/backups/praisonmem --keep 14",
]


def esc(text: str) -> str:
    """Escape text for roff: backslashes, and a leading dot or quote."""
    text = text.replace("\\", "\\e")
    return re.sub(r"(?m)^([.'])", r"\\&\1", text)


def opt(text: str) -> str:
    return esc(text).replace("-", "\\-")


def paragraphs(help_text: str | None) -> tuple[list[str], list[str]]:
    """Description paragraphs (reflowed) and example lines from a docstring."""
    text = help_text or ""
    examples: list[str] = []
    if "Example:" in text:
        text, _, tail = text.partition("Example:")
        examples = [line.strip() for line in tail.strip().splitlines() if line.strip()]
    paras = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    return paras, examples


def metavar(param: Any) -> str:
    if param.metavar:
        return param.metavar
    choices = getattr(param.type, "choices", None)
    if choices:
        return "[" + "|".join(str(c) for c in choices) + "]"
    return param.type.name.upper()


def default_text(param: Any) -> str:
    value = param.default
    if value is None or value is False or getattr(param, "is_flag", False) or value == []:
        return ""
    if isinstance(value, enum.Enum):
        value = value.value
    return f" (default: {value})"


def param_items(command: Any) -> list[str]:
    lines = []
    for param in command.params:
        if param.param_type_name == "argument":
            lines += [".TP", f"\\fI{esc(param.metavar or param.name.upper())}\\fR", esc(param.help or "")]
            continue
        names = ", ".join(f"\\fB{opt(o)}\\fR" for o in param.opts + param.secondary_opts)
        value = "" if getattr(param, "is_flag", False) else f" \\fI{esc(metavar(param))}\\fR"
        lines += [".TP", names + value, esc((param.help or "") + default_text(param))]
    lines += [".TP", "\\fB\\-h\\fR, \\fB\\-\\-help\\fR", "Show the help and exit."]
    return lines


def synopsis(path: list[str], command: Any) -> str:
    parts = [f"\\fB{esc(' '.join(path))}\\fR"]
    if any(p.param_type_name == "option" for p in command.params):
        parts.append("[\\fIOPTIONS\\fR]")
    for param in command.params:
        if param.param_type_name == "argument":
            name = esc(param.metavar or param.name.upper())
            parts.append(f"\\fI{name}\\fR" if param.required else f"[\\fI{name}\\fR]")
    return " ".join(parts)


def leaves(command: Any, path: list[str]) -> list[tuple[list[str], Any]]:
    subcommands = getattr(command, "commands", None)
    if not subcommands:
        return [(path, command)]
    found = []
    for name, sub in subcommands.items():
        found += leaves(sub, [*path, name])
    return found


def header(name: str, summary: str) -> list[str]:
    return [f'.TH {name.upper()} 1 "" "praisonmem {__version__}" "praisonmem Manual"', ".SH NAME",
            f"{esc(name)} \\- {esc(summary)}"]


def shared_sections(examples: list[str], see_also: list[str]) -> list[str]:
    lines = [".SH EXIT STATUS"]
    for code in sorted(EXIT_CODES):
        lines += [".TP", f"\\fB{code}\\fR", esc(EXIT_CODES[code])]
    lines.append(".SH ENVIRONMENT")
    for name, text in ENVIRONMENT:
        lines += [".TP", f"\\fB{esc(name)}\\fR", esc(text)]
    lines.append(".SH FILES")
    for name, text in FILES:
        lines += [".TP", f"\\fI{esc(name)}\\fR", esc(text)]
    if examples:
        lines += [".SH EXAMPLES", ".nf", ".RS 4", *[esc(e) for e in examples], ".RE", ".fi"]
    lines += [".SH SEE ALSO", ",\n".join(f"\\fB{esc(s)}\\fR(1)" for s in see_also)]
    return lines


def group_page(name: str, group: Any, see_also: list[str]) -> str:
    summary, _ = paragraphs(group.help)
    lines = header(f"praisonmem-{name}", summary[0] if summary else name)
    lines += [".SH SYNOPSIS", f"\\fBpraisonmem {esc(name)}\\fR \\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGS\\fR]...",
              ".SH DESCRIPTION", *[f".PP\n{esc(p)}" for p in summary]]
    grouped = bool(getattr(group, "commands", None))  # check and migrate are single commands
    if grouped:
        lines.append(".SH COMMANDS")
    examples: list[str] = []
    for path, command in leaves(group, ["praisonmem", name]):
        paras, ex = paragraphs(command.help)
        examples += ex
        if grouped:
            lines.append(f'.SS "{" ".join(path)}"')
        lines += [".PP", synopsis(path, command), *[f".PP\n{esc(p)}" for p in paras]]
        lines += [".PP", "Options:", ".RS 4", *param_items(command), ".RE"]
    lines += shared_sections(examples, ["praisonmem"] + [s for s in see_also if s != f"praisonmem-{name}"])
    return "\n".join(lines) + "\n"


def main_page(root: Any, pages: list[str]) -> str:
    paras, _ = paragraphs(root.help)
    lines = header("praisonmem", "command-line memory manager for PraisonAI agents")
    lines += [".SH SYNOPSIS", "\\fBpraisonmem\\fR [\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]...",
              ".SH DESCRIPTION", *[f".PP\n{esc(p)}" for p in paras],
              ".PP", esc("Every command takes --json (one JSON document on stdout); list commands also take "
                         "--ndjson. Errors are one line on stderr. Writes take the same locks as the "
                         "libraries and are atomic; read commands change nothing."),
              ".SH OPTIONS", *param_items(root), ".SH COMMANDS"]
    for name, command in root.commands.items():
        summary = paragraphs(command.help)[0]
        lines += [".TP", f"\\fB{esc(name)}\\fR", esc(summary[0] if summary else ""),
                  f"See \\fBpraisonmem\\-{esc(name)}\\fR(1)."]
    lines += shared_sections(MAIN_EXAMPLES, pages)
    return "\n".join(lines) + "\n"


def render() -> dict[str, str]:
    root = typer.main.get_command(app)
    pages = [f"praisonmem-{name}" for name in root.commands]
    out = {"praisonmem.1": main_page(root, pages)}
    for name, command in root.commands.items():
        out[f"praisonmem-{name}.1"] = group_page(name, command, pages)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed pages differ")
    ap.add_argument("--out", type=Path, default=ROOT / "man")
    args = ap.parse_args()
    pages = {args.out / name: text for name, text in render().items()}
    stale = [p for p in args.out.glob("*.1") if p not in pages] if args.check and args.out.is_dir() else []
    return write_or_check(pages, check=args.check, generator="gen_manpages.py", stale=stale)


if __name__ == "__main__":
    sys.exit(main())
