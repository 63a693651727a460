"""The lobby's ports: what it stores, as ``typing.Protocol``s, and the values they hold.

One module per port (``players``, ``sessions``, ``throttle``, ``ledger``,
``lounges``, ``tables``, ``buy_ins``, ``chip_adds``, ``closes``); this package
re-exports their public names. Each port has a PostgreSQL adapter
(``services.lobby.postgres``) and an in-memory fake (``services.lobby.memory``);
one contract suite per port
(``tests/integration/lobby/test_*_contract.py``) runs against both, so the
service tests on the fakes (``tests/unit/services/test_lobby_app_on_fakes.py``)
test what production does.

Every write that a client can retry is keyed by a
:class:`~felt.storage.idempotency.RequestKey` (scoped to the caller and the call,
sealed with the request's fingerprint): the same key with the same
fingerprint finds the first outcome and changes nothing; with another
fingerprint it is :class:`~felt.storage.idempotency.RequestReused`.
"""

from services.lobby.ports.buy_ins import (
    BuyIn,
    BuyIns,
    BuyInState,
    NewBuyIn,
    NotSeated,
    Reservation,
    cash_out_key,
    refund_key,
    reserve_key,
)
from services.lobby.ports.chip_adds import (
    ChipAdd,
    ChipAdds,
    ChipAddState,
    ChipReservation,
    NewChipAdd,
    add_key,
    add_refund_key,
    add_request_id,
)
from services.lobby.ports.closes import Closes, closed_key, ends_by_itself
from services.lobby.ports.ledger import (
    Account,
    AiRefill,
    Audit,
    HouseKind,
    HouseMovement,
    InsufficientChips,
    Kind,
    Ledger,
    Movement,
    NoAccount,
    RefillState,
    TopUpRefused,
    Totals,
    Winner,
    house_return_key,
    house_seat_key,
    refill_key,
    refill_request_id,
    refill_return_key,
)
from services.lobby.ports.lounges import (
    BUSTED_GRACE_RANGE_S,
    DEFAULT_BUSTED_GRACE_S,
    Lounge,
    LoungeFilter,
    Lounges,
    LoungeSeat,
    LoungeState,
    NewLounge,
    TooManyLounges,
)
from services.lobby.ports.players import AlreadyRegistered, NameTaken, NewPlayer, Player, Players
from services.lobby.ports.sessions import Rotation, Session, Sessions, TokenHasher
from services.lobby.ports.tables import (
    ChipsAdded,
    Departure,
    Occupants,
    SeatGrant,
    SeatNow,
    TableRefused,
    Tables,
    TablesUnavailable,
    WatchGrant,
)
from services.lobby.ports.throttle import Throttle

__all__ = [
    "BUSTED_GRACE_RANGE_S",
    "DEFAULT_BUSTED_GRACE_S",
    "Account",
    "AiRefill",
    "AlreadyRegistered",
    "Audit",
    "BuyIn",
    "BuyInState",
    "BuyIns",
    "ChipAdd",
    "ChipAddState",
    "ChipAdds",
    "ChipReservation",
    "ChipsAdded",
    "Closes",
    "Departure",
    "HouseKind",
    "HouseMovement",
    "InsufficientChips",
    "Kind",
    "Ledger",
    "Lounge",
    "LoungeFilter",
    "LoungeSeat",
    "LoungeState",
    "Lounges",
    "Movement",
    "NameTaken",
    "NewBuyIn",
    "NewChipAdd",
    "NewLounge",
    "NewPlayer",
    "NoAccount",
    "NotSeated",
    "Occupants",
    "Player",
    "Players",
    "RefillState",
    "Reservation",
    "Rotation",
    "SeatGrant",
    "SeatNow",
    "Session",
    "Sessions",
    "TableRefused",
    "Tables",
    "TablesUnavailable",
    "Throttle",
    "TokenHasher",
    "TooManyLounges",
    "TopUpRefused",
    "Totals",
    "WatchGrant",
    "Winner",
    "add_key",
    "add_refund_key",
    "add_request_id",
    "cash_out_key",
    "closed_key",
    "ends_by_itself",
    "house_return_key",
    "house_seat_key",
    "refill_key",
    "refill_request_id",
    "refill_return_key",
    "refund_key",
    "reserve_key",
]
