"""The bounds of ``felt.wire.limits``: each accepts its whole range and refuses just outside it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from felt.core.rules.commands import IllegalAction
from felt.core.rules.config import Variant
from felt.core.table.aggregate import (
    AddChips,
    CreateTable,
    SeatPlayer,
    StartNextHand,
    TableState,
    execute_table,
)
from felt.core.table.events import TableConfig
from felt.messages.values import table_config_from_proto
from felt.wire import limits
from felt.wire.convert import BadAction, action_from_proto
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _refused(check: object, *args: object, reason: str = "") -> limits.LimitError:
    assert callable(check)
    with pytest.raises(limits.LimitError) as info:
        check(*args)
    if reason:
        assert info.value.reason == reason
    return info.value


@pytest.mark.parametrize("good", ["a", "t-1", "0abc", "a" * 63])
def test_table_ids_in_range(good: str) -> None:
    assert limits.check_table_id(good) == good


@pytest.mark.parametrize(
    "bad", ["", "abc\n", "\nabc", "-abc", "ABC", "a b", "a" * 64, "é", "a{b}", "a:1"]
)
def test_table_ids_out_of_range(bad: str) -> None:
    _refused(limits.check_table_id, bad, reason="BAD_TABLE_ID")


@pytest.mark.parametrize("good", ["p", "alice", "bot-easy-1", "a.b_c:d@e-f", "X" * 64])
def test_player_ids_in_range(good: str) -> None:
    assert limits.check_player_id(good) == good


@pytest.mark.parametrize("bad", ["", "p\n", "p q", "_p", "p" * 65, "ü", "p/q"])
def test_player_ids_out_of_range(bad: str) -> None:
    _refused(limits.check_player_id, bad, reason="BAD_PLAYER_ID")


def test_request_ids() -> None:
    assert limits.check_request_id("ai:t-1:7") == "ai:t-1:7"
    assert limits.check_request_id("r" * 128)
    for bad in ("", "r" * 129, "a b", "r\n", "ré"):
        _refused(limits.check_request_id, bad, reason="BAD_REQUEST_ID")


def test_hand_ids() -> None:
    assert limits.check_hand_id("") == ""
    assert limits.check_hand_id("t-1:12") == "t-1:12"
    for bad in ("t-1", "t-1:", "t-1:x", "t-1:12\n", "T:1", "t:" + "1" * 11):
        _refused(limits.check_hand_id, bad, reason="BAD_HAND_ID")


def test_a_refusal_never_repeats_a_huge_value() -> None:
    huge = "x" * 1_000_000
    for check in (
        limits.check_table_id,
        limits.check_player_id,
        limits.check_request_id,
        limits.check_hand_id,
        limits.clean_display_name,
        limits.clean_table_name,
    ):
        error = _refused(check, huge)
        assert len(error.message) < 300 and "xxxx" not in error.message


def test_names_are_nfc_normalised_and_trimmed() -> None:
    assert limits.clean_display_name("  Zoe\u0301  ") == "Zo\u00e9"  # one code point
    assert limits.clean_display_name("") == ""
    assert limits.clean_display_name("\U0001f468\u200d\U0001f469") == "\U0001f468\u200d\U0001f469"
    assert limits.clean_display_name("n" * limits.DISPLAY_NAME_MAX)
    assert limits.clean_table_name("t" * limits.TABLE_NAME_MAX)


@pytest.mark.parametrize(
    "bad",
    [
        "n" * (limits.DISPLAY_NAME_MAX + 1),
        "a\nb",
        "a\tb",
        "a\x00b",
        "a\u202eb",  # right-to-left override: spoofs what follows
        "a\u2028b",  # line separator
        "a\ud800b",  # a lone surrogate
        "a\ue000b",  # private use
    ],
)
def test_names_out_of_range(bad: str) -> None:
    _refused(limits.clean_display_name, bad, reason="BAD_NAME")


def test_amounts() -> None:
    assert limits.check_amount(1, "stack") == 1
    assert limits.check_amount(limits.CHIP_CAP, "stack") == limits.CHIP_CAP
    assert limits.check_amount(0, "ante", zero=True) == 0
    for bad in (0, -1, limits.CHIP_CAP + 1, 2**63 - 1):
        _refused(limits.check_amount, bad, "stack", reason="BAD_AMOUNT")


def _config(**fields: object) -> epb.TableConfig:
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=2, small_blind=5, big_blind=10)
    for name, value in fields.items():
        setattr(config, name, value)
    return config


def test_table_config_bounds() -> None:
    limits.check_table_config(_config(max_hands=limits.MAX_HANDS_MAX), NOW)
    for bad in (
        _config(max_hands=-1),
        _config(max_hands=limits.MAX_HANDS_MAX + 1),
        _config(max_consecutive_timeouts=-1),
        _config(raise_cap=limits.RAISE_CAP_MAX + 1),
        _config(big_blind=limits.CHIP_CAP + 1),
        _config(ante=-1),
    ):
        _refused(limits.check_table_config, bad, NOW)


def test_action_clock_bounds() -> None:
    config = _config()
    config.action_clock.FromMilliseconds(limits.ACTION_CLOCK_MAX_MS)
    limits.check_table_config(config, NOW)
    config.action_clock.FromMilliseconds(0)  # set but zero: no clock
    limits.check_table_config(config, NOW)
    for ms in (limits.ACTION_CLOCK_MIN_MS - 1, limits.ACTION_CLOCK_MAX_MS + 1, -1_000):
        config.action_clock.FromMilliseconds(ms)
        _refused(limits.check_table_config, config, NOW, reason="BAD_CONFIG")
    for seconds, nanos in ((0, 1_000), (0, 1), (0, 99_999_999)):  # a microsecond is a clock
        config.action_clock.seconds, config.action_clock.nanos = seconds, nanos
        error = _refused(limits.check_table_config, config, NOW, reason="BAD_CONFIG")
        assert "action_clock" in error.message and "100 ms" in error.message
    config.action_clock.FromSeconds(10_000 * 366 * 86_400)  # the 10,000-year clock
    _refused(limits.check_table_config, config, NOW, reason="BAD_CONFIG")
    config.action_clock.seconds, config.action_clock.nanos = 2**62, 0
    _refused(limits.check_table_config, config, NOW, reason="BAD_CONFIG")


def test_close_time_bounds() -> None:
    config = _config()
    config.close_time.FromDatetime(NOW.replace(year=2035))
    limits.check_table_config(config, NOW)
    for seconds in (0, -5, int(NOW.timestamp()) + limits.CLOSE_TIME_AHEAD_MAX_S + 1, 2**62):
        config.close_time.seconds = seconds
        _refused(limits.check_table_config, config, NOW, reason="BAD_CONFIG")


def test_close_time_must_be_after_the_request() -> None:
    config = _config()
    now = int(NOW.timestamp())
    config.close_time.seconds = now + 1
    limits.check_table_config(config, NOW)
    for seconds in (1, now - 3600, now):  # just after the epoch, an hour ago, this very second
        config.close_time.seconds = seconds
        error = _refused(limits.check_table_config, config, NOW, reason="BAD_CONFIG")
        assert "close_time must be in the future" in error.message
        assert str(seconds) not in error.message


def test_messages_name_the_field_and_range_never_the_value() -> None:
    for value in (123_456_789_012_345, -987_654):
        error = _refused(limits.check_amount, value, "stack", reason="BAD_AMOUNT")
        assert "stack" in error.message and f"{value:,}" not in error.message
        assert str(value) not in error.message
    error = _refused(limits.check_count, 4_567, "max_consecutive_timeouts", 0, 100)
    assert "max_consecutive_timeouts must be 0 to 100" in error.message and "4,567" not in (
        error.message
    )
    error = _refused(limits.clean_display_name, "x\u202ey", reason="BAD_NAME")
    assert "202E" not in error.message.upper()
    error = _refused(limits.clean_display_name, "n" * 40, reason="BAD_NAME")
    assert "40" not in error.message


def test_the_rules_refuse_a_draw_big_bet_below_the_small_bet() -> None:
    for big_bet in (20, 10):  # twice the small bet, or equal to it: both fixed-limit games
        ok = TableConfig("t", Variant.DRAW5, 3, ante=1, small_bet=10, big_bet=big_bet)
        execute_table(None, CreateTable(ok))
    below = TableConfig("t", Variant.DRAW5, 3, ante=1, small_bet=10, big_bet=9)
    with pytest.raises(IllegalAction, match="big_bet must be at least its small_bet") as info:
        execute_table(None, CreateTable(below))
    assert info.value.code == "BAD_CONFIG"


def test_action_amounts_and_discards() -> None:
    raise_to = tpb.Action(raise_to=tpb.Action.RaiseTo(amount=limits.CHIP_CAP))
    assert action_from_proto(0, raise_to)
    for amount in (0, -1, limits.CHIP_CAP + 1, 2**63 - 1):
        with pytest.raises(BadAction):
            action_from_proto(0, tpb.Action(bet_to=tpb.Action.BetTo(amount=amount)))
        with pytest.raises(BadAction):
            action_from_proto(0, tpb.Action(raise_to=tpb.Action.RaiseTo(amount=amount)))
    for cards in ([1, 2, 3, 4, 5, 6], [7, 7]):
        with pytest.raises(BadAction):
            action_from_proto(0, tpb.Action(discard=tpb.Action.Discard(cards=cards)))


def test_draw_big_bet_defaults_to_twice_the_small_bet() -> None:
    msg = epb.TableConfig(variant=epb.VARIANT_DRAW5, seat_count=3, ante=1, small_bet=10)
    assert table_config_from_proto(msg, "t", "").big_bet == 20
    msg.big_bet = 30
    assert table_config_from_proto(msg, "t", "").big_bet == 30


def test_the_rules_refuse_draw_without_ante_and_negative_hand_limits() -> None:
    draw = TableConfig("t", Variant.DRAW5, 3, ante=0, small_bet=10, big_bet=20)
    with pytest.raises(IllegalAction, match="ante"):
        execute_table(None, CreateTable(draw))
    nlhe = TableConfig("t", Variant.NLHE, 2, small_blind=5, big_blind=10, hand_limit=-1)
    with pytest.raises(IllegalAction, match="hand limit"):
        execute_table(None, CreateTable(nlhe))


def _table(*stacks: int) -> TableState:
    config = TableConfig("t", Variant.NLHE, 3, small_blind=5, big_blind=10)
    state, _ = execute_table(None, CreateTable(config))
    for seat, stack in enumerate(stacks):
        state, _ = execute_table(state, SeatPlayer(seat, f"p{seat}", "", stack, "h"))
    return state


def test_table_chips_count_every_chip_once() -> None:
    state = _table(1000, 500)
    assert limits.table_chips(state) == 1500
    state, _ = execute_table(state, StartNextHand(b"\x01" * 32))  # blinds posted: still 1500
    assert state.hand_running
    assert limits.table_chips(state) == 1500
    state, _ = execute_table(state, SeatPlayer(2, "p2", "", 250, "h"))  # waits for the next hand
    assert limits.table_chips(state) == 1750


def test_the_chip_cap_holds_for_the_whole_table() -> None:
    state = _table(limits.CHIP_CAP - 100)
    limits.check_chips_added(state, 100)
    error = _refused(limits.check_chips_added, state, 101, reason="CHIP_CAP")
    assert "at most 100 more" in error.message
    state, _ = execute_table(state, AddChips(0, 100))
    _refused(limits.check_chips_added, state, 1, reason="CHIP_CAP")
    _refused(limits.check_chips_added, state, 2**63 - 1, reason="BAD_AMOUNT")
