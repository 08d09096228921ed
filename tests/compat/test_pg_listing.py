"""``session list --store postgresql://…`` on a real PostgreSQL server (tests/pgcluster.py): every sort, filter and
limit lists what the JSON listing of the same sessions lists (every field, the "showing N of M" note too); the
sessions are counted only when the page is full; and metadata the listing does not decode (none of the keys it
shows) reads exactly as metadata it does."""

from __future__ import annotations

import pytest

from tests.cli.commands.test_session_conversation import source, tree  # noqa: F401  (fixture)
from tests.pgcluster import require_psycopg


@pytest.fixture
def db(pg):
    require_psycopg()
    return pg


def listing(cli, store, *args: str) -> tuple[list[dict], str]:
    from praisonmem.core.sessions.stores.conversation_map import iso_epoch

    result = cli("session", "list", "--store", store, *args, "--json")
    assert result.exit_code == 0, result.stderr
    rows = []
    for r in result.json():
        r = {k: v for k, v in r.items() if k not in ("file", "store", "parent_id")}
        r["created_at"], r["updated_at"] = iso_epoch(r["created_at"]), iso_epoch(r["updated_at"])
        rows.append(r)
    return rows, result.stderr


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


ROWS = """
INSERT INTO public.praison_sessions (session_id, user_id, agent_id, name, state, metadata, created_at, updated_at)
VALUES ('a-array', NULL, NULL, 'Array', NULL, '["title", "model"]', 1, 10),
       ('b-scalar', NULL, NULL, 'Scalar', NULL, '"title"', 2, 9),
       ('c-null-title', NULL, NULL, 'Named', NULL, '{"title": null, "model": "gpt-x"}', 3, 8),
       ('d-empty-title', NULL, NULL, 'Named too', NULL, '{"title": "", "cost": 0.25, "total_tokens": 7}', 4, 7),
       ('e-other', NULL, NULL, 'Other', NULL, '{"other": {"title": "deep"}}', 5, 6),
       ('f-none', NULL, NULL, NULL, NULL, NULL, 6, 5),
       ('g-all', 'u', 'ag', 'Row name', NULL,
        '{"title": "Meta title", "model": "m", "total_tokens": "12", "cost": 1, "agent_id": "A", "source": "s",
          "parent_id": "p"}', 7, 4);
"""

FIELDS = ("title", "model", "total_tokens", "cost", "agent_id", "source")
EXPECTED = {"a-array": ("Array", None, None, None, None, None),
            "b-scalar": ("Scalar", None, None, None, None, None),
            "c-null-title": ("Named", "gpt-x", None, None, None, None),
            "d-empty-title": ("Named too", None, 7, 0.25, None, None),
            "e-other": ("Other", None, None, None, None, None),
            "f-none": (None, None, None, None, None, None),
            "g-all": ("Meta title", "m", "12", 1, "A", "s")}


def test_metadata_with_none_of_the_listed_keys_reads_as_metadata_that_has_them(cli, db):
    from praisonmem.core.io import pgurl
    from praisonmem.core.sessions.stores.conversation_sql import ConversationPg, ConversationStore

    store = ConversationStore(ConversationPg(pgurl.parse(db.rw_url)))
    store.prepare_write()  # the library's tables
    store.close()
    db.psql(ROWS)
    for limit in ("0", "3", "100"):  # every session (grouped counts) and a page (each session's count)
        result = cli("session", "list", "--store", db.ro_url, "--limit", limit, "--json")
        assert result.exit_code == 0, result.stderr
        got = {r["session_id"]: tuple(r[f] for f in FIELDS) for r in result.json()}
        assert got == {k: v for i, (k, v) in enumerate(EXPECTED.items()) if limit == "0" or i < int(limit)}
        parents = {r["session_id"]: r["parent_id"] for r in result.json()}
        assert parents.get("g-all", "p") == "p" and all(v is None for k, v in parents.items() if k != "g-all")
