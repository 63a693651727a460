"""``felt play``'s model: choices only from the server's legal actions, bet sizes inside the
server's range, discards named by card code, and a log that shows only what it was sent."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from felt.core.cards import card
from felt.tools.client.play import model
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb


def code(text: str) -> epb.Card:
    return epb.Card(code=int(card(text)))


HIDDEN = epb.Card(hidden=True)


def view(
    *,
    viewer: int | None = 1,
    to_act: int | None = 1,
    legal: list[tpb.LegalAction] | None = None,
    current_bet: int = 10,
    pots: tuple[int, ...] = (),
    bets: dict[int, int] | None = None,
) -> tpb.TableView:
    bets = bets if bets is not None else {0: 5, 1: 10}
    table = tpb.Table(
        table_id="t",
        name="Test table",
        sequence=42,
        seats=[
            tpb.Seat(
                seat=0,
                status=tpb.SEAT_STATUS_SITTING_IN,
                display_name="Bot",
                ai_level=epb.AI_LEVEL_HARD,
                stack=990,
            ),
            tpb.Seat(seat=1, status=tpb.SEAT_STATUS_SITTING_IN, display_name="Ann", stack=995),
            tpb.Seat(seat=2, status=tpb.SEAT_STATUS_EMPTY),
        ],
    )
    hand = tpb.HandView(
        hand_id="h",
        variant=epb.VARIANT_NLHE,
        button=0,
        street=epb.STREET_PREFLOP,
        current_bet=current_bet,
        pots=[tpb.Pot(amount=a, eligible=[0, 1]) for a in pots],
        seats=[
            tpb.HandSeat(seat=0, stack=995, bet=bets.get(0, 0), cards=[HIDDEN, HIDDEN]),
            tpb.HandSeat(seat=1, stack=990, bet=bets.get(1, 0), cards=[code("As"), code("Td")]),
        ],
        legal_actions=legal or [],
    )
    if to_act is not None:
        hand.to_act = to_act
    result = tpb.TableView(table=table, hand=hand)
    if viewer is not None:
        result.viewer_seat = viewer
    return result


RAISE = tpb.LegalAction(type=tpb.ACTION_TYPE_RAISE, min_to=20, max_to=1000)
CALL = tpb.LegalAction(type=tpb.ACTION_TYPE_CALL, amount=5)
FOLD = tpb.LegalAction(type=tpb.ACTION_TYPE_FOLD)


def test_cards_read_as_a_person_writes_them_and_hidden_ones_stay_blank() -> None:
    assert model.card_label(code("As")) == "A♠"
    assert model.card_label(code("Th")) == "10♥"
    assert model.card_label(code("2c")) == "2♣"
    assert model.card_label(HIDDEN) == model.HIDDEN_CARD
    assert model.is_red(code("Kd")) and not model.is_red(code("Ks")) and not model.is_red(HIDDEN)


def test_no_choices_unless_it_is_the_viewers_turn() -> None:
    legal = [FOLD, CALL, RAISE]
    assert model.choices(view(to_act=0, legal=legal)) == []
    assert model.choices(view(viewer=None, legal=legal)) == []
    assert model.choices(view(to_act=None, legal=legal)) == []
    keys = [c.key for c in model.choices(view(legal=legal))]
    assert keys[:2] == ["f", "c"] and "1" in keys


def test_raise_sizes_are_min_half_pot_pot_and_all_in_inside_the_servers_range() -> None:
    # the big blind to act after a limp: 20 in the pot, nothing to call; half pot (to 20)
    # is the minimum raise, so it is listed once
    hand = view(legal=[RAISE], bets={0: 10, 1: 10}, current_bet=10).hand
    sizes = model.sizing(RAISE, hand, viewer=1)
    assert sizes == [("min", 20), ("pot", 30), ("all-in", 1000)]
    # facing a raise to 30 with 10 in and a pot of 40 before this round
    hand = view(legal=[RAISE], bets={0: 30, 1: 10}, current_bet=30, pots=(40,)).hand
    legal = tpb.LegalAction(type=tpb.ACTION_TYPE_RAISE, min_to=50, max_to=400)
    # pot after calling: 40 + 30 + 10 + 20 = 100
    assert model.sizing(legal, hand, viewer=1) == [
        ("min", 50),
        ("½ pot", 80),
        ("pot", 130),
        ("all-in", 400),
    ]


def test_a_fixed_limit_bet_has_one_size() -> None:
    fixed = tpb.LegalAction(type=tpb.ACTION_TYPE_BET, min_to=10, max_to=10)
    choices = model.choices(view(legal=[fixed], current_bet=0, bets={}))
    # the only size there is: no "min" label (there is no other size)
    assert [(c.label, c.action.bet_to.amount) for c in choices] == [("Bet 10", 10)]


def test_all_in_is_offered_once_when_the_server_offers_it_as_an_action() -> None:
    all_in = tpb.LegalAction(type=tpb.ACTION_TYPE_ALL_IN, amount=1000)
    offered = model.choices(view(legal=[FOLD, CALL, RAISE, all_in]))
    labels = [c.label for c in offered]
    assert sum("all-in" in label.lower() for label in labels) == 1, labels
    assert labels[-1] == "All-in 1000"
    # without the action of its own, the largest size is the all-in
    assert any(c.label.endswith("· all-in") for c in model.choices(view(legal=[FOLD, RAISE])))


def test_a_folded_seat_shows_no_cards() -> None:
    shown = view(legal=[FOLD])
    shown.hand.seats[0].folded = True
    bot = model.seat_lines(shown)[0]
    assert model.HIDDEN_CARD not in bot and "folded" in bot


def test_busted_only_with_no_chips_and_no_part_in_a_hand_in_play() -> None:
    out = view(legal=[], to_act=None)
    out.table.seats[1].stack = 0
    out.hand.seats[1].stack = 0
    assert not model.busted(out)  # dealt into the hand in play (all-in, say)
    out.hand.street = epb.STREET_COMPLETE
    assert model.busted(out)
    out.ClearField("hand")
    assert model.busted(out)
    out.table.seats[1].stack = 5
    assert not model.busted(out)
    assert not model.busted(view(viewer=None))


def test_refusals_read_as_sentences_never_as_raw_statuses() -> None:
    assert model.refusal_text("NO_LOUNGE", "NOT_FOUND") == REFUSED_LOUNGE
    assert model.refusal_text("", "UNAVAILABLE").startswith("The server did not answer")
    text = model.refusal_text("SOMETHING_NEW", "FAILED_PRECONDITION")
    assert text == "Refused: something new" and "_" not in text


REFUSED_LOUNGE = "That lounge does not exist (or it is private)"


@given(
    low=st.integers(1, 10_000),
    span=st.integers(0, 10_000),
    typed=st.integers(0, 100_000),
    pot=st.integers(0, 50_000),
    bet=st.integers(0, 10_000),
)
def test_every_offered_or_typed_amount_is_one_the_server_allows(
    low: int, span: int, typed: int, pot: int, bet: int
) -> None:
    legal = tpb.LegalAction(type=tpb.ACTION_TYPE_RAISE, min_to=low, max_to=low + span)
    hand = view(legal=[legal], current_bet=bet, pots=(pot,)).hand
    for _, amount in model.sizing(legal, hand, viewer=1):
        assert low <= amount <= low + span
    assert low <= model.typed_action(legal, typed).raise_to.amount <= low + span


def test_discards_are_named_by_card_code_from_positions() -> None:
    hand = [code("2c"), code("7d"), code("9h"), code("Ks"), code("Ac")]
    action = model.discard_action(hand, {0, 2, 1})
    assert list(action.discard.cards) == sorted(int(card(c)) for c in ("2c", "7d", "9h"))
    assert list(model.discard_action(hand, set()).discard.cards) == []  # stands pat
    assert list(model.discard_action(hand, {7}).discard.cards) == []  # no such position


def test_max_discards_only_while_the_viewer_draws() -> None:
    draw = tpb.LegalAction(type=tpb.ACTION_TYPE_DISCARD, max_discards=3)
    assert model.max_discards(view(legal=[draw])) == 3
    assert model.max_discards(view(legal=[draw], to_act=0)) is None
    assert model.max_discards(view(legal=[CALL])) is None


def test_seat_lines_show_the_viewers_cards_and_only_backs_for_others() -> None:
    lines = model.seat_lines(view(legal=[FOLD]))
    assert len(lines) == 2  # the empty seat is not listed
    bot, ann = lines
    assert "Bot (AI hard)" in bot and model.HIDDEN_CARD in bot and "Ⓑ" in bot
    assert "Ann — you" in ann and "A♠ 10♦" in ann and "▶" in ann


def test_pots_list_main_and_side_pots_and_this_rounds_bets() -> None:
    hand = view(pots=(100, 40), bets={0: 20, 1: 20}).hand
    assert model.pot_lines(hand) == [
        "Main pot: 100 (seats 0, 1)",
        "Side pot 1: 40 (seats 0, 1)",
        "Bets this round: 40",
        "Total: 180",
    ]


def test_the_log_describes_events_and_never_invents_hidden_cards() -> None:
    names = {0: "Bot", 1: "Ann"}

    def line(**event: object) -> str | None:
        return model.describe_event(epb.StoredEvent(sequence=1, **event), names)  # type: ignore[arg-type]

    assert line(player_folded=epb.PlayerFolded(seat=0)) == "Bot folds"
    assert line(bet_placed=epb.BetPlaced(seat=1, to=40, all_in=True)) == "Ann bets 40 (all-in)"
    raised = model.describe_event(
        epb.StoredEvent(sequence=1, bet_placed=epb.BetPlaced(seat=0, to=90)), names, True
    )
    assert raised == "Bot raises to 90"
    # another seat's hole cards arrive hidden: no line shows them
    assert line(hole_cards_dealt=epb.HoleCardsDealt(seat=0, cards=[HIDDEN, HIDDEN])) is None
    assert (
        line(hole_cards_dealt=epb.HoleCardsDealt(seat=1, cards=[code("As")])) == "Dealt to Ann: A♠"
    )
    drawn = epb.CardsDrawn(seat=0, discarded=[HIDDEN, HIDDEN], drawn=[HIDDEN, HIDDEN])
    assert line(cards_drawn=drawn) == "Bot draws 2"
    assert line(cards_drawn=epb.CardsDrawn(seat=1)) == "Ann draws 0 (stands pat)"
    flop = epb.StreetStarted(street=epb.STREET_FLOP, cards=[code("2c"), code("3d"), code("4h")])
    assert line(street_started=flop) == "*** flop *** 2♣ 3♦ 4♥"
    award = epb.PotAwarded(
        amount=60, shares=[epb.PotShare(seat=1, amount=60)], hand="a pair of aces"
    )
    assert line(pot_awarded=award) == "Pot 60 to Ann 60 with a pair of aces"
    assert line(deck_committed=epb.DeckCommitted(hand_id="h", root="ab")) is None


def test_a_seat_waiting_for_the_big_blind_says_so_and_the_refusal_reads_as_a_sentence() -> None:
    waiting = view(to_act=None)
    waiting.table.seats[2].CopyFrom(
        tpb.Seat(
            seat=2,
            status=tpb.SEAT_STATUS_SITTING_IN,
            display_name="Cy",
            stack=500,
            waiting_for_big_blind=True,
        )
    )
    lines = model.seat_lines(waiting)
    assert lines[2].endswith("waiting for the big blind"), lines
    assert not any("waiting" in line for line in lines[:2])
    text = model.refusal_text("NO_BIG_BLIND", "FAILED_PRECONDITION")
    assert text == "This game has no big blind to wait for"
