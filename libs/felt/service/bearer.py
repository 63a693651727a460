"""Credentials: read from a call's metadata, and their failed attempts counted.

Both gRPC services read ``authorization: Bearer <token>`` the same way, and throttle a
client address that keeps sending credentials that are not genuine the same way
(:func:`counted`); what a token means (a seat, a session, the admin) is each service's
own business (its ``auth`` module). Metadata is hostile input: only ``str`` values count
and a malformed header is read as absent, never as an error. gRPC-free.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from felt.service.refusals import Code, Refused
from felt.wire.attempts import MESSAGE as THROTTLED_MESSAGE
from felt.wire.attempts import FailedAttempts
from poker.v1.reason_pb2 import Reason

Metadata = Iterable[tuple[str, str | bytes]] | None

BEARER = "Bearer "
C = TypeVar("C")


def header(metadata: Metadata, key: str) -> str:
    """The first text value of ``key`` in ``metadata``, stripped, or ""."""
    for name, value in metadata or ():
        if name == key and isinstance(value, str):
            return value.strip()
    return ""


def bearer(metadata: Metadata) -> str:
    """The bearer token in a call's metadata (``authorization: Bearer <token>``), or ""."""
    for name, value in metadata or ():
        if name == "authorization" and isinstance(value, str) and value.startswith(BEARER):
            return value[len(BEARER) :].strip()
    return ""


def counted(
    attempts: FailedAttempts | None,
    client: str,
    authenticate: Callable[[], C],
    signed: Callable[[], C],
    guess: Callable[[C], bool],
) -> C:
    """The caller ``authenticate`` makes of a credential, with ``client``'s failed attempts
    counted (``felt.wire.attempts``; None or no client: not counted).

    A ``guess`` (a credential that is not genuine: forged, malformed, a wrong static
    credential; an expired but genuine one is no guess) counts as a failed attempt. Past
    the client's allowance only what ``signed`` makes of the credential by its signature
    alone is let through, and only if it is no guess: anything else is refused
    RESOURCE_EXHAUSTED ``AUTH_THROTTLED`` before a static credential is compared, so a
    throttled address's guesses confirm nothing. Both services throttle this way.
    """
    if attempts is None or not client:
        return authenticate()
    if attempts.exhausted(client):
        caller = signed()
        if guess(caller):
            raise Refused(Code.RESOURCE_EXHAUSTED, THROTTLED_MESSAGE, Reason.AUTH_THROTTLED)
        return caller
    caller = authenticate()
    if guess(caller):
        attempts.failed(client)
    return caller
