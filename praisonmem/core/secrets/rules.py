"""The secret rules: what ``check --secrets``, ``session scan``, ``export --redact`` and ``session redact`` find.

Each rule is a regular expression named after the kind of secret it finds, taken from the well-known
scanners (gitleaks' ``config/gitleaks.toml``, trufflehog's detectors, Yelp's detect-secrets plugins),
narrowed where they are looser than needed for chat transcripts. Two levels:

* ``standard``: vendor keys with a fixed shape (OpenAI, Anthropic, Google, AWS, GitHub, Slack, Stripe),
  JWTs, PEM private-key blocks, passwords in URLs, e-mail addresses, phone numbers written
  internationally (``+`` and a country code), and a value assigned to a secret-looking name
  (``api_key=…``, ``"password": "…"``) whose text looks random enough (Shannon entropy, as
  detect-secrets' keyword plugin gates it);
* ``strict``: all of that, plus national phone numbers (``(555) 123-4567``) and any long token that is
  random enough on its own (detect-secrets' high-entropy string plugin: base64 alphabet, 4.5 bits a
  character over at least 32 characters; hex is left out: ids and digests are hex).

A match's secret is the whole match, except where a rule names a ``secret`` group (the password of a
URL, the value of an assignment): only that part is reported masked and redacted.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from praisonmem.core.secrets.levels import Level


@dataclass(frozen=True)
class Rule:
    kind: str  # what ``[REDACTED:<kind>]`` and a finding name
    pattern: re.Pattern[str]
    level: Level = Level.standard
    accept: Callable[[str], bool] | None = None  # a further test of the secret text (entropy, digit count)
    source: str = ""  # where the pattern comes from, for the documentation


@dataclass(frozen=True)
class Match:
    kind: str
    start: int
    end: int


def entropy(text: str) -> float:
    """Shannon entropy in bits per character (detect-secrets' measure)."""
    if not text:
        return 0.0
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _random(minimum: float) -> Callable[[str], bool]:
    return lambda text: entropy(text) >= minimum and any(c.isdigit() for c in text) and any(c.isalpha() for c in text)


def _phone(text: str) -> bool:
    digits = sum(c.isdigit() for c in text)
    return 8 <= digits <= 15  # E.164 allows at most 15 digits


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def _random_token(text: str) -> bool:
    if _UUID.fullmatch(text) or re.fullmatch(r"[0-9a-fA-F_-]+", text):
        return False  # ids and digests
    return _random(4.5)(text)


def _placeholder(text: str) -> bool:
    """A value that is a placeholder, not a secret (``<your-key>``, ``${API_KEY}``, ``xxxx``, ``****``)."""
    lowered = text.lower()
    return (len(set(lowered)) <= 2 or lowered.startswith(("<", "${", "{{", "%(", "$")) or "redacted" in lowered
            or lowered in {"none", "null", "true", "false", "password", "changeme", "example", "secret", "token"})


def _assigned(text: str) -> bool:
    return not _placeholder(text) and _random(3.0)(text)


def _password(text: str) -> bool:
    return not _placeholder(text)


_B = r"(?<![A-Za-z0-9_-])"  # not inside a longer token
_E = r"(?![A-Za-z0-9_-])"

RULES: tuple[Rule, ...] = (
    Rule("private_key", re.compile(r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
                                   r"(?:[\s\S]{0,16384}?-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
                                   r"|(?:\s*[A-Za-z0-9+/=:,-]+)+)"),
         source="gitleaks private-key"),
    Rule("anthropic_api_key", re.compile(_B + r"sk-ant-(?:api|admin|sid)\d{2}-[A-Za-z0-9_-]{32,}" + _E),
         source="gitleaks anthropic-api-key / anthropic-admin-api-key"),
    Rule("openai_api_key", re.compile(_B + r"sk-(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_-]{32,}" + _E),
         accept=lambda t: not t.startswith("sk-ant-"), source="gitleaks openai-api-key, trufflehog openai"),
    Rule("google_api_key", re.compile(_B + r"AIza[0-9A-Za-z_-]{35}" + _E), source="gitleaks gcp-api-key"),
    Rule("aws_access_key_id", re.compile(r"(?<![A-Z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}(?![A-Z0-9])"),
         source="gitleaks aws-access-token"),
    Rule("github_token", re.compile(_B + r"(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{82})" + _E),
         source="gitleaks github-pat / github-fine-grained-pat / github-oauth / github-app-token"),
    Rule("slack_token", re.compile(_B + r"xox(?:[abposr]|e\.[a-z]+)-(?:[0-9]+-)*[A-Za-z0-9-]{10,}" + _E),
         accept=lambda t: sum(c.isdigit() for c in t) >= 8, source="gitleaks slack-*-token"),
    Rule("slack_webhook", re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}"),
         source="gitleaks slack-webhook-url"),
    Rule("stripe_key", re.compile(_B + r"(?:sk|rk|pk)_(?:live|test|prod)_[A-Za-z0-9]{16,247}" + _E),
         source="gitleaks stripe-access-token"),
    Rule("jwt", re.compile(_B + r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}={0,2}" + _E),
         source="gitleaks jwt, detect-secrets JwtTokenDetector"),
    Rule("url_password", re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@\"'<>]{1,64}:"
                                    r"(?P<secret>[^\s@/\"'<>]{1,128})@"),
         accept=_password, source="detect-secrets BasicAuthDetector, gitleaks generic url credentials"),
    Rule("generic_secret", re.compile(
        r"(?i)\b(?:api[_-]?key|apikey|secret(?:[_-]?key)?|client[_-]?secret|access[_-]?key(?:[_-]?id)?|"
        r"auth[_-]?token|access[_-]?token|bearer|token|passw(?:or)?d|pwd|private[_-]?key)\b[\"']?"
        r"(?:\s*(?::|=|:=|=>)\s*|\s+)[\"']?(?P<secret>[A-Za-z0-9/+_.=~!@#$%^&*-]{8,256})"),
        accept=_assigned, source="detect-secrets KeywordDetector, gitleaks generic-api-key (entropy >= 3.0)"),
    Rule("email", re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@(?:[A-Za-z0-9-]{1,63}\.)+"
                             r"[A-Za-z]{2,24}(?![A-Za-z0-9-])"), source="RFC 5322 addr-spec, simplified"),
    Rule("phone", re.compile(r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?)(?:[ .-]?\d{2,5}){1,4}(?![\w-])"),
         accept=_phone, source="E.164 with separators (+ and a country code)"),
    Rule("phone", re.compile(r"(?<![\w+-])(?:\(\d{3}\)\s?|\d{3}[.-])\d{3}[.-]\d{4}(?![\w-])"), level=Level.strict,
         accept=_phone, source="NANP national format"),
    Rule("high_entropy_string", re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{32,}={0,2}(?![A-Za-z0-9+/=_-])"),
         level=Level.strict, accept=_random_token, source="detect-secrets Base64HighEntropyString (limit 4.5)"),
)

