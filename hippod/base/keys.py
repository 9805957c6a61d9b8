"""API keys: `hk_<24>.<32>` in lower-case base32, stored as scrypt hashes (integrations.md §9.4).

Standard library only: the `auth` verbs mint and revoke keys without the HTTP listener loaded.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
import re
import secrets

# The roles a key may hold; a stored role outside them is read as a member's.
ROLES = ("admin", "member")
ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"
KEY_ID_CHARS = 24
SECRET_CHARS = 32
KEY_ID = re.compile(rf"^hk_[a-z2-7]{{{KEY_ID_CHARS}}}$")
# scrypt as the spec fixes it: N 16384, r 8, p 1, a 16-byte salt and a 32-byte hash.
SCRYPT_N, SCRYPT_R, SCRYPT_P, SALT_BYTES, HASH_BYTES = 16384, 8, 1, 16, 32
# 128 * r * N bytes of work space (16 MiB), with room to spare: hashlib refuses less than it needs.
_MAXMEM = 64 * 1024 * 1024


def _random(chars: int) -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(chars))


def new_key() -> tuple[str, str]:
    """A fresh (key id, plaintext): the id is the part before the dot."""
    key_id = "hk_" + _random(KEY_ID_CHARS)
    return key_id, f"{key_id}.{_random(SECRET_CHARS)}"


def _scrypt(plaintext: str, salt: bytes) -> bytes:
    return hashlib.scrypt(
        plaintext.encode(), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=HASH_BYTES, maxmem=_MAXMEM
    )


def hash_key(plaintext: str) -> str:
    """`scrypt$<salt hex>$<hash hex>` of the whole plaintext."""
    salt = os.urandom(SALT_BYTES)
    return f"scrypt${salt.hex()}${_scrypt(plaintext, salt).hex()}"


def verify(plaintext: str, stored: str) -> bool:
    """Whether `plaintext` is the key `stored` was made from, compared in constant time."""
    try:
        scheme, salt_hex, hash_hex = stored.split("$")
        salt, expected = bytes.fromhex(salt_hex), bytes.fromhex(hash_hex)
    except ValueError:
        return False
    if scheme != "scrypt":
        return False
    return hmac.compare_digest(_scrypt(plaintext, salt), expected)


@functools.cache
def dummy_hash() -> str:
    """What an unknown key id is compared against, so a miss costs the same time as a wrong secret."""
    return hash_key("hk_" + "a" * KEY_ID_CHARS + "." + "a" * SECRET_CHARS)


def key_id_of(token: str) -> str | None:
    """The key id of a bearer token (the part before the first dot), or None for a malformed one."""
    key_id, dot, secret = token.partition(".")
    if not dot or not secret or not KEY_ID.match(key_id):
        return None
    return key_id
