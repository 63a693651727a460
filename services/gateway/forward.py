"""Forwarding a service's calls to it over gRPC: no logic of the game, only transport.

A :class:`Forwarder` implements every method of one gRPC service (read from
its descriptor, so a new RPC needs no code here) as the Connect stubs expect
(``poker.v1.*_connect``): a unary method awaits the same gRPC call upstream,
a server-streaming one yields what the upstream stream yields. Per call:

* the upstream address comes from a :class:`Route` (the lobby: fixed; a
  table: its owner, ``felt.service.table_router``);
* the bearer token (``authorization``) is passed on as gRPC metadata, with
  the client's address in ``x-forwarded-for`` for the services' per-client
  limits (they trust it only from a proxy they are told to trust);
* a deadline: the client's own (``connect-timeout-ms`` / ``grpc-timeout``),
  for a unary call at most ``deadline_s``;
* the service's status, message and details become the Connect error
  (``services.gateway.errors``);
* an UNAVAILABLE answer makes the route ask again; if that names another
  instance (the table moved), the call is made there once more. Every
  mutating call carries a ``request_id``, so a second try is answered, never
  applied twice, and a stream is retried only before its first message;
* a server stream is admitted by :class:`~services.gateway.caps.StreamCaps`;
* answers are handed on undecoded (``services.gateway.codecs.Raw``): a binary
  client gets the service's bytes, a JSON client their JSON; a binary request
  to the table service is forwarded as the client's bytes too, never re-encoded
  (``services.gateway.raw_request.RawRequest``: parsed once by upb to check it and
  read its ``table_id``).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from types import SimpleNamespace
from typing import Any, Protocol

import grpc
from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor

from felt.service.table_router import Channels, TableRouter, unreachable
from services.gateway.caps import StreamCaps
from services.gateway.codecs import Raw, raw_reader
from services.gateway.errors import from_grpc, internal
from services.gateway.raw_request import RawRequest, Request, table_id_of

Metadata = tuple[tuple[str, str], ...]
Ctx = RequestContext[Any, Any]


class Route(Protocol):
    """Where a request goes."""

    async def address(self, request: Request) -> str: ...

    def forget(self, request: Request, unreachable: str = "") -> None: ...


class FixedRoute:
    """Every call to one address (the lobby, behind its own load balancer)."""

    def __init__(self, target: str) -> None:
        self.target = target

    async def address(self, request: Request) -> str:
        return self.target

    def forget(self, request: Request, unreachable: str = "") -> None:
        pass


class TableRoute:
    """A call naming a table goes to its owner; others (none today) to the default."""

    def __init__(self, router: TableRouter) -> None:
        self.router = router

    async def address(self, request: Request) -> str:
        table_id = table_id_of(request)
        return await self.router.address(table_id) if table_id else self.router.default

    def forget(self, request: Request, unreachable: str = "") -> None:
        table_id = table_id_of(request)
        if table_id:
            self.router.forget(table_id, unreachable)


def python_name(method: str) -> str:
    """The Connect stubs' name of an RPC (``GetTableView`` -> ``get_table_view``), as
    protoc-gen-connectrpc derives it."""
    s1 = re.sub("([^_])([A-Z][a-z]+)", r"\1_\2", method)
    return re.sub("([a-z])([A-Z])", r"\1_\2", s1).lower()


def client_metadata(ctx: Ctx) -> Metadata:
    """What the service is told of the caller: its token and its address."""
    metadata: list[tuple[str, str]] = []
    authorization = ctx.request_headers.get("authorization")
    if authorization:
        metadata.append(("authorization", authorization))
    address = client_host(ctx)
    if address:
        metadata.append(("x-forwarded-for", address))
    return tuple(metadata)


def client_host(ctx: Ctx) -> str:
    """The client's address without its port (what the ASGI server saw)."""
    address = ctx.client_address or ""
    host, sep, port = address.rpartition(":")
    return host.strip("[]") if sep and port.isdigit() else address


def bearer(ctx: Ctx) -> str:
    value = ctx.request_headers.get("authorization", "")
    return value[7:].strip() if value[:7].lower() == "bearer " else ""


