"""The ``Throttle`` port in memory."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta


class MemoryThrottle:
    def __init__(self) -> None:
        self._scopes: dict[str, tuple[int, datetime]] = {}

    async def failures(self, scopes: Sequence[str], since: datetime) -> int:
        counts = [
            count
            for scope in scopes
            if (entry := self._scopes.get(scope)) is not None
            for count, start in [entry]
            if start > since
        ]
        return max(counts, default=0)

    async def reserve(self, limits: Mapping[str, int], at: datetime, window: timedelta) -> bool:
        # No await between the read and the write: atomic on the event loop, as the
        # adapter's transaction is.
        counted: dict[str, tuple[int, datetime]] = {}
        for scope, limit in limits.items():
            count, start = self._scopes.get(scope, (0, at))
            if start <= at - window:
                count, start = 0, at
            if count + 1 > limit:
                return False
            counted[scope] = (count + 1, start)
        self._scopes.update(counted)
        return True

    async def clear(self, scopes: Sequence[str]) -> None:
        for scope in scopes:
            self._scopes.pop(scope, None)

    async def refund(self, scopes: Sequence[str]) -> None:
        for scope in scopes:
            entry = self._scopes.get(scope)
            if entry is not None and entry[0] > 1:
                self._scopes[scope] = (entry[0] - 1, entry[1])
            elif entry is not None:
                del self._scopes[scope]

    async def prune(self, before: datetime) -> int:
        old = [scope for scope, (_, start) in self._scopes.items() if start <= before]
        for scope in old:
            del self._scopes[scope]
        return len(old)
