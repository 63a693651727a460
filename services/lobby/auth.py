"""Who calls the lobby: the :class:`Caller` a bearer access token makes.

Step one, in ``AuthInterceptor``: the token's signature and expiry (no I/O).
Step two, in the use case: the session it names is live (not signed out,
not revoked by a reused refresh token) — that needs the database, and the
call's refusal order (a malformed request is INVALID_ARGUMENT whoever calls)
wants it there.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from felt.api import limits
from services.lobby.tokens import AccessClaim, BadToken, verify_access


@dataclass(frozen=True, slots=True)
class Caller:
    """A call's credentials as checked so far: a claim, a token's fault, or nothing sent.

    ``operator``: the caller sent the operator's token (the table service's admin
    token, ``FELT_ADMIN_TOKEN``); only the history service gives it anything
    (every card of a hand); to the lobby's own calls it is no player.
    """

    claim: AccessClaim | None = None
    error: BadToken | None = None
    operator: bool = False


ANONYMOUS = Caller()


OPERATOR = Caller(operator=True)


class Authenticator:
    """Bearer tokens into callers; ``operator_token`` ("": none) is the operator's."""

    def __init__(
        self, access_secret: bytes, clock: Callable[[], datetime], operator_token: str = ""
    ) -> None:
        self.secret, self.clock = access_secret, clock
        self.operator_token = operator_token.encode()

    def authenticate(self, token: str) -> Caller:
        if not token:
            return ANONYMOUS
        if len(token) > limits.CREDENTIAL_MAX:
            return Caller(error=BadToken("TOKEN_INVALID", "not an access token of this lobby"))
        if self.operator_token and hmac.compare_digest(token.encode(), self.operator_token):
            return OPERATOR
        try:
            return Caller(claim=verify_access(self.secret, token, self.clock()))
        except BadToken as exc:
            return Caller(error=exc)


def bearer(metadata: object) -> str:
    """The bearer token in a call's metadata (``authorization: Bearer <token>``), or ""."""
    for key, value in metadata or ():  # type: ignore[attr-defined]
        if key == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
            return value[len("Bearer ") :].strip()
    return ""
