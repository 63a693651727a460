"""Lobby refusals state the rule, never what the caller sent (docs/api.md: a message never
echoes a rejected value): creating a lounge (its buy-in range, its AI seats' number, levels
and seats), listing lounges (the variant filter) and joining one (the buy-in, the seat).
The bounds in a message are the lobby's own (a lounge's stored range and seats). Each value
sent here is distinctive, so an echo of it would show in the message."""

from __future__ import annotations

from collections.abc import Awaitable

from poker.events.v1 import events_pb2 as epb
from services.lobby.lounges import AiSeat
from services.lobby.ports import InsufficientChips, LoungeFilter

from .test_buy_ins_on_fakes import World
from .test_buy_ins_on_fakes import world as world  # the fixture
from .test_lobby_app_on_fakes import refused, req
from .test_lounges_on_fakes import nlhe


async def message_of(call: Awaitable[object], reason: str, *sent: int) -> str:
    """The refusal's message, checked to be ``reason`` and to show none of ``sent`` (as
    typed, or with thousands separators)."""
    answer = await refused(call)
    assert answer.reason == reason, answer.message
    for value in sent:
        assert str(value) not in answer.message and f"{value:,}" not in answer.message, (
            answer.message
        )
    return answer.message


async def test_lounge_refusals_do_not_echo_the_request(world: World) -> None:
    alice = await world.player(1)
    create = world.lounge_app.create
    config = nlhe(7, sb=4_321, bb=8_642)
    # The buy-in range: below one stake, then upside down.
    await message_of(
        create(alice, req("r1"), "T", config, 5_003, 6_007, [], False), "BAD_BUY_IN", 5_003, 6_007
    )
    await message_of(
        create(alice, req("r2"), "T", config, 97_531, 86_421, [], False),
        "BAD_BUY_IN",
        97_531,
        86_421,
    )
    # AI seats: too many (7 for 7 seats), a bad level, a seat out of range.
    many = [AiSeat(None, epb.AI_LEVEL_EASY)] * 7
    message = await message_of(
        create(alice, req("a1"), "T", config, 0, 0, many, False), "BAD_AI_SEATS"
    )
    assert " 7 " not in f" {message} "
    await message_of(
        create(alice, req("a2"), "T", config, 0, 0, [AiSeat(None, 4_747)], False),
        "BAD_AI_SEATS",
        4_747,
    )
    await message_of(
        create(alice, req("a3"), "T", config, 0, 0, [AiSeat(3_131, epb.AI_LEVEL_EASY)], False),
        "BAD_AI_SEATS",
        3_131,
    )
    # The listing's variant filter.
    await message_of(
        world.lounge_app.listing(alice, LoungeFilter(variant=9_393), 0, ""), "BAD_FILTER", 9_393
    )


async def test_join_refusals_state_the_lounges_bounds_only(world: World) -> None:
    alice, bob = await world.player(1), await world.player(2)
    lounge = await world.lounge(alice, 1, seats=2)  # buy-ins 200 to 1,000
    message = await message_of(
        world.app.join(bob, req("j1"), lounge.lounge_id, None, 54_321, ""), "BAD_BUY_IN", 54_321
    )
    assert "200" in message and "1,000" in message  # the lounge's own range: the rule
    message = await message_of(
        world.app.join(bob, req("j2"), lounge.lounge_id, 8_765, 500, ""), "BAD_SEAT", 8_765
    )
    assert "0-1" in message


def test_too_few_chips_is_told_without_the_amount_asked_for() -> None:
    message = str(InsufficientChips(1_234, 54_321))
    assert "1,234" in message and "54,321" not in message and "54321" not in message
