"""A home with secrets of every kind planted in every place ``check --secrets`` searches.

Each place gets its own secrets (drawn from a seeded generator), so a test can tell which place a
finding came from and assert that no output holds any of them. The places: a JSON session's messages
(one message per kind), its title, its metadata, a ``sessions.db`` session's messages, a spilled turn,
a FileMemory item, an SQLite memory row, a learn entry and an Upsonic user trait.
"""

from __future__ import annotations

import base64
import json
import random
import shutil
import sqlite3
import string
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers import spill
from tests.realhomes import copy_gateway_home

KINDS = ("openai_api_key", "anthropic_api_key", "google_api_key", "aws_access_key_id", "github_token",
         "slack_token", "stripe_key", "jwt", "private_key", "url_password", "email", "phone", "generic_secret")
PLACES = ("message", "title", "metadata", "db_message", "spill", "memory", "sqlite_memory", "learn", "trait")
SESSION_PLACES = ("message", "title", "metadata", "db_message", "spill")  # what 'session redact' rewrites
ALNUM = string.ascii_letters + string.digits


def _b64url(obj: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def secrets_for(place: str) -> dict[str, tuple[str, str]]:
    """kind -> (the text planted, the secret in it), distinct for each place."""
    r = random.Random(place)

    def s(n: int, alphabet: str = ALNUM) -> str:
        return "".join(r.choice(alphabet) for _ in range(n))

    pem_body = "\n".join(s(64, ALNUM + "+/") for _ in range(4))
    pem = f"-----BEGIN RSA PRIVATE KEY-----\n{pem_body}\n-----END RSA PRIVATE KEY-----"
    jwt = f"{_b64url({'alg': 'HS256', 'typ': 'JWT'})}.{_b64url({'sub': s(10), 'name': place})}.{s(43, ALNUM + '_-')}"
    password = "a1" + s(14)
    value = "Z9" + s(22)
    phone = f"+44 20 {r.randint(1000, 9999)} {r.randint(1000, 9999)}"
    email = f"{s(6).lower()}.{s(5).lower()}@corp-example.com"
    found = {
        "openai_api_key": "sk-proj-" + s(48, ALNUM + "_-").replace("-", "x"),
        "anthropic_api_key": "sk-ant-api03-" + s(93, ALNUM + "_-") + "AA",
        "google_api_key": "AIza" + s(35),
        "aws_access_key_id": "AKIA" + s(16, string.ascii_uppercase + "234567"),
        "github_token": "ghp_" + s(36),
        "slack_token": f"xoxb-{r.randint(10**11, 10**12)}-{r.randint(10**12, 10**13)}-{s(24)}",
        "stripe_key": "sk_live_" + s(24),
        "jwt": jwt,
        "private_key": pem,
        "url_password": password,
        "email": email,
        "phone": phone,
        "generic_secret": value,
    }
    texts = {kind: f"the {kind.replace('_', ' ')} is {secret} (keep it safe)" for kind, secret in found.items()}
    texts["url_password"] = f"connect with postgresql://svc:{password}@db.internal:5432/prod please"
    texts["generic_secret"] = f'config: api_key = "{value}" in the env'
    return {kind: (texts[kind], found[kind]) for kind in KINDS}


def joined(place: str) -> str:
    return " | ".join(text for text, _ in secrets_for(place).values())


def all_secrets(places: tuple[str, ...] = PLACES) -> list[str]:
    return [secret for place in places for _, secret in secrets_for(place).values()]


@dataclass
class Corpus:
    home: Path
    memory_dir: Path
    upsonic_db: Path
    encrypted: str  # a praisonai:enc:v1: value planted in the JSON session, which redaction must leave
    extra: dict = field(default_factory=dict)

    def args(self) -> list[str]:
        return ["--home", str(self.home), "--memory-dir", str(self.memory_dir)]


PLANTED = "planted-chat"
DB_SESSION = "agent-chat-1"


def make_corpus(tmp_path: Path, upsonic_fixture: Path) -> Corpus:
    from praisonmem.core import learn
    from praisonmem.core.memory import FileMemoryStore, SqliteMemoryStore
    from praisonmem.core.paths import resolve
    from praisonmem.core import upsonic

    gw = copy_gateway_home(tmp_path / "gw")
    home = gw.home
    sessions = home / "sessions"
    encrypted = json.loads((sessions / "enc-1.json").read_text())["messages"][0]["content"]
    assert encrypted.startswith("praisonai:enc:v1:")
    msgs = [{"role": "user" if i % 2 == 0 else "assistant", "content": text, "timestamp": 1796050000.0 + i,
             "metadata": {}} for i, (text, _) in enumerate(secrets_for("message").values())]
    msgs.append({"role": "user", "content": encrypted, "timestamp": 1796050100.0, "metadata": {}})
    doc = {"session_id": PLANTED, "messages": msgs, "created_at": "2026-11-30T14:00:00+00:00",
           "updated_at": "2026-11-30T14:10:00+00:00", "agent_name": "Planter", "user_id": "u1",
           "metadata": {"title": joined("title"), "notes": joined("metadata")}}
    path = sessions / f"{PLANTED}.json"
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    path.chmod(0o600)
    spill(home, PLANTED, PLANTED, *[text for text, _ in secrets_for("spill").values()])
    # sessions.db: the gateway's session gets the planted turns appended (as the gateway would write them)
    db = sessions / "sessions.db"
    conn = sqlite3.connect(db)
    data = json.loads(conn.execute("SELECT data FROM sessions WHERE session_id = ?", (DB_SESSION,)).fetchone()[0])
    conn.execute("PRAGMA secure_delete=OFF")
    for i, (text, _) in enumerate(secrets_for("db_message").values()):
        data["messages"].append({"role": "user", "content": text, "timestamp": 1796050200.0 + i, "metadata": {}})
    conn.execute("UPDATE sessions SET data = ? WHERE session_id = ?", (json.dumps(data, ensure_ascii=False),
                                                                       DB_SESSION))
    conn.commit()
    # A second turn, written as the library writes (no secure_delete): the first version stays in free space.
    data["messages"].append({"role": "assistant", "content": "noted", "timestamp": 1796050300.0, "metadata": {}})
    conn.execute("UPDATE sessions SET data = ? WHERE session_id = ?", (json.dumps(data, ensure_ascii=False),
                                                                       DB_SESSION))
    conn.commit()
    conn.close()
    memory_dir = tmp_path / "project" / ".praisonai" / "memory"
    FileMemoryStore(memory_dir, "default").add_long_term(joined("memory"))
    SqliteMemoryStore(memory_dir.parent, "default").store("long_term", joined("sqlite_memory"))
    paths = resolve(home, memory_dir)
    learn.add_entry(paths, "insights", joined("learn"))
    updb = tmp_path / "upsonic" / "data.db"
    updb.parent.mkdir()
    shutil.copy(upsonic_fixture, updb)
    store = upsonic.open_store(updb)
    user = store.users()[0]["user_id"]
    upsonic.edit_user_memory(store, user, set_traits={"planted_note": joined("trait")})
    return Corpus(home, memory_dir, updb, encrypted, {"upsonic_user": user, "key": gw.key})


def place_of(finding: dict) -> str:
    """Which place of the corpus a finding is in."""
    store, field_, record = finding["store"], finding["field"], finding["record"] or ""
    if store == "json" and record.startswith("spill:"):
        return "spill"
    if store == "json":
        return {"metadata.title": "title", "metadata.notes": "metadata"}.get(field_, "message")
    if store == "memory" and finding["file"].endswith(".db"):
        return "sqlite_memory"
    return {"sessions.db": "db_message", "memory": "memory", "learn": "learn", "upsonic": "trait"}[store]


def leaked(text: str, places: tuple[str, ...] = PLACES, window: int = 8) -> list[str]:
    """Secrets of which any ``window`` consecutive characters appear in ``text`` (a masked one shows at most 4)."""
    out = []
    for secret in all_secrets(places):
        for i in range(0, len(secret) - window + 1):
            if secret[i:i + window] in text:
                out.append(secret)
                break
    return out


# ---------------------------------------------------------------- recall and false positives of the rules
#
# SAMPLES: texts as they turn up in agents' memory (chat, .env files, configs, code, shell history), each holding
# one secret; LOOKALIKES: texts that hold none but look as if they might (digests, ids, integrity strings, the
# public keys and test numbers of documentation, placeholders, prose about passwords). tests/core/secrets/
# test_recall.py measures both per level and pins the figures.


@dataclass(frozen=True)
class Sample:
    kind: str  # the kind expected at standard (``None`` would be strict-only: see STRICT_ONLY)
    text: str
    secret: str


def _luhn_complete(body: str) -> str:
    """``body`` with the check digit that makes it pass Luhn."""
    total = 0
    for i, c in enumerate(reversed(body)):
        d = int(c) * (1 if i % 2 else 2)
        total += d - 9 if d > 9 else d
    return body + str((10 - total % 10) % 10)


def _iban(country: str, bban: str) -> str:
    moved = bban + country + "00"
    check = 98 - int("".join(str(int(c, 36)) for c in moved)) % 97
    return f"{country}{check:02d}{bban}"


def _grouped(text: str, sizes: tuple[int, ...] | None = None, sep: str = " ") -> str:
    if sizes is None:
        return sep.join(text[i:i + 4] for i in range(0, len(text), 4))
    out, at = [], 0
    for n in sizes:
        out.append(text[at:at + n])
        at += n
    return sep.join(out)


def samples() -> list[Sample]:
    r = random.Random("recall")

    def s(n: int, alphabet: str = ALNUM) -> str:
        return "".join(r.choice(alphabet) for _ in range(n))

    hexd, b64 = "0123456789abcdef", ALNUM + "+/"
    upper = string.ascii_uppercase + "234567"
    pem_body = "\n".join(s(64, b64) for _ in range(5))
    jwt = f"{_b64url({'alg': 'RS256', 'typ': 'JWT'})}.{_b64url({'sub': s(12), 'iat': 1796050000})}.{s(86, ALNUM + '_-')}"
    jwt2 = f"{_b64url({'alg': 'HS256'})}.{_b64url({'user': 'alice', 'role': 'admin'})}.{s(43, ALNUM + '_-')}"
    visa = _luhn_complete("4" + "".join(r.choice(string.digits) for _ in range(14)))
    mc = _luhn_complete("53" + "".join(r.choice(string.digits) for _ in range(13)))
    amex = _luhn_complete("37" + "".join(r.choice(string.digits) for _ in range(12)))
    disc = _luhn_complete("6011" + "".join(r.choice(string.digits) for _ in range(11)))
    de = _iban("DE", "37040044" + "".join(r.choice(string.digits) for _ in range(10)))
    gb = _iban("GB", "WEST" + "".join(r.choice(string.digits) for _ in range(14)))
    fr = _iban("FR", "".join(r.choice(string.digits) for _ in range(23)))
    nl = _iban("NL", "ABNA" + "".join(r.choice(string.digits) for _ in range(10)))
    out = [
        # vendor keys, in prose, .env files, configs, shell history and headers
        ("openai_api_key", "here is my key sk-proj-{0} can you check why it fails", "sk-proj-" + s(48, ALNUM + "_")),
        ("openai_api_key", "OPENAI_API_KEY={0}", "sk-" + s(48)),
        ("openai_api_key", 'curl https://api.openai.com/v1/models -H "Authorization: Bearer {0}"',
         "sk-svcacct-" + s(56, ALNUM + "_")),
        ("openai_api_key", '{{"provider": "openai", "key": "{0}"}}', "sk-admin-" + s(40)),
        ("anthropic_api_key", "export ANTHROPIC_API_KEY={0}", "sk-ant-api03-" + s(93, ALNUM + "_-") + "AA"),
        ("anthropic_api_key", "use {0} for the claude calls", "sk-ant-admin01-" + s(80, ALNUM + "_-")),
        ("google_api_key", "maps key: {0}", "AIza" + s(35, ALNUM + "_-")),
        ("google_api_key", 'GOOGLE_API_KEY="{0}"', "AIza" + s(35)),
        ("aws_access_key_id", "aws_access_key_id = {0}", "AKIA" + s(16, upper)),
        ("aws_access_key_id", "the temp creds are {0} (session)", "ASIA" + s(16, upper)),
        ("generic_secret", "export AWS_SECRET_ACCESS_KEY={0}", s(40, b64)),
        ("generic_secret", "aws_secret_access_key={0}", s(40, b64)),
        ("github_token", "git clone https://{0}@github.com/acme/app.git", "ghp_" + s(36)),
        ("github_token", "GITHUB_TOKEN={0}", "github_pat_" + s(82, ALNUM + "_")),
        ("github_token", "oauth token {0}", "gho_" + s(36)),
        ("gitlab_token", "GITLAB_TOKEN={0}", "glpat-" + s(20, ALNUM + "_-")),
        ("gitlab_token", "the deploy token is {0}", "gldt-" + s(20)),
        ("npm_token", "//registry.npmjs.org/:_authToken={0}", "npm_" + s(36)),
        ("npm_token", "NPM_TOKEN: {0}", "npm_" + s(36)),
        ("huggingface_token", "HF_TOKEN={0}", "hf_" + s(34, string.ascii_letters)),
        ("slack_token", "SLACK_BOT_TOKEN={0}",
         f"xoxb-{r.randint(10**11, 10**12)}-{r.randint(10**12, 10**13)}-{s(24)}"),
        ("slack_token", "user token {0}",
         f"xoxp-{r.randint(10**11, 10**12)}-{r.randint(10**11, 10**12)}-{r.randint(10**12, 10**13)}-{s(32, hexd)}"),
        ("slack_webhook", "post to {0}", f"https://hooks.slack.com/services/T{s(10, upper)}/B{s(10, upper)}/{s(24)}"),
        ("stripe_key", "STRIPE_SECRET_KEY={0}", "sk_live_" + s(99)),
        ("stripe_key", "restricted key {0}", "rk_live_" + s(24)),
        ("stripe_key", "stripe.api_key = '{0}'", "sk_test_" + s(24)),
        ("sendgrid_api_key", "SENDGRID_API_KEY={0}", f"SG.{s(22, ALNUM + '_-')}.{s(43, ALNUM + '_-')}"),
        ("sendgrid_api_key", "mail via sendgrid with {0}", f"SG.{s(22)}.{s(43)}"),
        ("twilio_api_key", "TWILIO_API_KEY={0}", "SK" + s(32, hexd)),
        ("generic_secret", "TWILIO_AUTH_TOKEN={0}", s(32, hexd)),
        ("azure_storage_key", "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={0};"
                              "EndpointSuffix=core.windows.net", s(86, b64) + "=="),
        ("jwt", "Authorization: Bearer {0}", jwt),
        ("jwt", "the session cookie was {0}", jwt2),
        # private keys
        ("private_key", "{0}", f"-----BEGIN RSA PRIVATE KEY-----\n{pem_body}\n-----END RSA PRIVATE KEY-----"),
        ("private_key", "my key:\n{0}\nplease keep it", f"-----BEGIN OPENSSH PRIVATE KEY-----\n{pem_body}\n"
                                                       "-----END OPENSSH PRIVATE KEY-----"),
        ("private_key", "{0}", f"-----BEGIN EC PRIVATE KEY-----\n{pem_body}\n-----END EC PRIVATE KEY-----"),
        ("private_key", 'PRIVATE_KEY="{0}"', "-----BEGIN PRIVATE KEY-----\\n" + s(64, b64) + "\\n" + s(64, b64)
         + "\\n-----END PRIVATE KEY-----"),
        # passwords in URLs
        ("url_password", "DATABASE_URL=postgresql://app:{0}@db.internal:5432/app", "Pw" + s(14)),
        ("url_password", "mysql://root:{0}@127.0.0.1/shop", s(12) + "9"),
        ("url_password", "REDIS_URL=redis://default:{0}@cache:6379/0", s(20)),
        ("url_password", "amqp://guest:{0}@rabbit:5672/", "g" + s(11) + "1"),
        ("url_password", "curl https://admin:{0}@intranet.example.org/report", "x" + s(10) + "7"),
        # passwords assigned and said
        ("password", "DB_PASSWORD={0}", "s3cr3t-" + s(6)),
        ("password", "MYSQL_ROOT_PASSWORD={0}", s(10) + "!"),
        ("password", "export PGPASSWORD={0}", "Pg" + s(10)),
        ("password", "redis:\n  password: {0}\n  port: 6379", s(8) + "#1"),
        ("password", '{{"username": "svc", "password": "{0}"}}', "Winter2026!"),
        ("password", "my password is {0} if you need to log in", "Tr0ub4dor&3"),
        ("password", "The wifi password is {0}.", "Summer2024!"),
        ("password", "and the passphrase was {0}", "correct-horse-battery-9"),
        # assigned secrets of other names
        ("generic_secret", '{{"api_key": "{0}", "model": "x"}}', s(32)),
        ("generic_secret", "client_secret={0}", s(24) + "7"),
        ("generic_secret", "X-API-Key: {0}", s(40, hexd)),
        ("generic_secret", "SECRET_KEY = '{0}'", "django-insecure-" + s(40, ALNUM + "!@#$%^&*")),
        ("generic_secret", "JWT_SECRET={0}", s(32)),
        ("generic_secret", "auth:\n  token: {0}", s(30) + "9"),
        # cards and accounts
        ("card_number", "card {0} exp 04/29", _grouped(visa)),
        ("card_number", "pay with {0} please", _grouped(mc, sep="-")),
        ("card_number", "amex {0}", _grouped(amex, (4, 6, 5))),
        ("card_number", "the number is {0}", disc),
        ("iban", "transfer to {0} by friday", _grouped(de)),
        ("iban", "IBAN: {0}", gb),
        ("iban", "rib {0}", _grouped(fr)),
        ("iban", "account {0} (ABN)", _grouped(nl)),
        # personal data
        ("email", "write to {0} about it", f"{s(7).lower()}.{s(5).lower()}@example-corp.com"),
        ("email", "From: {0}", f"{s(5).lower()}@mail.{s(6).lower()}.org"),
        ("phone", "call me on {0}", f"+44 20 {r.randint(1000, 9999)} {r.randint(1000, 9999)}"),
        ("phone", "whatsapp {0}", f"+1-415-{r.randint(200, 999)}-{r.randint(1000, 9999)}"),
        # tokens with no name beside them: only strict finds these
        ("high_entropy_string", "use {0} for it", s(40, b64)),
        ("high_entropy_string", "the value: {0}", s(48, ALNUM + "_-")),
    ]
    return [Sample(kind, text.format(secret), secret) for kind, text, secret in out]


STRICT_ONLY = ("high_entropy_string",)


def lookalikes() -> list[str]:
    r = random.Random("lookalikes")

    def s(n: int, alphabet: str = ALNUM) -> str:
        return "".join(r.choice(alphabet) for _ in range(n))

    hexd = "0123456789abcdef"
    b64 = ALNUM + "+/"
    import uuid

    uuids = [str(uuid.UUID(int=r.getrandbits(128), version=4)) for _ in range(3)]
    bad_luhn = _luhn_complete("4" + "".join(r.choice(string.digits) for _ in range(14)))
    bad_luhn = bad_luhn[:-1] + str((int(bad_luhn[-1]) + 1) % 10)
    return [
        # digests and ids
        f"commit {s(40, hexd)}", f"merged {s(40, hexd)} into main", f"git checkout {s(7, hexd)}",
        f"HEAD is now at {s(12, hexd)} fix the parser", f"sha256: {s(64, hexd)}",
        f"docker pull app@sha256:{s(64, hexd)}", f"session {uuids[0]}", f"request id {uuids[1]}",
        f'{{"id": "{uuids[2]}", "status": "ok"}}',
        f'"integrity": "sha512-{s(86, b64)}=="', f'"integrity": "sha512-{s(86, b64)}=="',
        f"integrity sha384-{s(64, b64)}", f"etag W/\"{s(32, hexd)}\"",
        f"Twilio account {'AC' + s(32, hexd)}",
        "snowflake 1098765432109876543", "tweet 1796050189520123456", "discord id 987654321098765432",
        # public keys and numbers of documentation
        "Stripe test key pk_test_TYooMQauvdEDq54NiTphI7jx", "publishable: pk_live_51H8xyzABCdefGHIjkl",
        "test card 4242 4242 4242 4242 exp 12/34", "use 4111 1111 1111 1111 in sandbox",
        f"invalid card {_grouped(bad_luhn)}", "IBAN DE00 1234 5678 9012 3456 78 (made up)",
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
        "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n-----END CERTIFICATE-----",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl alice@laptop",
        # encoded data
        f"![chart](data:image/png;base64,iVBORw0KGgo{s(120, b64)}=)",
        f"<img src=\"data:image/jpeg;base64,/9j/4AAQSkZJRg{s(100, b64)}\">", "SGVsbG8gd29ybGQh",
        # times, numbers, ids
        "at 1796050189520 ms", "2026-11-30T14:49:49.514431+00:00", "on 2026-11-30 14:49:49 UTC",
        "Order #100234567890123 shipped", "invoice INV-2026-000123", "tracking 1Z999AA10123456784",
        "fedex 7489 1234 5678", "usps 9400 1000 0000 0000 0000 00", "ISBN 978-3-16-148410-0",
        "IMEI 490154203237518", "version 1.7.17 on python 3.11.4", "build 20261130.4", "port 5432, pid 40211",
        "192.168.1.20 and 10.0.0.1", "mac 00:1A:2B:3C:4D:5E", "color #FF5733", "room 42-17, ext 4412",
        "arn:aws:iam::123456789012:role/agent", "account 123456789012 in us-east-1",
        # placeholders and talk about secrets
        "api_key=<your-api-key>", "OPENAI_API_KEY=sk-...", "password: ********", "token: ${GITHUB_TOKEN}",
        "DB_PASSWORD=changeme", 'API_KEY = "YOUR_API_KEY_HERE"', "secret: {{ vault_secret }}",
        "the password is incorrect", "reset your password here", "password must be at least 8 characters",
        "Your password was changed successfully", "the passphrase is case-sensitive",
        "max_tokens = 4096", "prompt_tokens: 1234, completion_tokens: 567", "token count 98765",
        "api_key = os.environ['OPENAI_API_KEY']", "token = tokenizer.encode(text)", "secret_santa = True",
        "create a glpat- token in your settings", "keys look like sk-proj-…",
        # URLs and paths
        "https://user@example.com/path", "postgresql://localhost:5432/app", "http://localhost:8080/api",
        "see https://docs.example.com/auth#tokens", "/home/user/.ssh/id_rsa.pub", "C:\\Users\\alice\\token.txt",
        "my-awesome-project-2024", "use scikit-learn (sk-learn) and the task-force", "SKU12345678 in stock",
    ]
