"""Encrypted sessions: praisonaiagents' ``EncryptedSessionStore`` (praisonaiagents 1.7.5 and later).

The wrapper encrypts, per message, the ``content`` (always, even ``""``), the ``metadata``
when it is not empty (stored as exactly ``{"__enc__": <token>}`` of its JSON) and the
``tool_calls`` when there are any (stored as a token string of their JSON). A token is
``praisonai:enc:v1:`` + a Fernet token; the key is a raw Fernet key, which applications
conventionally keep in ``PRAISONAI_SESSION_KEY``. Ids, roles, timestamps, ``tool_call_id``
and every session-level field (the title included) stay plaintext, and a session may mix
encrypted and plaintext messages (turns written before encryption was switched on).

Reading: with a :class:`Key` (``PRAISONAI_SESSION_KEY``, or ``--key-file``), values are
decrypted as the library's ``_decrypt_row`` does; without one they stay opaque. The
``cryptography`` package (the ``praisonmem[crypto]`` extra) is imported only when an
encrypted value is actually met with a key.

Writing: praisonmem never decrypts what it writes, so a retitle, rename or merge copies
every token byte for byte. A message that is new to an encrypted session (an import, a
merge from a plaintext file) is encrypted with the session's key by :func:`seal`; the
stores refuse to write one in plaintext (:func:`unsealed`), so no write can put plaintext
where the session keeps ciphertext.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from praisonmem.core.errors import NotFound, Refused, UsageError, io_failure
from praisonmem.core.sessions.documents import ENCRYPTED_PREFIX, is_encrypted

KEY_ENV = "PRAISONAI_SESSION_KEY"
INSTALL = "pip install 'praisonmem[crypto]'"
MESSAGE_LISTS = ("archived_messages", "messages")


class MissingCrypto(Refused):
    code = "missing_dependency"


class WrongKey(Refused):
    code = "wrong_key"


@dataclass(frozen=True)
class Key:
    """A session key and where it came from (for messages). Never printed: ``repr`` hides it."""

    secret: str = field(repr=False)
    source: str

    def cipher(self) -> Cipher:
        return Cipher(self)


def key_from(key_file: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> Key | None:
    """``--key-file`` when given, else ``PRAISONAI_SESSION_KEY``, else ``None`` (encrypted values stay opaque)."""
    if key_file is not None:
        return Key(read_key_file(Path(key_file)), f"--key-file {key_file}")
    value = (os.environ if env is None else env).get(KEY_ENV, "").strip()
    return Key(value, KEY_ENV) if value else None


def read_key_file(path: Path) -> str:
    """The key in ``path``: a regular file only its owner can read (as ``ssh`` wants a private key)."""
    if not str(path).strip():
        raise UsageError("--key-file must name a file")
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise NotFound(f"{path}: no such key file") from None
    except OSError as exc:
        raise io_failure(path, exc) from exc
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{path}: a key file must be a regular file")
    if st.st_mode & 0o077:
        raise Refused(f"{path}: key file is readable by others (mode {st.st_mode & 0o777:04o}); "
                      f"make it private (chmod 600 {path}) and retry")
    try:
        text = path.read_text(encoding="ascii").strip()
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not a session key (a Fernet key is 44 characters of URL-safe base64)") from None
    except OSError as exc:
        raise io_failure(path, exc) from exc
    if not text:
        raise UsageError(f"{path}: the key file is empty")
    return text


@lru_cache(maxsize=None)
def _fernet(secret: str, source: str) -> Any:
    import base64  # with the key only: reading a plain session needs none of it
    import binascii

    try:
        from cryptography.fernet import Fernet
    except ImportError:
        raise MissingCrypto(f"decrypting sessions needs the cryptography package: {INSTALL}") from None
    try:
        if len(base64.urlsafe_b64decode(secret.encode("ascii"))) != 32:
            raise ValueError
        return Fernet(secret.encode("ascii"))
    except (ValueError, binascii.Error, UnicodeEncodeError):
        raise UsageError(f"the key from {source} is not a session key (a Fernet key: 44 characters of URL-safe "
                         "base64, as praisonaiagents' generate_session_key() makes)") from None


class Cipher:
    """Decrypt and encrypt values with one key, as ``EncryptedSessionStore`` does."""

    def __init__(self, key: Key) -> None:
        self.key = key

    def decrypt(self, value: str, where: str = "a session") -> str:
        if not is_encrypted(value):
            return value
        fernet = _fernet(self.key.secret, self.key.source)
        from cryptography.fernet import InvalidToken

        try:
            return fernet.decrypt(value[len(ENCRYPTED_PREFIX):].encode("ascii")).decode("utf-8")
        except (InvalidToken, UnicodeError):
            raise WrongKey(f"{where}: the key from {self.key.source} does not decrypt it (it was encrypted with "
                           "another key)") from None

    def encrypt(self, text: Any) -> str:
        token = _fernet(self.key.secret, self.key.source).encrypt(str(text).encode("utf-8")).decode("ascii")
        return ENCRYPTED_PREFIX + token

    def check(self, doc: dict[str, Any], where: str) -> None:
        """Refuse a key that does not decrypt ``doc`` (a write would mix two keys in one session)."""
        for value in encrypted_values(doc):
            self.decrypt(value, where)
            return


# ---------------------------------------------------------------- the library's rules, per message


def is_envelope(metadata: Any) -> bool:
    """``{"__enc__": <token>}``, exactly: what the wrapper stores for encrypted metadata."""
    return isinstance(metadata, dict) and len(metadata) == 1 and is_encrypted(metadata.get("__enc__"))


def message_values(message: Any) -> Iterator[str]:
    """A message's encrypted values: its content, metadata envelope and tool-call token."""
    if not isinstance(message, dict):
        return
    if is_encrypted(message.get("content")):
        yield message["content"]
    if is_envelope(message.get("metadata")):
        yield message["metadata"]["__enc__"]
    if is_encrypted(message.get("tool_calls")):
        yield message["tool_calls"]


