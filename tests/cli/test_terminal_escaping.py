"""Control characters from users' files never reach the terminal.

Human output (on a terminal and piped) shows them as Python escapes (``\\x1b``,
``\\x07``, ``\\x9b``, ``\\u202e``), keeping newlines and tabs only inside message
bodies; ``--json`` keeps the exact data, with DEL, C1 and bidi controls written as
``\\u`` escapes (JSON already escapes the rest).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.helpers import run_on_a_pty

# Everything a terminal acts on: C0 but newline and tab, DEL, C1, bidi embeddings/overrides/isolates.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
UNSAFE_IN_A_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
SGR = re.compile("\x1b\\[[0-9;]*m")  # Rich's own styling, on a terminal

SID = "evil\x1b]0;pwned\x07"
TITLE = "\x1b[2J\x1b]52;c;ZXZpbA==\x07 Lisbon"
AGENT = "Bot\x9b1m\u202e"
BODY = "hotel alfama \x1b]52;c;ZXZpbA==\x07 booked\nsecond line\tafter tab \x7f\r overwritten"
TOOL = "look\x1bup"


@pytest.fixture
def evil_home(tmp_path) -> Path:
    home = tmp_path / "home"
    (home / "sessions").mkdir(parents=True)
    doc = {"session_id": SID, "agent_name": AGENT, "user_id": "u\x1b[5m",
           "messages": [
               {"role": "user", "content": BODY, "timestamp": 1796050189.0},
               {"role": "assistant", "content": "", "tool_calls": [
                   {"id": "call\x07", "type": "function", "function": {"name": TOOL, "arguments": "{\"q\": \"\\u001b\"}"}}]},
               {"role": "tool", "content": "ok", "tool_call_id": "call\x07"},
           ],
           "metadata": {"title": TITLE}, "created_at": "2026-01-01T00:00:00+00:00",
           "updated_at": "2026-01-02T00:00:00+00:00"}
    (home / "sessions" / "evil.json").write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return home


def run_on_a_terminal(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run praisonmem with stdout and stderr on a pseudo-terminal; what the terminal received."""
    return run_on_a_pty(args, cwd, {"COLUMNS": "200", "LINES": "50", "TERM": "xterm-256color", **(env or {})})


def assert_safe(text: str, *, multiline: bool = True) -> None:
    found = (UNSAFE if multiline else UNSAFE_IN_A_LINE).findall(text)
    assert not found, f"raw control characters reached the output: {found!r}"


READ_COMMANDS = [
    ["session", "list"],
    ["session", "show", "evil"],
    ["session", "show", "evil", "--archived"],
    ["session", "search", "alfama"],
    ["session", "search", "second line"],
    ["usage", "--by", "session"],
]


@pytest.mark.parametrize("args", READ_COMMANDS, ids=" ".join)
def test_piped_human_output_shows_control_characters_escaped(cli, evil_home, args):
    result = cli("--home", evil_home, *args)
    assert result.exit_code == 0, result.stderr
    assert_safe(result.stdout)
    assert_safe(result.stderr)
    assert r"evil\x1b]0;pwned\x07" in result.stdout


@pytest.mark.parametrize("args", READ_COMMANDS, ids=" ".join)
def test_terminal_output_shows_control_characters_escaped(evil_home, tmp_path, args):
    code, screen = run_on_a_terminal(["--home", str(evil_home), *args], tmp_path)
    assert code == 0, screen
    shown = SGR.sub("", screen).replace("\r\n", "\n")
    assert_safe(shown)
    assert r"evil\x1b]0;pwned\x07" in shown


def test_show_keeps_a_bodys_newlines_and_tabs_and_escapes_the_rest(cli, evil_home):
    out = cli("--home", evil_home, "session", "show", "evil").stdout
    assert ("hotel alfama \\x1b]52;c;ZXZpbA==\\x07 booked\nsecond line\tafter tab \\x7f\\r overwritten\n"
            in out)
    assert "Title     \\x1b[2J\\x1b]52;c;ZXZpbA==\\x07 Lisbon\n" in out
    assert "Agent     Bot\\x9b1m\\u202e\n" in out
    assert "→ tool call look\\x1bup({\"q\": \"\\u001b\"}) [call\\x07]" in out


def test_list_cells_are_escaped_on_one_line(cli, evil_home):
    rows = cli("--home", evil_home, "session", "list").stdout.splitlines()
    assert len(rows) == 2  # the header and one session: no cell broke the line
    cells = rows[1].split("\t")
    assert cells[:4] == ["evil\\x1b]0;pwned\\x07", "Bot\\x9b1m\\u202e", "u\\x1b[5m",
                         "\\x1b[2J\\x1b]52;c;ZXZpbA==\\x07 Lisbon"]


def test_search_highlights_still_line_up_after_escaping(evil_home, tmp_path):
    code, screen = run_on_a_terminal(["--home", str(evil_home), "session", "search", "booked"], tmp_path,
                                     env={"FORCE_COLOR": "1"})
    assert code == 0
    assert "\x1b[1;7mbooked\x1b[0m" in screen  # the highlight covers the match, not escaped text before it


