"""``session list --store mysql://…`` at the library's speed, on a real MariaDB server (tests/mariadbserver.py):

* every sort, filter and limit lists what the JSON listing of the same sessions lists, message counts and the
  "showing N of M" note included;
* the matching sessions are counted only when the page is full (the statements the server received, from its
  general log);
* listing every session examines rows in proportion to the store, not to its square (MariaDB's
  ``max_join_size`` refuses a plan estimated past it, as it refused the grouped counts joined without an index);
* PyMySQL's ``cryptography`` import waits for an authentication that needs it, and that authentication still
  works; the preferred TLS context loads no CA bundle it would never consult.
"""

from __future__ import annotations

import json
import ssl
import subprocess
import sys

import pytest

from tests.cli.commands.test_session_conversation import source, tree  # noqa: F401  (fixture)
from tests.conftest import REPO
from tests.mariadbserver import require_pymysql


@pytest.fixture
def db(mysql):
    require_pymysql()
    return mysql


def listing(cli, store, *args: str) -> tuple[list[tuple], str]:
    result = cli("session", "list", "--store", store, *args, "--json")
    assert result.exit_code == 0, result.stderr
    return [(r["session_id"], r["message_count"], r["archived_count"], r["title"]) for r in result.json()], \
        result.stderr


def test_every_sort_filter_and_limit_lists_what_the_json_listing_lists(cli, db, source):
    assert cli("session", "migrate", "--from", source, "--to", db.rw_url, "--all").exit_code == 0
    for sort in ("updated", "created", "messages", "id"):
        for limit in ("0", "3", "200"):
            for filters in ((), ("--user", "user3"), ("--agent", "Compactor")):
                args = ("--sort", sort, "--limit", limit, *filters)
                ours, our_note = listing(cli, db.ro_url, *args)
                theirs, their_note = listing(cli, source, *args)
                assert ours == theirs and ours, args
                assert our_note == their_note, args


def general_log(db, action) -> list[str]:
    """The statements the praisonmem user sent to the server while ``action`` ran."""
    db.sql("SET GLOBAL log_output = 'TABLE'; TRUNCATE TABLE mysql.general_log; SET GLOBAL general_log = 1;")
    try:
        action()
    finally:
        db.sql("SET GLOBAL general_log = 0;")
    rows = db.sql("SELECT CONVERT(argument USING utf8mb4) FROM mysql.general_log WHERE command_type = 'Query' "
                  f"AND user_host LIKE '{db.ro_user}%' ORDER BY event_time")
    return [" ".join(line.split()) for line in rows.splitlines()]


def test_the_sessions_are_counted_only_when_the_page_is_full(cli, db, source):
    assert cli("session", "migrate", "--from", source, "--to", db.rw_url, "--all").exit_code == 0
    total = int(db.sql("SELECT count(*) FROM praison_sessions").strip())
    counting = "SELECT count(*) FROM `praison_sessions` s"
    out: dict[str, tuple] = {}
    sent = general_log(db, lambda: out.update(full=listing(cli, db.ro_url, "--limit", "3")))
    assert sent.count(counting) == 1
    assert out["full"][1] == f"praisonmem: showing 3 of {total} sessions; --limit 0 shows all\n"
    sent = general_log(db, lambda: out.update(room=listing(cli, db.ro_url, "--limit", str(total))))
    assert counting not in sent and any("praison_messages" in q for q in sent)
    assert (len(out["room"][0]), out["room"][1]) == (total, "")


FILL = """
INSERT INTO praison_sessions (session_id, user_id, agent_id, name, state, metadata, created_at, updated_at)
SELECT CONCAT('s-', LPAD(seq, 5, '0')), CONCAT('user', seq % 3), 'Agent', NULL, NULL, NULL, seq, seq + 0.5
FROM seq_1_to_{n};
INSERT INTO praison_messages (id, session_id, role, content, tool_calls, tool_call_id, metadata, created_at)
SELECT CONCAT('m-', seq), CONCAT('s-', LPAD(seq, 5, '0')), 'user', 'hello', NULL, NULL, NULL, seq
FROM seq_1_to_{n} WHERE seq % 7 <> 0;
"""


def test_listing_every_session_examines_rows_in_proportion_to_the_store(cli, db):
    from praisonmem.core.io import mysqlurl
    from praisonmem.core.sessions.stores.conversation_sql import ConversationMy, ConversationStore

    n = 3000
    store = ConversationStore(ConversationMy(mysqlurl.parse(db.rw_url)))
    store.prepare_write()  # the library's tables
    store.close()
    db.sql(FILL.format(n=n) + "ANALYZE TABLE praison_sessions, praison_messages;")
    db.sql(f"SET GLOBAL max_join_size = {n * 20}")  # new connections: n x n rows is past it, a few n is not
    try:
        for args in (("--limit", "0"), ("--sort", "messages", "--limit", "5"), ("--user", "user1", "--limit", "0")):
            result = cli("session", "list", "--store", db.ro_url, *args, "--json")
            assert result.exit_code == 0, (args, result.stderr)
            rows = result.json()
            counts = {r["session_id"]: r["message_count"] for r in rows}
            assert all(c == (0 if int(sid[2:]) % 7 == 0 else 1) for sid, c in counts.items()), args
        assert len(listing(cli, db.ro_url, "--limit", "0")[0]) == n
        by_size = [r[0] for r in listing(cli, db.ro_url, "--sort", "messages", "--limit", "5")[0]]
        assert by_size == ["s-00001", "s-00002", "s-00003", "s-00004", "s-00005"]
        assert len(listing(cli, db.ro_url, "--user", "user1", "--limit", "0")[0]) == n // 3
    finally:
        db.sql("SET GLOBAL max_join_size = DEFAULT")


CRYPTOGRAPHY_LATER = r"""
import json, os, sys
from praisonmem.core.io import mysqlurl
conn = mysqlurl.connect(mysqlurl.parse(sys.argv[1]))
loaded = "cryptography" in sys.modules
pymysql = mysqlurl.driver()
# the RSA exchange of caching_sha2_password over plain TCP (MariaDB has no such plugin: run it directly)
from pymysql import _auth
salt = os.urandom(20)
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.hazmat.primitives import hashes, serialization
key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
pem = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
sealed = _auth.sha2_rsa_encrypt(b"s3cret", salt, pem)
plain = key.decrypt(sealed, padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA1()), algorithm=hashes.SHA1(), label=None))
ctx = conn.ctx
print(json.dumps({"loaded": loaded, "ok": plain == _auth._xor_password(b"s3cret\0", salt),
                  "ca": ctx.cert_store_stats()["x509_ca"], "verify": int(ctx.verify_mode),
                  "hostname": ctx.check_hostname, "preferred": conn.ssl}))
"""


def test_cryptography_waits_for_an_authentication_that_needs_it_and_tls_loads_no_ca_bundle(db):
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", CRYPTOGRAPHY_LATER, db.rw_url], capture_output=True, text=True,
                         env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got == {"loaded": False, "ok": True, "ca": 0, "verify": int(ssl.CERT_NONE), "hostname": False,
                   "preferred": True}
