"""The last guard: every store's transaction refuses a write that would put plaintext into an encrypted session
(the commands seal what they bring in before; a caller that forgot is stopped here, with nothing written)."""

from __future__ import annotations

import json

import pytest

from praisonmem.core.errors import Refused
from praisonmem.core.paths import resolve
from praisonmem.core.sessions import stores


def contents(root) -> dict[str, bytes]:
    """Every file's bytes (the database's write transaction opens and removes its -wal/-shm: only data counts)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def plaintext_added(doc: dict) -> dict:
    return {**doc, "messages": [*doc["messages"], {"role": "user", "content": "PLAIN-TURN", "timestamp": 1.9e9,
                                                   "metadata": {}}]}


@pytest.mark.parametrize("sid, label", [("enc-1", "json"), ("enc-db-1", "sessions.db"),
                                        ("enc-1", "project:8ccfb8a2")])
def test_a_store_transaction_refuses_plaintext_into_an_encrypted_session(gateway_home, sid, label):
    if label.startswith("project:"):  # an encrypted session in the project store (a DefaultSessionStore there)
        moved = gateway_home.project_store / "enc-1.json"
        moved.write_bytes((gateway_home.sessions / "enc-1.json").read_bytes())
        (gateway_home.sessions / "enc-1.json").unlink()
        (gateway_home.project_store / "enc-1.json.lock").touch()  # as the library leaves it
    home = stores.open_store(resolve(gateway_home.home, env={}), label)
    ref = home.find(sid)
    before = contents(gateway_home.home)
    with pytest.raises(Refused, match=r"the session is encrypted, and messages\[\d+\] would be written with its "
                                      r"content in plaintext; nothing changed"):
        with home.transaction([ref]) as tx:
            tx.write(ref, plaintext_added(tx.read(ref)))
    assert contents(gateway_home.home) == before


def test_the_encrypted_values_already_there_may_be_rewritten_as_they_are(gateway_home):
    home = stores.open_store(resolve(gateway_home.home, env={}), "sessions.db")
    ref = home.find("enc-db-1")
    with home.transaction([ref]) as tx:
        doc = tx.read(ref)
        tx.write(ref, {**doc, "metadata": {**doc["metadata"], "title": "retitled"}})
    assert json.loads(home.read_bytes(ref))["metadata"]["title"] == "retitled"