class Forwarder:
    """Every method of ``service`` forwarded to the address ``route`` gives."""

    def __init__(
        self,
        service: ServiceDescriptor,
        channels: Channels,
        route: Route,
        caps: StreamCaps,
        deadline_s: float,
    ) -> None:
        self.service = service
        self.channels = channels
        self.route = route
        self.caps = caps
        self.deadline_s = deadline_s
        self._calls: dict[tuple[str, str], Any] = {}

    def implementation(self) -> SimpleNamespace:
        """An object with the stubs' method names, each forwarding its RPC."""
        handlers: dict[str, Callable[..., Any]] = {}
        for method in self.service.methods:
            if method.client_streaming:
                continue  # Felt has none; Connect over HTTP/1.1 cannot carry them anyway
            if method.server_streaming:
                handlers[python_name(method.name)] = guarded_stream(self._server_stream(method))
            else:
                handlers[python_name(method.name)] = guarded_unary(self._unary(method))
        return SimpleNamespace(**handlers)

    def _callable(self, address: str, method: MethodDescriptor) -> Any:
        key = (address, method.full_name)
        call = self._calls.get(key)
        if call is None:
            channel = self.channels.get(address)
            path = f"/{self.service.full_name}/{method.name}"
            response = message_factory.GetMessageClass(method.output_type)
            make = channel.unary_stream if method.server_streaming else channel.unary_unary
            call = make(
                path,
                request_serializer=_serialize,
                response_deserializer=raw_reader(response),  # handed on undecoded
            )
            self._calls[key] = call
        return call

    def _unary(self, method: MethodDescriptor) -> Callable[[Request, Ctx], Awaitable[Raw]]:
        async def unary(request: Request, ctx: Ctx) -> Raw:
            metadata = client_metadata(ctx)
            timeout = _remaining(ctx, self.deadline_s)
            address = await self.route.address(request)
            try:
                response: Raw = await self._callable(address, method)(
                    request, metadata=metadata, timeout=timeout
                )
                return response
            except grpc.aio.AioRpcError as error:
                retry = await self._moved(request, address, error)
                if retry is None:
                    raise from_grpc(error) from None
            try:
                response = await self._callable(retry, method)(
                    request, metadata=metadata, timeout=_remaining(ctx, self.deadline_s)
                )
                return response
            except grpc.aio.AioRpcError as error:
                self._failed(request, error)
                raise from_grpc(error) from None

        return unary

    def _server_stream(
        self, method: MethodDescriptor
    ) -> Callable[[Request, Ctx], AsyncIterator[Raw]]:
        async def stream(request: Request, ctx: Ctx) -> AsyncIterator[Raw]:
            with self.caps.admit(bearer(ctx), client_host(ctx)):
                relayed = self.relay(method, request, client_metadata(ctx), _remaining(ctx, None))
                async for message in relayed:
                    yield message

        return stream

    async def relay(
        self, method: MethodDescriptor, request: Request, metadata: Metadata, timeout: float | None
    ) -> AsyncIterator[Raw]:
        """The upstream server stream of ``method`` for ``request``, retried once if it
        failed UNAVAILABLE before its first message and the table has moved."""
        address = await self.route.address(request)
        sent = False
        for attempt in (1, 2):
            call = self._callable(address, method)(request, metadata=metadata, timeout=timeout)
            try:
                async for message in call:
                    sent = True
                    yield message
                return
            except grpc.aio.AioRpcError as error:
                final = sent or attempt == 2  # a stream is retried once, unstarted
                retry = None if final else await self._moved(request, address, error)
                if retry is None:
                    self._failed(request, error)
                    raise from_grpc(error) from None
                address = retry
            finally:
                call.cancel()

    async def _moved(
        self, request: Request, address: str, error: grpc.aio.AioRpcError
    ) -> str | None:
        """After UNAVAILABLE from ``address``: the owner's new address, if it moved."""
        if error.code() is not grpc.StatusCode.UNAVAILABLE:
            return None
        self.route.forget(request, address if unreachable(error) else "")
        again = await self.route.address(request)
        return again if again != address else None

    def _failed(self, request: Request, error: grpc.aio.AioRpcError) -> None:
        if error.code() is grpc.StatusCode.UNAVAILABLE:
            self.route.forget(request)


def guarded_unary(
    call: Callable[[Request, Ctx], Awaitable[Raw]],
) -> Callable[[Request, Ctx], Awaitable[Raw]]:
    """``call``, its unexpected exceptions told to the client as INTERNAL only (``internal``)."""

    async def guarded(request: Request, ctx: Ctx) -> Raw:
        try:
            return await call(request, ctx)
        except ConnectError:
            raise
        except Exception as exc:
            raise internal(exc) from None

    return guarded


def guarded_stream(
    call: Callable[[Request, Ctx], AsyncIterator[Raw]],
) -> Callable[[Request, Ctx], AsyncIterator[Raw]]:
    """``call``, a server stream, as :func:`guarded_unary` guards a unary one."""

    async def guarded(request: Request, ctx: Ctx) -> AsyncIterator[Raw]:
        try:
            async for item in call(request, ctx):
                yield item
        except ConnectError:
            raise
        except Exception as exc:
            raise internal(exc) from None

    return guarded


def _serialize(message: Request) -> bytes:
    """A request's bytes upstream: a binary client's as they came, a decoded one encoded."""
    if isinstance(message, RawRequest):
        return message.data
    return message.SerializeToString()


def _remaining(ctx: Ctx, most: float | None) -> float | None:
    """The call's deadline in seconds: the client's, at most ``most``."""
    left = ctx.timeout_ms
    if left is None:
        return most
    seconds = max(left, 1.0) / 1000
    return seconds if most is None else min(seconds, most)
