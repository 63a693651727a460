"""Sign-ups over gRPC on loopback against PostgreSQL (issue #20): a look-alike of a taken name
is refused as the name itself (``NAME_TAKEN``), a mix of confusable scripts or a misplaced
joiner as a bad name, and the lobby's AI labels as reserved; a name whose script needs a
joiner is taken as it is."""

from __future__ import annotations

import grpc

from poker.v1 import lobby_service_pb2 as pb

from .test_join_lounge_grpc import Lobby, guest
from .test_join_lounge_grpc import lobby as lobby  # the fixture: a lobby, tables a fake
from .test_lobby_grpc import PASSWORD, refused, rid


async def test_a_look_alike_of_a_taken_name_is_refused(lobby: Lobby) -> None:
    stub = await lobby.start()
    await guest(stub, "Alice")
    register = pb.RegisterRequest(display_name="Mary", password=PASSWORD, request_id=rid())
    await stub.Register(register)
    for name, answer in [
        (
            "\u0410lice",
            (grpc.StatusCode.INVALID_ARGUMENT, "BAD_NAME"),
        ),  # Cyrillic A (U+0410) + Latin
        ("Alice\u200d", (grpc.StatusCode.INVALID_ARGUMENT, "BAD_NAME")),  # a trailing ZWJ
        ("\uff21lice", (grpc.StatusCode.ALREADY_EXISTS, "NAME_TAKEN")),  # full-width: one key
        ("A1ice", (grpc.StatusCode.ALREADY_EXISTS, "NAME_TAKEN")),  # a one for the l
        ("rnary", (grpc.StatusCode.ALREADY_EXISTS, "NAME_TAKEN")),  # "rn" for "m"
        ("Bot 1 (easy)", (grpc.StatusCode.INVALID_ARGUMENT, "NAME_RESERVED")),
        ("bot  2 (HARD)", (grpc.StatusCode.INVALID_ARGUMENT, "NAME_RESERVED")),
    ]:
        sign_up = pb.CreateGuestRequest(display_name=name, request_id=rid())
        assert await refused(stub.CreateGuest(sign_up)) == answer, name
        again = pb.RegisterRequest(display_name=name, password=PASSWORD, request_id=rid())
        assert await refused(stub.Register(again)) == answer, name
    # all Cyrillic, it reads as a Latin name that someone has
    await guest(stub, "paypa")
    whole = pb.CreateGuestRequest(display_name="\u0440\u0430\u0443\u0440\u0430", request_id=rid())
    assert await refused(stub.CreateGuest(whole)) == (grpc.StatusCode.ALREADY_EXISTS, "NAME_TAKEN")
    # a name a script needs a joiner in is taken as it is; the register's retry still answers
    hindi = "\u0915\u094d\u200d\u0937\u093e"
    made = await stub.CreateGuest(pb.CreateGuestRequest(display_name=hindi, request_id=rid()))
    assert made.player.display_name == hindi
    assert (await stub.Register(register)).player.display_name == "Mary"