def test_json_keeps_the_exact_data(cli, evil_home):
    stored = json.loads((evil_home / "sessions" / "evil.json").read_text(encoding="utf-8"))
    for args in (["session", "show", "evil", "--json"], ["session", "list", "--json"],
                 ["session", "search", "alfama", "--json"]):
        result = cli("--home", evil_home, *args)
        assert result.exit_code == 0
        assert_safe(result.stdout)  # JSON escapes every one of them (newlines here are JSON's own)
        data = json.loads(result.stdout)
        if args[1] == "show":
            assert data == stored
        elif args[1] == "list":
            assert (data[0]["session_id"], data[0]["title"], data[0]["agent_name"]) == (SID, TITLE, AGENT)
        else:
            assert data[0]["session_id"] == SID


def test_exports_to_stdout_never_carry_raw_controls(cli, evil_home):
    stored = json.loads((evil_home / "sessions" / "evil.json").read_text(encoding="utf-8"))
    exported = cli("--home", evil_home, "session", "export", "evil")
    assert_safe(exported.stdout)
    assert json.loads(exported.stdout)["sessions"] == [stored]
    lines = cli("--home", evil_home, "session", "export", "evil", "--format", "jsonl").stdout
    assert_safe(lines)
    assert json.loads(lines.splitlines()[0])["content"] == BODY
    for fmt in ("openai-jsonl", "sharegpt"):
        text = cli("--home", evil_home, "session", "export", "evil", "--format", fmt).stdout
        assert_safe(text)
        data = json.loads(text)
        first = data["messages"][0]["content"] if fmt == "openai-jsonl" else data[0]["conversations"][0]["value"]
        assert first == BODY


def test_usage_csv_and_tsv_cells_are_escaped_on_one_line(cli, evil_home):
    shown = {"agent": "Bot\\x9b1m\\u202e", "user": "u\\x1b[5m", "session": "evil\\x1b]0;pwned\\x07"}
    for args in (["--csv"], []):
        for by, cell in shown.items():
            out = cli("--home", evil_home, "usage", "--by", by, *args).stdout
            assert_safe(out)
            lines = out.splitlines()
            assert len(lines) == (2 if args else 3)  # header and one group (+ totals; the summary is stderr's)
            assert lines[1].startswith(cell + ("," if args else "\t")), lines[1]


def test_markdown_export_shows_control_characters_escaped(cli, evil_home, tmp_path):
    result = cli("--home", evil_home, "session", "export", "evil", "--format", "markdown")
    assert_safe(result.stdout)
    assert result.stdout.startswith("# Session `evil\\x1b]0;pwned\\x07`\n")
    assert "- **Title:** \\x1b[2J\\x1b]52;c;ZXZpbA==\\x07 Lisbon\n" in result.stdout
    assert "hotel alfama \\x1b]52;c;ZXZpbA==\\x07 booked\nsecond line\tafter tab \\x7f\\r overwritten\n" \
        in result.stdout
    assert "**Tool call** `look\\x1bup` (`call\\x07`)" in result.stdout
    cli("--home", evil_home, "session", "export", "evil", "--format", "markdown", "-o", tmp_path / "t.md")
    assert (tmp_path / "t.md").read_text(encoding="utf-8") == result.stdout


def test_error_messages_show_control_characters_escaped(cli, evil_home):
    result = cli("--home", evil_home, "session", "show", "nope\x1b]0;pwned\x07")
    assert result.exit_code == 3
    assert_safe(result.stderr.removesuffix("\n"), multiline=False)
    assert "nope\\x1b]0;pwned\\x07" in result.stderr and result.stderr.count("\n") == 1
    as_json = cli("--home", evil_home, "session", "show", "nope\x1b]0;pwned\x07", "--json")
    assert json.loads(as_json.stderr)["error"]["message"].startswith("no session 'nope\x1b]0;pwned\x07'")


def test_change_lines_show_control_characters_escaped(cli, evil_home):
    result = cli("--home", evil_home, "session", "rename", "evil", "--title", "new\x1b]0;t\x07", "--force")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "set the title of 'evil\\x1b]0;pwned\\x07' to 'new\\x1b]0;t\\x07'\n"


def test_other_stores_text_is_escaped_too(cli, tmp_path, monkeypatch):
    """Memory text, learn entries and Upsonic fields go through the same output layer."""
    memory = tmp_path / "memory"
    assert cli("--memory-dir", memory, "memory", "store", "note \x1b]0;x\x07 here").exit_code == 0
    for args in (["memory", "list"], ["memory", "search", "note"]):
        result = cli("--memory-dir", memory, *args)
        assert result.exit_code == 0 and "note \\x1b]0;x\\x07 here" in result.stdout
        assert_safe(result.stdout)
    home = tmp_path / "home"
    (home / "learn").mkdir(parents=True)
    assert cli("--home", home, "learn", "add", "persona", "likes \x1b[2J tea").exit_code == 0
    listed = cli("--home", home, "learn", "list")
    assert_safe(listed.stdout) and "likes \\x1b[2J tea" in listed.stdout
    db = tmp_path / "data.db"
    shutil.copy(FIXTURES / "upsonic-0.77.3" / "data.db", db)
    assert cli("upsonic", "user-memory", "set", "user_123", "tone=\x1b]0;x\x07", "--db", db).exit_code == 0
    shown = cli("upsonic", "user-memory", "user_123", "--db", db)
    assert "tone: \\x1b]0;x\\x07\n" in shown.stdout
    assert_safe(shown.stdout) and assert_safe(shown.stderr)
