"""``felt play``'s join keeps its request id until it gets a definite answer (issue #20).

Over real gRPC on loopback, against a lobby that answers JoinLounge with UNAVAILABLE or
lets it time out as often as told: retries within one join, and a later join for the same
lounge and buy-in, send the first request id (the lobby's idempotency then answers the join
once and holds one buy-in); after a definite answer the next join gets a new id.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest

from felt.tools.client.play import session as play
from poker.v1 import lobby_pb2 as lpb
from poker.v1 import lobby_service_pb2 as lobby_api
from poker.v1 import lobby_service_pb2_grpc as lobby_rpc


class FlakyLobby(lobby_rpc.LobbyServiceServicer):
    """JoinLounge: fails with `failures`' codes in turn, then seats; records request ids."""

    def __init__(self) -> None:
        self.failures: list[grpc.StatusCode] = []
        self.ids: list[str] = []

    async def JoinLounge(
        self,
        request: lobby_api.JoinLoungeRequest,
        context: grpc.aio.ServicerContext[
            lobby_api.JoinLoungeRequest, lobby_api.JoinLoungeResponse
        ],
    ) -> lobby_api.JoinLoungeResponse:
        self.ids.append(request.request_id)
        if self.failures:
            await context.abort(self.failures.pop(0), "not now")
        return lobby_api.JoinLoungeResponse(seat=2, seat_token="token")


@pytest.fixture
async def lobby() -> AsyncIterator[tuple[FlakyLobby, str]]:
    server = grpc.aio.server()
    fake = FlakyLobby()  # type: ignore[abstract]  # only JoinLounge is called
    lobby_rpc.add_LobbyServiceServicer_to_server(fake, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield fake, f"127.0.0.1:{port}"
    finally:
        await server.stop(None)


async def test_a_join_retried_after_no_definite_answer_keeps_its_request_id(
    lobby: tuple[FlakyLobby, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(play, "RETRY_PAUSE_S", 0.0)
    fake, address = lobby
    s = play.PlaySession(address, address)
    s._credentials = lpb.Credentials(access_token="access")  # signed in (not what is tested)
    lounge = lpb.Lounge(lounge_id="l-1")
    try:
        # Every retry of one join fails: the join gives up without an answer...
        fake.failures = [grpc.StatusCode.UNAVAILABLE] * play.RETRIES
        with pytest.raises(play.Refused):
            await s.join(lounge, 200)
        assert len(fake.ids) == play.RETRIES and len(set(fake.ids)) == 1
        first = fake.ids[0]
        # ...and the same join, tried again (after a timeout on the way), is the same request.
        fake.failures = [grpc.StatusCode.DEADLINE_EXCEEDED]
        seat = await s.join(lounge, 200)
        assert seat.seat == 2
        assert set(fake.ids) == {first}
        # Answered: the next join is a new request.
        await s.join(lounge, 200)
        assert fake.ids[-1] != first
        # A definite refusal ends the request too.
        fake.failures = [grpc.StatusCode.FAILED_PRECONDITION]
        with pytest.raises(play.Refused):
            await s.join(lounge, 300)
        refused = fake.ids[-1]
        await s.join(lounge, 300)
        assert fake.ids[-1] != refused
    finally:
        await s.close()
