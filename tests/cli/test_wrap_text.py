"""Message bodies, search snippets and titles wrap at spaces to a real terminal's width, and a path in them stays
whole on its line; piped, each is one line as stored."""

from __future__ import annotations

import json
import shutil

import pytest
from rich.cells import cell_len

from tests.cli.test_table_fit import on_a_terminal
from tests.conftest import PRAISONAI_FIXTURES

SID = "wrap-demo"
PATH = "/srv/agents/planner/output/itineraries/lisbon-2026.md"  # 53 cells: whole on a line of 80
TITLE = "Planning the autumn trip to Lisbon with hotels restaurants and museums for the whole family and friends"
BODY = ("I saved the itinerary you asked for to " + PATH + " and the museum list beside it; the tram timetable "
        "is there too, so the whole family can check the departures before leaving the hotel each morning")


@pytest.fixture
def home(tmp_path):
    home = tmp_path / "home"
    shutil.copytree(PRAISONAI_FIXTURES / "home", home)
    doc = json.loads((home / "sessions" / "my_chat.json").read_text(encoding="utf-8"))
    doc["session_id"] = SID
    doc.setdefault("metadata", {})["title"] = TITLE
    doc["messages"] = [{"role": "user", "content": "Where is the plan?", "timestamp": 1796050189.5},
                       {"role": "assistant", "content": BODY, "timestamp": 1796050190.5}]
    (home / "sessions" / f"{SID}.json").write_text(json.dumps(doc), encoding="utf-8")
    return home


def rejoined(lines: list[str], start: str, indent: int) -> str:
    """The text the lines from the one starting with ``start`` hold, up to the next line not indented ``indent``."""
    at = next(n for n, line in enumerate(lines) if line.startswith(start))
    pieces = [lines[at][len(start):]]
    for line in lines[at + 1:]:
        if not line.startswith(" " * indent) or line[indent] == " ":
            break
        pieces.append(line[indent:])
    return " ".join(pieces)


@pytest.mark.parametrize("columns", [80, 100, 120])
def test_show_wraps_the_title_and_bodies_keeping_a_path_whole(home, tmp_path, columns):
    code, lines = on_a_terminal(["--no-pager", "--home", "home", "session", "show", SID], tmp_path, columns)
    assert code == 0
    assert all(cell_len(line) <= columns for line in lines), [line for line in lines if cell_len(line) > columns]
    assert rejoined(lines, "Title     ", 10) == TITLE
    at = next(n for n, line in enumerate(lines) if line.startswith("── #1 assistant"))
    body = lines[at + 1:lines.index("", at)]
    assert len(body) > 1 and " ".join(body) == BODY
    assert any(line.startswith(PATH) or line.endswith(PATH) or f" {PATH} " in line for line in body)


@pytest.mark.parametrize("columns", [80, 120])
def test_search_wraps_each_snippet_under_its_hit(home, tmp_path, columns):
    code, lines = on_a_terminal(["--no-pager", "--home", "home", "session", "search", "itinerary"], tmp_path,
                                columns)
    assert code == 0
    assert all(cell_len(line) <= columns for line in lines), [line for line in lines if cell_len(line) > columns]
    at = next(n for n, line in enumerate(lines) if line.startswith(f"{SID} #1 assistant"))
    snippet = []
    for line in lines[at + 1:]:
        if not line.startswith("    "):
            break
        snippet.append(line[4:])
    assert len(snippet) > 1 and " ".join(snippet).strip("…") in BODY
    assert any(PATH in line for line in snippet)


def test_piped_a_body_and_a_title_are_one_line_each(cli, home):
    result = cli("--home", home, "session", "show", SID)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert f"Title     {TITLE}" in lines and BODY in lines