# Names in metadata or tool arguments whose string value is a secret whatever it looks like.
SECRET_NAME = re.compile(r"(?i)(?:^|[_-])(?:api[_-]?key|apikey|secret|client[_-]?secret|password|passwd|pwd|"
                         r"access[_-]?token|auth[_-]?token|refresh[_-]?token|bearer|private[_-]?key|token)$")


def level_of(value: Level | str) -> Level:
    """``--level`` / ``--redact``'s value; anything else is a usage error."""
    try:
        return Level(value)
    except ValueError:
        from praisonmem.core.errors import UsageError

        raise UsageError(f"the secret rules are standard or strict, got '{value}'") from None


def rules_for(level: Level | str) -> tuple[Rule, ...]:
    level = level_of(level)
    return tuple(r for r in RULES if level is Level.strict or r.level is Level.standard)


def find(text: str, level: Level | str = Level.standard) -> list[Match]:
    """The secrets in ``text``, in order, never overlapping (where two rules claim the same text, the one
    listed first in :data:`RULES` wins: the specific vendor shapes before the generic ones)."""
    if len(text) < 6:
        return []
    found: list[Match] = []
    taken: list[tuple[int, int]] = []
    for rule in rules_for(level):
        for m in rule.pattern.finditer(text):
            start, end = m.span("secret") if "secret" in rule.pattern.groupindex else m.span()
            secret = text[start:end]
            if rule.accept is not None and not rule.accept(secret):
                continue
            if any(start < e and s < end for s, e in taken):
                continue
            taken.append((start, end))
            found.append(Match(rule.kind, start, end))
    found.sort(key=lambda m: m.start)
    return found


def redact(text: str, matches: list[Match], replace: Callable[[Match], str] | None = None) -> str:
    """``text`` with each match replaced by ``[REDACTED:<kind>]`` (or what ``replace`` makes of it)."""
    out, last = [], 0
    for m in matches:
        out += [text[last:m.start], replace(m) if replace else f"[REDACTED:{m.kind}]"]
        last = m.end
    out.append(text[last:])
    return "".join(out)


def mask(secret: str) -> str:
    """How a finding shows a secret: its first characters (never more than a quarter of it) and its length."""
    shown = secret[: min(4, len(secret) // 4)]
    return f"{shown}…({len(secret)} chars)"
