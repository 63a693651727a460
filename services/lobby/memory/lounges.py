"""The ``Lounges`` port in memory."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from felt.storage.idempotency import RequestReused
from services.lobby.domain import lounges as rules
from services.lobby.domain.sagas import FreedSeat
from services.lobby.ports.lounges import (
    Lounge,
    LoungeFilter,
    LoungeSeat,
    LoungeState,
    NewLounge,
)


class MemoryLounges:
    def __init__(self) -> None:
        self._lounges: dict[str, Lounge] = {}
        self._requests: dict[str, tuple[bytes, str]] = {}

    def take_seat(self, lounge_id: str, taken: LoungeSeat) -> None:
        """``taken`` in the lounge's seats, in place of whoever its view had there (storage
        only: the buy-in rules say when, ``services.lobby.domain.sagas.seated``)."""
        lounge = self._lounges[lounge_id]
        others = [s for s in lounge.seats if s.seat != taken.seat]
        seats = tuple(sorted([*others, taken], key=lambda s: s.seat))
        self._lounges[lounge_id] = replace(lounge, seats=seats)

    def free_seat(self, freed: FreedSeat) -> None:
        """The lounge's seat ``freed`` left, if its player still holds it there."""
        lounge = self._lounges[freed.lounge_id]
        seats = tuple(
            s for s in lounge.seats if not (s.seat == freed.seat and s.player_id == freed.player_id)
        )
        self._lounges[freed.lounge_id] = replace(lounge, seats=seats)

    async def create(self, new: NewLounge, max_per_owner: int | None = None) -> Lounge:
        first = self._requests.get(new.request.key)
        if first is not None:
            if first[0] != new.request.fingerprint:
                raise RequestReused()
            return self._lounges[first[1]]
        owned = sum(
            1
            for lounge in self._lounges.values()
            if lounge.owner_id == new.owner_id and lounge.state in rules.OWNED
        )
        rules.check_room(owned, max_per_owner)
        if new.lounge_id in self._lounges:
            raise ValueError(f"lounge {new.lounge_id} exists")
        lounge = Lounge(
            new.lounge_id,
            len(self._lounges) + 1,
            new.owner_id,
            new.name,
            new.variant,
            new.config,
            new.stake,
            new.seat_count,
            new.min_buy_in,
            new.max_buy_in,
            new.invite_code,
            LoungeState.CREATING,
            new.at,
            tuple(sorted(new.ai_seats, key=lambda s: s.seat)),
            busted_grace_s=new.busted_grace_s,
        )
        self._lounges[lounge.lounge_id] = lounge
        self._requests[new.request.key] = (new.request.fingerprint, lounge.lounge_id)
        return lounge

    async def get(self, lounge_id: str) -> Lounge | None:
        return self._lounges.get(lounge_id)

    def move(self, lounge_id: str, to: LoungeState, failure: str | None = None) -> Lounge:
        """The lounge moved to ``to`` if the lifecycle's rule allows it now
        (``services.lobby.domain.lounges.moved``), else as it is."""
        lounge = self._lounges[lounge_id]
        after = rules.moved(lounge, to, failure)
        if after is None:
            return lounge
        self._lounges[lounge_id] = after
        return after

    async def mark_open(self, lounge_id: str) -> Lounge:
        return self.move(lounge_id, LoungeState.OPEN)

    async def listing(self, where: LoungeFilter, before: int | None, limit: int) -> list[Lounge]:
        found = [
            lounge
            for lounge in sorted(self._lounges.values(), key=lambda x: -x.listing_id)
            if lounge.state is LoungeState.OPEN
            and not lounge.private
            and (before is None or lounge.listing_id < before)
            and (not where.variant or lounge.variant == where.variant)
            and (not where.min_stake or lounge.stake >= where.min_stake)
            and (not where.max_stake or lounge.stake <= where.max_stake)
            and lounge.free_seats >= where.min_free_seats
        ]
        return found[:limit]

    async def creating(self, limit: int, after: tuple[datetime, str] | None = None) -> list[Lounge]:
        found = [
            x
            for x in self._lounges.values()
            if x.state is LoungeState.CREATING
            and (after is None or (x.created_at, x.lounge_id) > after)
        ]
        return sorted(found, key=lambda x: (x.created_at, x.lounge_id))[:limit]

    async def occupied(self, after: int, limit: int) -> list[Lounge]:
        found = [
            x
            for x in self._lounges.values()
            if x.state is LoungeState.OPEN and x.listing_id > after and x.seats
        ]
        return sorted(found, key=lambda x: x.listing_id)[:limit]

    async def mark_failed(self, lounge_id: str, failure: str) -> Lounge:
        return self.move(lounge_id, LoungeState.FAILED, failure)