def messages(doc: dict[str, Any]) -> Iterator[Any]:
    for key in MESSAGE_LISTS:
        value = doc.get(key)
        yield from value if isinstance(value, list) else []


def encrypted_values(doc: dict[str, Any]) -> Iterator[str]:
    for message in messages(doc):
        yield from message_values(message)


def is_encrypted_doc(doc: dict[str, Any] | None) -> bool:
    return doc is not None and next(encrypted_values(doc), None) is not None


def open_message(message: Any, cipher: Cipher | None, where: str = "a session") -> Any:
    """The message as the library's ``_decrypt_row`` returns it (a copy); as stored without a cipher."""
    if cipher is None or not isinstance(message, dict) or next(message_values(message), None) is None:
        return message
    opened = dict(message)
    if "content" in opened:
        opened["content"] = cipher.decrypt(opened["content"], where) if isinstance(opened["content"], str) \
            else opened["content"]
    if is_envelope(opened.get("metadata")):
        raw = cipher.decrypt(opened["metadata"]["__enc__"], where)
        try:
            opened["metadata"] = json.loads(raw) if raw else {}
        except ValueError:
            opened["metadata"] = {}
    if is_encrypted(opened.get("tool_calls")):
        raw = cipher.decrypt(opened["tool_calls"], where)
        try:
            opened["tool_calls"] = json.loads(raw) if raw else opened["tool_calls"]
        except ValueError:
            pass
    return opened


def opened(doc: dict[str, Any], cipher: Cipher | None, where: str = "a session") -> dict[str, Any]:
    """``doc`` with every message decrypted (a copy; the document itself when there is nothing to do)."""
    if cipher is None or not is_encrypted_doc(doc):
        return doc
    copy = dict(doc)
    for key in MESSAGE_LISTS:
        if isinstance(doc.get(key), list):
            copy[key] = [open_message(m, cipher, where) for m in doc[key]]
    return copy


def seal_message(message: Any, cipher: Cipher) -> Any:
    """The message as the wrapper's ``add_message`` would store it: content, non-empty metadata and tool calls
    encrypted; values already encrypted are kept byte for byte."""
    if not isinstance(message, dict):
        return message
    sealed = dict(message)
    content = sealed.get("content")
    if content is not None and not is_encrypted(content):
        sealed["content"] = cipher.encrypt(content)
    meta = sealed.get("metadata")
    if meta and not is_envelope(meta):
        sealed["metadata"] = {"__enc__": cipher.encrypt(json.dumps(meta, default=str))}
    calls = sealed.get("tool_calls")
    if calls and not is_encrypted(calls):
        sealed["tool_calls"] = cipher.encrypt(json.dumps(calls, default=str))
    return sealed


def _new_messages(current: dict[str, Any], doc: dict[str, Any]) -> Iterator[tuple[str, int, Any]]:
    """Messages of ``doc`` that are not, exactly, messages ``current`` already holds."""
    held = [m for m in messages(current)]
    for key in MESSAGE_LISTS:
        value = doc.get(key)
        for i, message in enumerate(value if isinstance(value, list) else []):
            if message not in held:
                yield key, i, message


def plaintext_fields(message: Any) -> list[str]:
    """The fields the wrapper would have encrypted that ``message`` holds in plaintext."""
    if not isinstance(message, dict):
        return []
    fields = []
    if message.get("content") is not None and not is_encrypted(message.get("content")):
        fields.append("content")
    if message.get("metadata") and not is_envelope(message.get("metadata")):
        fields.append("metadata")
    if message.get("tool_calls") and not is_encrypted(message.get("tool_calls")):
        fields.append("tool_calls")
    return fields


