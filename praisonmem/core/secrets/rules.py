"""The secret rules: what ``check --secrets``, ``session scan``, ``export --redact`` and ``session redact`` find.

Each rule is a regular expression named after the kind of secret it finds, taken from the well-known
scanners (gitleaks' ``config/gitleaks.toml``, trufflehog's detectors, Yelp's detect-secrets plugins),
narrowed where they are looser than needed for chat transcripts. Two levels:

* ``standard``: vendor keys with a fixed shape (OpenAI, Anthropic, Google, AWS, GitHub, GitLab, Hugging Face,
  npm, Slack, Stripe secret keys, SendGrid, Twilio, Azure storage), JWTs, PEM private-key blocks, passwords in
  URLs, passwords assigned to a password name (``DB_PASSWORD=…``) or said in prose ("my password is …"),
  payment card numbers (issuer prefix and length, Luhn) and IBANs (country length, mod 97), e-mail
  addresses, phone numbers written internationally (``+`` and a country code), and a value assigned to a
  secret-looking name (``api_key=…``, ``AWS_SECRET_ACCESS_KEY=…``, ``"token": "…"``) whose text looks random
  enough (Shannon entropy, as detect-secrets' keyword plugin gates it);
* ``strict``: all of that, plus national phone numbers (``(555) 123-4567``) and any long token that is
  random enough on its own (detect-secrets' high-entropy string plugin: base64 alphabet, 4.5 bits a
  character over at least 32 characters; hex is left out: ids and digests are hex).

A match's secret is the whole match, except where a rule names a ``secret`` group (the password of a
URL, the value of an assignment): only that part is reported masked and redacted.

Every rule is linear in the text: each starts only where its run of characters starts (a lookbehind), and
no part of a pattern can match the same characters two ways. :func:`find` tests overlaps between matches in
the matches' own length, and skips a rule none of whose ``needles`` is in the text.
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
    not_after: re.Pattern[str] | None = None  # what the text just before must not end with (``base64,``)
    source: str = ""  # where the pattern comes from, for the documentation
    needles: tuple[str, ...] = ()  # lower case; the rule can match only where one of them is in the text


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
    if text.startswith(("pk_live_", "pk_test_", "sha1-", "sha256-", "sha384-", "sha512-")):
        return False  # a publishable (public) Stripe key; a subresource integrity digest
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


_B = r"(?<![A-Za-z0-9_-])"  # not inside a longer token: every rule starts only where its run of characters does,
_E = r"(?![A-Za-z0-9_-])"  # which keeps each one linear in the text (no start inside a run it would re-scan)

_PEM = r"-----{}[ A-Z0-9]{{0,40}}PRIVATE KEY(?: BLOCK)?-----"
# A key's body (base64, the "Proc-Type:"/"DEK-Info:" headers, "\n" as written in code) up to the next "-----":
# one character a step, so a run of headers without an END costs each header its own length, not 16 KB.
_PEM_BODY = r"(?:[A-Za-z0-9+/=:,.\s\\]|-(?!----)){0,16384}"
# Words that follow "password is" in prose without being one.
_NOT_PASSWORDS = frozenset({
    "correct", "incorrect", "wrong", "required", "invalid", "expired", "empty", "missing", "reset", "changed",
    "set", "not", "too", "weak", "strong", "valid", "case-sensitive", "saved", "stored", "hashed", "encrypted",
    "protected", "needed", "optional", "blank", "long", "short", "different", "same", "secure", "insecure"})


def _prose_password(text: str) -> bool:
    """A password named in prose ("my password is …"): not a word of the sentence, so a digit, a symbol or
    a capital inside it."""
    lowered = text.lower()
    if _placeholder(text) or lowered in _NOT_PASSWORDS or len(text) < 4:
        return False
    return any(c.isdigit() for c in text) or any(not c.isalnum() for c in text) or any(c.isupper() for c in text[1:])


def _assigned_password(text: str) -> bool:
    """A value assigned to a password name (``DB_PASSWORD=…``): passwords are chosen, not random, so the
    keyword detector's entropy gate is lowered to what a real one clears."""
    return len(text) >= 6 and not _placeholder(text) and entropy(text) >= 2.0 and not text.isdigit()


