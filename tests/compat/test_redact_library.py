"""``session redact`` against the real library: what it leaves loads in praisonaiagents (the oracle venv), and
no byte of the home (session files, spill files, sessions.db and its -wal) holds a planted secret."""

from __future__ import annotations

import json
import shutil

from tests.conftest import UPSONIC_DB
from tests.secretcorpus import DB_SESSION, KINDS, PLANTED, SESSION_PLACES, all_secrets, make_corpus, secrets_for

LOAD = """
    import json, sys
    from praisonaiagents.session.store import DefaultSessionStore
    from praisonaiagents.session.sqlite_transcript_store import SqliteTranscriptStore
    from praisonaiagents.paths import get_sessions_dir
    out = {}
    js = DefaultSessionStore(session_dir=str(get_sessions_dir())).get_session(sys.argv[1])
    out["json"] = {"contents": [m.content for m in js.messages], "title": js.metadata.get("title"),
                   "notes": js.metadata.get("notes"), "agent_name": js.agent_name}
    db = SqliteTranscriptStore(session_dir=str(get_sessions_dir())).get_session(sys.argv[2])
    out["db"] = {"contents": [m.content for m in db.messages]}
    enc = DefaultSessionStore(session_dir=str(get_sessions_dir())).get_session("enc-1")
    out["enc_first"] = enc.messages[0].content
    print(json.dumps(out))
"""


def redacted_texts(place: str) -> list[str]:
    return [text.replace(secret, f"[REDACTED:{kind}]") for kind, (text, secret) in secrets_for(place).items()]


def home_bytes(home) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file()}


def test_session_redact_leaves_files_the_library_loads_and_no_secret_on_disk(cli, tmp_path, oracle):
    corpus = make_corpus(tmp_path, UPSONIC_DB)
    gw_env = {"PRAISONAI_SESSION_KEY": corpus.extra["key"]}
    # The library merges a session's spilled turns into it when it loads it: read the "before" of a copy.
    shutil.copytree(corpus.home, tmp_path / "copy")
    before = oracle.json(LOAD, PLANTED, DB_SESSION, home=tmp_path / "copy", **gw_env)
    # each secret as it is and as JSON writes it (a PEM block's newlines are \n there)
    planted_bytes = [form.encode() for s in all_secrets(SESSION_PLACES) for form in {s, json.dumps(s)[1:-1]}]
    found = home_bytes(corpus.home).values()
    assert sum(any(s in raw for raw in found) for s in planted_bytes) == len(all_secrets(SESSION_PLACES))

    result = cli(*corpus.args(), "session", "redact", PLANTED, DB_SESSION, "--yes", "--json")
    assert result.exit_code == 0, result.stderr
    records = {r["session_id"]: r for r in result.json()}
    assert (records[PLANTED]["action"], records[PLANTED]["redacted"], records[PLANTED]["redacted_spilled"]) == \
        ("redacted", 3 * len(KINDS), len(KINDS))
    assert (records[DB_SESSION]["action"], records[DB_SESSION]["redacted"]) == ("redacted", len(KINDS))

    assert json.loads((corpus.home / "sessions" / f"{PLANTED}.json").read_text())["updated_at"] == \
        "2026-11-30T14:10:00+00:00"  # a redaction is not a turn
    on_disk = home_bytes(corpus.home)
    assert [s for s in planted_bytes if any(s in raw for raw in on_disk.values())] == []
    assert any(name.endswith("sessions.db") for name in on_disk)

    spill = [json.loads(p.read_text()) for p in (corpus.home / "state" / "session_spill").glob(f"{PLANTED}.*.json")]
    assert [m["content"] for m in spill[0]["messages"]] == redacted_texts("spill")
    after = oracle.json(LOAD, PLANTED, DB_SESSION, home=corpus.home, **gw_env)
    n = len(KINDS)
    assert after["json"]["contents"][:n] == redacted_texts("message")
    assert after["json"]["contents"][n] == before["json"]["contents"][n]  # the encrypted turn, as it was
    assert after["json"]["contents"][n + 1:] == redacted_texts("spill")  # the library merged the spilled turns
    assert after["json"]["title"] == " | ".join(redacted_texts("title"))
    assert after["json"]["notes"] == " | ".join(redacted_texts("metadata"))
    assert after["json"]["agent_name"] == before["json"]["agent_name"]
    assert after["db"]["contents"][:-n - 1] == before["db"]["contents"][:-n - 1]
    assert after["db"]["contents"][-n - 1:] == redacted_texts("db_message") + ["noted"]
    assert after["enc_first"] == before["enc_first"]
    stored = json.loads((corpus.home / "sessions" / f"{PLANTED}.json").read_text())
    assert stored["messages"][n]["content"] == corpus.encrypted  # encrypted values are left as they are

    rerun = cli(*corpus.args(), "session", "redact", PLANTED, "--yes")
    assert (rerun.exit_code, rerun.stdout) == (0, f"skipped {PLANTED}: no secrets found\n")
    scan = cli(*corpus.args(), "session", "scan", "--json")
    assert (scan.exit_code, scan.json()) == (0, [])
