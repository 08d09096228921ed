"""orjson is used only where it gives exactly the standard library's values and bytes."""

from __future__ import annotations

import json
import math
import struct

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from praisonmem.core.errors import CorruptFile
from praisonmem.core.io import fastjson, jsonfile
from tests.conftest import FIXTURES, REPO


def stdlib_bytes(doc) -> bytes:
    return json.dumps(doc, indent=2, ensure_ascii=False).encode("utf-8")


def same_value(a, b) -> bool:
    """Equal, with the same types all the way down (1 is not 1.0, -0.0 is not 0.0, NaN is NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_value(a[k], b[k]) for k in a)
    return a == b


floats = st.floats(allow_nan=True, allow_infinity=True)
scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), floats,
                    st.text(), st.sampled_from([1e-5, -1e-7, 1e-4, 9.99e-5, 1e16, 1e22, 0.0, -0.0, 2**63, 2**64,
                                                -(2**63) - 1, "\u2028", "\x7f", "\ud800", "é\x00\x1f\"\\/"]))
documents = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                           st.dictionaries(st.text(max_size=5), inner, max_size=4)),
                         max_leaves=25)


@settings(max_examples=600, deadline=None)
@given(documents)
def test_the_fast_encoder_is_used_only_when_its_bytes_are_the_standard_librarys(doc):
    fast = fastjson.dumps_indented(doc)
    try:
        expected = stdlib_bytes(doc)
    except UnicodeEncodeError:  # a lone surrogate: the standard library's text cannot be UTF-8
        assert fast is None
        return
    assert fast is None or fast == expected
    if fastjson.plain(doc):
        assert fast == expected  # and it is used whenever the walk says it may be


@settings(max_examples=600, deadline=None)
@given(documents, st.sampled_from([None, 2]))
def test_the_fast_decoder_gives_the_standard_librarys_values_or_declines(doc, indent):
    try:
        raw = json.dumps(doc, indent=indent, ensure_ascii=indent is None).encode("utf-8")
    except UnicodeEncodeError:
        return
    fast = fastjson.loads(raw)
    expected = json.loads(raw.decode("utf-8"))
    assert fast is fastjson.REFUSED or same_value(fast, expected)
    assert same_value(jsonfile.parse(raw, "x.json"), expected)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=40) | st.text(alphabet='[]{}":, \t\n\r\x0c0123456789.eE+-truefalsnul\\u\x00é',
                                        max_size=30).map(lambda t: t.encode("utf-8")))
def test_arbitrary_bytes_parse_exactly_as_the_standard_library_or_fail_with_its_message(raw):
    try:
        expected = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        expected = None
        with pytest.raises(CorruptFile) as ours:
            jsonfile.parse(raw, "x.json")
        assert fastjson.loads(raw) is fastjson.REFUSED
        assert ours.value.reason.startswith(("not valid UTF-8", "invalid JSON", "JSON nested"))
    if expected is not None or raw == b"null" or raw.strip() == b"null":
        assert same_value(jsonfile.parse(raw, "x.json"), expected)


@pytest.mark.parametrize("text", ["18446744073709551616", "-9223372036854775809", "[123456789012345678901234567890]",
                                  '{"a": 1e400}', "NaN", "[Infinity, -Infinity]", '"\\ud800"', "[" * 1010 + "]" * 1010])
def test_inputs_orjson_reads_differently_or_not_at_all_go_to_the_standard_library(text):
    raw = text.encode()
    assert fastjson.loads(raw) is fastjson.REFUSED
    assert fastjson.loads_proven(raw) is fastjson.REFUSED or not text.startswith("[[")
    try:
        expected = json.loads(text)
    except RecursionError:  # deeper than the standard library goes: refused as before
        with pytest.raises(CorruptFile, match="nested too deeply"):
            jsonfile.parse(raw, "x.json")
        return
    assert same_value(jsonfile.parse(raw, "x.json"), expected)


@pytest.mark.parametrize("depth", [300, 499])
def test_nesting_both_decoders_read_is_read_by_orjson(depth):
    raw = b"[" * depth + b"]" * depth
    doc = fastjson.loads(raw)
    assert doc == json.loads(raw) and doc is not fastjson.REFUSED


@settings(max_examples=2000, deadline=None)
@given(floats)
def test_floats_are_written_alike_exactly_when_the_walk_says_so(value):
    alike = json.dumps(value).encode() == orjson.dumps(value)
    if fastjson.plain([value]):
        assert alike
    if math.isfinite(value) and value != 0 and abs(value) < fastjson.SMALL:  # declined by the walk and the proof
        assert not fastjson.plain([value])
        assert fastjson.proven_members(orjson.dumps([[value]], option=orjson.OPT_INDENT_2), [[value]]) == frozenset()


@settings(max_examples=2000, deadline=None)
@given(st.floats(min_value=5e-324, max_value=fastjson.SMALL, exclude_max=True) | st.floats(
    max_value=-5e-324, min_value=-fastjson.SMALL, exclude_min=True))
def test_orjson_marks_every_small_float_the_way_the_proof_looks_for(value):
    out = orjson.dumps(value)
    assert b"0.0000" in out or fastjson._exponent_minus(out)


def test_every_code_point_is_escaped_alike():
    text = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    assert orjson.dumps([text, {text: text}], option=orjson.OPT_INDENT_2) == stdlib_bytes([text, {text: text}])


@pytest.mark.parametrize("doc", [[], {}, [[]], [{}], {"a": []}, {"a": {}}, [1, [2, [3, {}]]],
                                 {"": {"x": [None, True, False, 0, -1, 1.5]}}, "s", 7, None, [[], {}]])
def test_layouts_are_alike(doc):
    assert fastjson.dumps_indented(doc) == stdlib_bytes(doc)


FIXTURE_FILES = sorted(p for p in FIXTURES.rglob("*.json") if p.is_file()) + sorted((REPO / "examples").rglob("*.json"))


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_fixture_file_reads_and_writes_as_with_the_standard_library(path):
    raw = path.read_bytes()
    try:
        expected = json.loads(raw.decode("utf-8"))
    except ValueError:
        with pytest.raises(CorruptFile):
            jsonfile.parse(raw, path)
        return
    doc = jsonfile.parse(raw, path)
    assert same_value(doc, expected)
    compact = jsonfile.is_compact_document(expected)
    want = (json.dumps(expected, ensure_ascii=False, separators=(",", ":")) if compact
            else json.dumps(expected, indent=2, ensure_ascii=False)).encode("utf-8")
    assert jsonfile.serialise(doc) == want
    doc2, proven = jsonfile.parse_proven(raw, path)
    assert same_value(doc2, expected)
    if proven:
        assert raw == want  # a proof is only ever given for the standard library's own bytes
        assert jsonfile.serialise(doc, known=proven) == want


@settings(max_examples=300, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["id", "content", "importance", "meta"]), scalars, max_size=4),
                max_size=6), st.lists(documents, max_size=2), st.randoms(use_true_random=False))
def test_a_proven_list_reordered_and_extended_is_written_as_the_standard_library_writes_it(items, extra, rnd):
    try:
        raw = stdlib_bytes(items)
    except UnicodeEncodeError:
        return
    doc, known = jsonfile.parse_proven(raw, "x.json")
    assert same_value(doc, json.loads(raw.decode()))
    if known:
        assert raw == orjson.dumps(doc, option=orjson.OPT_INDENT_2)
    changed = list(doc)
    rnd.shuffle(changed)
    changed = changed[: max(len(changed) - 1, 0)] + extra  # new, unchecked members are walked
    try:
        expected = stdlib_bytes(changed)
    except UnicodeEncodeError:
        return
    assert jsonfile.serialise(changed, known=known) == expected
