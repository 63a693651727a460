"""The ``Throttle`` port: attempts reserved per scope in a window (sign-ins before a password
is checked, sign-ups per client address)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Protocol


class Throttle(Protocol):
    """Attempts counted per scope (``client:<address>``, ``name:<name_key>``,
    ``sign-up:<address>``...) in a window.

    An attempt is *reserved* before its password is checked, not recorded after: checking is
    slow (Argon2 in a thread), so a count read first and written afterwards would let any
    number of concurrent guesses through before the first failure landed.
    """

    async def reserve(self, limits: Mapping[str, int], at: datetime, window: timedelta) -> bool:
        """Count one attempt in every scope of ``limits`` at once (a window older than
        ``window`` starts over) if each scope's new count stays within its limit; otherwise
        count nothing and return False. Atomic: of any number of concurrent reservations of a
        scope, at most its limit succeed in one window."""
        ...

    async def failures(self, scopes: Sequence[str], since: datetime) -> int:
        """The most attempts any of ``scopes`` has had in a window that started after ``since``."""
        ...

    async def clear(self, scopes: Sequence[str]) -> None:
        """Forget the scopes' counts (a successful sign-in)."""
        ...

    async def refund(self, scopes: Sequence[str]) -> None:
        """Take back one reserved attempt from each scope (one that succeeded)."""
        ...

    async def prune(self, before: datetime) -> int:
        """Forget every scope whose window started at or before ``before`` (its count would
        start over anyway): how many. Run periodically, it keeps the counts bounded by the
        scopes seen in one window."""
        ...
