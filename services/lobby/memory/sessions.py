"""The ``Sessions`` port in memory."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from felt.storage.idempotency import RequestKey, RequestReused
from services.lobby.ports.sessions import Rotation, Session, TokenHasher


@dataclass(slots=True)
class _Token:
    session_id: str
    generation: int
    rotated_key: str | None = None
    rotated_fingerprint: bytes | None = None


class MemorySessions:
    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}
        self._requests: dict[str, tuple[bytes, str]] = {}
        self._tokens: dict[bytes, _Token] = {}

    async def start(
        self,
        session_id: str,
        player_id: str,
        request: RequestKey,
        token_hash: TokenHasher,
        at: datetime,
        ttl: timedelta,
    ) -> Session:
        first = self._requests.get(request.key)
        if first is not None:
            if first[0] != request.fingerprint:
                raise RequestReused()
            return self._sessions[first[1]]
        session = Session(session_id, player_id, 0, at, at + ttl, False)
        self._sessions[session_id] = session
        self._requests[request.key] = (request.fingerprint, session_id)
        self._tokens[token_hash(session_id, 0)] = _Token(session_id, 0)
        return session

    async def get(self, session_id: str) -> Session | None:
        return self._sessions.get(session_id)

    async def rotate(
        self,
        token_hash: bytes,
        request: RequestKey,
        next_hash: TokenHasher,
        at: datetime,
        ttl: timedelta,
    ) -> tuple[Rotation, Session | None]:
        token = self._tokens.get(token_hash)
        if token is None:
            return Rotation.UNKNOWN, None
        session = self._sessions[token.session_id]
        if token.rotated_key == request.key:
            if token.rotated_fingerprint != request.fingerprint:
                raise RequestReused()
            if session.revoked:
                return Rotation.REVOKED, None
            return Rotation.RETRIED, replace(session, generation=token.generation + 1)
        if session.revoked:
            return Rotation.REVOKED, None
        if token.rotated_key is not None or token.generation != session.generation:
            self._sessions[session.session_id] = replace(session, revoked=True)
            return Rotation.REUSED, None
        if session.expires_at <= at:
            return Rotation.EXPIRED, None
        token.rotated_key, token.rotated_fingerprint = request.key, request.fingerprint
        generation = session.generation + 1
        session = replace(session, generation=generation, issued_at=at, expires_at=at + ttl)
        self._sessions[session.session_id] = session
        self._tokens[next_hash(session.session_id, generation)] = _Token(
            session.session_id, generation
        )
        return Rotation.ROTATED, session

    async def revoke(self, session_id: str, at: datetime, why: str) -> bool:
        session = self._sessions.get(session_id)
        if session is None or session.revoked:
            return False
        self._sessions[session_id] = replace(session, revoked=True)
        return True
