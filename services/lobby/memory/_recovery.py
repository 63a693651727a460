"""The recovery pass's bookkeeping over in-memory saga rows (``MemoryBuyIns``,
``MemoryChipAdds``): the fakes of ``services.lobby.postgres._recovery``, one for both."""

from __future__ import annotations

import enum
from dataclasses import replace
from datetime import datetime
from typing import Any, ClassVar, Generic, Protocol, TypeVar


class _Saga(Protocol):
    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def saga_id(self) -> str: ...
    @property
    def state(self) -> enum.StrEnum: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def attempts(self) -> int: ...
    @property
    def next_attempt_at(self) -> datetime | None: ...
    @property
    def stuck_at(self) -> datetime | None: ...


S = TypeVar("S", bound=_Saga)


def _reserved(saga: _Saga) -> bool:
    return saga.state.value == "reserved"


def _due_at(saga: _Saga) -> datetime:
    """When a saga is due: its next attempt's time, or (never attempted) its reservation's."""
    return saga.next_attempt_at or saga.created_at


class MemoryRecoveryRows(Generic[S]):
    """``get``, ``unfinished``, ``due``, ``attempting``, ``attempt_failed``, ``stuck``,
    ``count_stuck``, ``count_by_state`` and ``requeue`` over ``self.sagas`` (no await between
    a check and its write: atomic on one event loop)."""

    sagas: dict[str, S]
    _LIVE_STATES: ClassVar[tuple[enum.StrEnum, ...]]  # what ``count_by_state`` counts

    async def get(self, saga_id: str) -> S | None:
        return self.sagas.get(saga_id)

    async def unfinished(self, limit: int) -> list[S]:
        found = [s for s in self.sagas.values() if _reserved(s)]
        return sorted(found, key=lambda s: (s.created_at, s.saga_id))[:limit]

    async def due(self, now: datetime, limit: int) -> list[S]:
        found = [
            s
            for s in self.sagas.values()
            if _reserved(s) and s.stuck_at is None and _due_at(s) <= now
        ]
        return sorted(found, key=lambda s: (_due_at(s), s.saga_id))[:limit]

    async def attempting(self, saga_id: str, at: datetime, next_at: datetime) -> S | None:
        saga = self.sagas[saga_id]
        if not _reserved(saga) or saga.stuck_at is not None or _due_at(saga) > at:
            return None
        saga = replace(
            saga, attempts=saga.attempts + 1, last_attempt_at=at, next_attempt_at=next_at
        )
        self.sagas[saga_id] = saga
        return saga

    async def attempt_failed(self, saga_id: str, error: str, stuck_at: datetime | None) -> S:
        saga = self.sagas[saga_id]
        if not _reserved(saga):
            return saga
        saga = replace(saga, last_error=error[:500], stuck_at=stuck_at or saga.stuck_at)
        self.sagas[saga_id] = saga
        return saga

    async def stuck(self, limit: int) -> list[S]:
        found = [s for s in self.sagas.values() if _reserved(s) and s.stuck_at is not None]
        return sorted(found, key=lambda s: (s.stuck_at or s.created_at, s.saga_id))[:limit]

    async def count_stuck(self) -> int:
        return len(await self.stuck(len(self.sagas)))

    async def count_by_state(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        live = {s.value for s in self._LIVE_STATES}
        for saga in self.sagas.values():
            if saga.state.value in live:
                counts[saga.state.value] = counts.get(saga.state.value, 0) + 1
        return counts

    async def requeue(self, saga_id: str) -> S:
        saga = self.sagas[saga_id]
        if not _reserved(saga):
            return saga
        saga = replace(saga, attempts=0, next_attempt_at=None, stuck_at=None, last_error=None)
        self.sagas[saga_id] = saga
        return saga
