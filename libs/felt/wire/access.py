"""Which RPCs are whose: the one declaration of the calls players and spectators make.

Every RPC of the services the public gateway serves is declared here once, as
public (players with their tokens, spectators without) or service-only (the
service credential's: the lobby's calls to the table service, an operator's).
The gateway forwards only what is declared public
(``services/gateway/edge.py``), so an RPC added to a service is refused at the
public edge until it is declared here; a test holds these lists to the
services' descriptors, so it cannot be left undeclared either. The services
still check every call themselves (``Caller.require_admin`` in the table
service): this list is what keeps the internal ones off the public port.
"""

from __future__ import annotations

TABLE_SERVICE = "poker.v1.TableService"
LOBBY_SERVICE = "poker.v1.LobbyService"
HISTORY_SERVICE = "poker.v1.HistoryService"

SERVICE_ONLY: dict[str, frozenset[str]] = {
    # The calls that move seats or chips in or out, the lobby's (FELT_ADMIN_TOKEN) only.
    TABLE_SERVICE: frozenset(
        {
            "CreateTable",
            "SeatPlayer",
            "LeaveSeat",
            "ReissueSeatToken",
            "AddChips",
            "CloseTable",
            "IssueWatchGrant",
        }
    ),
    LOBBY_SERVICE: frozenset(),
    HISTORY_SERVICE: frozenset(),
}
"""Per service (its full name), its internal RPCs: never forwarded by the public gateway."""

PUBLIC: dict[str, frozenset[str]] = {
    TABLE_SERVICE: frozenset(
        {
            "GetTable",
            "SitOut",
            "SitIn",
            "SubmitAction",
            "ShowCards",
            "GetTableView",
            "WatchTable",
            "GetHandHistory",
        }
    ),
    LOBBY_SERVICE: frozenset(
        {
            "CreateGuest",
            "Register",
            "UpgradeGuest",
            "SignIn",
            "RefreshSession",
            "SignOut",
            "GetPlayer",
            "GetBalance",
            "ListLedgerEntries",
            "TopUp",
            "CreateLounge",
            "ListLounges",
            "GetLounge",
            "JoinLounge",
            "LeaveLounge",
            "RefreshSeatToken",
            "CloseLounge",
            "WatchLounge",
            "AddSeatChips",
        }
    ),
    # The operator's view of a hand (reader HAND_READER_OPERATOR) is a request, not an RPC:
    # the gateway refuses it by the request (services/gateway/edge.py).
    HISTORY_SERVICE: frozenset({"GetHandHistory", "ListPlayerHands"}),
}
"""Per service (its full name), the RPCs players and spectators call: all the gateway
forwards."""


def is_public(service: str, method: str) -> bool:
    """Whether ``method`` of ``service`` (its full name) is declared public."""
    return method in PUBLIC.get(service, frozenset())
