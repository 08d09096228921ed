"""The stream reader gives json.loads' values or refuses, at every window size; object_chunks is json.dumps."""

from __future__ import annotations

import json
import math
import os
import tempfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from praisonmem.core.io import jsonstream
from praisonmem.core.io.jsonstream import Items, Unstreamable, members, object_chunks

LISTS = ("messages", "archived_messages")


def streamed(data: bytes, chunk: int) -> dict:
    with tempfile.TemporaryFile() as handle:
        handle.write(data)
        handle.flush()
        out = {}
        for key, value in members(handle.fileno(), LISTS, chunk=chunk):
            out[key] = list(value) if isinstance(value, Items) else value
        return out


def loads(data: bytes):
    """json.loads' document, or 'refused' for what the stream reader leaves to it (an error, a key given twice, a
    top-level value that is not an object)."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return "refused"
    if not isinstance(doc, dict):
        return "refused"
    pairs = json.loads(data.decode("utf-8"), object_pairs_hook=lambda p: p)
    return doc if len({k for k, _ in pairs}) == len(pairs) else "refused"


def outcome(data: bytes, chunk: int):
    try:
        return streamed(data, chunk)
    except Unstreamable:
        return "refused"


def same(a, b) -> bool:
    return json.dumps(a, sort_keys=False) == json.dumps(b, sort_keys=False) if a != b else True


CASES = [
    b"{}", b" {\n} \n", b'{"a":1}', b'{"messages":[]}', b'{"messages":[ \n ]}', b'{"messages":[1,2,3],"x":{"y":[1]}}',
    '{"messages":[{"a":"日本\\u00e9\\ud83d\\ude00"}, 1e5, -0, -1.5E-3, NaN, -Infinity, 12345678901234567890]}\n'.encode(),
    b'{"messages":"not a list","archived_messages":null}', b'{"messages":[[1,[2,{"b":[]}]],{}]}',
    # refused: json.loads fails, or would fold a key given twice, or the top level is no object
    b'{"a":1,}', b'{"a":1}x', b'{"a":1,"a":2}', b'{"messages":[1],"messages":[2]}', b"[1]", b'"x"', b'{"messages":[1,]}',
    b'{"messages":[1 2]}', b'{"a":"\x01"}', "\ufeff{}".encode(), b'{"a":1', b"", b'{"messages":[1,2',
    b'{"m":tru}',
    b'{"messages":[1e]}', b'{"messages":[01]}', b'{"a":"\xff"}', b'{"messages":[' + b"[" * 5000 + b"]" * 5000 + b"]}",
    b'{"messages":[' + b"9" * 5000 + b"]}",
]


@pytest.mark.parametrize("data", CASES)
@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 64, 1 << 20])
def test_every_case_reads_as_json_loads_or_is_refused(data, chunk):
    expected, got = loads(data), outcome(data, chunk)
    assert same(got, expected), (got, expected)


values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70) | st.floats(allow_nan=False)
    | st.text(), lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12)
documents = st.dictionaries(st.sampled_from(["messages", "archived_messages", "session_id", "metadata", "é", ""]),
                            st.lists(values, max_size=5) | values, max_size=6)


@settings(max_examples=300, deadline=None)
@given(documents, st.sampled_from([1, 2, 7, 31, 4096]), st.sampled_from([None, 2, 0]))
def test_any_document_reads_back_the_same_and_encodes_as_json_dumps(doc, chunk, indent):
    data = json.dumps(doc, indent=indent, ensure_ascii=indent == 0).encode("utf-8")
    assert same(streamed(data, chunk), json.loads(data))
    encoded = b"".join(object_chunks(iter(doc.items())))
    assert encoded == json.dumps(doc, indent=2, ensure_ascii=False).encode("utf-8")
    streamed_pairs = b"".join(object_chunks((k, iter(v)) if isinstance(v, list) else (k, v) for k, v in doc.items()))
    assert streamed_pairs == encoded


@settings(max_examples=200, deadline=None)
@given(documents, st.integers(min_value=0, max_value=400))
def test_a_torn_document_is_refused_never_read_short(doc, cut):
    data = json.dumps(doc, indent=2).encode("utf-8")
    torn = data[:min(cut, len(data) - 1)]
    assert outcome(torn, 3) == "refused"


def test_a_number_cut_by_the_window_is_not_read_short():
    data = b'{"messages":[1.5e+300, 123456789, -0.25]}'
    for chunk in range(1, len(data) + 1):
        assert streamed(data, chunk) == {"messages": [1.5e300, 123456789, -0.25]}, chunk


def test_nan_reads_as_json_loads_reads_it():
    got = streamed(b'{"messages":[NaN]}', 2)["messages"][0]
    assert math.isnan(got)


def test_two_readers_share_a_descriptor():
    with tempfile.TemporaryFile() as handle:
        handle.write(json.dumps({"messages": list(range(1000)), "x": 1}).encode())
        handle.flush()
        first = members(handle.fileno(), LISTS, chunk=16)
        second = members(handle.fileno(), LISTS, chunk=7)
        a, b = next(first)[1], next(second)[1]
        assert list(zip(a, b)) == [(i, i) for i in range(1000)]
        assert next(first) == next(second) == ("x", 1)


def test_the_huge_session_size_is_megabytes():
    from praisonmem.core.layout import HUGE_SESSION

    assert HUGE_SESSION >= 1 << 20 and os.path.exists(jsonstream.__file__)