def _luhn(digits: str) -> bool:
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


# Issuer prefixes (IIN ranges) and the lengths each network issues: a Luhn-valid number of another length or
# prefix (an IMEI, an order id, a millisecond timestamp) is not a card.
_CARDS: tuple[tuple[tuple[int, int], tuple[int, ...]], ...] = (
    ((4, 4), (13, 16, 19)),  # Visa
    ((51, 55), (16,)), ((2221, 2720), (16,)),  # Mastercard
    ((34, 34), (15,)), ((37, 37), (15,)),  # American Express
    ((6011, 6011), (16, 17, 18, 19)), ((644, 649), (16, 17, 18, 19)), ((65, 65), (16, 17, 18, 19)),  # Discover
    ((3528, 3589), (16, 17, 18, 19)),  # JCB
    ((300, 305), (14, 15, 16, 17, 18, 19)), ((36, 36), (14, 15, 16, 17, 18, 19)),
    ((38, 39), (16, 17, 18, 19)),  # Diners Club
    ((62, 62), (16, 17, 18, 19)),  # UnionPay
    ((50, 50), (12, 13, 14, 15, 16, 17, 18, 19)), ((56, 58), (12, 13, 14, 15, 16, 17, 18, 19)),  # Maestro
)


# The test numbers the card networks and payment providers publish (Visa's 4111…, Stripe's 4242…): public like
# Stripe's pk_test_ keys, and all over documentation and sample chats.
_TEST_CARDS = frozenset({
    "4111111111111111", "4242424242424242", "4012888888881881", "4000056655665556", "4222222222222",
    "5555555555554444", "5105105105105100", "2223003122003222", "5200828282828210", "378282246310005",
    "371449635398431", "378734493671000", "6011111111111117", "6011000990139424", "3056930009020004",
    "36227206271667", "3566002020360505", "6200000000000005", "30569309025904", "38520000023237"})


def _card(text: str) -> bool:
    """A payment card number: a known issuer's prefix and length, the Luhn check, and separators (if any)
    where cards print them (4-4-4-4, 4-6-5); not a published test number."""
    digits = "".join(c for c in text if c.isdigit())
    if len(set(digits)) < 2 or digits in _TEST_CARDS or not _luhn(digits):
        return False
    if not any(lo <= int(digits[:len(str(lo))]) <= hi and len(digits) in lengths
               for (lo, hi), lengths in _CARDS):
        return False
    separators = {c for c in text if not c.isdigit()}
    if not separators:
        return True
    if len(separators) > 1:
        return False
    groups = [len(g) for g in text.split(separators.pop())]
    return groups[:3] in ([4, 4, 4], [4, 6, 5], [4, 6, 4]) and all(n <= 4 for n in groups[3:])


# IBAN lengths by country (ISO 13616 registry).
_IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29, "BY": 28,
    "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18,
    "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22,
    "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20,
    "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18,
    "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24, "SC": 31, "SE": 24,
    "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24,
    "XK": 20}


def _iban(text: str) -> bool:
    """An IBAN: its country's length and the ISO 7064 mod-97 check."""
    compact = text.replace(" ", "")
    if _IBAN_LENGTHS.get(compact[:2]) != len(compact):
        return False
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


# What a long base64 token right after is not a secret: an inline image, a subresource integrity digest, an SSH
# public key.
_ENCODED_DATA = re.compile(r"(?:base64,|sha(?:1|256|384|512)-|(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d+) )\Z")

