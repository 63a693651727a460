"""What the public edge lets through: players' and spectators' calls, with players' tokens.

The gateway is the one door the internet has into Felt. Found by review (issue
#20): it forwarded the table service's internal calls (``CreateTable``,
``SeatPlayer``, ``AddChips``, ``CloseTable``...), the operator's view of the
history service and the service credentials themselves (the AI workers' token
read any AI seat's hole cards through it), and let anyone guess those
credentials unthrottled. Now, before anything is forwarded:

* **Only public RPCs.** The RPCs players and spectators call are declared once
  (``felt.wire.access``, which the table service's auth rules take their
  service-only list from); every other method is PERMISSION_DENIED (reason
  ``SERVICE_ONLY``) here, never forwarded. A new RPC is thus refused at the
  edge until it is declared public.
* **Only players' tokens.** An ``authorization`` header is forwarded only as
  ``Bearer <token>`` where the token has the shape of a lobby access token or a
  seat token (``felt.wire.credentials.is_player_token``); anything else, the
  admin and AI credentials included (production refuses a credential of that
  shape), is UNAUTHENTICATED (reason ``PLAYER_TOKEN_REQUIRED``). The gateway
  holds no secret and compares none: every such token gets the same answer, so
  it confirms no guess.
* **No operator view.** ``HistoryService.GetHandHistory`` with reader
  ``HAND_READER_OPERATOR`` is PERMISSION_DENIED (reason ``OPERATOR_ONLY``).
* **Failed attempts throttled.** Each refused token counts against its client
  address (``felt.wire.attempts``); past the allowance the address's refused
  tokens are RESOURCE_EXHAUSTED (``AUTH_THROTTLED``). Genuine tokens are the
  services' to check, and they throttle their own failures per client (the
  address the gateway names in ``x-forwarded-for``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from types import SimpleNamespace
from typing import Any

from connectrpc.code import Code
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor

from felt.wire import access
from felt.wire.attempts import MESSAGE as THROTTLED_MESSAGE
from felt.wire.attempts import THROTTLED, FailedAttempts
from felt.wire.clients import counted_address, forwarded_address
from felt.wire.credentials import is_player_token
from poker.v1 import history_service_pb2, lobby_service_pb2, table_service_pb2
from poker.v1.reason_pb2 import Reason
from services.gateway.errors import refused
from services.gateway.forward import python_name
from services.gateway.raw_request import Request, message_of

Ctx = Any  # connectrpc.request.RequestContext

TABLE_SERVICE = table_service_pb2.DESCRIPTOR.services_by_name["TableService"]
LOBBY_SERVICE = lobby_service_pb2.DESCRIPTOR.services_by_name["LobbyService"]
HISTORY_SERVICE = history_service_pb2.DESCRIPTOR.services_by_name["HistoryService"]

SERVICE_ONLY = Reason.SERVICE_ONLY
PLAYER_TOKEN_REQUIRED = Reason.PLAYER_TOKEN_REQUIRED
OPERATOR_ONLY = Reason.OPERATOR_ONLY

_OPERATOR_VIEW = history_service_pb2.HAND_READER_OPERATOR


def is_public(method: MethodDescriptor) -> bool:
    """Whether the gateway forwards ``method`` (declared public in ``felt.wire.access``)."""
    return access.is_public(method.containing_service.full_name, method.name)


def client_key(host: str) -> str:
    """Whose count a failed attempt goes to: the client's address (an IPv6 one by its /64,
    as the services count), or the host string as it came."""
    address = forwarded_address(host)
    return host if address is None else counted_address(address)


def _reader(request: Request) -> object:
    """A history request's ``reader``."""
    return getattr(message_of(request), "reader", None)


class Edge:
    """The checks above, for every call of the services the gateway serves."""

    def __init__(self, attempts: FailedAttempts, host: Callable[[Ctx], str]) -> None:
        self.attempts = attempts
        self.host = host  # the client's address of a call (what the ASGI server saw)

    def admit(self, method: MethodDescriptor, request: Request, ctx: Ctx) -> None:
        """Raise the :class:`ConnectError` refusing this call, if it is not to go on."""
        if not is_public(method):
            raise refused(
                Code.PERMISSION_DENIED,
                f"{method.name} is an internal call, for the services' own credentials: the "
                "public gateway does not forward it (players take, leave and top up seats "
                "through the lobby)",
                SERVICE_ONLY,
            )
        self._check_token(ctx)
        if method.containing_service.full_name == HISTORY_SERVICE.full_name and (
            _reader(request) == _OPERATOR_VIEW
        ):
            raise refused(
                Code.PERMISSION_DENIED,
                "reader HAND_READER_OPERATOR (every card) is the operator's, not served by the "
                "public gateway: ask as a seat or a spectator",
                OPERATOR_ONLY,
            )

    def _check_token(self, ctx: Ctx) -> None:
        value = ctx.request_headers.get("authorization")
        if value is None or not value.strip():
            return  # anonymous: the service decides what a spectator may do
        scheme, _, token = value.strip().partition(" ")
        if scheme == "Bearer" and is_player_token(token.strip()):
            return
        client = client_key(self.host(ctx))
        if self.attempts.exhausted(client):
            raise refused(Code.RESOURCE_EXHAUSTED, THROTTLED_MESSAGE, THROTTLED)
        self.attempts.failed(client)
        raise refused(
            Code.UNAUTHENTICATED,
            "authorization must be 'Bearer <token>' with a player's token (a lobby access "
            "token or a seat token); service credentials are not accepted here",
            PLAYER_TOKEN_REQUIRED,
        )

    def guard(self, service: ServiceDescriptor, implementation: SimpleNamespace) -> SimpleNamespace:
        """``implementation`` (the stubs' method names, as ``Forwarder.implementation``), each
        method admitted by :meth:`admit` before it runs."""
        handlers: dict[str, Callable[..., Any]] = {}
        for method in service.methods:
            name = python_name(method.name)
            call = getattr(implementation, name, None)
            if call is None:
                continue
            if method.server_streaming:
                handlers[name] = self._stream(method, call)
            else:
                handlers[name] = self._unary(method, call)
        return SimpleNamespace(**handlers)

    def _unary(
        self, method: MethodDescriptor, call: Callable[[Request, Ctx], Awaitable[Any]]
    ) -> Callable[[Request, Ctx], Awaitable[Any]]:
        async def admitted(request: Request, ctx: Ctx) -> Any:
            self.admit(method, request, ctx)
            return await call(request, ctx)

        return admitted

    def _stream(
        self, method: MethodDescriptor, call: Callable[[Request, Ctx], AsyncIterator[Any]]
    ) -> Callable[[Request, Ctx], AsyncIterator[Any]]:
        async def admitted(request: Request, ctx: Ctx) -> AsyncIterator[Any]:
            self.admit(method, request, ctx)
            async for item in call(request, ctx):
                yield item

        return admitted
