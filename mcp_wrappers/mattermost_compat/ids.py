"""Mattermost-style identifiers, timestamps, tokens and password hashes."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import time

# Mattermost's NewId: 16 random bytes in base32 with its own alphabet, no padding -> 26 chars.
_ALPHABET = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", b"ybndrfg8ejkmcpqxot1uwisza345h769")
ID_RE = re.compile(r"^[a-z0-9]{26}$")


def new_id() -> str:
    return base64.b32encode(os.urandom(16)).translate(_ALPHABET).decode()[:26]


def is_id(value: str) -> bool:
    return bool(ID_RE.match(value))


def now_ms() -> int:
    return int(time.time() * 1000)


def token_digest(token: str) -> str:
    """Tokens are stored hashed: the database never holds a usable credential."""
    return hashlib.sha256(token.encode()).hexdigest()


def hash_password(password: str) -> str:
    salt = os.urandom(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=2**12, r=8, p=1)
    return f"scrypt${salt.hex()}${digest.hex()}"


def check_password(password: str, stored: str) -> bool:
    try:
        _, salt, digest = stored.split("$")
    except ValueError:
        return False
    got = hashlib.scrypt(password.encode(), salt=bytes.fromhex(salt), n=2**12, r=8, p=1)
    return hmac.compare_digest(got.hex(), digest)
