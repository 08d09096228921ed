"""A home with secrets of every kind planted in every place ``check --secrets`` searches.

Each place gets its own secrets (drawn from a seeded generator), so a test can tell which place a
finding came from and assert that no output holds any of them. The places: a JSON session's messages
(one message per kind), its title, its metadata, a ``sessions.db`` session's messages, a spilled turn,
a FileMemory item, an SQLite memory row, a learn entry and an Upsonic user trait.
"""

from __future__ import annotations

import base64
import json
import random
import shutil
import sqlite3
import string
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers import spill
from tests.realhomes import copy_gateway_home

KINDS = ("openai_api_key", "anthropic_api_key", "google_api_key", "aws_access_key_id", "github_token",
         "slack_token", "stripe_key", "jwt", "private_key", "url_password", "email", "phone", "generic_secret")
PLACES = ("message", "title", "metadata", "db_message", "spill", "memory", "sqlite_memory", "learn", "trait")
SESSION_PLACES = ("message", "title", "metadata", "db_message", "spill")  # what 'session redact' rewrites
ALNUM = string.ascii_letters + string.digits


def _b64url(obj: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def secrets_for(place: str) -> dict[str, tuple[str, str]]:
    """kind -> (the text planted, the secret in it), distinct for each place."""
    r = random.Random(place)

    def s(n: int, alphabet: str = ALNUM) -> str:
        return "".join(r.choice(alphabet) for _ in range(n))

    pem_body = "\n".join(s(64, ALNUM + "+/") for _ in range(4))
    pem = f"-----BEGIN RSA PRIVATE KEY-----\n{pem_body}\n-----END RSA PRIVATE KEY-----"
    jwt = f"{_b64url({'alg': 'HS256', 'typ': 'JWT'})}.{_b64url({'sub': s(10), 'name': place})}.{s(43, ALNUM + '_-')}"
    password = "a1" + s(14)
    value = "Z9" + s(22)
    phone = f"+44 20 {r.randint(1000, 9999)} {r.randint(1000, 9999)}"
    email = f"{s(6).lower()}.{s(5).lower()}@corp-example.com"
    found = {
        "openai_api_key": "sk-proj-" + s(48, ALNUM + "_-").replace("-", "x"),
        "anthropic_api_key": "sk-ant-api03-" + s(93, ALNUM + "_-") + "AA",
        "google_api_key": "AIza" + s(35),
        "aws_access_key_id": "AKIA" + s(16, string.ascii_uppercase + "234567"),
        "github_token": "ghp_" + s(36),
        "slack_token": f"xoxb-{r.randint(10**11, 10**12)}-{r.randint(10**12, 10**13)}-{s(24)}",
        "stripe_key": "sk_live_" + s(24),
        "jwt": jwt,
        "private_key": pem,
        "url_password": password,
        "email": email,
        "phone": phone,
        "generic_secret": value,
    }
    texts = {kind: f"the {kind.replace('_', ' ')} is {secret} (keep it safe)" for kind, secret in found.items()}
    texts["url_password"] = f"connect with postgresql://svc:{password}@db.internal:5432/prod please"
    texts["generic_secret"] = f'config: api_key = "{value}" in the env'
    return {kind: (texts[kind], found[kind]) for kind in KINDS}


def joined(place: str) -> str:
    return " | ".join(text for text, _ in secrets_for(place).values())


def all_secrets(places: tuple[str, ...] = PLACES) -> list[str]:
    return [secret for place in places for _, secret in secrets_for(place).values()]


@dataclass
class Corpus:
    home: Path
    memory_dir: Path
    upsonic_db: Path
    encrypted: str  # a praisonai:enc:v1: value planted in the JSON session, which redaction must leave
    extra: dict = field(default_factory=dict)

    def args(self) -> list[str]:
        return ["--home", str(self.home), "--memory-dir", str(self.memory_dir)]


PLANTED = "planted-chat"
DB_SESSION = "agent-chat-1"


def make_corpus(tmp_path: Path, upsonic_fixture: Path) -> Corpus:
    from praisonmem.core import learn
    from praisonmem.core.memory import FileMemoryStore, SqliteMemoryStore
    from praisonmem.core.paths import resolve
    from praisonmem.core import upsonic

    gw = copy_gateway_home(tmp_path / "gw")
    home = gw.home
    sessions = home / "sessions"
    encrypted = json.loads((sessions / "enc-1.json").read_text())["messages"][0]["content"]
    assert encrypted.startswith("praisonai:enc:v1:")
    msgs = [{"role": "user" if i % 2 == 0 else "assistant", "content": text, "timestamp": 1796050000.0 + i,
             "metadata": {}} for i, (text, _) in enumerate(secrets_for("message").values())]
    msgs.append({"role": "user", "content": encrypted, "timestamp": 1796050100.0, "metadata": {}})
    doc = {"session_id": PLANTED, "messages": msgs, "created_at": "2026-11-30T14:00:00+00:00",
           "updated_at": "2026-11-30T14:10:00+00:00", "agent_name": "Planter", "user_id": "u1",
           "metadata": {"title": joined("title"), "notes": joined("metadata")}}
    path = sessions / f"{PLANTED}.json"
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    path.chmod(0o600)
    spill(home, PLANTED, PLANTED, *[text for text, _ in secrets_for("spill").values()])
    # sessions.db: the gateway's session gets the planted turns appended (as the gateway would write them)
    db = sessions / "sessions.db"
    conn = sqlite3.connect(db)
    data = json.loads(conn.execute("SELECT data FROM sessions WHERE session_id = ?", (DB_SESSION,)).fetchone()[0])
    conn.execute("PRAGMA secure_delete=OFF")
    for i, (text, _) in enumerate(secrets_for("db_message").values()):
        data["messages"].append({"role": "user", "content": text, "timestamp": 1796050200.0 + i, "metadata": {}})
    conn.execute("UPDATE sessions SET data = ? WHERE session_id = ?", (json.dumps(data, ensure_ascii=False),
                                                                       DB_SESSION))
    conn.commit()
    # A second turn, written as the library writes (no secure_delete): the first version stays in free space.
    data["messages"].append({"role": "assistant", "content": "noted", "timestamp": 1796050300.0, "metadata": {}})
    conn.execute("UPDATE sessions SET data = ? WHERE session_id = ?", (json.dumps(data, ensure_ascii=False),
                                                                       DB_SESSION))
    conn.commit()
    conn.close()
    memory_dir = tmp_path / "project" / ".praisonai" / "memory"
    FileMemoryStore(memory_dir, "default").add_long_term(joined("memory"))
    SqliteMemoryStore(memory_dir.parent, "default").store("long_term", joined("sqlite_memory"))
    paths = resolve(home, memory_dir)
    learn.add_entry(paths, "insights", joined("learn"))
    updb = tmp_path / "upsonic" / "data.db"
    updb.parent.mkdir()
    shutil.copy(upsonic_fixture, updb)
    store = upsonic.open_store(updb)
    user = store.users()[0]["user_id"]
    upsonic.edit_user_memory(store, user, set_traits={"planted_note": joined("trait")})
    return Corpus(home, memory_dir, updb, encrypted, {"upsonic_user": user, "key": gw.key})


def place_of(finding: dict) -> str:
    """Which place of the corpus a finding is in."""
    store, field_, record = finding["store"], finding["field"], finding["record"] or ""
    if store == "json" and record.startswith("spill:"):
        return "spill"
    if store == "json":
        return {"metadata.title": "title", "metadata.notes": "metadata"}.get(field_, "message")
    if store == "memory" and finding["file"].endswith(".db"):
        return "sqlite_memory"
    return {"sessions.db": "db_message", "memory": "memory", "learn": "learn", "upsonic": "trait"}[store]


def leaked(text: str, places: tuple[str, ...] = PLACES, window: int = 8) -> list[str]:
    """Secrets of which any ``window`` consecutive characters appear in ``text`` (a masked one shows at most 4)."""
    out = []
    for secret in all_secrets(places):
        for i in range(0, len(secret) - window + 1):
            if secret[i:i + window] in text:
                out.append(secret)
                break
    return out
