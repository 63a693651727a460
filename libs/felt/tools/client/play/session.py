"""A player's session over the public gRPC API: the lobby for the account, the lounge and
the seat; the table service for the game, with the seat token the lobby issued.

It is the only part of ``felt play`` that does I/O, and it uses nothing but the
generated stubs, as any front end would. Every mutating call carries a fresh
request id and is retried with the same id while the service is unavailable or
slow to answer, so a retry never acts twice; a join that still has no definite
answer keeps its id for the next attempt at the same join (same lounge and
buy-in), so a retried join cannot hold a second buy-in.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import grpc

from felt.wire.status import error_reason
from poker.events.v1 import events_pb2 as epb
from poker.v1 import lobby_pb2 as lpb
from poker.v1 import lobby_service_pb2 as lobby_api
from poker.v1 import lobby_service_pb2_grpc as lobby_rpc
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as table
from poker.v1 import table_service_pb2_grpc as table_rpc
from poker.v1.reason_pb2 import Reason

T = TypeVar("T")
RETRIES = 5
RETRY_PAUSE_S = 0.5
CALL_TIMEOUT_S = 10.0
RENEW_MARGIN_S = 300.0
# How the table refuses a token replaced by a renewal (the old one stops working at once).
_STALE_TOKEN = (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED)
# Answers after which a request may or may not have been done: retried under the same id.
_UNCERTAIN = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)

Metadata = tuple[tuple[str, str], ...]


def request_id() -> str:
    return str(uuid.uuid4())


class Refused(Exception):
    """A call the server refused: its status, ErrorInfo reason and message."""

    def __init__(self, err: grpc.aio.AioRpcError) -> None:
        self.code = err.code()
        self.reason = error_reason(err)
        super().__init__(f"{self.reason}: {err.details() or self.code.name}")

    def means(self, reason: Reason.ValueType) -> bool:
        """Whether the server refused with the declared ``reason`` (``poker.v1.Reason``)."""
        return self.reason == Reason.Name(reason)


async def _retrying(call: Callable[[], Awaitable[T]]) -> T:
    """``call()``, again (same request) while the service is UNAVAILABLE or does not answer
    in time (DEADLINE_EXCEEDED: it may have done it; the same request id makes the retry
    return that answer); refusals raise."""
    for attempt in range(RETRIES):
        try:
            return await call()
        except grpc.aio.AioRpcError as err:
            if err.code() not in _UNCERTAIN or attempt == RETRIES - 1:
                raise Refused(err) from err
            await asyncio.sleep(RETRY_PAUSE_S * (attempt + 1))
    raise AssertionError("unreachable")


def renew_in(expires_at: float, now: float) -> float:
    """Seconds to wait before renewing a seat token that expires at ``expires_at``: until
    half of what is left, at most ``RENEW_MARGIN_S``, remains, so that a renewal refused for
    a moment (the lobby restarting) leaves time for retries before the old token stops."""
    left = expires_at - now
    return max(0.0, left - min(RENEW_MARGIN_S, left / 2))


@dataclass(frozen=True, slots=True)
class Seat:
    """Where the player sits: the lounge, its table, the seat and the seat's token, which
    stops working at ``expires_at`` (seconds since the epoch; 0: never)."""

    lounge_id: str
    table_id: str
    seat: int
    token: str
    expires_at: float = 0.0


def _expiry(
    answer: lobby_api.JoinLoungeResponse | lobby_api.RefreshSeatTokenResponse,
) -> float:
    if not answer.HasField("seat_token_expire_time"):
        return 0.0
    at = answer.seat_token_expire_time
    return at.seconds + at.nanos / 1e9


def now() -> float:
    """The wall clock the token expiries are compared with (seconds since the epoch)."""
    return time.time()


class PlaySession:
    """One signed-in player, optionally seated at one lounge."""

    def __init__(self, lobby_address: str, table_address: str) -> None:
        # grpc.aio channels belong to the event loop they are made on, so they are made
        # on first use, inside the app's loop.
        self._addresses = (lobby_address, table_address)
        self._channels: list[grpc.aio.Channel] = []
        self._lobby: lobby_rpc.LobbyServiceAsyncStub | None = None
        self._tables: table_rpc.TableServiceAsyncStub | None = None
        self.player: lpb.Player | None = None
        self._credentials: lpb.Credentials | None = None
        self.seat: Seat | None = None
        self._leaving: tuple[str, str] | None = None  # the last leave: lounge, request id
        # Clear while a seat token renewal is under way: table calls wait for the new token.
        self._renewed = asyncio.Event()
        self._renewed.set()
        # Joins without a definite answer yet, by (lounge, buy-in): their request ids.
        self._pending_joins: dict[tuple[str, int, bool], str] = {}

    def _connect(self) -> None:
        self._channels = [grpc.aio.insecure_channel(a) for a in self._addresses]
        self._lobby = lobby_rpc.LobbyServiceStub(self._channels[0])
        self._tables = table_rpc.TableServiceStub(self._channels[1])

    @property
    def lobby(self) -> lobby_rpc.LobbyServiceAsyncStub:
        if self._lobby is None:
            self._connect()
        assert self._lobby is not None
        return self._lobby

    @property
    def tables(self) -> table_rpc.TableServiceAsyncStub:
        if self._tables is None:
            self._connect()
        assert self._tables is not None
        return self._tables

    async def close(self) -> None:
        for channel in self._channels:
            await channel.close()
        self._channels, self._lobby, self._tables = [], None, None

    # ------------------------------------------------------------------ account

    def _auth(self) -> Metadata:
        if self._credentials is None:
            raise RuntimeError("not signed in")
        return (("authorization", f"Bearer {self._credentials.access_token}"),)

    def _seat_auth(self) -> Metadata:
        if self.seat is None:
            raise RuntimeError("not seated")
        return (("authorization", f"Bearer {self.seat.token}"),)

    async def guest(self, name: str) -> lpb.Player:
        rid = request_id()
        made = await _retrying(
            lambda: self.lobby.CreateGuest(
                lobby_api.CreateGuestRequest(display_name=name, request_id=rid),
                timeout=CALL_TIMEOUT_S,
            )
        )
        self.player, self._credentials = made.player, made.credentials
        return made.player

    async def sign_in(self, name: str, password: str) -> lpb.Player:
        rid = request_id()
        made = await _retrying(
            lambda: self.lobby.SignIn(
                lobby_api.SignInRequest(display_name=name, password=password, request_id=rid),
                timeout=CALL_TIMEOUT_S,
            )
        )
        self.player, self._credentials = made.player, made.credentials
        return made.player

    async def balance(self) -> int:
        got = await _retrying(
            lambda: self.lobby.GetBalance(
                lobby_api.GetBalanceRequest(), metadata=self._auth(), timeout=CALL_TIMEOUT_S
            )
        )
        return got.balance

    async def top_up(self) -> int:
        rid = request_id()
        done = await _retrying(
            lambda: self.lobby.TopUp(
                lobby_api.TopUpRequest(request_id=rid),
                metadata=self._auth(),
                timeout=CALL_TIMEOUT_S,
            )
        )
        return done.balance

    # ------------------------------------------------------------------ lounges

    async def create_lounge(
        self,
        name: str,
        config: epb.TableConfig,
        ai_levels: Sequence[int],
        buy_in_range: tuple[int, int] = (0, 0),
    ) -> lpb.Lounge:
        """A lounge with AI players; ``buy_in_range`` (0, 0): the lobby's default range."""
        rid = request_id()
        request = lobby_api.CreateLoungeRequest(
            name=name,
            config=config,
            min_buy_in=buy_in_range[0],
            max_buy_in=buy_in_range[1],
            ai_seats=[lpb.AiSeat(level=level) for level in ai_levels],  # type: ignore[arg-type]
            request_id=rid,
        )
        made = await _retrying(
            lambda: self.lobby.CreateLounge(request, metadata=self._auth(), timeout=CALL_TIMEOUT_S)
        )
        return made.lounge

    async def lounges(self, variant: int = 0) -> list[lpb.Lounge]:
        listed = await _retrying(
            lambda: self.lobby.ListLounges(
                lobby_api.ListLoungesRequest(variant=variant, min_free_seats=1),  # type: ignore[arg-type]
                metadata=self._auth(),
                timeout=CALL_TIMEOUT_S,
            )
        )
        return list(listed.lounges)

    async def lounge(self, lounge_id: str) -> lpb.Lounge:
        got = await _retrying(
            lambda: self.lobby.GetLounge(
                lobby_api.GetLoungeRequest(lounge_id=lounge_id),
                metadata=self._auth(),
                timeout=CALL_TIMEOUT_S,
            )
        )
        return got.lounge

    async def join(self, lounge: lpb.Lounge, buy_in: int, wait_for_big_blind: bool = False) -> Seat:
        """Takes a seat with `buy_in` chips (waiting for the big blind if asked: Hold'em
        only). A join that ended without a definite answer (the lobby unreachable or slow
        through every retry: it may have seated the player and held the chips) is sent
        again under the same request id by the next call for the same lounge, buy-in and
        choice, so the lobby answers it once."""
        key = (lounge.lounge_id, buy_in, wait_for_big_blind)
        rid = self._pending_joins.setdefault(key, request_id())
        try:
            joined = await _retrying(
                lambda: self.lobby.JoinLounge(
                    lobby_api.JoinLoungeRequest(
                        lounge_id=lounge.lounge_id,
                        buy_in=buy_in,
                        request_id=rid,
                        wait_for_big_blind=wait_for_big_blind,
                    ),
                    metadata=self._auth(),
                    timeout=CALL_TIMEOUT_S,
                )
            )
        except Refused as refused:
            # UNAVAILABLE (TABLES_UNAVAILABLE too: "the outcome is not known yet, the chips
            # stay held") and timeouts leave the join open; a refusal closes it.
            if refused.code not in _UNCERTAIN:
                del self._pending_joins[key]
            raise
        del self._pending_joins[key]
        self.seat = Seat(
            lounge.lounge_id, lounge.lounge_id, joined.seat, joined.seat_token, _expiry(joined)
        )
        return self.seat

    async def refresh_seat(self) -> Seat:
        """A fresh token for the seat (RefreshSeatToken; the old one stops working at once),
        before the old one expires. Refused with FAILED_PRECONDITION NOT_SEATED when the
        seat is gone (left, or the lounge closed)."""
        here, rid = self._here(), request_id()
        self._renewed.clear()
        try:
            fresh = await _retrying(
                lambda: self.lobby.RefreshSeatToken(
                    lobby_api.RefreshSeatTokenRequest(lounge_id=here.lounge_id, request_id=rid),
                    metadata=self._auth(),
                    timeout=CALL_TIMEOUT_S,
                )
            )
            if self.seat is None:  # left while the refresh was under way: nothing to keep
                raise RuntimeError("not seated")
            self.seat = Seat(
                here.lounge_id, here.table_id, fresh.seat, fresh.seat_token, _expiry(fresh)
            )
            return self.seat
        finally:
            self._renewed.set()

    async def add_chips(self, amount: int) -> lobby_api.AddSeatChipsResponse:
        """Chips from the balance to the seat (``AddSeatChips``; 0: up to the lounge's
        maximum), between the seat's hands. The seat and its token stay as they are; a
        retry while the lobby is unavailable is the same request, so it adds once."""
        here, rid = self._here(), request_id()
        return await _retrying(
            lambda: self.lobby.AddSeatChips(
                lobby_api.AddSeatChipsRequest(
                    lounge_id=here.lounge_id, amount=amount, request_id=rid
                ),
                metadata=self._auth(),
                timeout=CALL_TIMEOUT_S,
            )
        )

    async def leave(self) -> lobby_api.LeaveLoungeResponse:
        """Leave the seat (``LeaveLounge``). The seat is given up here: its token is not used
        again. A seat dealt into the hand in play is LEAVING until the hand ends; then the same
        request, sent again (:meth:`leave_again`), answers LEFT with the stack credited."""
        if self.seat is None:
            raise RuntimeError("not seated")
        self._leaving = (self.seat.lounge_id, request_id())
        left = await self.leave_again()
        self.seat = None
        return left

    def seat_freed(self) -> None:
        """The table freed the seat by itself (out of chips for longer than the lounge's grace:
        ``PlayerLeft.busted``): its token is void and there is nothing left to leave."""
        self.seat = None

    async def leave_again(self) -> lobby_api.LeaveLoungeResponse:
        """The last leave's request again (same request id): its saga as it stands now."""
        if self._leaving is None:
            raise RuntimeError("not leaving")
        lounge_id, rid = self._leaving
        return await _retrying(
            lambda: self.lobby.LeaveLounge(
                lobby_api.LeaveLoungeRequest(lounge_id=lounge_id, request_id=rid),
                metadata=self._auth(),
                timeout=CALL_TIMEOUT_S,
            )
        )

    # ------------------------------------------------------------------ the table

    def _here(self) -> Seat:
        if self.seat is None:
            raise RuntimeError("not seated")
        return self.seat

    async def _as_seat(self, call: Callable[[], Awaitable[T]]) -> T:
        """``call()`` with the seat's token (``call`` reads ``_seat_auth()`` each time).

        A renewal replaces the token at once, and the table tells of it by an event that
        prompts calls before the lobby's answer is back: calls wait for a renewal under way,
        and one refused because its token was replaced meanwhile goes again with the new one.
        """
        await self._renewed.wait()
        sent_with = self._here().token
        try:
            return await _retrying(call)
        except Refused as refused:
            await self._renewed.wait()
            if refused.code not in _STALE_TOKEN or self._here().token == sent_with:
                raise
            return await _retrying(call)

    async def view(self) -> tpb.TableView:
        here = self._here()
        got = await self._as_seat(
            lambda: self.tables.GetTableView(
                table.GetTableViewRequest(table_id=here.table_id, seat=here.seat),
                metadata=self._seat_auth(),
                timeout=CALL_TIMEOUT_S,
            )
        )
        return got.view

    async def act(self, action: tpb.Action, expected_sequence: int) -> int:
        here, rid = self._here(), request_id()
        request = table.SubmitActionRequest(
            table_id=here.table_id,
            seat=here.seat,
            request_id=rid,
            action=action,
            expected_sequence=expected_sequence,
        )
        done = await self._as_seat(
            lambda: self.tables.SubmitAction(
                request, metadata=self._seat_auth(), timeout=CALL_TIMEOUT_S
            )
        )
        return done.sequence

    async def sit_out(self) -> None:
        here, rid = self._here(), request_id()
        await self._as_seat(
            lambda: self.tables.SitOut(
                table.SitOutRequest(table_id=here.table_id, seat=here.seat, request_id=rid),
                metadata=self._seat_auth(),
                timeout=CALL_TIMEOUT_S,
            )
        )

    async def sit_in(self, *, wait_for_big_blind: bool = False) -> None:
        """Sit back in: from the next hand, or (``wait_for_big_blind``) at the big blind."""
        here, rid = self._here(), request_id()
        request = table.SitInRequest(
            table_id=here.table_id,
            seat=here.seat,
            request_id=rid,
            wait_for_big_blind=wait_for_big_blind,
        )
        await self._as_seat(
            lambda: self.tables.SitIn(
                request,
                metadata=self._seat_auth(),
                timeout=CALL_TIMEOUT_S,
            )
        )

    async def watch(self, from_sequence: int = 0) -> AsyncIterator[table.WatchTableResponse]:
        """The seat's stream of redacted events, resumed after ``from_sequence`` when the
        connection drops (the stream is gap-free, so nothing is missed or repeated)."""
        here = self._here()
        last = from_sequence
        failures = 0
        while True:
            await self._renewed.wait()
            call_token = self._here().token
            call = self.tables.WatchTable(
                table.WatchTableRequest(table_id=here.table_id, seat=here.seat, from_sequence=last),
                metadata=self._seat_auth(),
            )
            try:
                async for item in call:
                    failures = 0
                    if item.WhichOneof("item") == "event":
                        last = item.event.sequence
                    else:
                        last = item.snapshot.table.sequence
                    yield item
                return
            except grpc.aio.AioRpcError as err:
                failures += 1
                await self._renewed.wait()  # a renewal under way replaced the token it sent?
                renewed = err.code() in _STALE_TOKEN and self._here().token != call_token
                if (
                    err.code() != grpc.StatusCode.UNAVAILABLE and not renewed
                ) or failures > RETRIES:
                    raise Refused(err) from err
                await asyncio.sleep(RETRY_PAUSE_S * failures)
