"""``felt play``'s screen: a Textual app that plays one lounge against AI players.

Textual (a maintained TUI framework) draws the widgets, handles keys and
mouse, and tests headlessly through its pilot. The app holds no game logic:
it shows the seat's ``TableView`` (read after each event of the seat's
watch stream, and again until it holds that event), lists the choices
:mod:`felt.tools.client.play.model` builds from the server's legal actions, and
sends the one picked.

Keys: the letter or digit shown on each choice (f fold, c check/call, 1-4 bet
and raise sizes, a all-in); ``$`` types an amount; in the draw, 1-5 mark cards
and ``d`` draws (none marked stands pat); ``s`` sits out or in; ``b`` adds the
plan's buy-in to the seat once it is out of chips, and ``t`` tops the seat up to
the lounge's maximum between its hands (both ``AddSeatChips``: chips from the
balance, the seat kept); ``l`` leaves the table (the chips go back to the
balance, at once or when the hand in play ends); ``q`` quits (leaving first).

Nothing reaches the player as a traceback: a refusal is shown as a sentence, and any
other failure as its kind only (an exception's text could hold a token), and
``felt play`` then exits with status 1.

A seat token expires (the lobby's ``seat_token_expire_time``): the app renews it with
``RefreshSeatToken`` before then, so a long session plays on; a renewal refused for good
(the seat is gone) is shown and play stops, one that may pass is retried while the old
token still works.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import grpc
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Vertical
from textual.widgets import Button, Footer, Header, Input, RichLog, Static
from textual.widgets.button import ButtonVariant

from poker.events.v1 import events_pb2 as epb
from poker.v1 import lobby_pb2 as lpb
from poker.v1 import lobby_service_pb2 as lobby
from poker.v1 import table_pb2 as tpb
from poker.v1.reason_pb2 import Reason

from . import model
from .session import PlaySession, Refused, now, renew_in

RENEW_RETRY_S = 5.0
# A view read behind the event it was read for is read again: first after this, then twice
# as long each time, for at most VIEW_CATCH_UP_S (see PlayApp._view_with).
VIEW_RETRY_S = 0.02
VIEW_RETRY_MAX_S = 0.5
VIEW_CATCH_UP_S = 10.0
SETTLE_POLL_S = 1.0
SETTLE_LIMIT_S = 300.0  # a hand in play ends well within this (the action clock bounds it)


@dataclass(frozen=True, slots=True)
class LoungePlan:
    """What to play: an existing lounge, or a new one with these settings and AI levels."""

    config: epb.TableConfig
    ai_levels: tuple[int, ...]
    buy_in: int
    player_name: str
    lounge_id: str = ""
    name: str = "felt play"
    hands: int = 0  # leave and quit after this many hands (0: play until the player leaves)
    buy_in_range: tuple[int, int] = (0, 0)  # a new lounge's; (0, 0): the lobby's default
    wait_for_big_blind: bool = False  # sit down waiting for the big blind (Hold'em only)


class PlayApp(App[int]):
    """Plays the planned lounge; returns the balance after leaving (or -1 if never seated)."""

    TITLE = "Felt"
    # The log takes the focus, not the (hidden) amount box, which would swallow the keys.
    AUTO_FOCUS = "#log"
    CSS = """
    #top { height: auto; }
    #board { border: round $accent; padding: 0 1; height: auto; }
    #seats { border: round $primary; padding: 0 1; height: auto; }
    #hand { padding: 0 1; height: auto; text-style: bold; }
    #status { padding: 0 1; height: auto; color: $warning; }
    #actions { height: auto; grid-size: 3; grid-gutter: 0 1; grid-rows: 1; }
    #actions Button { width: 1fr; min-width: 0; height: 1; border: none; }
    #amount { width: 24; height: auto; }
    #log { height: 1fr; border: round $secondary; }
    """
    BINDINGS = [  # noqa: RUF012 (Textual reads a class attribute)
        *(Binding(k, f"choose('{k}')", show=False) for k in "fca12345d"),
        Binding("s", "toggle_sit", "sit out/in"),
        Binding("w", "sit_in_at_big_blind", "sit in at the big blind"),
        Binding("b", "rebuy", "add chips", show=False),
        Binding("t", "top_up", "top up"),
        Binding("l", "leave", "leave"),
        Binding("q", "quit_table", "quit"),
        Binding("dollar_sign", "type_amount", "amount"),
    ]

    def __init__(self, session: PlaySession, plan: LoungePlan) -> None:
        super().__init__()
        self.session = session
        self.plan = plan
        self.view: tpb.TableView | None = None
        self.names: dict[int, str] = {}
        self.marked: set[int] = set()
        self.sitting_out = False
        self.hands_seen = 0
        self.final_balance = -1
        self.token_renewals = 0
        self.failure: str | None = None  # why play stopped on an error (the exit status is 1)
        self.lounge = lpb.Lounge()
        self._acting = asyncio.Lock()

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Vertical(id="top"):
            yield Static("Connecting…", id="board")
            yield Static("", id="seats")
            yield Static("", id="hand")
            yield Static("", id="status")
            yield Grid(id="actions")
            yield Input(placeholder="amount, then Enter", id="amount", type="integer")
        yield RichLog(id="log", wrap=True, markup=False)
        yield Footer()

    async def on_mount(self) -> None:
        self.query_one("#amount", Input).display = False
        self.set_interval(0.5, self._tick)
        self.play()

    # ------------------------------------------------------------------ the game loop

    def _fail(self, why: str) -> None:
        """Play stopped on an error: said once, in words (never a traceback or a token)."""
        self.failure = why
        self.query_one("#log", RichLog).write(f"{why} (q quits)")
        self.notify(why, severity="error")

    async def _guarded(self, body: Callable[[], Awaitable[None]]) -> None:
        try:
            await body()
        except Refused as refused:
            self._fail(model.refusal_text(refused.reason, refused.code.name))
        except Exception as exc:  # no traceback reaches the player
            self._fail(f"Play stopped: an unexpected {type(exc).__name__}")

    @work(exclusive=True, group="play", exit_on_error=False)
    async def play(self) -> None:
        await self._guarded(self._start)

    async def _start(self) -> None:
        log = self.query_one("#log", RichLog)
        player = await self.session.guest(self.plan.player_name)
        self.sub_title = f"{player.display_name} · balance {await self.session.balance()}"
        if self.plan.lounge_id:
            lounge = await self.session.lounge(self.plan.lounge_id)
        else:
            lounge = await self.session.create_lounge(
                self.plan.name, self.plan.config, self.plan.ai_levels, self.plan.buy_in_range
            )
        self.lounge = lounge
        await self._sit(log)
        await self._follow()

    async def _sit(self, log: RichLog) -> None:
        seat = await self.session.join(self.lounge, self.plan.buy_in, self.plan.wait_for_big_blind)
        log.write(f"Seated at {self.lounge.name} (seat {seat.seat}) with {self.plan.buy_in} chips")
        self.keep_token()
        assert self.session.player is not None
        self.sub_title = (
            f"{self.session.player.display_name} · balance {await self.session.balance()}"
        )

    async def _follow(self) -> None:
        """Show the seat's events as they come, until the seat is left or the table closes."""
        log = self.query_one("#log", RichLog)
        async for item in self.session.watch():
            if item.WhichOneof("item") == "snapshot":
                self._show(item.snapshot)
                continue
            event = item.event
            if event.WhichOneof("event") == "hand_ended":
                self.hands_seen += 1
            if self.session.seat is None:  # left meanwhile: its token is not used again
                return
            if self._freed(event, log):
                return
            before = self.view
            facing_bet = before is not None and before.hand.current_bet > 0
            self._show(await self._view_with(event.sequence))
            line = model.describe_event(event, self.names, facing_bet)
            if line:
                log.write(line)
            if event.WhichOneof("event") == "table_closed":
                log.write("The table closed: your chips go back to your balance. q quits.")
                return
            if self.plan.hands and self.hands_seen >= self.plan.hands:
                log.write(f"{self.hands_seen} hands played: leaving")
                await self._leave()
                self.exit(self.final_balance)
                return

    def _freed(self, event: epb.StoredEvent, log: RichLog) -> bool:
        """Whether ``event`` is this seat's ``PlayerLeft`` by the lounge's grace for a busted
        seat: then the seat is gone (its token void, the stream ends), and the player is told
        so in words, not by a refused call."""
        here = self.session.seat
        left = event.player_left
        if event.WhichOneof("event") != "player_left" or here is None:
            return False
        if left.seat != here.seat or not left.busted:
            return False
        self.session.seat_freed()
        self.workers.cancel_group(self, "token")
        log.write(model.freed_notice(self.lounge.busted_grace_s))
        self._show_choices(tpb.TableView())
        return True

    async def _view_with(self, sequence: int) -> tpb.TableView:
        """The seat's view once it holds the event at ``sequence``.

        The table service streams an event as soon as it is in the table's stream, and may
        answer a view from its own copy of the table before that copy has the event (CI: the
        AI's fold that gave the person the turn, streamed, and a view without it). Shown, that
        view offered no choices, and nothing else came to redraw it: the table waits for this
        seat. So a view behind the event is read again until it has it (paced, bounded; past
        the bound the next event reads it again)."""
        view = await self.session.view()
        loop = asyncio.get_running_loop()
        give_up, pause = loop.time() + VIEW_CATCH_UP_S, VIEW_RETRY_S
        while view.table.sequence < sequence and loop.time() < give_up:
            await asyncio.sleep(pause)
            pause = min(2 * pause, VIEW_RETRY_MAX_S)
            view = await self.session.view()
        return view

    @work(exclusive=True, group="token", exit_on_error=False)
    async def keep_token(self) -> None:
        """Renews the seat token before it expires, for as long as the player sits."""
        log = self.query_one("#log", RichLog)
        while (seat := self.session.seat) is not None and seat.expires_at:
            await asyncio.sleep(renew_in(seat.expires_at, now()))
            if self.session.seat is not seat:  # left (or renewed) meanwhile
                continue
            try:
                await self.session.refresh_seat()
                self.token_renewals += 1
            except Refused as refused:
                # SEAT_TOKEN_SUPERSEDED: a later renewal replaced the token; the next try,
                # with a new request id, is answered (the seat is not gone).
                if not refused.means(Reason.SEAT_TOKEN_SUPERSEDED) and refused.code in (
                    grpc.StatusCode.FAILED_PRECONDITION,
                    grpc.StatusCode.PERMISSION_DENIED,
                    grpc.StatusCode.NOT_FOUND,
                ):
                    log.write(f"Seat token renewal refused ({refused.reason}): the seat is gone")
                    self.notify(str(refused), severity="error")
                    return
                log.write(f"Seat token renewal failed ({refused}); trying again")
                await asyncio.sleep(min(RENEW_RETRY_S, max(seat.expires_at - now(), 0.0)))
                if now() >= seat.expires_at:
                    log.write("The seat token expired: restart felt play to sit down again")
                    return
            except RuntimeError:  # left while renewing
                return
            except Exception as exc:  # no traceback reaches the player
                log.write(f"Seat token renewal stopped: an unexpected {type(exc).__name__}")
                return

    def _show(self, view: tpb.TableView) -> None:
        self.view = view
        self.names = model.seat_names(view.table)
        hand = view.hand
        board = [f"{view.table.name}  ·  hand {view.table.hands_played + 1}"]
        if hand.hand_id:
            street = model.STREET_NAMES.get(hand.street, "")
            board.append(f"{street}: {model.cards_label(hand.board)}" if hand.board else street)
            board.extend(model.pot_lines(hand))
        else:
            board.append("Waiting for the next hand…")
        self.query_one("#board", Static).update("\n".join(board))
        self.query_one("#seats", Static).update("\n".join(model.seat_lines(view)))
        mine = model.my_cards(view)
        if mine:
            marks = [
                f"[{n + 1}]{'✗' if n in self.marked else ' '}{model.card_label(c)}"
                for n, c in enumerate(mine)
            ]
            self.query_one("#hand", Static).update("Your cards: " + "  ".join(marks))
        else:
            self.query_one("#hand", Static).update("")
        self._show_choices(view)
        self._tick()

    def _show_choices(self, view: tpb.TableView) -> None:
        actions = self.query_one("#actions", Grid)
        actions.remove_children(Button)  # buttons carry no id: the next ones mount at once
        limit = model.max_discards(view)
        if limit is not None:
            self.marked = {n for n in self.marked if n < len(model.my_cards(view))}
            label = f"d Draw {len(self.marked)}" if self.marked else "d Stand pat"
            actions.mount(Button(label, name="choice-draw", variant="primary"))
            return
        self.marked.clear()
        for choice in model.choices(view):
            variant: ButtonVariant = "error" if choice.key == "f" else "primary"
            actions.mount(
                Button(f"{choice.key} {choice.label}", name=f"choice-{choice.key}", variant=variant)
            )

    def _tick(self) -> None:
        view = self.view
        status = self.query_one("#status", Static)
        if self.session.seat is None:
            status.update("")
            return
        if view is not None and model.busted(view):
            status.update(
                f"You are out of chips: b adds {self.plan.buy_in} chips, t up to the "
                "maximum, l leaves"
            )
            return
        if view is None or not view.hand.HasField("to_act"):
            status.update("")
            return
        hand = view.hand
        who = (
            "Your turn"
            if model.choices_blocked(view) is False
            else (f"{self.names.get(hand.to_act, f'seat {hand.to_act}')} to act")
        )
        if hand.HasField("action_deadline"):
            deadline = hand.action_deadline.ToDatetime(tzinfo=UTC)
            left = max((deadline - datetime.now(UTC)).total_seconds(), 0.0)
            who += f" · {left:4.1f} s"
        limit = model.max_discards(view)
        if limit is not None:
            who += f" · mark up to {limit} cards with 1-5, then d"
        status.update(who)

    # ------------------------------------------------------------------ input

    async def action_choose(self, key: str) -> None:
        """A key of the choices line (or, in the draw, a card to mark or ``d`` to draw)."""
        view = self.view
        if view is None:
            return
        limit = model.max_discards(view)
        if limit is not None:
            if key == "d":
                await self._draw(view)
            elif key.isdigit():
                position = int(key) - 1
                if position in self.marked:
                    self.marked.discard(position)
                elif len(self.marked) < limit and position < len(model.my_cards(view)):
                    self.marked.add(position)
                self._show(view)
            return
        for choice in model.choices(view):
            if choice.key == key:
                await self._send(choice.action)
                return

    @on(Button.Pressed)
    async def _pressed(self, event: Button.Pressed) -> None:
        view, button_id = self.view, event.button.name or ""
        if view is None or not button_id.startswith("choice-"):
            return
        key = button_id.removeprefix("choice-")
        if key == "draw":
            await self._draw(view)
            return
        for choice in model.choices(view):
            if choice.key == key:
                await self._send(choice.action)
                return

    async def _draw(self, view: tpb.TableView) -> None:
        action = model.discard_action(model.my_cards(view), self.marked)
        self.marked = set()
        await self._send(action)

    def action_type_amount(self) -> None:
        if self.view is None or model.bet_legal(self.view) is None:
            return
        box = self.query_one("#amount", Input)
        box.display = True
        box.focus()

    @on(Input.Submitted, "#amount")
    async def _amount(self, event: Input.Submitted) -> None:
        box = self.query_one("#amount", Input)
        box.display = False
        box.value = ""
        self.query_one("#log", RichLog).focus()
        view = self.view
        legal = model.bet_legal(view) if view is not None else None
        if legal is None or not event.value.strip().isdigit():
            return
        await self._send(model.typed_action(legal, int(event.value)))

    async def _send(self, action: tpb.Action) -> None:
        view = self.view
        if view is None or self.session.seat is None or self._acting.locked():
            return
        async with self._acting:
            try:
                await self.session.act(action, view.table.sequence)
            except Refused as refused:
                if refused.code != grpc.StatusCode.ABORTED:  # stale: the next event refreshes
                    self.notify(model.refusal_text(refused.reason, refused.code.name))
                if self.session.seat is not None:
                    await self._refresh()
            except RuntimeError:  # the seat was left meanwhile
                return

    async def _refresh(self) -> None:
        """The seat's view read again after a refused action. A refused read is not the end
        of play: it runs on a key press, outside the game loop's guard, and the seat may have
        been emptied meanwhile (its lounge closed and settled it: EMPTY_SEAT), which the
        seat's stream and its token renewal report in words; raised here it would end the
        app with a traceback."""
        try:
            self._show(await self.session.view())
        except Refused:
            return

    async def action_toggle_sit(self) -> None:
        if self.session.seat is None:
            return
        try:
            if self.sitting_out:
                await self.session.sit_in()
            else:
                await self.session.sit_out()
            self.sitting_out = not self.sitting_out
        except Refused as refused:
            self.notify(model.refusal_text(refused.reason, refused.code.name))
        except RuntimeError:  # the seat was left meanwhile
            return

    async def action_sit_in_at_big_blind(self) -> None:
        """Sitting out, sit back in waiting for the big blind (Hold'em; RULES.md): dealt in
        only when the big blind reaches the seat, posting it."""
        if self.session.seat is None or not self.sitting_out:
            self.notify("Sit out first (s); then w sits you back in at the big blind")
            return
        try:
            await self.session.sit_in(wait_for_big_blind=True)
            self.sitting_out = False
        except Refused as refused:
            self.notify(model.refusal_text(refused.reason, refused.code.name))
        except RuntimeError:  # the seat was left meanwhile
            return

    async def _leave(self) -> None:
        """Leave the seat and wait until its chips are back in the balance: at once, or when
        the hand it was dealt into ends (the same leave request, asked again, says when)."""
        if self.session.seat is None:
            return
        self.workers.cancel_group(self, "token")
        log = self.query_one("#log", RichLog)
        left = await self.session.leave()
        if left.state != lobby.LEAVE_STATE_LEFT:
            log.write("Leaving after this hand; the chips come back to the balance then")
            waited = 0.0
            while left.state != lobby.LEAVE_STATE_LEFT and waited < SETTLE_LIMIT_S:
                await asyncio.sleep(SETTLE_POLL_S)
                waited += SETTLE_POLL_S
                left = await self.session.leave_again()
        self.final_balance = left.balance
        if left.state == lobby.LEAVE_STATE_LEFT:
            log.write(f"Left with {left.stack} chips; balance {left.balance}")
        else:
            log.write("The hand has not ended yet: your chips come back when it does")
        self.sub_title = f"balance {left.balance}"

    @work(exclusive=True, group="leave", exit_on_error=False)
    async def action_leave(self) -> None:
        if self.session.seat is None:
            return
        self.workers.cancel_group(self, "play")
        await self._guarded(self._leave)
        if self.failure is None:
            self.query_one("#log", RichLog).write("You left the table. q quits.")
            self._show_choices(tpb.TableView())
            self._tick()

    @work(exclusive=True, group="chips", exit_on_error=False)
    async def action_rebuy(self) -> None:
        """Out of chips: add the plan's buy-in to the seat from the balance (the seat, its
        token and its watch stream stay; the table's ChipsAdded shows the new stack)."""
        view = self.view
        if self.session.seat is None or view is None or not model.busted(view):
            return
        await self._add_chips(self.plan.buy_in)

    @work(exclusive=True, group="chips", exit_on_error=False)
    async def action_top_up(self) -> None:
        """Top the seat up to the lounge's maximum, between its hands (the lobby refuses
        while it is dealt in, or when it is at the maximum: said as a sentence)."""
        if self.session.seat is None:
            return
        await self._add_chips(0)

    async def _add_chips(self, amount: int) -> None:
        log = self.query_one("#log", RichLog)
        try:
            added = await self.session.add_chips(amount)
        except Refused as refused:
            self.notify(model.refusal_text(refused.reason, refused.code.name))
            log.write(model.refusal_text(refused.reason, refused.code.name))
            return
        except RuntimeError:  # the seat was left meanwhile
            return
        log.write(f"Added {added.amount} chips: stack {added.stack}; balance {added.balance}")
        assert self.session.player is not None
        self.sub_title = f"{self.session.player.display_name} · balance {added.balance}"
        # The table's ChipsAdded, on the seat's stream, refreshes the view.

    async def action_quit_table(self) -> None:
        self.workers.cancel_group(self, "play")
        await self._guarded(self._leave)
        self.exit(self.final_balance)
