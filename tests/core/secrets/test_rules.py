"""The secret rules: each kind found in its shapes, the look-alikes of ordinary transcripts not."""

from __future__ import annotations

import pytest

from functools import partial

from praisonmem.core import secrets
from praisonmem.core.secrets import find, mask
from praisonmem.core.sessions import is_encrypted
from tests.secretcorpus import KINDS, secrets_for

hits, redacted = (partial(walk, opaque=is_encrypted) for walk in (secrets.hits, secrets.redacted))  # as the stores call


def kinds(text: str, level: str = "standard") -> list[tuple[str, str]]:
    return [(m.kind, text[m.start:m.end]) for m in find(text, level)]


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_is_found_alone_and_only_its_secret_is_claimed(kind):
    text, secret = secrets_for("unit")[kind]
    assert kinds(text) == [(kind, secret)]


@pytest.mark.parametrize("text", [
    "session 531bcd72-9714-4bca-8431-340003ceed28 at 2026-11-30T14:49:49.514431+00:00",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b and sha256 "
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "use scikit-learn (sk-learn) and the task-force; ask-me-anything",
    "api_key=<your-api-key> password: ******** token = ${GITHUB_TOKEN} secret: changeme",
    "the token count was 1234 tokens; max_tokens = 4096; prompt_tokens: 12",
    "call me at 12:30, version 1.7.17, build +1.5, room 42-17, 2026-11-30",
    "see https://example.com/path/to/page and http://localhost:8080/api",
    "history_fea3173a, history_8fe938c0 and a base path /home/user/.praisonai/sessions/my_chat.json",
    "praisonai:enc:v1:gAAAAABrDUkgCrirZ6Jrf2KxhS8n4-_5wI7qsN0hsZZw-QAxRo7r_BD_24ujH1A-kiMB7FWkpGj3yJO0YW9Y6Yvi",
])
def test_ordinary_text_has_no_secret_at_either_level(text):
    assert kinds(text, "standard") == []
    if "enc:v1:" not in text:
        assert kinds(text, "strict") == []
    assert list(hits({"messages": [{"content": text}]}, "strict")) == []  # encrypted values are opaque


def test_strict_adds_national_phone_numbers_and_random_tokens():
    text = "ring (415) 555-0134 or 415-555-0134; blob Qm9vZ3lLb2RlWDEyMzQ1Njc4OTBhYmNkZWZnaGlqa2xtbm9w"
    assert kinds(text) == []
    assert [k for k, _ in kinds(text, "strict")] == ["phone", "phone", "high_entropy_string"]


def test_an_international_phone_number_needs_8_to_15_digits():
    """Shorter is an extension or a code (+1 555 123), longer is not a number E.164 allows."""
    assert kinds("ring +1 555 1234 now") == [("phone", "+1 555 1234")]  # 8 digits: the least
    assert kinds("ring +1 555 123 now") == []  # 7
    assert kinds("ring +351 912 345 678 901 now") == [("phone", "+351 912 345 678 901")]  # 15: the most
    assert kinds("ring +351 912 345 678 9012 now") == []  # 16


def test_a_secret_named_key_makes_its_value_a_secret():
    doc = {"metadata": {"password": "hunter2!", "db_password": "letmein42", "tokens": "not a secret",
                        "api_key": "<your key>"}}
    assert [(h.path, h.kind) for h in hits(doc)] == [("metadata.password", "generic_secret"),
                                                      ("metadata.db_password", "generic_secret")]


def test_redaction_replaces_each_secret_and_keeps_everything_else():
    text, secret = secrets_for("unit")["url_password"]
    enc = "praisonai:enc:v1:gAAAAABrDUkgCrirZ6Jrf2KxhS8n4-_5wI7qsN0hsZZw"
    doc = {"b": 1, "a": [text, {"content": enc}], "metadata": {"password": "hunter2!"}}
    clean, count = redacted(doc)
    assert count == 2 and list(clean) == ["b", "a", "metadata"]
    assert clean["a"][0] == text.replace(secret, "[REDACTED:url_password]")
    assert clean["a"][1] == {"content": enc} and clean["metadata"] == {"password": "[REDACTED:generic_secret]"}
    assert doc["metadata"]["password"] == "hunter2!"  # the input is not changed
    assert redacted(clean) == (clean, 0)  # a redacted document has nothing left to redact


def test_a_mask_shows_at_most_a_quarter_and_never_more_than_four_characters():
    assert mask("sk-proj-abcdefghijklmnop") == "sk-p…(24 chars)"
    assert mask("hunter2!") == "hu…(8 chars)"
    assert mask("abc") == "…(3 chars)"


def test_an_excerpt_masks_every_secret_in_its_window():
    first, second = secrets_for("unit")["github_token"][1], secrets_for("unit")["stripe_key"][1]
    [one, two] = hits(f"{first} {second}")
    assert one.excerpt == f"[github_token: {mask(first)}] [stripe_key: {mask(second)}]"
    assert two.excerpt == one.excerpt
