"""PHH replay through Felt: the seat mapping, and failures that say exactly what went wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from felt.tools.cli import main
from felt.tools.phh.parse import loads
from felt.tools.phh.replay import Status, VerifyResult, build_setup, verify_hand

HEADER = """variant = 'NT'
antes = {antes}
blinds_or_straddles = {blinds}
min_bet = {min_bet}
starting_stacks = {stacks}
actions = {actions}
"""


def phh(
    actions: list[str],
    stacks: str = "[1000, 1000, 1000]",
    blinds: str = "[5, 10, 0]",
    antes: str = "[0, 0, 0]",
    min_bet: str = "10",
    finishing: str | None = None,
) -> str:
    text = HEADER.format(
        antes=antes, blinds=blinds, min_bet=min_bet, stacks=stacks, actions=repr(actions)
    )
    return text + (f"finishing_stacks = {finishing}\n" if finishing else "")


DEAL3 = ["d dh p1 AcAd", "d dh p2 KcKd", "d dh p3 2c7d"]
BOARD = ["d db 3h4h9s", "d db Jc", "d db Qd"]


def verify(text: str) -> VerifyResult:
    return verify_hand(loads(text), "hand.phh")


def test_a_three_handed_hand_to_showdown() -> None:
    actions = [*DEAL3, "p3 f", "p1 cc", "p2 cc"]
    for street in BOARD:
        actions += [street, "p1 cc", "p2 cc"]
    result = verify(phh(actions, finishing="[1010, 990, 1000]"))
    assert (result.status, result.reason, result.stacks) == (
        Status.PASSED,
        "",
        (1010, 990, 1000),
    )


def test_heads_up_p1_is_the_big_blind_and_the_button_acts_first() -> None:
    text = phh(
        ["d dh p1 AcAd", "d dh p2 KcKd", "p2 cbr 30", "p1 cc", BOARD[0], "p1 cbr 20", "p2 f"],
        stacks="[1000, 900]",
        blinds="[5, 10]",
        antes="[1, 0]",
        finishing="[1031, 869]",
    )
    setup = build_setup(loads(text))
    assert [(s.seat, s.blind, s.ante) for s in setup.seats] == [(0, 10, 0), (1, 5, 1)]
    assert setup.button == 1
    assert verify(text).status == Status.PASSED


def test_out_of_turn_names_the_action_and_who_should_act() -> None:
    result = verify(phh([*DEAL3, "p1 cc"]))
    assert result.status == Status.FAILED
    assert result.reason == (
        "action 3 'p1 cc': NOT_YOUR_TURN: it is not seat 0's turn; seat 2 is to act "
        "(p1 is seat 0; p3 is to act)"
    )


def test_illegal_amounts_are_refused_with_the_engine_reason() -> None:
    result = verify(phh([*DEAL3, "p3 cbr 15"]))
    assert result.reason == (
        "action 3 'p3 cbr 15': BELOW_MIN_RAISE: the minimum raise is to 20, not 15"
    )
    result = verify(phh([*DEAL3, "p3 f", "p1 f", "p2 f"]))
    assert result.reason.startswith("action 5 'p2 f': HAND_NOT_RUNNING")


def test_the_board_must_come_when_felt_deals_it() -> None:
    early = verify(phh([*DEAL3, "p3 cc", BOARD[0]]))
    assert early.reason == (
        "action 4 'd db 3h4h9s': the record deals board card 3 here, "
        "but Felt has dealt 0 (p1 is to act)"
    )
    late = verify(phh([*DEAL3, "p3 cc", "p1 cc", "p2 cc", "p1 cc"]))
    assert late.reason == (
        "action 6 'p1 cc': Felt has dealt 3 board cards but the record only 0 "
        "(p1 is to act on the flop)"
    )


def test_shown_cards_must_be_the_dealt_ones() -> None:
    actions = [*DEAL3, "p3 f", "p1 cc", "p2 cc"]
    for street in BOARD:
        actions += [street, "p1 cc", "p2 cc"]
    result = verify(phh([*actions, "p1 sm AhAs"]))
    assert result.reason == "action 15 'p1 sm AhAs': p1 was dealt AcAd"


def test_a_card_dealt_twice_is_refused() -> None:
    result = verify(phh(["d dh p1 AcAd", "d dh p2 AcKd", "d dh p3 2c7d"]))
    assert (result.status, result.reason) == (Status.FAILED, "card Ac is dealt twice")


def test_different_stacks_are_listed_in_the_record_s_units() -> None:
    text = phh(
        [*DEAL3, "p3 f", "p1 f"],
        stacks="[10, 10, 16.35]",
        blinds="[0.05, 0.10, 0]",
        min_bet="0.10",
        finishing="[9.95, 10.10, 16.30]",
    )
    result = verify(text)
    assert (
        result.reason == "stacks differ: p2 expected 10.1, got 10.05; p3 expected 16.3, got 16.35"
    )
    assert result.stacks == (995, 1005, 1635)


def test_half_chips_pass_with_the_odd_chip_left_of_the_button() -> None:
    # p1 and p2 both play the board's straight; p1's ante makes the pot odd: 1 + 10 + 10.
    actions = ["d dh p1 2c3d", "d dh p2 2d3c", "d dh p3 4c4d", "p3 f", "p1 cc", "p2 cc"]
    for street in ["d db 9hTsJd", "d db Qh", "d db Kc"]:
        actions += [street, "p1 cc", "p2 cc"]
    ante = "[1, 0, 0]"
    passed = verify(phh(actions, antes=ante, finishing="[999.5, 1000.5, 1000]"))
    assert (passed.status, passed.reason, passed.stacks) == (Status.PASSED, "", (1000, 1000, 1000))
    wrong = verify(phh(actions, antes=ante, finishing="[999.5, 1001.5, 999]"))
    assert wrong.reason == (
        "stacks differ: p2 expected 1001.5, got 1000; p3 expected 999, got 1000"
    )


def test_a_post_that_folds_is_dead_money() -> None:
    text = phh(
        [*DEAL3, "d dh p4 5s6s", "p3 cbr 30", "p4 f", "p1 f", "p2 f"],
        stacks="[1000, 1000, 1000, 1000]",
        blinds="[5, 10, 0, -10]",
        antes="[0, 0, 0, 0]",
        finishing="[995, 990, 1025, 990]",
    )
    result = verify(text)
    assert (result.status, result.reason) == (
        Status.PASSED,
        "p4's post of 10 is replayed as dead money (they fold)",
    )


def test_unknown_cards_at_showdown_are_not_compared() -> None:
    actions = ["d dh p1 ????", "d dh p2 KcKd", "d dh p3 ????", "p3 f", "p1 cc", "p2 cc"]
    for street in BOARD:
        actions += [street, "p1 cc", "p2 cc"]
    result = verify(phh([*actions, "p2 sm KcKd", "p1 sm"], finishing="[990, 1010, 1000]"))
    assert result.status == Status.PASSED
    assert result.reason == "finishing stacks not compared: hole cards of p1 unknown at showdown"


def test_a_record_that_stops_early() -> None:
    unfinished = phh([*DEAL3, "p3 f"], finishing="[1000, 1000, 1000]")
    assert verify(unfinished).reason == "the record ends before the hand is over (p1 is to act)"
    no_result = verify(phh([*DEAL3, "p3 f"]))
    assert no_result.status == Status.PASSED
    assert no_result.reason == "the record ends before the hand is over (p1 is to act)"


def test_what_felt_does_not_play_is_skipped() -> None:
    draw = verify(phh(DEAL3).replace("'NT'", "'F5CD'"))
    assert (draw.status, draw.reason) == (
        Status.SKIPPED,
        "variant 'F5CD' is not No-Limit Hold'em ('NT')",
    )
    ten = verify(phh([], stacks=str([100] * 10), blinds="[1, 2]", antes="[0]"))
    assert (ten.status, ten.reason) == (Status.SKIPPED, "10 players: Felt deals NLHE to 2..9 seats")


def test_felt_phh_export_writes_the_hand_back_in_the_file_s_units(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "cents.phh"
    source.write_text(
        phh(
            [*DEAL3, "p3 cbr 0.30", "p1 f", "p2 f"],
            stacks="[10, 10, 16.35]",
            blinds="[0.05, 0.10, 0]",
            min_bet="0.10",
            finishing="[9.95, 9.90, 16.50]",
        )
    )
    assert main(["phh", "export", str(source), "--seat", "p3"]) == 0
    text = capsys.readouterr().out
    hand = loads(text)
    assert hand.scale == 100
    assert hand.blinds_or_straddles == (5, 10, 0)
    assert [a.text for a in hand.actions] == [
        "d dh p1 ????",
        "d dh p2 ????",
        "d dh p3 2c7d",
        "p3 cbr 0.3",
        "p1 f",
        "p2 f",
    ]
    assert "finishing_stacks = [9.95, 9.9, 16.5]\n" in text
    assert verify_hand(hand).status == Status.PASSED
    assert main(["phh", "export", str(source), "--seat", "p4"]) == 1
    assert "--seat 'p4': expected p1..p3" in capsys.readouterr().err


def _pokerkit_hand_with_an_idle_check() -> str:
    """A hand PokerKit plays and writes itself: the button calls all-in for less than the
    big blind, the small blind folds, and PokerKit asks the big blind (the last seat with
    chips, its bet matched) to check."""
    import warnings

    from pokerkit import Automation, HandHistory, NoLimitTexasHoldem

    game = NoLimitTexasHoldem(
        (
            Automation.ANTE_POSTING,
            Automation.BET_COLLECTION,
            Automation.BLIND_OR_STRADDLE_POSTING,
            Automation.CARD_BURNING,
            Automation.RUNOUT_COUNT_SELECTION,
            Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
            Automation.HAND_KILLING,
            Automation.CHIPS_PUSHING,
            Automation.CHIPS_PULLING,
        ),
        False,
        0,
        (1, 2),
        2,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        state = game((96, 31, 1), 3)
        for cards in ("AcAd", "KcKd", "QcQd"):
            state.deal_hole(cards)
        state.check_or_call()  # the button, all-in for 1
        state.fold()  # the small blind
        assert state.actor_index == 1 and state.checking_or_calling_amount == 0
        state.check_or_call()  # the big blind's idle check
        for cards in ("2h7s9d", "Th", "3c"):
            state.deal_board(cards)
        assert not state.status
        return HandHistory.from_game_state(game, state).dumps()


def test_pokerkit_s_idle_check_of_the_last_seat_is_a_no_op() -> None:
    text = _pokerkit_hand_with_an_idle_check()
    assert "p2 cc" in text
    result = verify(text)
    # The big blind wins the small blind and the button's chip (kings beat queens) and
    # gets the uncalled 1 back.
    assert (result.status, result.reason, result.stacks) == (Status.PASSED, "", (95, 33, 0))


def test_a_check_out_of_turn_is_still_refused_when_others_have_chips() -> None:
    actions = [*DEAL3, "p3 f", "p1 cc", "p1 cc"]
    result = verify(phh(actions))
    assert result.status == Status.FAILED and "NOT_YOUR_TURN" in result.reason
