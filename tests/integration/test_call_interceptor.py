"""The shared call interceptor (``felt.service.interceptors.CallInterceptor``) on a real
gRPC server on loopback: a unary call and a stream end alike for the same error (one
place maps both), and each is counted once in the RPC metrics with the status it got; the
storage's UNAVAILABLE carries its reason, so a router does not take the instance for gone."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import grpc
import pytest

from felt.service.interceptors import CallInterceptor
from felt.service.metrics import RpcMetrics
from felt.service.refusals import Code, Refused
from felt.service.table_router import unreachable

SERVICE = "felt.test.Kit"


def _outcome(request: bytes) -> None:
    """What a call does after its first message: by what the client asked for."""
    if request == b"refuse":
        raise Refused(Code.FAILED_PRECONDITION, "not now")
    if request == b"down":
        raise OSError("storage unreachable")
    if request == b"boom":
        raise RuntimeError("a bug")


async def _unary(request: bytes, context: Any) -> bytes:
    _outcome(request)
    return b"done"


async def _stream(request: bytes, context: Any) -> AsyncGenerator[bytes]:
    yield b"first"
    _outcome(request)
    yield b"done"


@pytest.fixture
async def kit() -> AsyncIterator[tuple[grpc.aio.Channel, RpcMetrics]]:
    metrics = RpcMetrics()
    server = grpc.aio.server(
        interceptors=[
            CallInterceptor(
                SERVICE,
                logger="felt.test",
                log_fields=lambda request, method: {"rpc": method},
                refusal=lambda error: None,
                unavailable=(OSError,),
                unavailable_message="the storage is unreachable; retry shortly",
                metrics=metrics,
            )
        ]
    )
    handlers: dict[str, grpc.RpcMethodHandler[bytes, bytes]] = {
        "Unary": grpc.unary_unary_rpc_method_handler(_unary),
        "Stream": grpc.unary_stream_rpc_method_handler(_stream),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield channel, metrics
    finally:
        await channel.close()
        await server.stop(None)


async def _ends(channel: grpc.aio.Channel, request: bytes) -> list[tuple[str, str]]:
    """How a unary call and a stream asking for ``request`` end: (code, message) each."""
    ended = []
    unary: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(f"/{SERVICE}/Unary")
    stream: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(
        f"/{SERVICE}/Stream"
    )
    try:
        await unary(request, timeout=10)
        ended.append(("OK", ""))
    except grpc.aio.AioRpcError as error:
        ended.append((error.code().name, error.details() or ""))
    received = []
    try:
        async for message in stream(request, timeout=10):
            received.append(message)
        ended.append(("OK", ""))
    except grpc.aio.AioRpcError as error:
        ended.append((error.code().name, error.details() or ""))
    assert received[:1] == [b"first"]  # the stream's error came between its messages
    return ended


@pytest.mark.parametrize(
    ("request_bytes", "code", "message"),
    [
        (b"ok", "OK", ""),
        (b"refuse", "FAILED_PRECONDITION", "not now"),
        (b"down", "UNAVAILABLE", "the storage is unreachable; retry shortly"),
        (b"boom", "INTERNAL", "internal error"),
    ],
)
async def test_a_unary_call_and_a_stream_end_alike_and_are_counted(
    kit: tuple[grpc.aio.Channel, RpcMetrics], request_bytes: bytes, code: str, message: str
) -> None:
    channel, metrics = kit
    assert await _ends(channel, request_bytes) == [(code, message), (code, message)]
    for method in ("Unary", "Stream"):
        counted = metrics.registry.get_sample_value(
            "felt_rpc_requests_total", {"service": SERVICE, "method": method, "code": code}
        )
        assert counted == 1.0


async def test_storage_unavailable_says_the_instance_answered(
    kit: tuple[grpc.aio.Channel, RpcMetrics],
) -> None:
    channel, _ = kit
    unary: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(f"/{SERVICE}/Unary")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await unary(b"down", timeout=10)
    assert caught.value.code() is grpc.StatusCode.UNAVAILABLE
    assert not unreachable(caught.value)  # its ErrorInfo: the owner is alive, keep it
    trailers = dict(caught.value.trailing_metadata() or ())
    assert b"STORAGE_UNAVAILABLE" in trailers["grpc-status-details-bin"]
