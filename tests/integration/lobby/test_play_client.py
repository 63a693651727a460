"""``felt play`` end to end, driven by Textual's headless pilot against a real stack on
loopback: the lobby on PostgreSQL, a table service on Redis and an AI worker. The player
signs in as a guest, creates a lounge with AI opponents, buys in, plays hands by pressing
the keys the screen offers (discarding in Draw), leaves, and gets every chip it ends with
back in its balance. With seat tokens that live seconds, the app renews its token again and
again and plays on; when the owner closes the lounge under it, the refused renewal is shown and
the app keeps running."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from uuid import uuid4

import pytest
from argon2 import PasswordHasher
from textual.widgets import Button, Input

from felt.core.evaluator import evaluate
from felt.tools.client.play import model
from felt.tools.client.play.app import LoungePlan, PlayApp
from felt.tools.client.play.session import PlaySession, Refused
from felt.tools.client.play.tables import table_config
from poker.events.v1 import events_pb2 as epb
from poker.v1 import lobby_pb2 as lpb
from poker.v1 import lobby_service_pb2 as lobby_api
from poker.v1 import table_pb2 as tpb
from services.ai_worker.worker import AiWorker, WorkerConfig
from services.lobby.application import LobbySettings
from services.lobby.server import LobbyServerConfig, start_lobby_server
from services.lobby.tokens import Passwords
from services.table.auth import DEFAULT_TOKEN_TTL_S, Secrets
from services.table.server import TableServerConfig, start_table_server

from .conftest import empty_pool
from .test_lobby_grpc import SECRETS

ADMIN = "play-tests-table-admin-credential-0123456789"
AI_TOKEN = "play-tests-ai-token-credential-0123456789"
GRANT = 10_000
BUY_IN = 1_000
HANDS = 3
# Seat tokens that expire mid-session (the table accepts any TTL in code). A renewal is sent
# with half the lifetime left: at 4 s a loaded CI machine once took longer than those 2 s
# for the lobby's call, the token ran out and the player's stream ended mid-hand.
SHORT_TTL_S = 8


@dataclass
class Stack:
    lobby: str
    table: str


@asynccontextmanager
async def running_stack(
    redis_url: str, lobby_dsn: str, token_ttl_s: int = DEFAULT_TOKEN_TTL_S
) -> AsyncIterator[Stack]:
    pool = await empty_pool(lobby_dsn)
    await pool.close()
    stream = f"play-tests-ai-{hashlib.sha256(redis_url.encode()).hexdigest()[:6]}"
    table = await start_table_server(
        TableServerConfig(
            redis_url=redis_url,
            address="127.0.0.1:0",
            secrets=Secrets(b"play-tests-table-secret-0123456789", ADMIN, AI_TOKEN, token_ttl_s),
            ai_stream=stream,
        )
    )
    target = f"127.0.0.1:{table.port}"
    worker = AiWorker(
        WorkerConfig(
            redis_url=redis_url,
            table_target=target,
            ai_token=AI_TOKEN,
            metrics_port=None,
            stream=stream,
            block_ms=100,
        )
    )
    await worker.start()
    lobby = await start_lobby_server(
        LobbyServerConfig(
            database_url=lobby_dsn,
            address="127.0.0.1:0",
            secrets=SECRETS,
            settings=LobbySettings(starting_grant=GRANT),
            passwords=Passwords(PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)),
            grace_s=0.5,
            table_address=target,
            table_admin_token=ADMIN,
        )
    )
    try:
        yield Stack(f"127.0.0.1:{lobby.port}", target)
    finally:
        await lobby.stop()
        worker.request_stop()
        await worker.stop()
        await table.stop()


@pytest.fixture
async def stack(redis: Any, redis_url: str, lobby_dsn: str) -> AsyncIterator[Stack]:
    async with running_stack(redis_url, lobby_dsn) as running:
        yield running


@pytest.fixture
async def short_token_stack(redis: Any, redis_url: str, lobby_dsn: str) -> AsyncIterator[Stack]:
    async with running_stack(redis_url, lobby_dsn, SHORT_TTL_S) as running:
        yield running


async def type_an_amount(app: PlayApp, pilot: Any, digits: str, limit_s: float = 5.0) -> None:
    """``$``, then the digits and Enter once the amount box has the focus, as a person sees it
    open before typing. Focus moves on the app's next turn: keys pressed at once went to the
    log, and the box, focused after them, then swallowed every later key (the hands never
    finished on a loaded machine). If the turn passed meanwhile the box never opens: typed
    nothing."""
    box = app.query_one("#amount", Input)
    await pilot.press("dollar_sign")
    deadline = asyncio.get_running_loop().time() + limit_s
    while not box.has_focus:
        if asyncio.get_running_loop().time() > deadline:
            return
        await pilot.pause(0.02)
    await pilot.press(*digits, "enter")


async def play_through_the_keys(app: PlayApp, pilot: Any, limit_s: float = 90.0) -> None:
    """Press what a person would: call or check when offered, else the first choice; in
    the draw, mark the first two cards and draw."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_s
    typed = False
    while app.return_value is None:
        assert loop.time() < deadline, ("the hands did not finish", log_of(app)[-30:])
        view = app.view
        if view is not None and model.max_discards(view) is not None:
            await pilot.press("1", "2", "d")
        elif not typed and view is not None and model.choices(view) and model.bet_legal(view):
            # once, an amount typed below the minimum: sent as the minimum the server allows
            typed = True
            await type_an_amount(app, pilot, "1")
        elif view is not None and (offered := model.choices(view)):
            keys = [c.key for c in offered]
            await pilot.press("c" if "c" in keys else keys[0])
        await pilot.pause(0.05)


