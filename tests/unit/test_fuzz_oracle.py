"""The API fuzzer's oracles (``tests.fuzz.oracle``) on hand-written raw events.

The fuzzer trusts these to tell a leak or a lost chip from a correct answer, so
they are checked here on a heads-up hand written event by event: the blinds,
seat 0 folds, seat 1 gets its uncalled chips back and wins the pot.
"""

from __future__ import annotations

from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from tests.fuzz.oracle import Ledger, Viewer, leaks

T = "t1"
H = "t1:1"


def _card(code: int) -> epb.Card:
    return epb.Card(code=code)


def _events(final_stack_1: int = 1005) -> list[epb.StoredEvent]:
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=2, small_blind=5, big_blind=10)
    setup = epb.HandSetup(
        hand_id=H,
        variant=epb.VARIANT_NLHE,
        button=0,
        seats=[
            epb.SeatSetup(seat=0, stack=1000, player_id="a", blind=5),
            epb.SeatSetup(seat=1, stack=1000, player_id="b", blind=10),
        ],
        deck=list(range(52)),
        min_bet=10,
    )
    bodies: list[tuple[str, dict[str, object]]] = [
        ("table_created", {"table_id": T, "config": config}),
        ("player_seated", {"seat": 0, "player_id": "a", "stack": 1000}),
        ("player_seated", {"seat": 1, "player_id": "b", "stack": 1000}),
        ("deck_committed", {"hand_id": H, "root": "00", "leaf_count": 52}),
        ("hand_started", {"setup": setup}),
        ("blind_posted", {"seat": 0, "amount": 5}),
        ("blind_posted", {"seat": 1, "amount": 10}),
        ("hole_cards_dealt", {"seat": 0, "cards": [_card(0), _card(1)]}),
        ("hole_cards_dealt", {"seat": 1, "cards": [_card(2), _card(3)]}),
        ("player_folded", {"seat": 0}),
        ("uncalled_bet_returned", {"seat": 1, "amount": 5}),
        ("pot_awarded", {"index": 0, "amount": 10, "shares": [epb.PotShare(seat=1, amount=10)]}),
        (
            "hand_ended",
            {
                "stacks": [
                    epb.SeatStack(seat=0, stack=995),
                    epb.SeatStack(seat=1, stack=final_stack_1),
                ]
            },
        ),
    ]
    out = []
    for sequence, (kind, fields) in enumerate(bodies, start=1):
        hand_id = H if sequence >= 4 else ""
        event = epb.StoredEvent(sequence=sequence, table_id=T, hand_id=hand_id)
        getattr(event, kind).MergeFrom(getattr(epb.StoredEvent(), kind).__class__(**fields))
        out.append(event)
    return out


def _ledger(events: list[epb.StoredEvent]) -> Ledger:
    ledger = Ledger(T)
    for event in events:
        ledger.feed(event)
    return ledger


def test_a_hand_that_conserves_chips_passes() -> None:
    ledger = _ledger(_events())
    assert ledger.violations == []
    assert ledger.total() == ledger.expected_total() == 2000
    assert ledger.stacks == {0: 995, 1: 1005}
    assert ledger.can_deal()


def test_a_hand_end_that_creates_chips_is_caught() -> None:
    ledger = _ledger(_events(final_stack_1=1010))
    assert [v.kind for v in ledger.violations] == ["chips"]
    assert "ends seat 1 with 1010" in ledger.violations[0].detail


def _view(viewer: int | None, cards: dict[int, list[int]]) -> tpb.TableView:
    view = tpb.TableView(hand=tpb.HandView(hand_id=H))
    if viewer is not None:
        view.viewer_seat = viewer
    for seat, codes in cards.items():
        view.hand.seats.add(seat=seat, cards=[_card(c) for c in codes])
    return view


def test_own_cards_are_allowed_and_others_are_leaks() -> None:
    ledger = _ledger(_events())
    seat0 = Viewer(T, 0, since=2)
    assert leaks(ledger, seat0, _view(0, {0: [0, 1]}), "GetTableView") == []
    found = leaks(ledger, seat0, _view(0, {1: [2, 3]}), "SubmitAction")
    assert [v.kind for v in found] == ["card-leak/SubmitAction"]
    assert "dealt to seat 1, never shown" in found[0].detail
    # a spectator sees nobody's cards; an occupant seated after the hand began neither
    assert leaks(ledger, Viewer(T), _view(None, {0: [0, 1]}), "WatchTable")
    assert leaks(ledger, Viewer(T, 0, since=5), _view(0, {0: [0, 1]}), "WatchTable")


def test_shown_cards_are_public_and_the_deck_never_is() -> None:
    events = _events()
    shown = epb.StoredEvent(sequence=14, table_id=T, hand_id=H)
    shown.cards_shown.seat = 1
    shown.cards_shown.cards.extend([_card(2), _card(3)])
    ledger = _ledger([*events, shown])
    assert leaks(ledger, Viewer(T), _view(None, {1: [2, 3]}), "WatchTable") == []
    stored_start = events[4]
    assert [v.kind for v in leaks(ledger, Viewer(T), stored_start, "WatchTable")] == [
        "card-leak/WatchTable"
    ]
    seed = epb.StoredEvent(sequence=4, table_id=T, hand_id=H)
    seed.deck_committed.seed = b"secret"
    assert [v.kind for v in leaks(ledger, Viewer(T), seed, "WatchTable")] == [
        "secret-leak/WatchTable"
    ]
