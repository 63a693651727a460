"""``poker.v1.LobbyService`` handlers: translate messages to a use case's arguments and back.

No handler builds a status or checks a credential: the interceptors and the
use cases (``services.lobby.application``) do. A request that carries a
password is fingerprinted without it (:func:`without_password`): the
fingerprint is a fast hash kept in the database, a password only ever gets
Argon2.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeVar

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from felt.storage.idempotency import ClientRequest
from felt.wire.clients import TrustedProxies
from poker.events.v1 import events_pb2 as epb
from poker.v1 import lobby_pb2 as lpb
from poker.v1 import lobby_service_pb2 as pb
from poker.v1 import lobby_service_pb2_grpc as rpc
from services.lobby.application import Credentials, LobbyApp, client_address
from services.lobby.auth import Caller
from services.lobby.chips import ChipsApp
from services.lobby.closing import ClosingApp
from services.lobby.interceptors import current_caller
from services.lobby.lounges import AiSeat, LoungeApp
from services.lobby.ports import (
    BuyInState,
    Kind,
    Lounge,
    LoungeFilter,
    LoungeState,
    Movement,
    Player,
)
from services.lobby.seating import SeatingApp

Context = Any
M = TypeVar("M", bound=Message)

_KINDS = {
    Kind.GRANT: lpb.LEDGER_ENTRY_KIND_GRANT,
    Kind.TOP_UP: lpb.LEDGER_ENTRY_KIND_TOP_UP,
    Kind.BUY_IN: lpb.LEDGER_ENTRY_KIND_BUY_IN,
    Kind.CASH_OUT: lpb.LEDGER_ENTRY_KIND_CASH_OUT,
    Kind.TABLE_CLOSED: lpb.LEDGER_ENTRY_KIND_TABLE_CLOSED,
}


def without_password(request: M) -> ClientRequest:
    """The request's idempotency identity, with its ``password`` field cleared."""
    copy = type(request)()
    copy.CopyFrom(request)
    copy.ClearField("password")
    return ClientRequest.of(copy)