@pytest.mark.parametrize("variant", ["holdem", "draw"])
async def test_a_guest_plays_hands_against_ai_and_leaves_with_its_chips(
    stack: Stack, variant: str
) -> None:
    plan = LoungePlan(
        config=table_config(variant, seats=3),
        ai_levels=(epb.AI_LEVEL_NORMAL, epb.AI_LEVEL_HARD),
        buy_in=BUY_IN,
        player_name=f"Tui {variant}",
        name=f"TUI {variant}",
        hands=HANDS,
    )
    session = PlaySession(stack.lobby, stack.table)
    app = PlayApp(session, plan)
    async with app.run_test(size=(100, 40)) as pilot:
        await play_through_the_keys(app, pilot)
        log_lines = [str(line.text) for line in app.query_one("#log").lines]  # type: ignore[attr-defined]
    balance = app.return_value
    assert balance is not None and balance >= 0
    assert app.hands_seen >= HANDS
    # every chip is accounted for: what the seat left with is back in the balance
    left = next(line for line in log_lines if line.startswith("Left with"))
    stack_left = int(left.split()[2])
    assert balance == GRANT - BUY_IN + stack_left
    assert any(line.startswith("— New hand") for line in log_lines)
    # the typed amount went through (raised to the minimum the server allows)
    assert any(
        line.startswith((f"{plan.player_name} bets", f"{plan.player_name} raises to"))
        for line in log_lines
    )
    if variant == "draw":
        assert any(" draws " in line for line in log_lines)
    else:
        assert any(line.startswith("*** flop") for line in log_lines) or any(
            " folds" in line for line in log_lines
        )
    await session.close()


def holdem_plan(name: str, hands: int) -> LoungePlan:
    return LoungePlan(
        config=table_config("holdem", seats=3),
        ai_levels=(epb.AI_LEVEL_NORMAL, epb.AI_LEVEL_EASY),
        buy_in=BUY_IN,
        player_name=name,
        name=name,
        hands=hands,
    )


@pytest.mark.timeout(300)
async def test_the_seat_token_is_renewed_before_it_expires_and_play_goes_on(
    short_token_stack: Stack,
) -> None:
    session = PlaySession(short_token_stack.lobby, short_token_stack.table)
    app = PlayApp(session, holdem_plan("Tui renew", 2 * HANDS))  # outlives several tokens
    first: list[str] = []
    async with app.run_test(size=(100, 40)) as pilot:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while session.seat is None:
            assert loop.time() < deadline, "never seated"
            await pilot.pause(0.05)
        first.append(session.seat.token)
        assert session.seat.expires_at > 0
        # A renewal every two seconds on top of the play: a loaded machine needs more than
        # the usual bound (a bound, not a measurement).
        await play_through_the_keys(app, pilot, limit_s=180.0)
        log_lines = [str(line.text) for line in app.query_one("#log").lines]  # type: ignore[attr-defined]
    # Play outlived several token lifetimes: each was renewed before it expired (an expired
    # or replaced token would have been refused), and the last one still left the table.
    assert app.hands_seen >= HANDS
    assert app.token_renewals >= 2, log_lines
    assert not any("renewal" in line for line in log_lines), log_lines
    left = next(line for line in log_lines if line.startswith("Left with"))
    assert app.return_value == GRANT - BUY_IN + int(left.split()[2])
    await session.close()


