"""What praisonmem writes, the library loads; what the library writes, praisonmem reads."""

from __future__ import annotations

import json

from praisonmem.core.sessions import session_file_name
from tests.compat.conftest import last_json, run_library
from tests.helpers import rewrite

LOAD_ALL = """
    import json
    from praisonaiagents.session.store import DefaultSessionStore
    from praisonaiagents.paths import get_sessions_dir
    store = DefaultSessionStore(session_dir=str(get_sessions_dir()))
    listing = store.list_sessions(limit=1000)
    out = {s["session_id"]: {"history": store.get_chat_history(s["session_id"]),
                             "title": s["title"], "count": s["message_count"]} for s in listing}
    print(json.dumps(out))
"""


def test_library_loads_every_session_praisonmem_rewrote(fixture_home):
    sessions = fixture_home / "sessions"
    for path in sorted(sessions.glob("*.json")):
        def touch(doc):
            doc.setdefault("metadata", {})["title"] = f"rewritten {path.stem}"
            doc["messages"].append({"role": "user", "content": "added by praisonmem ✓", "timestamp": 1.5,
                                    "metadata": {}})
            return doc
        rewrite(path, touch)
    loaded = last_json(run_library(LOAD_ALL, home=fixture_home))
    assert len(loaded) == 12
    for sid, info in loaded.items():
        assert info["history"][-1] == {"role": "user", "content": "added by praisonmem ✓"}
        assert info["title"] == f"rewritten {session_file_name(sid)[:-5]}"
    quarantined = sorted(p.name for p in sessions.glob("*.corrupt-*"))
    assert quarantined == ["broken.json.corrupt-1796050189520"], "the library quarantined a file praisonmem wrote"


def test_praisonmem_reads_what_the_library_wrote(cli, fixture_home):
    run_library("""
        from praisonaiagents.session.store import DefaultSessionStore
        from praisonaiagents.paths import get_sessions_dir
        store = DefaultSessionStore(session_dir=str(get_sessions_dir()))
        store.add_message("from-library/ü", "user", "hello from the library")
        store.add_message("from-library/ü", "assistant", "hi")
        store.rename_session("from-library/ü", "Library title")
    """, home=fixture_home)
    rows = {r["session_id"]: r for r in cli("--home", fixture_home, "session", "list", "--json").json()}
    assert rows["from-library/ü"]["title"] == "Library title"
    assert rows["from-library/ü"]["message_count"] == 2
    shown = cli("--home", fixture_home, "session", "show", "from-library/ü", "--json")
    assert shown.stdout == (fixture_home / "sessions" / "from-library_ü.json").read_text(encoding="utf-8") + "\n"
    assert json.loads(shown.stdout)["messages"][0]["content"] == "hello from the library"