def _time(at: datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(at)
    return stamp


def player_message(player: Player) -> lpb.Player:
    return lpb.Player(
        player_id=player.player_id,
        display_name=player.display_name,
        registered=player.registered,
        create_time=_time(player.created_at),
    )


def credentials_message(c: Credentials) -> lpb.Credentials:
    return lpb.Credentials(
        access_token=c.access_token,
        access_token_expire_time=_time(c.access_expires_at),
        refresh_token=c.refresh_token,
        refresh_token_expire_time=_time(c.refresh_expires_at),
    )


def entry_message(m: Movement) -> lpb.LedgerEntry:
    return lpb.LedgerEntry(
        entry_id=m.entry_id,
        kind=_KINDS[m.kind],
        amount=m.amount,
        balance_after=m.balance_after,
        table_id=m.table_id or "",
        create_time=_time(m.created_at),
    )


def lounge_message(lounge: Lounge, caller: Caller) -> lpb.Lounge:
    """The lounge as ``caller`` may see it: its invite code for its owner only."""
    owner = caller.claim is not None and caller.claim.player_id == lounge.owner_id
    return lpb.Lounge(
        lounge_id=lounge.lounge_id,
        name=lounge.name,
        owner_id=lounge.owner_id,
        config=epb.TableConfig.FromString(lounge.config),
        stake=lounge.stake,
        min_buy_in=lounge.min_buy_in,
        max_buy_in=lounge.max_buy_in,
        private=lounge.private,
        invite_code=(lounge.invite_code or "") if owner else "",
        free_seats=lounge.free_seats,
        seats=[
            lpb.LoungeSeat(
                seat=s.seat,
                player_id=s.player_id,
                display_name=s.display_name,
                ai_level=s.ai_level,  # type: ignore[arg-type]
                stack=s.stack,
            )
            for s in lounge.seats
        ],
        open=lounge.state is LoungeState.OPEN,
        create_time=_time(lounge.created_at),
        state=_LOUNGE_STATES[lounge.state],
        busted_grace_s=lounge.busted_grace_s,
    )


_LOUNGE_STATES = {
    LoungeState.CREATING: lpb.LOUNGE_STATE_CREATING,
    LoungeState.OPEN: lpb.LOUNGE_STATE_OPEN,
    LoungeState.CLOSING: lpb.LOUNGE_STATE_CLOSING,
    LoungeState.CLOSED: lpb.LOUNGE_STATE_CLOSED,
    LoungeState.FAILED: lpb.LOUNGE_STATE_FAILED,
}


class LobbyService(rpc.LobbyServiceServicer):
    def __init__(
        self,
        app: LobbyApp,
        lounges: LoungeApp,
        seating: SeatingApp,
        closing: ClosingApp,
        proxies: TrustedProxies | None = None,
        *,
        chips: ChipsApp,
    ) -> None:
        self.app, self.lounges, self.seating, self.closing = app, lounges, seating, closing
        self.chips = chips
        # Behind the gateway, the client it names (x-forwarded-for) is who is throttled.
        self.proxies = proxies or TrustedProxies()

    async def CreateGuest(
        self, request: pb.CreateGuestRequest, context: Context
    ) -> pb.CreateGuestResponse:
        signed = await self.app.create_guest(
            request.display_name,
            ClientRequest.of(request),
            client_address(self.proxies.caller(context)),
        )
        return pb.CreateGuestResponse(
            player=player_message(signed.player),
            credentials=credentials_message(signed.credentials),
        )

    async def Register(self, request: pb.RegisterRequest, context: Context) -> pb.RegisterResponse:
        signed = await self.app.register(
            request.display_name,
            request.password,
            without_password(request),
            client_address(self.proxies.caller(context)),
        )
        return pb.RegisterResponse(
            player=player_message(signed.player),
            credentials=credentials_message(signed.credentials),
        )

    async def UpgradeGuest(
        self, request: pb.UpgradeGuestRequest, context: Context
    ) -> pb.UpgradeGuestResponse:
        player = await self.app.upgrade_guest(
            current_caller(), request.password, without_password(request)
        )
        return pb.UpgradeGuestResponse(player=player_message(player))

    async def SignIn(self, request: pb.SignInRequest, context: Context) -> pb.SignInResponse:
        signed = await self.app.sign_in(
            request.display_name,
            request.password,
            without_password(request),
            client_address(self.proxies.caller(context)),
        )
        return pb.SignInResponse(
            player=player_message(signed.player),
            credentials=credentials_message(signed.credentials),
        )

    async def RefreshSession(
        self, request: pb.RefreshSessionRequest, context: Context
    ) -> pb.RefreshSessionResponse:
        credentials = await self.app.refresh(request.refresh_token, ClientRequest.of(request))
        return pb.RefreshSessionResponse(credentials=credentials_message(credentials))

    async def SignOut(self, request: pb.SignOutRequest, context: Context) -> pb.SignOutResponse:
        await self.app.sign_out(current_caller(), ClientRequest.of(request))
        return pb.SignOutResponse()

    async def GetPlayer(
        self, request: pb.GetPlayerRequest, context: Context
    ) -> pb.GetPlayerResponse:
        player = await self.app.player(current_caller(), request.player_id)
        return pb.GetPlayerResponse(player=player_message(player))

    async def GetBalance(
        self, request: pb.GetBalanceRequest, context: Context
    ) -> pb.GetBalanceResponse:
        balance = await self.app.balance(current_caller())
        response = pb.GetBalanceResponse(balance=balance.balance, top_up_below=balance.top_up_below)
        if balance.next_top_up_at is not None:
            response.next_top_up_time.CopyFrom(_time(balance.next_top_up_at))
        return response

    async def ListLedgerEntries(
        self, request: pb.ListLedgerEntriesRequest, context: Context
    ) -> pb.ListLedgerEntriesResponse:
        page = await self.app.ledger_page(current_caller(), request.page_size, request.page_token)
        return pb.ListLedgerEntriesResponse(
            entries=[entry_message(m) for m in page.entries],
            next_page_token=page.next_page_token,
        )

    async def TopUp(self, request: pb.TopUpRequest, context: Context) -> pb.TopUpResponse:
        movement, balance = await self.app.top_up(current_caller(), ClientRequest.of(request))
        return pb.TopUpResponse(entry=entry_message(movement), balance=balance)

    async def CreateLounge(
        self, request: pb.CreateLoungeRequest, context: Context
    ) -> pb.CreateLoungeResponse:
        caller = current_caller()
        lounge = await self.lounges.create(
            caller,
            ClientRequest.of(request),
            request.name,
            request.config,
            request.min_buy_in,
            request.max_buy_in,
            [AiSeat(a.seat if a.HasField("seat") else None, a.level) for a in request.ai_seats],
            request.private,
            busted_grace_s=(request.busted_grace_s if request.HasField("busted_grace_s") else None),
        )
        return pb.CreateLoungeResponse(lounge=lounge_message(lounge, caller))

    async def ListLounges(
        self, request: pb.ListLoungesRequest, context: Context
    ) -> pb.ListLoungesResponse:
        caller = current_caller()
        where = LoungeFilter(
            request.variant, request.min_stake, request.max_stake, request.min_free_seats
        )
        page = await self.lounges.listing(caller, where, request.page_size, request.page_token)
        return pb.ListLoungesResponse(
            lounges=[lounge_message(x, caller) for x in page.lounges],
            next_page_token=page.next_page_token,
        )

    async def GetLounge(
        self, request: pb.GetLoungeRequest, context: Context
    ) -> pb.GetLoungeResponse:
        caller = current_caller()
        lounge = await self.lounges.get(caller, request.lounge_id, request.invite_code)
        return pb.GetLoungeResponse(lounge=lounge_message(lounge, caller))

    async def WatchLounge(
        self, request: pb.WatchLoungeRequest, context: Context
    ) -> pb.WatchLoungeResponse:
        grant = await self.lounges.watch(current_caller(), request.lounge_id, request.invite_code)
        response = pb.WatchLoungeResponse(watch_grant=grant.token)
        response.expire_time.FromDatetime(grant.expires_at)
        return response

    async def JoinLounge(
        self, request: pb.JoinLoungeRequest, context: Context
    ) -> pb.JoinLoungeResponse:
        joined = await self.seating.join(
            current_caller(),
            ClientRequest.of(request),
            request.lounge_id,
            request.seat if request.HasField("seat") else None,
            request.buy_in,
            request.invite_code,
            request.wait_for_big_blind,
        )
        saga = joined.buy_in
        assert saga.seat is not None and saga.seat_token is not None  # SEATED
        response = pb.JoinLoungeResponse(
            lounge_id=saga.lounge_id,
            seat=saga.seat,
            seat_token=saga.seat_token,
            balance=joined.balance,
        )
        if saga.seat_token_expires_at is not None:
            response.seat_token_expire_time.CopyFrom(_time(saga.seat_token_expires_at))
        return response

    async def LeaveLounge(
        self, request: pb.LeaveLoungeRequest, context: Context
    ) -> pb.LeaveLoungeResponse:
        left = await self.seating.leave(
            current_caller(), ClientRequest.of(request), request.lounge_id
        )
        saga = left.buy_in
        assert saga.seat is not None  # it was SEATED
        done = saga.state is BuyInState.LEFT
        return pb.LeaveLoungeResponse(
            lounge_id=saga.lounge_id,
            seat=saga.seat,
            state=pb.LEAVE_STATE_LEFT if done else pb.LEAVE_STATE_LEAVING,
            stack=saga.left_stack or 0,
            balance=left.balance,
        )

    async def AddSeatChips(
        self, request: pb.AddSeatChipsRequest, context: Context
    ) -> pb.AddSeatChipsResponse:
        done = await self.chips.add(
            current_caller(), ClientRequest.of(request), request.lounge_id, request.amount
        )
        saga = done.chip_add
        assert saga.stack_after is not None  # ADDED
        return pb.AddSeatChipsResponse(
            lounge_id=saga.lounge_id,
            seat=saga.seat,
            amount=saga.amount,
            stack=saga.stack_after,
            balance=done.balance,
            state=pb.CHIP_ADD_STATE_ADDED,
        )

    async def RefreshSeatToken(
        self, request: pb.RefreshSeatTokenRequest, context: Context
    ) -> pb.RefreshSeatTokenResponse:
        grant = await self.seating.refresh_token(
            current_caller(), ClientRequest.of(request), request.lounge_id
        )
        response = pb.RefreshSeatTokenResponse(
            lounge_id=request.lounge_id, seat=grant.seat, seat_token=grant.seat_token
        )
        if grant.expires_at is not None:
            response.seat_token_expire_time.CopyFrom(_time(grant.expires_at))
        return response

    async def CloseLounge(
        self, request: pb.CloseLoungeRequest, context: Context
    ) -> pb.CloseLoungeResponse:
        caller = current_caller()
        lounge = await self.closing.close(caller, ClientRequest.of(request), request.lounge_id)
        return pb.CloseLoungeResponse(lounge=lounge_message(lounge, caller))
