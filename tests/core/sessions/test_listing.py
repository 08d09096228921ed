"""list_sessions as a library call: its vocabularies, and what it says when there is nothing to list."""

from __future__ import annotations

import pytest

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
