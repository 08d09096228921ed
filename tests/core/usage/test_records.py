"""What one session records: each writer's shape read, nothing estimated."""

from __future__ import annotations

import pytest

from praisonmem.core.usage import praisonai_usage, upsonic_usage


def usage(doc):
    return praisonai_usage(doc, store="json", session_id="s")


def figures(record):
    return (record.prompt_tokens, record.completion_tokens, record.total_tokens, record.cost)


def test_the_agents_metadata_totals_win_over_the_top_level_mirror():
    doc = {"metadata": {"total_tokens": 54, "cost": 1.8e-05, "model": "gpt-4o-mini"}, "total_tokens": 99, "cost": 1.0,
           "messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]}
    record = usage(doc)
    assert figures(record) == (None, None, 54, 1.8e-05)
    assert (record.model, record.turns, record.source) == ("gpt-4o-mini", 1, "total_tokens")


def test_top_level_mirror_and_token_count_are_read_when_metadata_lacks_them():
    assert figures(usage({"total_tokens": 7})) == (None, None, 7, None)
    assert figures(usage({"token_count": 8, "cost": 0.5})) == (None, None, 8, 0.5)


def test_a_metadata_usage_object_in_either_shape():
    openai = {"metadata": {"usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15, "cost": 0.1}}}
    assert figures(usage(openai)) == (10, 5, 15, 0.1)
    io = {"metadata": {"usage": {"input_tokens": 3, "output_tokens": 4}}}
    assert figures(usage(io)) == (3, 4, 7, None)  # the total is prompt + completion only when both are recorded
    assert figures(usage({"metadata": {"usage": {"input_tokens": 3}}})) == (3, None, None, None)


def test_the_unified_session_shape_top_level_and_the_managed_agents_in_metadata():
    unified = {"total_input_tokens": 1200, "total_output_tokens": 3400, "total_cost": 0.0131, "current_model": "gpt-4o",
               "messages": [{"role": "user", "content": "q"}]}
    record = usage(unified)
    assert figures(record) == (1200, 3400, 4600, 0.0131) and record.model == "gpt-4o"
    managed = {"metadata": {"total_input_tokens": 5, "total_output_tokens": 6}}
    assert figures(usage(managed)) == (5, 6, 11, None)


def test_per_message_usage_only_when_the_session_records_no_total():
    messages = [{"role": "user", "content": "q"},
                {"role": "assistant", "content": "a", "usage": {"prompt_tokens": 4, "completion_tokens": 2}},
                {"role": "assistant", "content": "b", "metadata": {"usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                                                              "total_tokens": 2}}}]
    archived = [{"role": "assistant", "content": "old", "usage": {"input_tokens": 10, "output_tokens": 0}}]
    record = usage({"messages": messages, "archived_messages": archived})
    assert figures(record) == (15, 3, 18, None) and record.source == "messages"
    # a session total already counts its messages: they are not added again
    assert figures(usage({"messages": messages, "metadata": {"total_tokens": 100}})) == (None, None, 100, None)


@pytest.mark.parametrize("doc", [
    {"messages": []},
    {"metadata": {"total_tokens": 0, "cost": 0.0}, "total_tokens": 0, "cost": 0.0},  # the streaming path's zeros
    {"total_input_tokens": 0, "total_output_tokens": 0, "total_cost": 0.0},  # a new unified session
    {"metadata": {"total_tokens": "54", "cost": "0.1"}},  # not numbers: not read as numbers
    {"metadata": {"total_tokens": -3, "cost": float("nan")}, "total_tokens": True},
    {"metadata": {"__enc__": "praisonai:enc:v1:abc"}},  # encrypted metadata is opaque
    {"metadata": "nonsense", "messages": [1, "x", {"role": "user", "usage": "bad"}]},
])
def test_nothing_recorded_is_no_usage_never_zero(doc):
    record = usage(doc)
    assert not record.recorded and record.source is None


def test_turns_count_user_messages_archived_too():
    doc = {"archived_messages": [{"role": "user"}, {"role": "assistant"}],
           "messages": [{"role": "system"}, {"role": "user"}, {"role": "tool"}, "junk"]}
    assert usage(doc).turns == 2


def test_the_session_is_dated_by_its_last_write():
    assert usage({"updated_at": "2026-11-30T14:47:53+00:00", "created_at": "2026-01-01T00:00:00+00:00"}).when == \
        1796050073.0
    assert usage({"created_at": "2026-11-30T14:47:53+00:00"}).when == 1796050073.0
    assert usage({}).when is None


def test_upsonic_usage_column_missing_keys_are_zero_as_the_library_drops_them():
    row = {"session_id": "s1", "usage": {"requests": 3, "input_tokens": 300, "output_tokens": 84},
           "agent_data": {"agent_name": "Finance Assistant"}, "user_id": "u", "agent_id": "a", "updated_at": 5,
           "messages": [{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "hi"}]},
                        {"kind": "response", "model_name": "gpt-4o", "parts": [{"part_kind": "text", "content": "x"}]}]}
    record = upsonic_usage(row, store="upsonic:x")
    assert figures(record) == (300, 84, 384, None)
    assert (record.model, record.agent, record.turns, record.when) == ("gpt-4o", "Finance Assistant", 1, 5.0)
    assert figures(upsonic_usage({"session_id": "s", "usage": {"output_tokens": 5}}, store="u")) == (0, 5, 5, None)
    assert not upsonic_usage({"session_id": "s", "usage": None, "runs": {"r1": {}, "r2": {}}}, store="u").recorded
    assert upsonic_usage({"session_id": "s", "usage": None, "runs": {"r1": {}, "r2": {}}}, store="u").turns == 2
