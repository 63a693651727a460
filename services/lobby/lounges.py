"""The lounges' use cases (create, list, get), without gRPC; sign-in checks are ``LobbyApp``'s.

A lounge's settings are validated exactly as the table service validates a
new table (``felt.wire.limits.check_table_config``, the codec, then the table
aggregate deciding ``CreateTable``: pure, no I/O), so a lounge the lobby
accepts is a table the table service accepts.

Creating a lounge is three steps, each retry-safe: the lounge's row with its
AI seats (one write, keyed by the client's request, which also derives the
lounge's id); its table in the table service; its AI players seated there
(both idempotent by request ids derived from the lounge), each funded from the
house account just before (a ``house_seat`` movement keyed by the lounge and
seat). Then it is OPEN. A crash or an unreachable table service between them
leaves it CREATING (never listed); the client's retry, or
:meth:`LoungeApp.recover` (on start and periodically), drives it on. A refusal
for good (``TableRefused``) ends it FAILED instead: the house's chips returned
first, then the state (which frees the owner's slot).

An AI seat's stack is the lounge's rule, not the creator's: :data:`AI_STACK_STAKES`
stakes, brought inside the lounge's buy-in range (so at most ``max_buy_in``, itself
at most the chip cap).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime

import structlog

from felt.core.rules.commands import IllegalAction
from felt.core.table.aggregate import CreateTable, decide_table
from felt.messages.values import table_config_from_proto
from felt.service.refusals import reason_of
from felt.storage.idempotency import ClientRequest
from felt.wire import limits
from poker.events.v1 import events_pb2 as epb
from poker.v1.reason_pb2 import Reason
from services.lobby.application import LobbyApp
from services.lobby.auth import Caller
from services.lobby.paging import page_match, page_token
from services.lobby.ports import (
    BUSTED_GRACE_RANGE_S,
    DEFAULT_BUSTED_GRACE_S,
    Lounge,
    LoungeFilter,
    Lounges,
    LoungeSeat,
    LoungeState,
    NewLounge,
    TableRefused,
    Tables,
    TablesUnavailable,
    TooManyLounges,
    WatchGrant,
)
from services.lobby.recovery import Backoffs
from services.lobby.refusals import Code, Refused
from services.lobby.tokens import AccessClaim

log = structlog.get_logger("felt.lobby.lounges")

DEFAULT_MIN_BUY_IN = 20
DEFAULT_MAX_BUY_IN = 100
"""Buy-in range by default, in stakes (big blinds; Draw: small bets)."""
AI_LEVELS = frozenset({epb.AI_LEVEL_EASY, epb.AI_LEVEL_NORMAL, epb.AI_LEVEL_HARD})
_AI_NAMES: dict[int, str] = {
    epb.AI_LEVEL_EASY: "easy",
    epb.AI_LEVEL_NORMAL: "normal",
    epb.AI_LEVEL_HARD: "hard",
}
_PAGE = re.compile(r"l([1-9][0-9]{0,17})")
RECOVER_BATCH = 100
AI_STACK_STAKES = 100
"""An AI seat sits down with this many stakes (big blinds; Draw: small bets), raised to the
lounge's ``min_buy_in`` or lowered to its ``max_buy_in`` when outside its buy-in range."""


def ai_stack(stake: int, low: int, high: int) -> int:
    """An AI seat's stack at a lounge of ``stake`` with buy-ins ``low`` to ``high``."""
    return min(max(AI_STACK_STAKES * stake, low), high, limits.CHIP_CAP)


@dataclass(frozen=True, slots=True)
class AiSeat:
    """An AI player asked for: at ``seat`` (None: the lowest seat left free) of ``level``."""

    seat: int | None
    level: int


@dataclass(frozen=True, slots=True)
class LoungePage:
    lounges: list[Lounge]
    next_page_token: str  # "" when there is no more


def stake_of(config: epb.TableConfig) -> int:
    """What a lounge's stakes are filtered by: the big blind (Hold'em), the small bet (Draw)."""
    return config.big_blind if config.variant == epb.VARIANT_NLHE else config.small_bet


def _bad(reason: Reason.ValueType, message: str) -> limits.LimitError:
    return limits.LimitError(reason, message)


