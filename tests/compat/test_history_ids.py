"""Real Agents choose the history file that `workspace id --agent NAME` names."""

from __future__ import annotations

import random
import string

import pytest

from tests.compat.conftest import last_json, run_library
from tests.helpers import make_fixture_repo

CHAT = """
    import json, sys
    from tests.compat import fakellm
    fakellm.start()
    from praisonaiagents import Agent
    from praisonaiagents.config import MemoryConfig
    made = {}
    for name in json.loads(sys.argv[1]):
        agent = Agent(name=name, instructions="Be brief.", llm="gpt-4o-mini",
                      memory=MemoryConfig(history=True, user_id="t"))
        agent.chat("hello")
        made[name] = agent._session_id
    print(json.dumps(made))
"""


def random_names(seed: int) -> list[str]:
    rng = random.Random(seed)
    alphabet = string.ascii_letters + string.digits + " -_.:/éü日本✓"
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 24))).strip() or "x" for _ in range(5)]


@pytest.mark.parametrize("kind", ["git", "dir"])
def test_workspace_id_names_the_file_the_library_created(cli, tmp_path, monkeypatch, kind):
    import json

    home = tmp_path / "home"
    workdir = make_fixture_repo(tmp_path / "repo") if kind == "git" else tmp_path / "plain"
    workdir.mkdir(exist_ok=True)
    names = random_names(7 if kind == "git" else 11)
    made = last_json(run_library(CHAT, json.dumps(names), home=home, cwd=workdir))
    monkeypatch.chdir(workdir)
    for name in names:
        data = cli("--home", home, "workspace", "id", "--agent", name, "--json").json()
        assert data["history_id"] == made[name], name
        assert data["exists"] is True and data["kind"] == "workspace"
        assert (home / "sessions" / f"{made[name]}.json").is_file()
        assert data["path"] == str(home / "sessions" / f"{made[name]}.json")
    rows = {r["session_id"]: r for r in cli("--home", home, "session", "list", "--json").json()}
    assert {rows[made[n]]["scope"] for n in names} == {"workspace"}
