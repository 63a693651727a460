"""The ``Sessions`` port: refresh-token families, rotated atomically, revoked on reuse."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from felt.storage.idempotency import RequestKey


@dataclass(frozen=True, slots=True)
class Session:
    """A refresh-token family: one sign-in, its refreshes, until expiry or revocation."""

    session_id: str
    player_id: str
    generation: int  # of the refresh token that is current
    issued_at: datetime  # of the current generation
    expires_at: datetime
    revoked: bool


class Rotation(enum.Enum):
    ROTATED = "rotated"  # the token was current: the session moved to the next generation
    RETRIED = "retried"  # this same refresh call rotated it before: the same answer
    REUSED = "reused"  # an already rotated token used again: the session is now revoked
    REVOKED = "revoked"  # the session was revoked (signed out, or reuse detected)
    EXPIRED = "expired"
    UNKNOWN = "unknown"  # no such token


TokenHasher = Callable[[str, int], bytes]
"""The SHA-256 of a session's refresh token of a generation (tokens are derived, not stored)."""


class Sessions(Protocol):
    async def start(
        self,
        session_id: str,
        player_id: str,
        request: RequestKey,
        token_hash: TokenHasher,
        at: datetime,
        ttl: timedelta,
    ) -> Session:
        """Start a session at generation 0; a retry (same key) finds the first one."""
        ...

    async def get(self, session_id: str) -> Session | None: ...

    async def rotate(
        self,
        token_hash: bytes,
        request: RequestKey,
        next_hash: TokenHasher,
        at: datetime,
        ttl: timedelta,
    ) -> tuple[Rotation, Session | None]:
        """Exchange a refresh token for the next generation's, atomically (see :class:`Rotation`);
        the session is returned for ROTATED and RETRIED (at the retried call's generation)."""
        ...

    async def revoke(self, session_id: str, at: datetime, why: str) -> bool:
        """Revoke the session; False if it was revoked already (or does not exist)."""
        ...