def check_lounge_config(config: epb.TableConfig, lounge_id: str, name: str, at: datetime) -> None:
    """The table service's own checks of a new table, and a lounge's one limit."""
    limits.check_table_config(config, at)
    try:  # the table service's CreateTable: the codec, then the table aggregate's decision
        decide_table(None, CreateTable(table_config_from_proto(config, lounge_id, name)))
    except ValueError as exc:
        raise _bad(Reason.BAD_CONFIG, str(exc)) from None
    except IllegalAction as exc:
        raise _bad(reason_of(exc.code), exc.message) from None
    if config.max_hands and config.HasField("close_time"):
        raise _bad(Reason.BAD_CONFIG, "a lounge has one limit: max_hands or close_time, not both")


def buy_in_range(stake: int, low: int, high: int) -> tuple[int, int]:
    """The lounge's buy-in range: both 0 for the default (20 to 100 stakes), else
    ``stake <= low <= high``."""
    if low == 0 and high == 0:
        low = min(DEFAULT_MIN_BUY_IN * stake, limits.CHIP_CAP)
        high = min(DEFAULT_MAX_BUY_IN * stake, limits.CHIP_CAP)
    limits.check_amount(low, "min_buy_in")
    limits.check_amount(high, "max_buy_in")
    if not stake <= low <= high:
        raise _bad(
            Reason.BAD_BUY_IN,
            "the buy-in range must be at least one stake (the big blind, or Draw's small bet) "
            "and min_buy_in <= max_buy_in",
        )
    return low, high


def busted_grace(asked: int | None, default: int = DEFAULT_BUSTED_GRACE_S) -> int:
    """A new lounge's grace for a busted seat, in seconds: unset, the lobby's ``default``
    (``FELT_LOBBY_BUSTED_GRACE_S``); 0, never freed; else within ``BUSTED_GRACE_RANGE_S``."""
    if asked is None:
        return default
    low, high = BUSTED_GRACE_RANGE_S
    if asked != 0 and not low <= asked <= high:
        raise _bad(
            Reason.BAD_CONFIG,
            f"busted_grace_s is 0 (a busted seat is never freed) or {low} to {high} seconds",
        )
    return asked


def place_ai(seat_count: int, wanted: list[AiSeat], lounge_id: str, stack: int) -> list[LoungeSeat]:
    """Seat numbers for the AI players: the asked ones, then the lowest free; one seat at least
    is left for a player."""
    if len(wanted) > seat_count - 1:
        raise _bad(
            Reason.BAD_AI_SEATS,
            "a lounge keeps one seat for a player: at most its seat count - 1 AI seats",
        )
    taken: set[int] = set()
    for ai in wanted:
        if ai.level not in AI_LEVELS:
            raise _bad(Reason.BAD_AI_SEATS, "an AI seat's level must be easy, normal or hard")
        if ai.seat is not None:
            if not 0 <= ai.seat < seat_count or ai.seat in taken:
                raise _bad(
                    Reason.BAD_AI_SEATS,
                    "AI seats must be distinct seats of the lounge (0 to its seat count - 1)",
                )
            taken.add(ai.seat)
    free = iter(s for s in range(seat_count) if s not in taken)
    seats = []
    for ai in wanted:
        seat = ai.seat if ai.seat is not None else next(free)
        seats.append(
            LoungeSeat(
                seat,
                f"ai-{lounge_id}-{seat}",
                f"Bot {seat + 1} ({_AI_NAMES[ai.level]})",
                ai.level,
                stack,
            )
        )
    return sorted(seats, key=lambda s: s.seat)


