"""The last guard: every store's transaction refuses a write that would put plaintext into an encrypted session
(the commands seal what they bring in before; a caller that forgot is stopped here, with nothing written)."""

from __future__ import annotations

import json

import pytest

from praisonmem.core.errors import Refused
from praisonmem.core.paths import resolve
from praisonmem.core.sessions.stores.locate import open_store


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
    home = open_store(resolve(gateway_home.home, env={}), label)
    ref = home.find(sid)
    before = contents(gateway_home.home)
    with pytest.raises(Refused, match=r"the session is encrypted, and messages\[\d+\] would be written with its "
                                      r"content in plaintext; nothing changed"):
        with home.transaction([ref]) as tx:
            tx.write(ref, plaintext_added(tx.read(ref)))
    assert contents(gateway_home.home) == before


def test_the_encrypted_values_already_there_may_be_rewritten_as_they_are(gateway_home):
    home = open_store(resolve(gateway_home.home, env={}), "sessions.db")
    ref = home.find("enc-db-1")
    with home.transaction([ref]) as tx:
        doc = tx.read(ref)
        tx.write(ref, {**doc, "metadata": {**doc["metadata"], "title": "retitled"}})
    assert json.loads(home.read_bytes(ref))["metadata"]["title"] == "retitled"


def _mixed(doc: dict) -> dict:
    """The session with a plaintext turn after its encrypted ones (a session may mix them)."""
    return plaintext_added(doc)


def test_an_edited_plaintext_turn_may_stay_plaintext_but_a_ciphertext_turn_may_not_become_plaintext(gateway_home):
    """session redact edits plaintext turns of a mixed session in place: that keeps them as plaintext as they were;
    the same edit of an encrypted turn (its content written in plaintext) is refused, nothing written."""
    from praisonmem.core.sessions.crypto import is_encrypted

    path = gateway_home.sessions / "enc-1.json"  # made mixed, as an unencrypted writer may leave a session
    path.write_text(json.dumps(_mixed(json.loads(path.read_bytes())), indent=2, ensure_ascii=False))
    home = open_store(resolve(gateway_home.home, env={}), "json")
    ref = home.find("enc-1")
    with home.transaction([ref]) as tx:
        doc = tx.read(ref)
        edited = [dict(m) for m in doc["messages"]]
        edited[-1]["content"] = "[REDACTED:email]"
        tx.write(ref, {**doc, "messages": edited})
    assert json.loads(path.read_bytes())["messages"][-1]["content"] == "[REDACTED:email]"
    before = contents(gateway_home.home)
    with pytest.raises(Refused, match=r"messages\[\d+\] would be written with its content in plaintext"):
        with home.transaction([ref]) as tx:  # the same turn with new text: not a redaction, so it must be sealed
            doc = tx.read(ref)
            edited = [dict(m) for m in doc["messages"]]
            edited[-1]["content"] = "[REDACTED:email] and some new plaintext"
            tx.write(ref, {**doc, "messages": edited})
    assert contents(gateway_home.home) == before
    with pytest.raises(Refused, match=r"messages\[0\] would be written with its content in plaintext"):
        with home.transaction([ref]) as tx:
            doc = tx.read(ref)
            assert is_encrypted(doc["messages"][0]["content"])
            edited = [dict(m) for m in doc["messages"]]
            edited[0]["content"] = "decrypted text"
            tx.write(ref, {**doc, "messages": edited})
    assert contents(gateway_home.home) == before
