"""Idempotency keys (``felt.storage.idempotency``): scoped to caller and call, sealed with
content."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from felt.storage.idempotency import (
    ADMIN_PRINCIPAL,
    CLIENT_PREFIX,
    KEPT_PREFIX,
    RequestReused,
    ai_principal,
    client_key,
    kept,
    seat_principal,
    server_key,
)
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb


def _submit(request_id: str, expected: int = 3) -> pb.SubmitActionRequest:
    return pb.SubmitActionRequest(
        table_id="t",
        seat=0,
        request_id=request_id,
        expected_sequence=expected,
        action=tpb.Action(call=tpb.Action.Call()),
    )


def test_the_same_id_from_another_caller_or_to_another_call_is_another_key() -> None:
    submit = _submit("r1")
    leave = pb.LeaveSeatRequest(table_id="t", seat=0, request_id="r1")
    keys = {
        client_key(seat_principal(0, "hash-a"), submit).key,
        client_key(seat_principal(0, "hash-b"), submit).key,  # a later occupant of seat 0
        client_key(seat_principal(1, "hash-a"), submit).key,
        client_key(ai_principal(0), submit).key,
        client_key(ADMIN_PRINCIPAL, submit).key,
        client_key(seat_principal(0, "hash-a"), leave).key,
    }
    assert len(keys) == 6
    assert client_key(ai_principal(0), submit) == client_key(ai_principal(0), _submit("r1"))


def test_a_stored_answer_opens_only_for_the_same_content() -> None:
    principal = seat_principal(0, "hash-a")
    first = client_key(principal, _submit("r1"))
    stored = first.seal(b"answer")
    assert client_key(principal, _submit("r1")).open(stored) == b"answer"
    other = client_key(principal, _submit("r1", expected=4))
    assert other.key == first.key
    with pytest.raises(RequestReused):
        other.open(stored)


@given(principal=st.text(max_size=40), request_id=st.text(min_size=1, max_size=128))
def test_no_client_key_is_a_server_key(principal: str, request_id: str) -> None:
    key = client_key(principal, _submit(request_id)).key
    prefix = (
        KEPT_PREFIX
        if kept(principal, pb.SubmitActionRequest.DESCRIPTOR.full_name)
        else CLIENT_PREFIX
    )
    assert key.startswith(prefix) and len(key) == len(prefix) + 32
    assert key != server_key("deal", "t", 3).key
    assert server_key("deal", "t", 3) == server_key("deal", "t", 3)
    assert not server_key("timeout", "t", 3).key.startswith(CLIENT_PREFIX)


def test_the_calls_the_lobby_retries_have_kept_keys() -> None:
    """Trimming keeps the records of ``k/`` keys: the admin's calls and ``LeaveSeat``."""
    leave = pb.LeaveSeatRequest(table_id="t", seat=1, request_id="leave/b-1")
    assert client_key(seat_principal(1, "h"), leave).key.startswith(KEPT_PREFIX)
    seat = pb.SeatPlayerRequest(table_id="t", player_id="p", request_id="buy-in/b-1")
    assert client_key(ADMIN_PRINCIPAL, seat).key.startswith(KEPT_PREFIX)
    assert client_key(seat_principal(1, "h"), _submit("r")).key.startswith(CLIENT_PREFIX)
