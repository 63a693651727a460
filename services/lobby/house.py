"""The house's daily limit: what one account may win from the house in a UTC day.

The house funds every AI seat (``Ledger.fund_ai_seat``), so a player who beats
the AI wins the house's chips: accounted, but without a bound one account could
farm easy AI seats all day. The decision (docs/operations.md): an account whose
net result at lounges with AI seats since midnight UTC has reached
``LobbySettings.house_daily_win_limit`` may join no lounge with AI seats until
the next UTC day. Nothing is taken back and a seat already held plays on, so
one account's exposure of the house per day is bounded by the limit plus the
AI stacks at the lounges it sits at (each at most the lounge's ``max_buy_in``) and their
refills (``LobbySettings.ai_refills_per_day`` a seat per day at most).
Lounges of people only are never limited: their chips come from the players.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from poker.v1.reason_pb2 import Reason
from services.lobby.application import LobbyApp
from services.lobby.ports import Lounge
from services.lobby.refusals import Code, Refused


def day_start(at: datetime) -> datetime:
    """Midnight UTC (of ``at``'s zone, which the lobby's clock keeps UTC) of ``at``'s day."""
    return at.replace(hour=0, minute=0, second=0, microsecond=0)


async def house_limit_refusal(lobby: LobbyApp, lounge: Lounge, player_id: str) -> Refused | None:
    """Why ``player_id`` may not join ``lounge`` now (its daily winnings from the house are
    at the limit), if the lounge has AI seats and it may not."""
    if not any(s.ai_level for s in lounge.seats):
        return None
    limit = lobby.settings.house_daily_win_limit
    today = day_start(lobby.clock())
    if await lobby.ledger.house_won(player_id, today) < limit:
        return None
    return Refused(
        Code.RESOURCE_EXHAUSTED,
        f"an account may win at most {limit:,} chips a day from the house's AI seats; "
        f"lounges with AI seats are open to it again from "
        f"{(today + timedelta(days=1)).isoformat()}",
        Reason.HOUSE_LIMIT_REACHED,
    )