# Its own deadlines (60 s, then 60 more) must fire before pytest's, so a slow machine fails it
# with what it waited for, not a bare timeout.
@pytest.mark.timeout(300)
async def test_a_refused_renewal_is_shown_and_the_app_carries_on(short_token_stack: Stack) -> None:
    session = PlaySession(short_token_stack.lobby, short_token_stack.table)
    app = PlayApp(session, holdem_plan("Tui closed", 0))
    async with app.run_test(size=(100, 40)) as pilot:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 60
        while app.token_renewals < 1:
            assert loop.time() < deadline, "the token was never renewed"
            await pilot.pause(0.05)
        # The owner (this very player) closes the lounge from another client: the seat is
        # settled, so the next renewal is refused for good.
        seat = session.seat
        assert seat is not None
        closed = await session.lobby.CloseLounge(
            lobby_api.CloseLoungeRequest(lounge_id=seat.lounge_id, request_id=str(uuid4())),
            metadata=session._auth(),  # the app's own access token: a second client
        )
        assert closed.lounge.state in (lpb.LOUNGE_STATE_CLOSING, lpb.LOUNGE_STATE_CLOSED)

        def lines() -> list[str]:
            return [str(line.text) for line in app.query_one("#log").lines]  # type: ignore[attr-defined]

        while not any(line.startswith("Seat token renewal refused") for line in lines()):
            assert loop.time() < deadline + 60, lines()
            # act when asked, so the hand in play ends and the close can settle the seat
            view = app.view
            if view is not None and (offered := model.choices(view)):
                keys = [c.key for c in offered]
                await pilot.press("c" if "c" in keys else keys[0])
            await pilot.pause(0.1)
        assert app.is_running
        await pilot.press("q")
    assert app.return_value is not None
    assert await session.balance() > GRANT - BUY_IN  # the seat's chips came home
    await session.close()


def log_of(app: PlayApp) -> list[str]:
    return [str(line.text) for line in app.query_one("#log").lines]  # type: ignore[attr-defined]


