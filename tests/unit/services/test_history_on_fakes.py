"""The history service's use cases on the fakes: the archive in memory, a table's stream in memory.

A recorded golden table of each variant is stored as the table service
stores it; its first hands are archived through the projector's own fold
(``felt.storage.archive.projection``), the rest stay only in the stream. Two lobby
players sit in two of its seats. What a client would get is asserted: who
sees which cards (for archived and live hands alike, with the oracle of
``tests/unit/test_history.py`` from the raw events), proofs that verify,
refusals, a player's pages and statistics.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from felt.core.rules.config import public_hand_id
from felt.core.rules.events import (
    BetPlaced,
    CardsDrawn,
    CardsShown,
    HandEnded,
    HandStarted,
    HoleCardsDealt,
    PlayerCalled,
    PlayerChecked,
    PlayerFolded,
    StreetStarted,
)
from felt.core.table.deals import verify_hand
from felt.core.table.events import AnyEvent
from felt.storage.archive import Cursor, MemoryHandArchive, TableWrite
from felt.storage.archive.projection import TableProjection
from felt.storage.eventstore import MemoryEventStore
from felt.tools.history import Role, build_history, render_text
from felt.wire.limits import LimitError
from services.lobby.auth import ANONYMOUS, OPERATOR, Caller
from services.lobby.history import HandRead, HistoryApp, Reading
from services.lobby.refusals import Code, Refused
from tests.golden.stored import golden_events, hand_events, public_ids, stored_records
from tests.unit.services.test_lobby_app_on_fakes import Lobby, guest_id, req
from tests.unit.test_history import _secret_cards

ARCHIVED = 20  # hands of each table archived; the rest are only in the stream


@dataclass
class World:
    app: HistoryApp
    archive: MemoryHandArchive
    alice: Caller
    bob: Caller
    alice_id: str
    events: dict[str, list[AnyEvent]]  # variant name -> the table's events
    hands: dict[str, list[str]]  # variant name -> public ids in order


@pytest.fixture
async def world() -> World:
    lobby = Lobby()
    alice = await lobby.app.create_guest("Alice", req(guest_id(1), content="Alice"))
    bob = await lobby.app.create_guest("Bob", req(guest_id(2), content="Bob"))
    archive, streams = MemoryHandArchive(), MemoryEventStore()
    # Recorded players who sit both in archived hands and in later ones.
    a, b = alice.player.player_id, bob.player.player_id
    players = {"holdem": {"p3": a, "p5": b}, "draw": {"p10": a, "p6": b}}
    events, hands = {}, {}
    for name in ("holdem", "draw"):
        table = f"hist-{name}"
        events[name] = golden_events(name, players[name])
        hands[name] = public_ids(events[name])
        records = stored_records(table, events[name])
        await streams.append(table, [r.payload for r in records], 0)
        ends = [i for i, e in enumerate(events[name]) if isinstance(e, HandEnded)]
        projection = TableProjection(table, Cursor())
        for record in records[: ends[ARCHIVED - 1] + 1]:
            projection.feed(record)
        batch = projection.take()
        assert len(batch.hands) == ARCHIVED
        await archive.write([TableWrite(table, 0, batch.cursor, batch.hands, batch.late)])
    return World(
        HistoryApp(lobby.app, archive, streams),
        archive,
        lobby.caller(alice.credentials),
        lobby.caller(bob.credentials),
        alice.player.player_id,
        events,
        hands,
    )


async def refused(call: object) -> Refused:
    with pytest.raises(Refused) as info:
        await call  # type: ignore[misc]
    return info.value


def _hole(read: HandRead, seat: int) -> tuple[object, ...]:
    return next(
        e.event.cards
        for e in read.events
        if isinstance(e.event, HoleCardsDealt) and e.event.seat == seat
    )


async def _alices_hand(world: World, name: str) -> str:
    """An archived hand Alice was dealt into."""
    for hand in world.hands[name][:ARCHIVED]:
        read = await world.app.hand_history(OPERATOR, hand, "", Reading.AUTO, None)
        if _seat_of(read, world.alice_id) is not None:
            return hand
    raise AssertionError("Alice played none of the archived hands")


def _seat_of(read: HandRead, player_id: str) -> int | None:
    return next((s.seat for s in read.seats if s.player_id == player_id), None)


# ---------------------------------------------------------------- who sees what


async def test_an_archived_hand_as_its_player_a_spectator_and_the_operator(world: World) -> None:
    for name in ("holdem", "draw"):
        hand = await _alices_hand(world, name)
        mine = await world.app.hand_history(world.alice, hand, "", Reading.AUTO, None)
        assert mine.archived and mine.table_id == f"hist-{name}"
        seat = _seat_of(mine, world.alice_id)
        assert mine.viewer.role == Role.SEAT and mine.viewer.seat == seat
        assert seat is not None and None not in _hole(mine, seat)
        others = [s.seat for s in mine.seats if s.seat != seat]
        assert all(None in _hole(mine, s) for s in others)
        check = verify_hand([(e.event, e.proofs) for e in mine.events])
        assert check.ok and check.verified >= len(_hole(mine, seat))
        spectator = await world.app.hand_history(ANONYMOUS, hand, "", Reading.AUTO, None)
        assert spectator.viewer.role == Role.SPECTATOR
        assert all(None in _hole(spectator, s.seat) for s in spectator.seats)
        assert verify_hand([(e.event, e.proofs) for e in spectator.events]).ok
        full = await world.app.hand_history(OPERATOR, hand, "", Reading.AUTO, None)
        assert full.viewer.role == Role.OPERATOR
        assert all(None not in _hole(full, s.seat) for s in full.seats)
        # Nothing secret in any of them: no deck, no seed, no token hash.
        for read in (mine, spectator, full):
            for e in read.events:
                assert getattr(e.event, "seed", b"") == b""
                assert getattr(getattr(e.event, "setup", None), "deck", ()) == ()
                assert getattr(e.event, "token_hash", "") == ""
                assert not e.meta.request_id and not e.meta.request_key


async def test_no_reader_holds_another_seats_unshown_cards_archived_or_live(world: World) -> None:
    for name in ("holdem", "draw"):
        table = f"hist-{name}"
        for n, hand in enumerate(world.hands[name]):
            for caller in (world.alice, world.bob, ANONYMOUS):
                read = await world.app.hand_history(caller, hand, table, Reading.AUTO, None)
                assert read.archived == (n < ARCHIVED)
                raw = hand_events(world.events[name], hand)
                secret = _secret_cards(raw, read.viewer.seat)
                for e in read.events:
                    held = {c for c in _cards_of(e.event) if c is not None}
                    assert not held & secret, f"{caller} sees {held & secret} in {hand}"
                    assert {p.card for p in e.proofs}.isdisjoint(secret)


async def test_views_one_may_not_have_are_not_found_like_unknown_hands(world: World) -> None:
    hand = world.hands["holdem"][0]
    live = world.hands["draw"][-1]
    read = await world.app.hand_history(OPERATOR, hand, "", Reading.AUTO, None)
    alice_seat = _seat_of(read, world.alice_id)
    other = next(s.seat for s in read.seats if s.seat != alice_seat)
    for call in (
        world.app.hand_history(world.alice, hand, "", Reading.SEAT, other),
        world.app.hand_history(world.alice, hand, "", Reading.OPERATOR, None),
        world.app.hand_history(world.alice, "0" * 32, "", Reading.AUTO, None),
        world.app.hand_history(ANONYMOUS, "f" * 32, "hist-holdem", Reading.AUTO, None),
        # A live hand is found only at its own table.
        world.app.hand_history(ANONYMOUS, live, "hist-holdem", Reading.AUTO, None),
        world.app.hand_history(ANONYMOUS, live, "", Reading.AUTO, None),
    ):
        refusal = await refused(call)
        assert (refusal.code, refusal.reason) == (Code.NOT_FOUND, "HAND_NOT_FOUND")
    # Asking for a seat or everything without signing in: sign in first (nothing looked up).
    for reading, seat in ((Reading.SEAT, other), (Reading.OPERATOR, None)):
        refusal = await refused(world.app.hand_history(ANONYMOUS, hand, "", reading, seat))
        assert refusal.code == Code.UNAUTHENTICATED
    # The operator may take any seat's view; a player its own.
    as_other = await world.app.hand_history(OPERATOR, hand, "", Reading.SEAT, other)
    assert as_other.viewer.seat == other and None not in _hole(as_other, other)
    if alice_seat is not None:
        own = await world.app.hand_history(world.alice, hand, "", Reading.SEAT, alice_seat)
        assert own.viewer.seat == alice_seat


@pytest.mark.parametrize(
    ("hand_id", "table_id", "seat", "reason"),
    [
        ("", "", None, "BAD_HAND_ID"),
        ("A" * 32, "", None, "BAD_HAND_ID"),
        ("a" * 33, "", None, "BAD_HAND_ID"),
        ("a" * 31 + "\n", "", None, "BAD_HAND_ID"),
        ("a" * 32, "Bad_Table", None, "BAD_TABLE_ID"),
        ("a" * 32, "", 9, "BAD_SEAT"),
        ("a" * 32, "", -1, "BAD_SEAT"),
    ],
)
async def test_inputs_out_of_bounds_are_refused(
    world: World, hand_id: str, table_id: str, seat: int | None, reason: str
) -> None:
    reading = Reading.SEAT if seat is not None else Reading.AUTO
    with pytest.raises(LimitError) as info:
        await world.app.hand_history(OPERATOR, hand_id, table_id, reading, seat)
    assert info.value.reason == reason


# ---------------------------------------------------------------- a player's hands


async def test_a_players_hands_page_newest_first_with_their_statistics(world: World) -> None:
    seen: list[str] = []
    token = ""
    while True:
        page = await world.app.player_hands(world.alice, "", 7, token)
        assert len(page.hands) <= 7
        seen += [h.hand_id for h in page.hands]
        token = page.next_page_token
        if not token:
            break
    archived = {h for name in world.hands for h in world.hands[name][:ARCHIVED]}
    played = [
        h
        for h in archived
        if world.archive.hands[h].seats
        and any(s.player_id == world.alice_id for s in world.archive.hands[h].seats)
    ]
    assert sorted(seen) == sorted(played) and len(set(seen)) == len(seen)
    ends = [world.archive.hands[h].ended_at for h in seen]
    assert ends == sorted(ends, reverse=True)
    stats = page.stats
    assert stats.hands == len(played)
    summaries = [
        s.summary
        for h in played
        for s in world.archive.hands[h].seats
        if s.player_id == world.alice_id
    ]
    assert stats.net == sum(s.net for s in summaries)
    assert stats.vpip == sum(s.vpip for s in summaries) and stats.pfr <= stats.vpip
    assert stats.won_at_showdown <= stats.went_to_showdown <= stats.hands
    # The operator reads anyone's; a player nobody's but its own (as if unknown).
    by_operator = await world.app.player_hands(OPERATOR, world.alice_id, 100, "")
    assert by_operator.stats == stats
    refusal = await refused(world.app.player_hands(world.bob, world.alice_id, 0, ""))
    assert (refusal.code, refusal.reason) == (Code.NOT_FOUND, "PLAYER_NOT_FOUND")
    refusal = await refused(world.app.player_hands(ANONYMOUS, "", 0, ""))
    assert refusal.code == Code.UNAUTHENTICATED
    for size, token in ((101, ""), (-1, ""), (0, "x" * 129), (0, "not-a-token"), (0, "aDEyMw")):
        with pytest.raises(LimitError):
            await world.app.player_hands(world.alice, "", size, token)
    with pytest.raises(LimitError):
        await world.app.player_hands(OPERATOR, "", 0, "")


def _seat_in(world: World, hand: str) -> int | None:
    seats = world.archive.hands[hand].seats
    return next((s.seat for s in seats if s.player_id == world.alice_id), None)


def _cards_of(event: AnyEvent) -> list[object]:
    if isinstance(event, HoleCardsDealt | CardsShown | StreetStarted):
        return list(event.cards)
    if isinstance(event, CardsDrawn):
        return list(event.discarded + event.drawn)
    return []


async def test_the_hand_in_play_from_its_tables_stream(world: World) -> None:
    """A hand not over yet: its events so far, as each reader may see them, and no result."""
    events = world.events["holdem"]
    starts = [i for i, e in enumerate(events) if isinstance(e, HandStarted)]
    start = next(
        i
        for i in starts[ARCHIVED:]
        if any(s.player_id == world.alice_id for s in events[i].setup.seats)  # type: ignore[union-attr]
    )
    hand = public_hand_id(events[start].setup)  # type: ignore[union-attr]
    cut = (
        start
        + 1
        + next(
            k
            for k, e in enumerate(events[start + 1 :])
            if isinstance(e, PlayerCalled | BetPlaced | PlayerFolded | PlayerChecked)
        )
    )
    table = "in-play"
    streams = MemoryEventStore()
    records = stored_records(table, events[: cut + 1])
    await streams.append(table, [r.payload for r in records], 0)
    app = HistoryApp(world.app.lobby, world.archive, streams)
    mine = await app.hand_history(world.alice, hand, table, Reading.AUTO, None)
    assert not mine.archived and mine.viewer.role == Role.SEAT
    assert not any(isinstance(e.event, HandEnded) for e in mine.events)
    assert mine.seats and all(s.display_name for s in mine.seats)  # named as seated
    history = build_history([e.event for e in mine.events], mine.viewer, hand_id=hand)
    assert not history.ended and not history.results
    assert "(the hand is still being played)" in render_text(history)
    assert mine.viewer.seat is not None and None not in _hole(mine, mine.viewer.seat)
    spectator = await app.hand_history(ANONYMOUS, hand, table, Reading.AUTO, None)
    assert all(None in _hole(spectator, s.seat) for s in spectator.seats)
    assert verify_hand([(e.event, e.proofs) for e in mine.events]).ok
