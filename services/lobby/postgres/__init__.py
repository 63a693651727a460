"""The lobby's ports on PostgreSQL (asyncpg, one pool shared by every adapter).

One module per port; ``_tx`` holds what they share (the chips movement written
inside a caller's transaction). Every write is one transaction. A chips
movement locks its account row (``SELECT ... FOR UPDATE``) before it looks for
its key and writes, so two movements of one balance are serialised and never
both spend the same chips; the ``CHECK (balance >= 0)`` constraints are the
backstop. Token rotation locks the session row the same way, so of two
refreshes with one token only one rotates it. The schema is
``services/lobby/migrations``.
"""

from services.lobby.postgres.buy_ins import PgBuyIns
from services.lobby.postgres.chip_adds import PgChipAdds
from services.lobby.postgres.closes import PgCloses
from services.lobby.postgres.ledger import PgLedger
from services.lobby.postgres.lounges import PgLounges
from services.lobby.postgres.players import PgPlayers
from services.lobby.postgres.sessions import PgSessions
from services.lobby.postgres.throttle import PgThrottle

__all__ = [
    "PgBuyIns",
    "PgChipAdds",
    "PgCloses",
    "PgLedger",
    "PgLounges",
    "PgPlayers",
    "PgSessions",
    "PgThrottle",
]
