"""The lobby's credentials: signed access tokens, derived refresh tokens, password hashes.

* **Access tokens** (``a1.<payload>.<signature>``): base64url JSON naming the
  player, the session and the expiry, signed with HMAC-SHA256 under
  ``FELT_LOBBY_ACCESS_SECRET``. Short-lived (minutes); checked without a
  lookup for their signature and expiry, and against the session (one
  indexed read) so that signing out stops them at once.
* **Refresh tokens** (``r1.<mac>``): HMAC-SHA256 under
  ``FELT_LOBBY_REFRESH_SECRET`` of the session and its generation. The
  database keeps only their SHA-256, so a copy of the database alone yields no
  token; being derived, the same token can be given again to a retried call
  without ever being stored.
* **Passwords** are hashed with Argon2id (argon2-cffi), in a worker thread
  (hashing is meant to be slow), never on the event loop.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import UTC, datetime

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from poker.v1.reason_pb2 import Reason

ACCESS = "a1"
REFRESH = "r1"


class BadToken(Exception):
    """The token is malformed, forged or expired (``reason``: TOKEN_INVALID, TOKEN_EXPIRED)."""

    def __init__(self, reason: Reason.ValueType, message: str) -> None:
        super().__init__(message)
        self.reason, self.message = Reason.Name(reason), message


@dataclass(frozen=True, slots=True)
class AccessClaim:
    player_id: str
    session_id: str
    expires_at: datetime


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(secret: bytes, data: str) -> str:
    return _b64(hmac.new(secret, data.encode(), hashlib.sha256).digest())


def issue_access(secret: bytes, claim: AccessClaim) -> str:
    body = {"p": claim.player_id, "s": claim.session_id, "e": int(claim.expires_at.timestamp())}
    payload = _b64(json.dumps(body, separators=(",", ":"), sort_keys=True).encode())
    return f"{ACCESS}.{payload}.{_mac(secret, f'{ACCESS}.{payload}')}"


def verify_access(secret: bytes, token: str, now: datetime) -> AccessClaim:
    """The claim of a genuine, unexpired access token; :class:`BadToken` otherwise."""
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != ACCESS:
        raise BadToken(Reason.TOKEN_INVALID, "not an access token of this lobby")
    expected = _mac(secret, f"{parts[0]}.{parts[1]}")
    if not hmac.compare_digest(expected.encode(), parts[2].encode()):
        raise BadToken(Reason.TOKEN_INVALID, "not an access token of this lobby")
    try:
        body = json.loads(_unb64(parts[1]))
        claim = AccessClaim(
            str(body["p"]), str(body["s"]), datetime.fromtimestamp(int(body["e"]), UTC)
        )
    except (ValueError, KeyError, TypeError, OverflowError):
        raise BadToken(Reason.TOKEN_INVALID, "not an access token of this lobby") from None
    if claim.expires_at <= now:
        raise BadToken(Reason.TOKEN_EXPIRED, "the access token has expired: refresh the session")
    return claim


def refresh_token(secret: bytes, session_id: str, generation: int) -> str:
    """The session's refresh token of ``generation`` (derived, never stored)."""
    return f"{REFRESH}.{_mac(secret, f'{session_id}/{generation}')}"


def token_digest(token: str) -> bytes:
    """What the database keeps of a refresh token: its SHA-256."""
    return hashlib.sha256(token.encode()).digest()


class Passwords:
    """Argon2id hashing off the event loop. Tests pass cheap parameters; production the
    library's defaults (RFC 9106 low-memory profile)."""

    def __init__(self, hasher: PasswordHasher | None = None) -> None:
        self.hasher = hasher or PasswordHasher()
        # Verified against when a name has no password, so that an unknown name takes as long.
        self._decoy = self.hasher.hash("felt-decoy-password")

    async def hash(self, password: str) -> str:
        return await asyncio.to_thread(self.hasher.hash, password)

    async def verify(self, stored: str | None, password: str) -> bool:
        return await asyncio.to_thread(self._verify, stored, password)

    def _verify(self, stored: str | None, password: str) -> bool:
        try:
            return self.hasher.verify(stored or self._decoy, password) and stored is not None
        except (VerificationError, InvalidHashError):
            return False