class LoungeApp:
    def __init__(self, lobby: LobbyApp, lounges: Lounges, tables: Tables) -> None:
        self.lobby, self.lounges, self.tables = lobby, lounges, tables
        # The recovery pass: where its walk of CREATING lounges is, and their waits.
        self._creating_after: tuple[datetime, str] | None = None
        self._waits = Backoffs()

    async def create(
        self,
        caller: Caller,
        request: ClientRequest,
        name: str,
        config: epb.TableConfig,
        min_buy_in: int,
        max_buy_in: int,
        ai_seats: list[AiSeat],
        private: bool,
        *,
        busted_grace_s: int | None = None,
    ) -> Lounge:
        """Create a lounge and its table, and seat its AI players (a retry with the same
        request id finds the same lounge and finishes what is left). ``busted_grace_s``: how
        long a person's seat may stay without chips before it is freed (None: the default)."""
        claim = await self.lobby.signed_in(caller)
        limits.check_request_id(request.request_id)
        grace = busted_grace(busted_grace_s, self.lobby.settings.busted_grace_s)
        key = request.key(f"lounge/{claim.player_id}")
        lounge_id = "l-" + hashlib.sha256(key.key.encode()).hexdigest()[:20]
        name = limits.clean_table_name(name)
        if not name:
            raise _bad(Reason.BAD_NAME, "name is required (1-64 characters)")
        at = self.lobby.clock()
        # The table knows it is private (its spectators need a watch grant): set here,
        # whatever the request's config said.
        config = epb.TableConfig.FromString(config.SerializeToString())
        config.private = private
        check_lounge_config(config, lounge_id, name, at)
        stake = stake_of(config)
        low, high = buy_in_range(stake, min_buy_in, max_buy_in)
        seats = place_ai(config.seat_count, ai_seats, lounge_id, ai_stack(stake, low, high))
        new = NewLounge(
            lounge_id,
            claim.player_id,
            name,
            config.variant,
            config.SerializeToString(deterministic=True),
            stake,
            config.seat_count,
            low,
            high,
            secrets.token_urlsafe(9) if private else None,
            tuple(seats),
            key,
            at,
            grace,
        )
        most = self.lobby.settings.max_lounges_per_owner
        try:
            lounge = await self.lounges.create(new, most)
        except TooManyLounges:
            raise Refused(
                Code.RESOURCE_EXHAUSTED,
                f"a player may have at most {most} lounges open at once",
                Reason.TOO_MANY_LOUNGES,
            ) from None
        try:
            return await self._finish(lounge)
        except TablesUnavailable:
            raise Refused(
                Code.UNAVAILABLE,
                "the table service did not answer: retry with the same request_id",
                Reason.TABLES_UNAVAILABLE,
            ) from None
        except TableRefused as exc:
            raise Refused(
                Code.FAILED_PRECONDITION,
                f"the table service refused the lounge's table: {exc.message}; the lounge "
                "failed and does not count against your lounges",
                Reason.TABLE_REFUSED,
            ) from None

    async def _finish(self, lounge: Lounge) -> Lounge:
        """Drive a CREATING lounge to OPEN: its table, then its AI players, each funded by the
        house first (idempotent). A refusal for good fails it (:meth:`_fail`), then is raised."""
        if lounge.state is not LoungeState.CREATING:
            return lounge
        lid = lounge.lounge_id
        try:
            await self.tables.create(lid, lounge.name, lounge.config, f"lounge/{lid}/create")
        except TableRefused as exc:  # no table of ours: nothing to close
            await self._fail(lounge, exc, made=False)
            raise
        try:
            return await self._seat_ai(lounge)
        except TableRefused as exc:
            await self._fail(lounge, exc, made=True)
            raise

    async def _seat_ai(self, lounge: Lounge) -> Lounge:
        lid = lounge.lounge_id
        for s in lounge.seats:
            if s.ai_level:
                await self.lobby.ledger.fund_ai_seat(lid, s.seat, s.stack, self.lobby.clock())
                await self.tables.seat(
                    lid,
                    s.seat,
                    s.player_id,
                    s.display_name,
                    s.stack,
                    s.ai_level,
                    f"lounge/{lid}/ai/{s.seat}",
                )
        return await self.lounges.mark_open(lid)

    async def _fail(self, lounge: Lounge, refusal: TableRefused, *, made: bool) -> None:
        """A lounge its table service refused for good: FAILED, once the house has its chips
        back (each step idempotent: a crash between them leaves it CREATING, and the next
        pass is refused again and finishes it). A table the lobby ``made`` for it (an AI seat
        was refused) is asked to close, best effort: no player can reach it. A table refused
        at its creation is not ours (the id is taken): it is left alone."""
        lid = lounge.lounge_id
        log.error("lounge_failed", lounge_id=lid, reason=refusal.reason)
        if made:
            try:
                await self._wind_up(lounge)
            except (TableRefused, TablesUnavailable) as exc:
                log.info("failed_lounge_table_not_closed", lounge_id=lid, error=str(exc))
        returned = await self.lobby.ledger.refund_ai_seats(lid, self.lobby.clock())
        await self.lounges.mark_failed(lid, f"{refusal.reason}: {refusal.message}"[:500])
        log.info("lounge_failed_house_refunded", lounge_id=lid, chips=returned)

    async def _wind_up(self, lounge: Lounge) -> None:
        """Close a failed lounge's table and ask its AI seats to leave (two of them would play
        on by themselves); a seat never seated, or gone, is refused and skipped."""
        lid = lounge.lounge_id
        await self.tables.close(lid, f"lounge/{lid}/close")
        for s in lounge.seats:
            if s.ai_level:
                with contextlib.suppress(TableRefused):
                    await self.tables.leave(lid, s.seat, "", f"lounge/{lid}/failed/{s.seat}")

    async def recover(self) -> int:
        """Drive CREATING lounges on (on start, and periodically): a page a pass, the pages
        walking them all in turn, a lounge that keeps failing waiting longer each time
        (``Backoffs``), so none can keep the others out; how many opened."""
        opened = 0
        page = await self.lounges.creating(RECOVER_BATCH, self._creating_after)
        last = page[-1] if len(page) == RECOVER_BATCH else None
        self._creating_after = None if last is None else (last.created_at, last.lounge_id)
        now = self.lobby.clock()
        for lounge in page:
            if not self._waits.due(lounge.lounge_id, now):
                continue
            try:
                await self._finish(lounge)
                opened += 1
                self._waits.succeeded(lounge.lounge_id)
            except (TablesUnavailable, TableRefused) as exc:
                self._waits.failed(lounge.lounge_id, now)
                log.warning("lounge_not_recovered", lounge_id=lounge.lounge_id, error=str(exc))
        return opened

    async def get(self, caller: Caller, lounge_id: str, invite_code: str) -> Lounge:
        """A lounge and who sits where. A private one only for its owner or with its invite
        code; a CREATING or FAILED one only for its owner (to everyone else both do not exist). A
        closing or closed one is shown (its players see their chips going home)."""
        return await self.visible(await self.lobby.signed_in(caller), lounge_id, invite_code)

    async def visible(self, claim: AccessClaim, lounge_id: str, invite_code: str) -> Lounge:
        """:meth:`get` for a caller already known signed in (its session looked up once)."""
        limits.check_table_id(lounge_id)
        lounge = await self.lounges.get(lounge_id)
        hidden = NOT_FOUND
        if lounge is None:
            raise hidden
        if lounge.owner_id == claim.player_id:
            return lounge
        if lounge.state in (LoungeState.CREATING, LoungeState.FAILED):
            raise hidden
        if lounge.invite_code is not None and not hmac.compare_digest(
            invite_code.encode(), lounge.invite_code.encode()
        ):
            raise hidden
        return lounge

    async def watch(self, caller: Caller, lounge_id: str, invite_code: str) -> WatchGrant:
        """A watch grant for the lounge's table: for its owner, its seated players, and
        whoever shows a private lounge's invite code (to everyone else it does not exist,
        NO_LOUNGE). The table service signs it; a private table's spectators need it."""
        claim = await self.lobby.signed_in(caller)
        limits.check_table_id(lounge_id)
        limits.check_invite_code(invite_code)
        lounge = await self.lounges.get(lounge_id)
        if lounge is None:
            raise NOT_FOUND
        seated = any(s.player_id == claim.player_id for s in lounge.seats)
        if not seated:
            lounge = await self.visible(claim, lounge_id, invite_code)
        try:
            return await self.tables.watch_grant(lounge.lounge_id)
        except TablesUnavailable:
            raise Refused(
                Code.UNAVAILABLE,
                "the table service did not answer: retry",
                Reason.TABLES_UNAVAILABLE,
            ) from None
        except TableRefused:
            raise NOT_FOUND from None  # its table is not created yet (or is gone)

    async def listing(
        self, caller: Caller, where: LoungeFilter, page_size: int, page_token: str
    ) -> LoungePage:
        """Open public lounges, newest first, a page at a time (keyset: a page token is the
        last listing id seen, so a page never repeats or skips a lounge as others open)."""
        await self.lobby.signed_in(caller)
        size = limits.check_page_size(page_size)
        if where.variant not in (0, epb.VARIANT_NLHE, epb.VARIANT_DRAW5):
            raise _bad(Reason.BAD_FILTER, "variant must be unspecified, NLHE or DRAW5")
        limits.check_amount(where.min_stake, "min_stake", zero=True)
        limits.check_amount(where.max_stake, "max_stake", zero=True)
        if where.max_stake and where.min_stake > where.max_stake:
            raise _bad(Reason.BAD_FILTER, "min_stake must not be above max_stake")
        if not 0 <= where.min_free_seats <= 9:
            raise _bad(Reason.BAD_FILTER, "min_free_seats must be 0 to 9")
        rows = await self.lounges.listing(where, _page_position(page_token), size + 1)
        more = len(rows) > size
        rows = rows[:size]
        return LoungePage(rows, _page_token(rows[-1].listing_id) if more else "")


NOT_FOUND = Refused(Code.NOT_FOUND, "no such lounge (or it is private)", Reason.NO_LOUNGE)


def _page_token(listing_id: int) -> str:
    return page_token(f"l{listing_id}")


def _page_position(token: str) -> int | None:
    match = page_match(token, _PAGE)
    return int(match[1]) if match is not None else None
