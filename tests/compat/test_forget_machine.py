"""``forget --user alice`` over a whole machine tree the real libraries wrote for alice and bob
(:mod:`tests.compat.forgetmachine`): afterwards no 8-character piece of any of alice's planted texts is in any
raw byte under the tree, every file of bob's is byte-identical, and the libraries load bob's sessions, memory and
learn entries while their searches find nothing of alice's. ``--dry-run`` changes nothing and names every item the
real run removes."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.compat import forgetmachine as fm

pytestmark = pytest.mark.oracle

# bob's files that held nothing of alice's (his FileMemory long-term tier and saved session held an agent turn
# stamped with alice's user id: rewritten without it, as the memory adapter's own test pins)
BOB_FILES = ["home/.praisonai/sessions/chat-bob.json", "home/.praisonai/sessions/enc-bob.json",
             "home/.praisonai/learn/private/bob/persona.json", "home/.praisonai/learn/private/bob/persona.archive.json",
             "project/.praisonai/memory/bob/short_term.json", "project/.praisonai/memory/bob/config.json",
             "project/.praisonai/short_term_bob.db", "project/.praisonai/long_term_bob.db"]
BOB_DIRS = ["project/assistant/.praisonai/chroma_db_bob"]


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("forget-machine") / "tree"
    made = fm.build(root)
    return root, made


@pytest.fixture
def tree(template, tmp_path, monkeypatch) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(template[0], root, symlinks=True)
    for name, value in fm.env(root).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("XDG_STATE_HOME", str(root / "state"))
    monkeypatch.setenv("PRAISONMEM_BACKUP_DIR", str(root / "backups"))
    monkeypatch.setenv("PRAISONMEM_CACHE_DIR", str(root / "cache"))
    monkeypatch.chdir(root / "project")
    return root


def files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def grams(texts: list[str]) -> set[str]:
    return {t[i:i + 8] for t in texts for i in range(len(t) - 7)}


def background(root: Path, texts: list[str]) -> set[str]:
    """The 8-character pieces of ``texts`` the tree holds outside every copy of them (a word of the libraries'
    schema, a path): finding one afterwards proves nothing."""
    wanted = grams(texts)
    found: set[str] = set()
    for path in files(root):
        data = path.read_bytes()
        for text in texts:
            data = data.replace(text.encode(), b"\0").replace(text.lower().encode(), b"\0")
        low = data.lower()
        found |= {g for g in wanted if g.encode() in data or g.lower().encode() in low}
    return found


def residue(root: Path, wanted: set[str]) -> dict[str, list[str]]:
    out = {}
    for path in files(root):
        data = path.read_bytes()
        low = data.lower()
        hits = sorted(g for g in wanted if g.encode() in data or g.lower().encode() in low)
        if hits:
            out[str(path.relative_to(root))] = hits[:3]
    return out


def bob_bytes(root: Path) -> dict[str, bytes]:
    out = {name: (root / name).read_bytes() for name in BOB_FILES}
    for directory in BOB_DIRS:
        out.update({str(p.relative_to(root)): p.read_bytes() for p in files(root / directory)})
    return out


def forget(cli, *args: str):
    return cli("forget", "--user", "alice", *args)


def test_forget_alice_everywhere_leaves_no_byte_of_hers_and_bob_as_he_was(cli, tree) -> None:
    alice = fm.alice_texts()
    wanted = grams(alice) - grams(fm.bob_texts()) - background(tree, alice)
    assert len(residue(tree, wanted)) >= 12  # the premise: her texts are in a dozen files and more
    bob = bob_bytes(tree)
    result = forget(cli, "--include-backups", "--allow-unverified", "--yes", "--json")
    report = json.loads(result.stdout)
    verdicts = {(s["store"], s["path"]): (s["verified"], s["detail"]) for s in report["stores"]}
    assert [k for k, (v, _) in verdicts.items() if v == "residue"] == [], verdicts
    # the one store nobody can vouch for: LearnConfig(backend="sqlite") keeps rows that name no user
    assert [k[0] for k, (v, _) in verdicts.items() if v == "unverified"] == ["learn-sqlite"], verdicts
    assert (result.exit_code, report["ok"]) == (0, True), result.stderr
    assert residue(tree, wanted) == {}
    assert bob_bytes(tree) == bob
    read = fm.read(tree, ["chat-bob"])
    assert read["bob_chat"] == {"chat-bob": [fm.BOB["agent_chat"], "Echo: " + fm.BOB["agent_chat"]]}
    assert "chat-alice" not in read["json_sessions"] and "enc-alice" not in read["json_sessions"]
    assert read["gateway"] == {"gw-alice": [], "gw-bob": [fm.BOB["gateway"]]}
    assert read["search"] == {"gluten": [], "pension": [], "council": [], "canoe": ["chat-bob"], "bicycle": [],
                              "Brightwater": []}
    assert read["encrypted"] == {"enc-alice": [], "enc-bob": [fm.BOB["encrypted"]]}
    assert read["rag"] == {"bob": [fm.BOB["rag"]], "alice": []}
    machine = fm.machine()
    memory = machine.read(tree)
    assert memory["file_alice"] == [] and memory["mem0_alice"] == []
    assert memory["mem0_messages"]["user_id=alice"] == []
    assert memory["up_sqlite"]["alice"] is None and memory["up_json"]["alice"] is None
    assert not any(t in json.dumps(memory) for t in machine.ALICE.values())
    assert machine.BOB["long"] in memory["file_bob"] and memory["learn_bob"] == [machine.BOB["persona_new"]]
    assert not (tree / "state" / "praisonmem" / "forget" / "journal.json").exists()


def test_dry_run_changes_nothing_and_names_every_item_the_real_run_removes(cli, tree) -> None:
    from tests.core.forget.helpers import snapshot

    before = snapshot(tree)
    dry = forget(cli, "--dry-run", "--json")
    assert dry.exit_code == 0, dry.stderr
    assert snapshot(tree) == before
    real = forget(cli, "--include-backups", "--allow-unverified", "--yes", "--json")
    items = {(p["store"], p["path"], i["key"]) for p in json.loads(dry.stdout)["plan"] for i in p["items"]}
    done = {(p["store"], p["path"], i["key"]) for p in json.loads(real.stdout)["plan"] for i in p["items"]}
    assert items == done and len(items) >= 20
    removed = sum(s["removed"] for s in json.loads(real.stdout)["stores"])
    assert removed >= len(items) - 2  # a FileMemory user directory and its last file may be one removal
