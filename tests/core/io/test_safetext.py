"""json_safe: the characters JSON leaves raw become ``\\u`` escapes; anything else is left exactly as it is."""

from __future__ import annotations

import json

from hypothesis import given, strategies as st

from praisonmem.core.io.safetext import json_safe

SPECIAL = [chr(c) for c in range(0x7F, 0xA0)] + ["\u202a", "\u202e", "\u2066", "\u2069", "\u2028", "\u2029",
                                                 "\ud800", "\udfff"]


def reference(text: str) -> str:
    """The rule, one character at a time."""
    return "".join(f"\\u{ord(c):04x}" if c in SPECIAL else c for c in text)


def test_ascii_text_is_returned_as_it_is_except_del():
    ascii_text = "".join(chr(c) for c in range(0x7F))
    assert json_safe(ascii_text) is ascii_text
    assert json_safe('{"a": "x\x7fy"}') == '{"a": "x\\u007fy"}'
    assert json_safe("\x7f") == "\\u007f"


def test_each_special_character_is_escaped_and_decodes_to_itself():
    for char in SPECIAL:
        text = json.dumps({"k": f"a{char}b"}, ensure_ascii=False)
        assert json_safe(text) == text.replace(char, f"\\u{ord(char):04x}")
        assert json.loads(json_safe(text)) == {"k": f"a{char}b"}


@given(st.text(alphabet=st.sampled_from(SPECIAL + ["a", "é", "\x00", "\x7e", "\u2027", "\u202f", "😀"])))
def test_json_safe_is_the_rule(text):
    assert json_safe(text) == reference(text)
