"""Seat tokens: bearer credentials that let one client act for (and see) one seat; and
watch grants, which let a spectator read one private table.

A token is ``v1.<payload>.<signature>``: a base64url JSON payload naming the
table, seat, player and expiry, signed with HMAC-SHA256 under a secret the
issuer and the table service share. Any issuer holding the secret (the
table-admin call today, the lobby later) can mint tokens the table service
accepts without a round trip. The table stores only a SHA-256 hash of the
token in ``PlayerSeated``, so a token minted for an earlier occupant of the
seat stops working when someone else sits down.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass

from poker.v1.reason_pb2 import Reason

VERSION = "v1"
DEV_SERVICE_TOKEN = "felt-development-service-token"
"""The service credential (the table service's ``FELT_ADMIN_TOKEN``, the lobby's key to its
internal calls) in development mode when none is set: public, as the development token secret
is (anyone who knows that can mint any seat's token anyway)."""
SEAT_TOKEN_HEADER = "x-felt-seat-token"
"""Metadata with which the service credential's holder names the seat token it acts as."""


class TokenError(Exception):
    """The token is malformed, forged, expired, or for another table or seat.

    ``reason`` is the refusal's machine-readable reason where a client acts on it:
    ``SEAT_TOKEN_EXPIRED`` (renew the token), else none (the token is not one to renew).
    """

    def __init__(self, message: str, reason: Reason.ValueType = Reason.REASON_UNSPECIFIED) -> None:
        super().__init__(message)
        self.reason = "" if reason == Reason.REASON_UNSPECIFIED else Reason.Name(reason)


EXPIRED = Reason.Name(Reason.SEAT_TOKEN_EXPIRED)
"""The reason an expired seat token is refused with (and a stream it opened ends with)."""


@dataclass(frozen=True, slots=True)
class SeatClaim:
    table_id: str
    seat: int
    player_id: str
    expires_at: int


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _sign(secret: bytes, payload: str) -> str:
    return _b64(hmac.new(secret, f"{VERSION}.{payload}".encode(), hashlib.sha256).digest())


def issue_token(secret: bytes, claim: SeatClaim, nonce: str | None = None) -> str:
    """Mint a token for ``claim``.

    A random nonce makes every token unique. An issuer that must hand the same
    token to a retried request without storing it passes a ``nonce`` derived
    from the request (see :func:`request_nonce`).
    """
    body = {
        "t": claim.table_id,
        "s": claim.seat,
        "p": claim.player_id,
        "e": claim.expires_at,
        "n": nonce if nonce is not None else secrets.token_hex(8),
    }
    payload = _b64(json.dumps(body, separators=(",", ":"), sort_keys=True).encode())
    return f"{VERSION}.{payload}.{_sign(secret, payload)}"


def request_nonce(secret: bytes, scope: str, request_id: str) -> str:
    """A nonce that only the secret's holder can derive from a request id."""
    return hmac.new(secret, f"nonce|{scope}|{request_id}".encode(), hashlib.sha256).hexdigest()[:16]


def token_hash(token: str) -> str:
    """What a table stores instead of the token itself."""
    return hashlib.sha256(token.encode()).hexdigest()


def verify_token(secret: bytes, token: str, now: int) -> SeatClaim:
    """The claim of a genuine, unexpired token; raises :class:`TokenError` otherwise."""
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != VERSION:
        raise TokenError("the seat token is malformed")
    _, payload, signature = parts
    if not hmac.compare_digest(signature.encode(), _sign(secret, payload).encode()):
        raise TokenError("the seat token's signature is invalid")
    try:
        body = json.loads(_unb64(payload))
        claim = SeatClaim(str(body["t"]), int(body["s"]), str(body["p"]), int(body["e"]))
    except (ValueError, KeyError, TypeError) as exc:
        raise TokenError("the seat token's payload is malformed") from exc
    if claim.expires_at and claim.expires_at < now:
        raise TokenError(
            "the seat token has expired: ask the lobby for a fresh one", Reason.SEAT_TOKEN_EXPIRED
        )
    return claim


# ------------------------------------------------------------------ watch grants

WATCH_VERSION = "w1"
WATCH_GRANT_TTL_S = 3600
"""How long a watch grant lives: an hour (a stream opened with it runs on after that)."""
WATCH_GRANT_EXPIRED = Reason.Name(Reason.WATCH_GRANT_EXPIRED)
"""The reason an expired watch grant is refused with."""
WATCH_GRANT_MAX = 512
"""A longer bearer token is no watch grant this service issued (one is about 150 characters)."""


@dataclass(frozen=True, slots=True)
class WatchClaim:
    """A watch grant's claim: a spectator may read ``table_id`` until ``expires_at``."""

    table_id: str
    expires_at: int


def is_watch_grant(token: str) -> bool:
    """Whether a bearer token claims to be a watch grant (its version prefix)."""
    return token.startswith(WATCH_VERSION + ".")


def _sign_watch(secret: bytes, payload: str) -> str:
    # The version is part of what is signed, so a seat token's signature ("v1.") never
    # verifies a watch grant's payload nor the other way round.
    mac = hmac.new(secret, f"{WATCH_VERSION}.{payload}".encode(), hashlib.sha256)
    return _b64(mac.digest())


def issue_watch_grant(secret: bytes, claim: WatchClaim) -> str:
    """Mint a watch grant (``w1.<payload>.<signature>``), signed like a seat token with the
    secret the table service holds: a spectator's key to one private table, for no seat."""
    body = {"t": claim.table_id, "e": claim.expires_at, "n": secrets.token_hex(8)}
    payload = _b64(json.dumps(body, separators=(",", ":"), sort_keys=True).encode())
    return f"{WATCH_VERSION}.{payload}.{_sign_watch(secret, payload)}"


def verify_watch_grant(secret: bytes, token: str, now: int) -> WatchClaim:
    """The claim of a genuine, unexpired watch grant; raises :class:`TokenError` otherwise."""
    parts = token.split(".")
    if len(token) > WATCH_GRANT_MAX or len(parts) != 3 or parts[0] != WATCH_VERSION:
        raise TokenError("the watch grant is malformed")
    _, payload, signature = parts
    if not hmac.compare_digest(signature.encode(), _sign_watch(secret, payload).encode()):
        raise TokenError("the watch grant's signature is invalid")
    try:
        body = json.loads(_unb64(payload))
        claim = WatchClaim(str(body["t"]), int(body["e"]))
    except (ValueError, KeyError, TypeError) as exc:
        raise TokenError("the watch grant's payload is malformed") from exc
    if claim.expires_at < now:
        raise TokenError(
            "the watch grant has expired: ask the lobby for a fresh one (WatchLounge)",
            Reason.WATCH_GRANT_EXPIRED,
        )
    return claim
