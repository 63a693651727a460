"""Spectators' shared frames on a real table service (real Redis, gRPC on loopback).

A spectator's live item is encoded once and the same bytes go to every
spectator stream of the table (``services.table.frames``). What keeps a seat's
cards out of them is the guard in ``TableService.WatchTable`` (only a
spectator's item of the live feed is shared): held here on the wire, by the
bytes each stream receives. The frame cache finds an entry by the decoded
event object (and its meta, decoded with it), so two tables' spectators can
never be handed each other's frames: their bytes differ.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import grpc

from poker.v1 import table_service_pb2 as pb
from tests.integration.table.harness import WAIT, SeatKey, TableEnv

WATCH = "/poker.v1.TableService/WatchTable"


class RawWatcher:
    """A ``WatchTable`` stream kept as the bytes of each item, as the service sent them."""

    def __init__(
        self, channel: grpc.aio.Channel, table_id: str, seat: SeatKey | None = None, start: int = 0
    ) -> None:
        request = pb.WatchTableRequest(table_id=table_id, from_sequence=start)
        metadata: tuple[tuple[str, str], ...] = ()
        if seat is not None:
            request.seat = seat.seat
            metadata = seat.md
        # No deserializer: each item as the bytes that came.
        call: Any = channel.unary_stream(
            WATCH, request_serializer=pb.WatchTableRequest.SerializeToString
        )
        self.call = call(request, metadata=metadata)
        self.frames: dict[int, bytes] = {}  # sequence -> the event's item's bytes
        self.started = False  # its first item (the snapshot, or a replayed event) came
        self.task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        async for data in self.call:
            self.started = True
            item = pb.WatchTableResponse.FromString(data)
            if item.HasField("event"):
                self.frames[item.event.sequence] = data

    def hole_cards(self) -> dict[int, pb.WatchTableResponse]:
        """The hole_cards_dealt items received, by sequence."""
        items = {s: pb.WatchTableResponse.FromString(d) for s, d in self.frames.items()}
        return {s: i for s, i in items.items() if i.event.HasField("hole_cards_dealt")}

    async def wait(self, check: Callable[[], bool], what: str) -> None:
        async def until() -> None:
            while not check():
                if self.task.done():
                    raise AssertionError(f"stream ended ({self.task.exception()!r}) before {what}")
                await asyncio.sleep(0.02)

        await asyncio.wait_for(until(), WAIT)

    async def close(self) -> None:
        self.call.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


async def test_a_seat_never_gets_a_shared_frame_and_tables_never_share_one(
    table_env: TableEnv,
) -> None:
    server = await table_env.start_server()
    stub = table_env.stub(server)
    channel = table_env.channels[-1]
    tables = [await table_env.create_table(stub, table_env.nlhe(2)) for _ in range(2)]
    a, b = tables
    seat0 = await table_env.seat(stub, a, 0)
    spectators = [RawWatcher(channel, a), RawWatcher(channel, a)]
    other_table = RawWatcher(channel, b)
    mine = RawWatcher(channel, a, seat0)
    watchers = [*spectators, other_table, mine]
    try:
        for watcher in watchers:  # every stream is open before the hands begin
            await watcher.wait(lambda w=watcher: w.started, "the snapshot")  # type: ignore[misc]
        await table_env.seat(stub, a, 1)  # hand 1 of table a begins
        await table_env.seat(stub, b, 0)
        await table_env.seat(stub, b, 1)  # and of table b
        for watcher in watchers:
            await watcher.wait(lambda w=watcher: len(w.hole_cards()) == 2, "both seats' cards")  # type: ignore[misc]

        # The seat's stream: its own hole cards, never the others'.
        for item in mine.hole_cards().values():
            body = item.event.hole_cards_dealt
            assert all(c.hidden == (body.seat != 0) for c in body.cards), item
        # Spectators: nobody's; the seat's bytes for those events are not the spectators'.
        for spectator in (*spectators, other_table):
            for item in spectator.hole_cards().values():
                assert all(c.hidden for c in item.event.hole_cards_dealt.cards), item
        own = [s for s, i in mine.hole_cards().items() if i.event.hole_cards_dealt.seat == 0]
        assert len(own) == 1
        assert mine.frames[own[0]] != spectators[0].frames[own[0]]

        # Every spectator of table a got the same bytes for each live event.
        common = spectators[0].frames.keys() & spectators[1].frames.keys()
        assert common and all(spectators[0].frames[s] == spectators[1].frames[s] for s in common)
        # Table b's spectator never got one of table a's frames, at any sequence.
        assert set(other_table.frames.values()).isdisjoint(spectators[0].frames.values())
        for data in other_table.frames.values():
            assert pb.WatchTableResponse.FromString(data).event.table_id == b

        # A spectator replaying table a (items of its own, never cached) sees the same bytes.
        last = max(spectators[0].frames)
        replay = RawWatcher(channel, a, start=1)
        watchers.append(replay)
        await replay.wait(lambda: last in replay.frames, "the replay to catch up")
        assert all(replay.frames[s] == data for s, data in spectators[0].frames.items())
    finally:
        for watcher in watchers:
            await watcher.close()
