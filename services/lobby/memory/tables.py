"""The ``Tables`` port in memory: a fake table service's admin calls."""

from __future__ import annotations

from dataclasses import dataclass

from poker.events.v1 import events_pb2 as epb
from services.lobby.ports.lounges import LoungeSeat
from services.lobby.ports.tables import SeatGrant, TableRefused, TablesUnavailable


@dataclass(slots=True)
class FakeTable:
    name: str
    config: bytes
    seats: dict[int, LoungeSeat]


class MemoryTables:
    """The table service's admin calls, in memory: idempotent by request id, a taken seat
    refused. ``unavailable`` makes every call fail as an unreachable service would, after
    (``lost_answers``) or before doing its work."""

    def __init__(self) -> None:
        self.tables: dict[str, FakeTable] = {}
        self._answers: dict[str, object] = {}
        self.unavailable = False
        self.lost_answers = False
        self.calls = 0

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
                raise TableRefused("ALREADY_EXISTS", f"table {table_id} already exists")
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
    ) -> SeatGrant:
        self._gate()
        key = f"seat/{request_id}"
        answer = self._answers.get(key)
        if answer is None:
            table = self.tables.get(table_id)
            if table is None:
                raise TableRefused("NO_TABLE", f"no table {table_id}")
            if seat is None:
                count = epb.TableConfig.FromString(table.config).seat_count
                free = [s for s in range(count) if s not in table.seats]
                if not free:
                    raise TableRefused("TABLE_FULL", f"table {table_id} is full")
                seat = free[0]
            if seat in table.seats:
                raise TableRefused("SEAT_TAKEN", f"seat {seat} is taken")
            table.seats[seat] = LoungeSeat(seat, player_id, display_name, ai_level, stack)
            answer = SeatGrant(seat, f"token-{request_id}", None)
            self._answers[key] = answer
        self._answer()
        assert isinstance(answer, SeatGrant)
        return answer