async def assert_choices_fit(app: PlayApp, pilot: Any, columns: int) -> None:
    """Every offered choice is on the screen whole: inside the terminal's width, its label
    not cut (the action row lays the choices out in a grid rather than one long line).

    Buttons mounted a moment ago have no region until the next layout (a loaded machine
    is slow to run it): wait for one, bounded, before judging."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5
    while any(not b.region.width for b in app.query(Button)) and loop.time() < deadline:
        await pilot.pause(0.05)
    for button in app.query(Button):
        region = button.region
        assert region.right <= columns, (str(button.label), region)
        assert len(str(button.label)) <= button.content_region.width, (str(button.label), region)


async def seated_and_dealt(app: PlayApp, pilot: Any, limit_s: float = 60.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_s
    while app.session.seat is None or app.view is None or not app.view.hand.hand_id:
        assert app.failure is None, app.failure
        assert loop.time() < deadline, log_of(app)
        await pilot.pause(0.05)


@pytest.mark.parametrize("variant", ["holdem", "draw"])
async def test_l_leaves_cleanly_at_80_columns_and_the_chips_come_back(
    stack: Stack, variant: str
) -> None:
    plan = LoungePlan(
        config=table_config(variant, seats=3),
        ai_levels=(epb.AI_LEVEL_NORMAL, epb.AI_LEVEL_EASY),
        buy_in=BUY_IN,
        player_name=f"Tui leave {variant}",
    )
    session = PlaySession(stack.lobby, stack.table)
    app = PlayApp(session, plan)
    async with app.run_test(size=(80, 30)) as pilot:
        await seated_and_dealt(app, pilot)
        assert session.seat is not None
        token = session.seat.token
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 60
        # play until the seat is offered choices, and check they fit at 80 columns
        while not (app.view is not None and model.choices(app.view)):
            assert loop.time() < deadline, log_of(app)
            await pilot.pause(0.05)
        await pilot.pause(0.2)
        await assert_choices_fit(app, pilot, 80)
        await pilot.press("l")  # mid-hand: leaving after it, the chips back when it ends
        while not any(line.startswith("Left with") for line in log_of(app)):
            assert app.failure is None, app.failure
            assert loop.time() < deadline + 120, log_of(app)
            await pilot.pause(0.1)
        assert app.is_running  # no crash: the player sees where the chips went
        assert session.seat is None
        left = next(line for line in log_of(app) if line.startswith("Left with"))
        await pilot.pause(0.3)  # the stream's next events must not wake a crashed loop
        assert app.failure is None and app.is_running
        lines = log_of(app)
        await pilot.press("q")
    assert not any("Traceback" in line or "RuntimeError" in line for line in lines), lines
    # no credential on the screen, not even its start (the crash printed one)
    assert not any(token[:12] in line for line in lines), lines
    assert app.return_value == GRANT - BUY_IN + int(left.split()[2])
    assert await session.balance() == app.return_value
    await session.close()


def _codes(cards: Any) -> list[int]:
    return [c.code for c in cards]


def _rigged_action(mine: tpb.TableView, theirs: tpb.TableView | None) -> tpb.Action | None:
    """The opponent's action: it sees both hands (its own, and the app's from the app's own
    screen) and, once the showdown's cards are all known (Draw: at once, both standing pat;
    Hold'em: on the river), puts everything in with a hand that beats the app's; otherwise it
    checks (or folds to a bet). So every hand the app plays to the end against it busts the
    app, and no hand's outcome is left to chance. None: wait (the app's screen is behind)."""
    hand = mine.hand
    legal = {a.type: a for a in hand.legal_actions}
    if tpb.ACTION_TYPE_DISCARD in legal:
        return tpb.Action(discard=tpb.Action.Discard())  # stands pat: its five stay known
    if theirs is None or theirs.hand.hand_id != hand.hand_id:
        return None
    board = _codes(hand.board)
    own = next(s for s in hand.seats if s.seat == mine.viewer_seat)
    app = next((s for s in theirs.hand.seats if s.seat == theirs.viewer_seat), None)
    known = hand.variant == epb.VARIANT_DRAW5 or len(board) == 5
    if app is None or not app.cards or not known:
        better = False
    else:
        better = evaluate([*_codes(own.cards), *board]) > evaluate([*_codes(app.cards), *board])
    if better and tpb.ACTION_TYPE_ALL_IN in legal:
        return tpb.Action(all_in=tpb.Action.AllIn())
    for kind in (tpb.ACTION_TYPE_RAISE, tpb.ACTION_TYPE_BET):
        if better and kind in legal:
            return model.typed_action(legal[kind], legal[kind].max_to)
    if better and tpb.ACTION_TYPE_CALL in legal:
        return tpb.Action(call=tpb.Action.Call())
    if tpb.ACTION_TYPE_CHECK in legal:
        return tpb.Action(check=tpb.Action.Check())
    if not known and tpb.ACTION_TYPE_CALL in legal:
        return tpb.Action(call=tpb.Action.Call())  # Hold'em before the river: stays in
    return tpb.Action(fold=tpb.Action.Fold())


async def _rigged_opponent(opponent: PlaySession, app: PlayApp, stop: asyncio.Event) -> None:
    """Plays the opponent's seat (see :func:`_rigged_action`) until ``stop``; gentle (check,
    else fold) once ``stop`` is only near: the test sets it before the app leaves."""
    while not stop.is_set():
        view = await opponent.view()
        if view.hand.HasField("to_act") and view.hand.to_act == view.viewer_seat:
            action = _rigged_action(view, app.view)
            if action is not None:
                with contextlib.suppress(Refused):  # a stale sequence: looked at again
                    await opponent.act(action, view.table.sequence)
        await asyncio.sleep(0.05)


async def _play_until_busted(app: PlayApp, pilot: Any, deadline: float) -> None:
    """Never fold: check or call (all-in when that is the call), stand pat in the draw, until
    the seat is out of chips (the opponent sees to that at the first showdown)."""
    loop = asyncio.get_running_loop()
    while True:
        assert app.failure is None, app.failure
        assert loop.time() < deadline, log_of(app)
        view = app.view
        if view is not None and model.busted(view):
            return
        await _stay_in(app, pilot)
        await pilot.pause(0.05)


async def _stay_in(app: PlayApp, pilot: Any) -> None:
    """One press of a player who stays in every hand to its end: check or call, else all-in;
    in the draw, stand pat."""
    view = app.view
    if view is not None and model.max_discards(view) is not None:
        if model.choices_blocked(view) is False:
            await pilot.press("d")
    elif view is not None and (offered := model.choices(view)):
        keys = [c.key for c in offered]
        await pilot.press("c" if "c" in keys else "a" if "a" in keys else keys[0])


async def _added(app: PlayApp, pilot: Any, count: int, deadline: float) -> str:
    """The ``count``-th "Added ... chips" line of the log, once it is there."""
    loop = asyncio.get_running_loop()
    while len(lines := [line for line in log_of(app) if line.startswith("Added ")]) < count:
        assert app.failure is None, app.failure
        assert loop.time() < deadline, log_of(app)
        await pilot.pause(0.05)
    return lines[count - 1]


@pytest.mark.parametrize("variant", ["holdem", "draw"])
async def test_a_busted_seat_adds_chips_and_plays_on(stack: Stack, variant: str) -> None:
    """Bust, add chips (b: the plan's buy-in) and play on at the same seat; bust again and
    top up (t: to the lounge's maximum); leave: every chip is accounted for, at 80 columns.

    The opponent is a second player the test plays, who sees both hands and goes all-in only
    with the better one (the app never folds), so the app busts at its first showdown, in
    seconds: no waiting for antes to drain a stack, no luck, no back door in the servers."""
    small, most = 10, 100
    config = table_config(variant, seats=2)
    if variant == "holdem":
        config.small_blind, config.big_blind = 1, 2  # a stack of ten lives to the river
    plan = LoungePlan(
        config=config,
        ai_levels=(),
        buy_in=small,
        player_name=f"Tui bust {variant}",
        buy_in_range=(small, most),
    )
    session = PlaySession(stack.lobby, stack.table)
    opponent = PlaySession(stack.lobby, stack.table)
    app = PlayApp(session, plan)
    stop = asyncio.Event()
    rigged: asyncio.Task[None] | None = None
    async with app.run_test(size=(80, 30)) as pilot:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 90
        while session.seat is None:
            assert app.failure is None, app.failure
            assert loop.time() < deadline, log_of(app)
            await pilot.pause(0.05)
        await opponent.guest(f"Rigged {variant} {uuid4().hex[:6]}")
        await opponent.join(await opponent.lounge(session.seat.lounge_id), most)
        rigged = asyncio.create_task(_rigged_opponent(opponent, app, stop))
        try:
            await seated_and_dealt(app, pilot)
            await _play_until_busted(app, pilot, deadline)
            await pilot.pause(0.2)
            status = app.query_one("#status")
            assert "out of chips" in str(status.render()), str(status.render())
            assert status.region.right <= 80
            balance_before = await session.balance()
            first_seat = session.seat
            await pilot.press("b")
            line = await _added(app, pilot, 1, deadline)
            assert line.startswith(f"Added {small} chips: stack {small};"), line
            # The same seat and token: chips from the balance, through the lobby's saga.
            assert session.seat is first_seat
            assert await session.balance() == balance_before - small
            hands = app.hands_seen
            while app.hands_seen <= hands:  # plays on: a hand with the seat in it ends
                assert app.failure is None, app.failure
                assert loop.time() < deadline, log_of(app)
                if app.view is not None and model.choices(app.view):
                    await assert_choices_fit(app, pilot, 80)
                await _stay_in(app, pilot)
                await pilot.pause(0.05)
            await _play_until_busted(app, pilot, deadline)
            stop.set()  # the opponent plays no more: the app tops up and leaves in peace
            await rigged
            await pilot.press("t")  # out of chips again: up to the lounge's maximum
            line = await _added(app, pilot, 2, deadline)
            assert line.startswith(f"Added {most} chips: stack {most};"), line
            while app.view is None or model.busted(app.view):
                assert loop.time() < deadline, log_of(app)
                await pilot.pause(0.05)
            await pilot.press("l")
            while not any(line.startswith("Left with") for line in log_of(app)):
                assert app.failure is None, app.failure
                assert loop.time() < deadline, log_of(app)
                await pilot.pause(0.1)
            lines = log_of(app)
            await pilot.press("q")
        finally:
            stop.set()
            if rigged is not None and not rigged.done():
                rigged.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await rigged
    assert sum(line.startswith("Seated at") for line in lines) == 1, lines
    left = next(line for line in lines if line.startswith("Left with"))
    # Every chip: the grant less the buy-in and both adds, plus the stack the seat left with.
    assert app.return_value == GRANT - small - small - most + int(left.split()[2])
    assert await session.balance() == app.return_value
    await session.close()
    await opponent.close()
