"""The lobby's connection pool: asyncpg's, without its reset query on every release.

asyncpg resets a connection each time it goes back to the pool with one more round
trip (``SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL``). The
lobby's connections never hold what that clears: no advisory locks (the migration
runner's are on a connection of its own), no cursors outside a transaction, no
``LISTEN``, no session settings. A buy-in takes a connection four times, so the reset
was a quarter of its round trips. What matters is still done: asyncpg rolls back a
transaction left open and drops listeners before it calls :func:`keep_session`.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import asyncpg

ConnectionHook = Callable[[asyncpg.Connection], Coroutine[Any, Any, None]]


async def keep_session(conn: asyncpg.Connection) -> None:
    """The pool's reset: nothing beyond asyncpg's own rollback (see the module's doc)."""


async def create_pool(
    dsn: str,
    *,
    min_size: int,
    max_size: int,
    init: ConnectionHook | None = None,
    reset: ConnectionHook = keep_session,
) -> asyncpg.Pool:
    """The pool the lobby's adapters share (``init`` and ``reset``: for the benchmark's
    statement counting)."""
    return await asyncpg.create_pool(
        dsn, min_size=min_size, max_size=max_size, init=init, reset=reset
    )
