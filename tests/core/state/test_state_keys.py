"""The state store's key names and values (no library needed): kinds, the wrapped-value rule, the prefix as a
literal (its glob characters escaped), export records round-tripping byte for byte."""

from __future__ import annotations

import pytest

from praisonmem.core.state.model import Kind, Unreadable, decode_hash, decode_string, kind_of
from praisonmem.core.state.redis import Raw, decode_record, encode_record


@pytest.mark.parametrize("name,kind", [("run:s:r", Kind.run), ("trace:t", Kind.trace), ("span:x", Kind.span),
                                       ("agent:s", Kind.agent), ("learn:persona", Kind.learn),
                                       ("runner", Kind.other), ("run", Kind.other), ("migrations:current",
                                                                                     Kind.other)])
def test_kinds(name, kind):
    assert kind_of(name) is kind


def test_values_decode_as_the_library_reads_them():
    assert decode_string(b'{"value": [1], "__wrapped__": true}') == [1]
    assert decode_string(b'{"value": 1, "other": 2}') == {"value": 1, "other": 2}  # no marker: a dict as it is
    assert decode_string(b"7") == 7 and decode_string(b"") is None
    assert decode_hash({b"a": b'{"x": 1}', b"b": b"plain", b"c": b"41"}) == {"a": {"x": 1}, "b": "plain", "c": 41}
    with pytest.raises(Unreadable, match="not the JSON"):
        decode_string(b"{x")
    with pytest.raises(Unreadable, match="not UTF-8"):
        decode_string(b"\xff")


@pytest.mark.parametrize("raw", [Raw(b"p:s", "string", -1, b"caf\xc3\xa9"), Raw(b"p:b", "string", 5000, b"\xff\x00"),
                                 Raw(b"p:h", "hash", -1, {b"f": b"v", b"\xfe": b"w"}),
                                 Raw(b"p:l", "list", 10, [b"b", b"a", b"a"]), Raw(b"p:z", "zset", -1, [(b"m", 2.5)])])
def test_export_records_round_trip_byte_for_byte(raw):
    record = encode_record(raw, 1_000_000)
    back = decode_record(record)
    assert (back["raw_key"], back["type"], back["raw_value"]) == (raw.key, raw.type, raw.value)
    assert back["expires_at"] == (None if raw.pttl < 0 else 1_000_000 + raw.pttl)


def test_a_prefix_is_matched_literally(redis_db):
    from praisonmem.core.state import list_keys

    for key in (b"te[am]*:run:s:r", b"team:run:s:r", b"tex:run:s:r"):
        redis_db.command("SET", key, b'{"status": "ok"}')
    assert [k.key for k in list_keys(redis_db.url(), prefix="te[am]*:")] == ["te[am]*:run:s:r"]
