"""The ``Tables`` port in memory: a fake table service's admin calls."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from poker.events.v1 import events_pb2 as epb
from poker.v1.reason_pb2 import Reason
from services.lobby.ports.lounges import LoungeSeat
from services.lobby.ports.tables import (
    ChipsAdded,
    Departure,
    Occupants,
    SeatGrant,
    SeatNow,
    TableRefused,
    TablesUnavailable,
    WatchGrant,
)


@dataclass(slots=True)
class FakeTable:
    name: str
    config: bytes
    seats: dict[int, LoungeSeat]
    sequence: int = 0
    dealt_in: set[int] = field(default_factory=set)  # seats in the hand in play
    leaving: dict[int, str] = field(default_factory=dict)  # seat: its leave's request id
    # PlayerLeft events: (sequence, seat, player id, stack, the leave's request id)
    left: list[tuple[int, int, str, int, str]] = field(default_factory=list)
    closed: bool = False
    seated_by: dict[int, str] = field(default_factory=dict)  # seat: its SeatPlayer's request id
    vacated_by: list[str] = field(default_factory=list)  # of each ``left``: its seating's id
    waiting: set[int] = field(default_factory=set)  # seats seated waiting for the big blind
    hands: int = 0  # hands ended (the table's count: hand n's id is "<table>:<n>")
    busted: dict[int, int] = field(default_factory=dict)  # seat: the hand that left it at 0


class MemoryTables:
    """The table service's admin calls, in memory: idempotent by request id, a taken seat
    refused; a seat dealt in (:meth:`deal`) leaves when the hand ends (:meth:`end_hand`).
    ``unavailable`` makes every call fail as an unreachable service would, after
    (``lost_answers``) or before doing its work."""

    def __init__(self) -> None:
        self.tables: dict[str, FakeTable] = {}
        self._answers: dict[str, object] = {}
        self.unavailable = False
        self.lost_answers = False
        self.calls = 0
        self.grants = 0  # watch grants issued

    def _gate(self) -> None:
        self.calls += 1
        if self.unavailable and not self.lost_answers:
            raise TablesUnavailable("the table service is unreachable")

    def _answer(self) -> None:
        if self.unavailable:
            raise TablesUnavailable("the answer was lost")

    async def create(self, table_id: str, name: str, config: bytes, request_id: str) -> None:
        self._gate()
        if f"create/{request_id}" not in self._answers:
            if table_id in self.tables:
                raise TableRefused.of(Reason.ALREADY_EXISTS, f"table {table_id} already exists")
            self.tables[table_id] = FakeTable(name, config, {})
            self._answers[f"create/{request_id}"] = None
        self._answer()

    async def seat(
        self,
        table_id: str,
        seat: int | None,
        player_id: str,
        display_name: str,
        stack: int,
        ai_level: int,
        request_id: str,
        *,
        wait_for_big_blind: bool = False,
    ) -> SeatGrant:
        self._gate()
        key = f"seat/{request_id}"
        answer = self._answers.get(key)
        if answer is None:
            table = self.tables.get(table_id)
            if table is None:
                raise TableRefused.of(Reason.NO_TABLE, f"no table {table_id}")
            if table.closed:
                raise TableRefused.of(Reason.TABLE_CLOSED, "the table is closed")
            if seat is None:
                count = epb.TableConfig.FromString(table.config).seat_count
                free = [s for s in range(count) if s not in table.seats]
                if not free:
                    raise TableRefused.of(Reason.TABLE_FULL, f"table {table_id} is full")
                seat = free[0]
            if seat in table.seats:
                raise TableRefused.of(Reason.SEAT_TAKEN, f"seat {seat} is taken")
            variant = epb.TableConfig.FromString(table.config).variant
            if wait_for_big_blind and variant != epb.VARIANT_NLHE:
                raise TableRefused.of(Reason.NO_BIG_BLIND, "no big blind to wait for")
            if wait_for_big_blind:
                table.waiting.add(seat)
            table.seats[seat] = LoungeSeat(seat, player_id, display_name, ai_level, stack)
            table.seated_by[seat] = request_id
            table.sequence += 1
            answer = SeatGrant(seat, f"token-{request_id}", None, table.sequence)
            self._answers[key] = answer
            self._answers[f"token/{answer.seat_token}"] = (table_id, seat)
        self._answer()
        assert isinstance(answer, SeatGrant)
        return answer

    async def leave(
        self,
        table_id: str,
        seat: int,
        seat_token: str,
        request_id: str,
        *,
        busted_hand: int | None = None,
    ) -> Departure:
        self._gate()
        key = f"leave/{request_id}"
        answer = self._answers.get(key)
        if answer is None:
            table, player = self._occupied(table_id, seat)
            if seat_token and self._answers.get(f"token/{seat_token}") != (table_id, seat):
                raise TableRefused.of(Reason.BAD_SEAT_TOKEN, "not this seat's token")
            if busted_hand is not None and (
                player.stack or seat in table.dealt_in or table.busted.get(seat) != busted_hand
            ):
                raise TableRefused.of(Reason.NOT_BUSTED, f"seat {seat} is not busted since then")
            if seat in table.leaving:
                raise TableRefused.of(
                    Reason.ALREADY_LEAVING, f"seat {seat} leaves when this hand ends"
                )
            table.sequence += 1
            if seat in table.dealt_in:
                table.leaving[seat] = request_id
            else:
                self._vacate(table_id, seat, request_id)
            answer = Departure(player.stack, table.sequence)
            self._answers[key] = answer
        self._answer()
        assert isinstance(answer, Departure)
        return answer

    async def reissue(self, table_id: str, seat: int, player_id: str, request_id: str) -> SeatGrant:
        self._gate()
        key = f"reissue/{request_id}"
        answer = self._answers.get(key)
        if answer is None:
            table, player = self._occupied(table_id, seat)
            if player.player_id != player_id:
                raise TableRefused.of(Reason.NOT_OCCUPANT, f"seat {seat} is not {player_id}'s")
            for old in [k for k, v in self._answers.items() if v == (table_id, seat)]:
                del self._answers[old]  # every earlier token of the seat is void
            table.sequence += 1
            answer = SeatGrant(seat, f"token-reissue-{request_id}", None, table.sequence)
            self._answers[key] = answer
            self._answers[f"token/{answer.seat_token}"] = (table_id, seat)
        assert isinstance(answer, SeatGrant)
        if f"token/{answer.seat_token}" not in self._answers:  # as the table service checks
            raise TableRefused.of(
                Reason.SEAT_TOKEN_SUPERSEDED, "a later reissue replaced this token"
            )
        self._answer()
        return answer

    async def seat_now(self, table_id: str, seat: int) -> SeatNow | None:
        return (await self.seats_now(table_id)).get(seat)

    async def seats_now(self, table_id: str) -> dict[int, SeatNow]:
        self._gate()
        table = self.tables.get(table_id)
        if table is None:
            raise TableRefused.of(Reason.NO_TABLE, f"no table {table_id}")
        self._answer()
        return {
            n: SeatNow(p.player_id, p.stack, n in table.dealt_in, table.busted.get(n, 0))
            for n, p in table.seats.items()
        }

    async def add_chips(
        self,
        table_id: str,
        seat: int,
        seat_token: str,
        amount: int,
        max_stack: int,
        request_id: str,
    ) -> ChipsAdded:
        self._gate()
        key = f"add/{seat_token}/{request_id}"  # the table scopes ids to the seat's token
        answer = self._answers.get(key)
        if answer is None:
            found = self.tables.get(table_id)
            if not seat_token and found is not None and seat not in found.seats:
                # The service's call for whoever sits there, and nobody does (the table's
                # auth refuses it so, before its rules would: EMPTY_SEAT, not SEAT_EMPTY).
                raise TableRefused.of(Reason.EMPTY_SEAT, "nobody sits at the seat asked for")
            table, player = self._occupied(table_id, seat)
            if seat_token and self._answers.get(f"token/{seat_token}") != (table_id, seat):
                raise TableRefused.of(Reason.BAD_SEAT_TOKEN, "not this seat's token")
            if seat in table.dealt_in:
                raise TableRefused.of(Reason.HAND_RUNNING, "chips can be added between hands only")
            if max_stack and player.stack + amount > max_stack:
                raise TableRefused.of(Reason.ABOVE_MAX_STACK, f"at most {max_stack:,} chips a seat")
            if table.closed:
                raise TableRefused.of(Reason.TABLE_CLOSED, "the table is closed")
            table.seats[seat] = replace(player, stack=player.stack + amount)
            table.busted.pop(seat, None)  # chips again: no longer busted
            table.sequence += 1
            answer = ChipsAdded(player.stack + amount, table.sequence)
            self._answers[key] = answer
        self._answer()
        assert isinstance(answer, ChipsAdded)
        return answer

    def _occupied(self, table_id: str, seat: int) -> tuple[FakeTable, LoungeSeat]:
        """The table and who sits at ``seat``, refused as the table service would."""
        table = self.tables.get(table_id)
        if table is None:
            raise TableRefused.of(Reason.NO_TABLE, f"no table {table_id}")
        player = table.seats.get(seat)
        if player is None:
            raise TableRefused.of(Reason.SEAT_EMPTY, f"nobody sits at seat {seat}")
        return table, player

    async def close(self, table_id: str, request_id: str) -> bool:
        self._gate()
        table = self.tables.get(table_id)
        if table is None:
            raise TableRefused.of(Reason.NO_TABLE, f"no table {table_id}")
        if not table.closed and table.dealt_in:
            self._answer()
            return False
        if not table.closed:
            table.closed = True
            table.sequence += 1
        self._answer()
        return True

    async def watch_grant(self, table_id: str) -> WatchGrant:
        self._gate()
        if table_id not in self.tables:
            raise TableRefused.of(Reason.NO_TABLE, "no table has this table_id")
        self.grants += 1
        grant = WatchGrant(
            f"watch-{table_id}-{self.grants}", datetime.now(UTC) + timedelta(hours=1)
        )
        self._answer()
        return grant

    async def occupants(self, table_id: str) -> Occupants:
        self._gate()
        table = self.tables.get(table_id)
        if table is None:
            raise TableRefused.of(Reason.NO_TABLE, f"no table {table_id}")
        found = Occupants(
            table.sequence,
            table.closed,
            tuple((n, s.player_id) for n, s in sorted(table.seats.items())),
        )
        self._answer()
        return found

    def end_by_itself(self, table_id: str) -> None:
        """The table reached its limit: closed after the hand (its seats still sit there)."""
        self.end_hand(table_id)
        table = self.tables[table_id]
        table.closed = True
        table.sequence += 1

    def _vacate(self, table_id: str, seat: int, request_id: str) -> None:
        """PlayerLeft: the seat is free and its token void."""
        table = self.tables[table_id]
        for key in [k for k, v in self._answers.items() if v == (table_id, seat)]:
            del self._answers[key]
        player = table.seats.pop(seat)
        table.busted.pop(seat, None)
        table.left.append((table.sequence, seat, player.player_id, player.stack, request_id))
        table.vacated_by.append(table.seated_by.pop(seat, ""))

    async def vacated(
        self, table_id: str, seat: int, player_id: str, after_sequence: int
    ) -> int | None:
        self._gate()
        table = self.tables.get(table_id)
        if table is None:
            raise TableRefused.of(Reason.NO_TABLE, f"no table {table_id}")
        found = next(
            (
                stack
                for n, s, p, stack, _ in table.left
                if n > after_sequence and s == seat and p == player_id
            ),
            None,
        )
        self._answer()
        return found

    def deal(self, table_id: str) -> None:
        """A hand starts: every seated player is dealt in."""
        table = self.tables[table_id]
        table.dealt_in = set(table.seats)
        table.sequence += 1

    def move_chips(self, table_id: str, from_seat: int, to_seat: int, amount: int) -> None:
        """Chips won in the hand in play: ``amount`` from one seat's stack to another's."""
        table = self.tables[table_id]
        a, b = table.seats[from_seat], table.seats[to_seat]
        amount = min(amount, a.stack - 1)
        table.seats[from_seat] = replace(a, stack=a.stack - amount)
        table.seats[to_seat] = replace(b, stack=b.stack + amount)

    def end_hand(self, table_id: str) -> None:
        """The hand ends: each seat dealt in and left at 0 is busted since this hand; the
        seats that asked to leave during it are vacated (PlayerLeft)."""
        table = self.tables[table_id]
        table.hands += 1
        for seat in table.dealt_in:
            if seat in table.seats and not table.seats[seat].stack:
                table.busted[seat] = table.hands
        table.dealt_in = set()
        for seat, request_id in sorted(table.leaving.items()):
            table.sequence += 1
            self._vacate(table_id, seat, request_id)
        table.leaving = {}
