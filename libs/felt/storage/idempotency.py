"""Idempotency keys that cannot be borrowed.

A client's ``request_id`` makes a retry safe: the same request sent again gets
the first answer and changes nothing. That answer can hold what only its caller
may see (a seat's view with its hole cards: an action's record keeps only its
sequence and deadline, and the view is made again for the seat from the table's
stream, ``services.table.application.restore_action``), so a request id must never let one
caller read another's answer, nor let a client occupy an id the server will use
itself. Hence:

* **A record belongs to one caller and one call.** The key the event store
  records is a hash of (principal, RPC, request id): the same id sent by another
  seat, by the same seat to another RPC, or by an earlier occupant of the seat
  finds nothing and is simply a new request.
* **A record remembers what was asked.** The stored answer is sealed with a
  fingerprint of the request's content; the same key with other content is
  :class:`RequestReused` (``INVALID_ARGUMENT``), never the first answer.
* **The server's own ids live apart.** Client keys are ``c/<hash>`` (``k/<hash>``
  for the calls whose records are kept); the server's (timers, deals, AI turns) are
  ``s/<kind>/<table>/<version>``. No client input can produce an ``s/`` key.
* **Nobody sees a key.** Events shown to clients carry no request id or key.

Records live in the table's request hash and go with its retention (trimmed
with the events they wrote), except those of the calls the lobby's sagas retry
with the same id until they hear an answer, however long that takes (``k/<hash>``,
:data:`KEPT_PREFIX`): the admin's ``CreateTable`` and ``SeatPlayer``, and
``LeaveSeat``. A seating retried with no record would be refused (``SEAT_TAKEN``)
and refunded while the seat holds the chips; a leave, refused (its seat is empty)
and left LEAVING with its chips. They are a few small records per table and per
seating (a seat leaves once), so they are kept for the table's life.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from google.protobuf.message import Message

FINGERPRINT_BYTES = 16
"""How much of the SHA-256 of a request's content is kept beside its answer."""

CLIENT_PREFIX = "c/"
KEPT_PREFIX = "k/"
"""Client keys whose records trimming keeps (see the module docstring and :func:`kept`)."""
KEPT_CALLS = frozenset(
    {
        "poker.v1.LeaveSeatRequest",
        "poker.v1.ReissueSeatTokenRequest",
        "poker.v1.AddChipsRequest",
    }
)
"""Calls besides the admin's whose records are kept: the lobby's leave and chip-add sagas
retry them as the seat (a retry after the stream was trimmed must get the first answer, or
chips would be added twice, or refunded while at the table), and its player's retried
``RefreshSeatToken`` must get the token it was first given."""
SERVER_PREFIX = "s/"


class RequestReused(Exception):
    """A request id was sent again, by the same caller to the same call, with other content."""

    def __init__(self) -> None:
        super().__init__(
            "this request_id was already used for a different request; "
            "use a fresh request_id for every new request"
        )


@dataclass(frozen=True, slots=True)
class RequestKey:
    """What the event store records a request under, and the fingerprint of its content."""

    key: str
    fingerprint: bytes

    def seal(self, response: bytes) -> bytes:
        """The blob to store: the fingerprint, then the answer."""
        return self.fingerprint + response

    def open(self, stored: bytes) -> bytes:
        """The first answer, if it was given to this very request; else :class:`RequestReused`."""
        if stored[:FINGERPRINT_BYTES] != self.fingerprint:
            raise RequestReused()
        return stored[FINGERPRINT_BYTES:]


ADMIN_PRINCIPAL = "admin"
"""The principal of admin calls (``CreateTable``, ``SeatPlayer``)."""


def seat_principal(seat: int, token_hash: str) -> str:
    """A seat's occupant, named by the hash of the token it acts with."""
    return f"seat/{seat}/{token_hash}"


def service_principal(seat: int) -> str:
    """The service credential, acting for whoever sits at ``seat`` (closing a table)."""
    return f"service/{seat}"


def ai_principal(seat: int) -> str:
    """The AI workers, acting for ``seat``."""
    return f"ai/{seat}"


def client_key(principal: str, request: Message) -> RequestKey:
    """The key of a client's request: scoped to ``principal`` and the call, sealed with its content.

    ``principal`` names the caller as authenticated (:func:`seat_principal`,
    :func:`ai_principal`, :data:`ADMIN_PRINCIPAL`). The call is the request's
    message type; ``request`` must have a ``request_id`` field, already checked.
    The whole message's deterministic serialization is fingerprinted.
    """
    return ClientRequest.of(request).key(principal)


@dataclass(frozen=True, slots=True)
class ClientRequest:
    """What a retry-safe request is, for its key, without the message: a service's application
    layer takes this and never sees the API's messages (``request_id`` still unchecked)."""

    request_id: str
    call: str  # the request message's full name: the key is scoped to the call
    content: bytes  # the message's deterministic serialization, fingerprinted

    @classmethod
    def of(cls, request: Message) -> ClientRequest:
        """``request`` (a message with a ``request_id`` field)."""
        request_id: str = getattr(request, "request_id")  # noqa: B009 - every mutation's field
        content = request.SerializeToString(deterministic=True)
        return cls(request_id, request.DESCRIPTOR.full_name, content)

    def key(self, principal: str) -> RequestKey:
        """The key of this request sent by ``principal`` (see :func:`client_key`)."""
        scope = f"{principal}\0{self.call}\0{self.request_id}".encode()
        prefix = KEPT_PREFIX if kept(principal, self.call) else CLIENT_PREFIX
        key = prefix + hashlib.sha256(scope).hexdigest()[:32]
        return RequestKey(key, hashlib.sha256(self.content).digest()[:FINGERPRINT_BYTES])


def server_key(kind: str, table_id: str, version: int) -> RequestKey:
    """The key of the server's own command ``kind`` (a timer, a deal) at ``version``.

    Deterministic, so that two instances (or a restarted one) firing the same
    timer append it once.
    """
    key = f"{SERVER_PREFIX}{kind}/{table_id}/{version}"
    return RequestKey(key, hashlib.sha256(key.encode()).digest()[:FINGERPRINT_BYTES])


def kept(principal: str, call: str) -> bool:
    """Whether the record of ``call`` by ``principal`` outlives trimming (``KEPT_PREFIX``)."""
    return principal == ADMIN_PRINCIPAL or call in KEPT_CALLS
