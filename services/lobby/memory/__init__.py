"""In-memory fakes of the lobby's ports, for service tests (no PostgreSQL).

One module per port. Each method does its whole work without awaiting in
between, so on one event loop it is atomic, as the adapter's transaction is.
The contract suites run these and the PostgreSQL adapters through the same
tests.
"""

from services.lobby.memory.buy_ins import MemoryBuyIns
from services.lobby.memory.chip_adds import MemoryChipAdds
from services.lobby.memory.closes import MemoryCloses
from services.lobby.memory.ledger import MemoryLedger
from services.lobby.memory.lounges import MemoryLounges
from services.lobby.memory.players import MemoryPlayers
from services.lobby.memory.sessions import MemorySessions
from services.lobby.memory.tables import FakeTable, MemoryTables
from services.lobby.memory.throttle import MemoryThrottle

__all__ = [
    "FakeTable",
    "MemoryBuyIns",
    "MemoryChipAdds",
    "MemoryCloses",
    "MemoryLedger",
    "MemoryLounges",
    "MemoryPlayers",
    "MemorySessions",
    "MemoryTables",
    "MemoryThrottle",
]