RULES: tuple[Rule, ...] = (
    Rule("private_key", re.compile(_PEM.format("BEGIN") + _PEM_BODY + f"(?:{_PEM.format('END')})?"),
         needles=("private key",), source="gitleaks private-key"),
    Rule("anthropic_api_key", re.compile(_B + r"sk-ant-(?:api|admin|sid)\d{2}-[A-Za-z0-9_-]{32,}" + _E),
         needles=("sk-ant-",), source="gitleaks anthropic-api-key / anthropic-admin-api-key"),
    Rule("openai_api_key", re.compile(_B + r"sk-(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_-]{32,}" + _E),
         accept=lambda t: not t.startswith("sk-ant-"), needles=("sk-",), source="gitleaks openai-api-key, trufflehog openai"),
    Rule("google_api_key", re.compile(_B + r"AIza[0-9A-Za-z_-]{35}" + _E), needles=("aiza",), source="gitleaks gcp-api-key"),
    Rule("aws_access_key_id", re.compile(r"(?<![A-Z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}(?![A-Z0-9])"),
         needles=("akia", "asia", "abia", "acca", "a3t"), source="gitleaks aws-access-token"),
    Rule("github_token", re.compile(_B + r"(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{82})" + _E),
         needles=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), source="gitleaks github-pat / github-fine-grained-pat / github-oauth / github-app-token"),
    Rule("gitlab_token", re.compile(_B + r"gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent)-[A-Za-z0-9_-]{20,}"
                                    r"(?:\.[A-Za-z0-9_-]+)*" + _E),
         needles=("gl",), source="gitleaks gitlab-pat / gitlab-deploy-token / gitlab-runner-token / …"),
    Rule("huggingface_token", re.compile(_B + r"(?:hf_|api_org_)[A-Za-z]{34}" + _E), needles=("hf_", "api_org_"),
         source="gitleaks huggingface-access-token / huggingface-organization-api-token"),
    Rule("npm_token", re.compile(_B + r"npm_[A-Za-z0-9]{36}" + _E), needles=("npm_",), source="gitleaks npm-access-token"),
    Rule("slack_token", re.compile(_B + r"xox(?:[abposr]|e\.[a-z]+)-[A-Za-z0-9-]{10,}" + _E),
         accept=lambda t: sum(c.isdigit() for c in t) >= 8, needles=("xox",), source="gitleaks slack-*-token"),
    Rule("slack_webhook", re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}"),
         needles=("hooks.slack.com",), source="gitleaks slack-webhook-url"),
    Rule("stripe_key", re.compile(_B + r"(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,247}" + _E),
         needles=("sk_", "rk_"), source="gitleaks stripe-access-token (publishable pk_ keys are public)"),
    Rule("sendgrid_api_key", re.compile(_B + r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _E),
         needles=("sg.",), source="gitleaks sendgrid-api-token"),
    Rule("twilio_api_key", re.compile(_B + r"SK[0-9a-fA-F]{32}" + _E), needles=("sk",), source="gitleaks twilio-api-key"),
    Rule("azure_storage_key", re.compile(r"(?i:AccountKey)\s*=\s*(?P<secret>[A-Za-z0-9+/]{86}==)"),
         needles=("accountkey",), source="trufflehog azure storage (a connection string's AccountKey)"),
    Rule("jwt", re.compile(_B + r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}={0,2}" + _E),
         needles=("eyj",), source="gitleaks jwt, detect-secrets JwtTokenDetector"),
    Rule("url_password", re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@\"'<>]{1,64}:"
                                    r"(?P<secret>[^\s@/\"'<>]{1,128})@"),
         accept=_password, needles=("://",), source="detect-secrets BasicAuthDetector, gitleaks generic url credentials"),
    # A name ends where letters and digits do, so DB_PASSWORD, AWS_SECRET_ACCESS_KEY and _authToken are names too
    # (a '\b' before the keyword never matched after '_').
    Rule("password", re.compile(
        r"(?i)(?<![A-Za-z0-9])(?-i:[A-Z0-9]*)(?:passw(?:or)?d|pwd|passphrase)(?![A-Za-z0-9])[\"']?\s*(?::|=|:=|=>)\s*[\"']?"
        r"(?P<secret>[^\s\"'<>,;]{6,128})"),
        accept=_assigned_password, needles=("pass", "pwd"), source="detect-secrets KeywordDetector (password names, entropy >= 2.0)"),
    Rule("generic_secret", re.compile(
        r"(?i)(?<![A-Za-z0-9])(?:api[_-]?(?:key|secret)|apikey|secret(?:[_-]?(?:access[_-]?)?key)?|client[_-]?secret|"
        r"access[_-]?key(?:[_-]?id)?|auth[_-]?token|access[_-]?token|refresh[_-]?token|secret[_-]?token|bearer|token|"
        r"private[_-]?key)(?![A-Za-z0-9])[\"']?"
        r"(?:\s*(?::|=|:=|=>)\s*|\s+)[\"']?(?P<secret>[A-Za-z0-9/+_.=~!@#$%^&*-]{8,256})"),
        accept=_assigned, needles=("key", "secret", "token", "bearer"), source="detect-secrets KeywordDetector, gitleaks generic-api-key (entropy >= 3.0)"),
    Rule("password", re.compile(
        r"(?i)(?<![A-Za-z0-9])(?:passw(?:or)?d|passphrase|passcode)\s+(?:is|was|will be|=|:)\s+[\"'“]?"
        r"(?P<secret>[^\s\"'”<>]{3,63}[^\s\"'”<>.,;:!?)\]])"),
        accept=_prose_password, needles=("pass",), source="passwords in prose (\"my password is …\")"),
    Rule("card_number", re.compile(r"(?<![\d.,-])(?:\d[ -]?){11,18}\d(?![\d-]|[.,]\d)"), accept=_card,
         source="ISO/IEC 7812 issuer prefixes and lengths, the Luhn check"),
    Rule("iban", re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])"),
         accept=_iban, source="ISO 13616 country lengths, the ISO 7064 mod-97 check"),
    Rule("email", re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@(?:[A-Za-z0-9-]{1,63}\.)+"
                             r"[A-Za-z]{2,24}(?![A-Za-z0-9-])"), not_after=re.compile(r"://\Z"), needles=("@",),
         source="RFC 5322 addr-spec, simplified (not a URL's user@host)"),
    Rule("phone", re.compile(r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?)(?:[ .-]?\d{2,5}){1,4}(?![\w-])"),
         accept=_phone, needles=("+",), source="E.164 with separators (+ and a country code)"),
    Rule("phone", re.compile(r"(?<![\w+-])(?:\(\d{3}\)\s?|\d{3}[.-])\d{3}[.-]\d{4}(?![\w-])"), level=Level.strict,
         accept=_phone, source="NANP national format"),
    # '=' may come before (AccountKey=…, a base64 value assigned) but not inside: the token is the value.
    Rule("high_entropy_string", re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{32,}={0,2}(?![A-Za-z0-9+/=_-])"),
         level=Level.strict, accept=_random_token, not_after=_ENCODED_DATA,
         source="detect-secrets Base64HighEntropyString (limit 4.5)"),
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
    taken = bytearray(len(text))  # 1 where a match already is: an overlap costs its own length to test
    lowered = text.lower()
    for rule in rules_for(level):
        if rule.needles and not any(needle in lowered for needle in rule.needles):
            continue  # a substring search instead of a pass of the regular expression over the text
        for m in rule.pattern.finditer(text):
            start, end = m.span("secret") if "secret" in rule.pattern.groupindex else m.span()
            if taken.find(1, start, end) != -1:
                continue
            if rule.accept is not None and not rule.accept(text[start:end]):
                continue
            if rule.not_after is not None and rule.not_after.search(text, max(0, start - 24), start):
                continue
            taken[start:end] = b"\x01" * (end - start)
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