def _plain_before(current: dict[str, Any], key: str, index: int, message: Any) -> list[str]:
    """The fields the same turn (same place, role and timestamp) already held in plaintext and that the write
    only redacts (``session redact``'s edit: parts replaced by ``[REDACTED:<kind>]``): those may stay plaintext;
    nothing turns ciphertext into plaintext, and no new text comes in unencrypted."""
    held = current.get(key)
    old = held[index] if isinstance(held, list) and index < len(held) else None
    if not (isinstance(old, dict) and isinstance(message, dict)):
        return []
    if (old.get("role"), old.get("timestamp")) != (message.get("role"), message.get("timestamp")):
        return []
    return [f for f in plaintext_fields(old) if _redaction_of(old.get(f), message.get(f))]


@lru_cache(maxsize=None)
def _mark() -> re.Pattern[str]:
    return re.compile(r"\[REDACTED:[a-z0-9_]+\]")  # compiled for a write that redacts, not for every read


def _redaction_of(old: Any, new: Any) -> bool:
    """``new`` is ``old`` with some parts replaced by ``[REDACTED:<kind>]`` marks (or ``old`` itself): an edit
    that brings no new text in."""
    def text(value: Any) -> str:
        return value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)

    before, after = text(old), text(new)
    if before == after:
        return True
    pattern = "(?:.+?)".join(re.escape(part) for part in _mark().split(after))
    return re.fullmatch(pattern, before, re.DOTALL) is not None


def unsealed(current: dict[str, Any] | None, doc: dict[str, Any]) -> str | None:
    """Why writing ``doc`` over ``current`` would put plaintext into an encrypted session, or ``None``.

    Messages already in ``current`` are kept as they are (a session may mix plaintext and
    ciphertext turns), and an edited turn may keep the fields it held in plaintext; every other
    field of a message the write brings in must be encrypted."""
    if not is_encrypted_doc(current):
        return None
    assert current is not None
    for key, index, message in _new_messages(current, doc):
        fields = [f for f in plaintext_fields(message) if f not in _plain_before(current, key, index, message)]
        if fields:
            return (f"the session is encrypted, and {key}[{index}] would be written with its "
                    f"{' and '.join(fields)} in plaintext")
    return None


def seal(current: dict[str, Any] | None, doc: dict[str, Any], cipher: Cipher | None, where: str) -> dict[str, Any]:
    """``doc`` ready to replace ``current``: when the session is encrypted, every message it brings in is encrypted
    with the session's key (checked against ``current`` first). Without a key that is refused."""
    if not is_encrypted_doc(current) or unsealed(current, doc) is None:
        return doc
    assert current is not None
    if cipher is None:
        raise Refused(f"{where}: the session is encrypted; writing new messages into it needs its key "
                      f"({KEY_ENV} or --key-file), so they are stored encrypted too; nothing changed")
    cipher.check(current, where)
    fresh = {id(m) for _, _, m in _new_messages(current, doc)}
    sealed = dict(doc)
    for key in MESSAGE_LISTS:
        if isinstance(doc.get(key), list):
            sealed[key] = [seal_message(m, cipher) if id(m) in fresh else m for m in doc[key]]
    return sealed


def merge_opened(merge: Callable[[dict[str, Any], dict[str, Any], Any], dict[str, Any]], first: dict[str, Any],
                 second: dict[str, Any], where: Any, cipher: Cipher | None) -> dict[str, Any]:
    """``merge(first, second, where)`` judged on the decrypted turns: two encryptions of one text differ, so a
    merge of ciphertexts would keep a turn twice. Every turn that comes out as one stored encrypted comes back
    as stored, byte for byte (the first document's copy first); the rest is plaintext for :func:`seal`."""
    if cipher is None or not (is_encrypted_doc(first) or is_encrypted_doc(second)):
        return merge(first, second, where)
    stored: dict[str, Any] = {}
    for doc in (first, second):
        for message in messages(doc):
            key = _turn_key(open_message(message, cipher, str(where)))
            kept = stored.get(key)
            if kept is None or (next(message_values(kept), None) is None and next(message_values(message), None)):
                stored[key] = message
    merged = merge(opened(first, cipher, str(where)), opened(second, cipher, str(where)), where)
    for key in MESSAGE_LISTS:
        if isinstance(merged.get(key), list):
            merged[key] = [stored.get(_turn_key(m), m) for m in merged[key]]
    return merged


def _turn_key(message: Any) -> str:
    return json.dumps(message, sort_keys=True, default=str)
