"""list_sessions as a library call: its vocabularies, and what it says when there is nothing to list."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from praisonmem.core import sessions
from praisonmem.core.paths import resolve


@pytest.fixture
def paths(fixture_home):
    return resolve(fixture_home, env={})


@pytest.mark.parametrize("option, value, message", [
    ("scope", "x", "unknown scope 'x'; choose from workspace, global, legacy, other, explicit"),
    ("sort", "size", "unknown sort key 'size'; choose from updated, created, messages, id"),
])
def test_an_unknown_scope_or_sort_key_raises_value_error(paths, option, value, message):
    with pytest.raises(ValueError) as info:
        sessions.list_sessions(paths, workspace=lambda: "dir:/x", **{option: value})
    assert str(info.value) == message


def test_scope_and_sort_take_the_enum_or_its_value(paths):
    by_value = sessions.list_sessions(paths, workspace=lambda: "dir:/x", scope="legacy", sort="id")
    by_enum = sessions.list_sessions(paths, workspace=lambda: "dir:/x", scope=sessions.Scope.legacy,
                                     sort=sessions.SortKey.id)
    assert [r["session_id"] for r in by_value.rows] == [r["session_id"] for r in by_enum.rows] == [
        "history_8fe938c0", "history_ccc5e5d4"]


def test_a_home_without_a_sessions_directory_says_so(tmp_path):
    result = sessions.list_sessions(resolve(tmp_path / "typo", env={}), workspace=lambda: "dir:/x")
    assert (result.rows, result.missing) == ([], f"no sessions directory at {tmp_path / 'typo' / 'sessions'} "
                                                 "(--home)")


@pytest.mark.parametrize("enabled", [True, False])
def test_a_listing_leaves_the_garbage_collector_as_it_found_it(paths, enabled):
    # the rows skip the collector's passes while they are built and go to its oldest generation afterwards;
    # nothing stays frozen, and a collector the caller had turned off stays off
    import gc
    import weakref

    class Node:
        pass

    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        cycle = Node()
        cycle.me = cycle
        ref = weakref.ref(cycle)
        del cycle
        rows = sessions.list_sessions(paths, workspace=lambda: "dir:/x").rows
        assert rows and gc.isenabled() is enabled and gc.get_freeze_count() == 0
        gc.collect()
        assert ref() is None  # cyclic garbage from before the listing is still collected
    finally:
        gc.enable() if was else gc.disable()



def test_a_listing_keeps_frozen_what_the_caller_froze(paths):
    # a program importing praisonmem (a pre-fork server) froze its objects: a listing must not unfreeze them
    import gc

    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        assert sessions.list_sessions(paths, workspace=lambda: "dir:/x").rows
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


ODD_TIMES = ["2026-01-01", "2026-01-02", "2025", None, 3, "", "2026-01-01T00:00:00+00:00", ["x"]]


@given(st.lists(st.tuples(st.sampled_from(ODD_TIMES), st.sampled_from(ODD_TIMES), st.integers(0, 3),
                          st.sampled_from("abcab")), max_size=40))
def test_the_sort_is_a_stable_sort_by_the_documented_keys(values):
    from praisonmem.core.sessions.listing import SortKey, _sort

    def text(value):
        return value if isinstance(value, str) else ""

    reference = {SortKey.updated: (lambda s: text(s[0]["updated_at"]), True),
                 SortKey.created: (lambda s: text(s[0]["created_at"]), True),
                 SortKey.messages: (lambda s: s[0]["message_count"], True),
                 SortKey.id: (lambda s: s[0]["session_id"], False)}
    items = [({"updated_at": u, "created_at": c, "message_count": m, "session_id": i}, n)
             for n, (u, c, m, i) in enumerate(values)]
    for key, (by, reverse) in reference.items():
        ours = list(items)
        _sort(ours, key)
        assert [ref for _, ref in ours] == [ref for _, ref in sorted(items, key=by, reverse=reverse)]
