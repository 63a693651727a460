"""Who calls the lobby: the :class:`Caller` a bearer access token makes.

Step one, in ``AuthInterceptor``: the token's signature and expiry (no I/O).
Step two, in the use case: the session it names is live (not signed out,
not revoked by a reused refresh token) — that needs the database, and the
call's refusal order (a malformed request is INVALID_ARGUMENT whoever calls)
wants it there.

Failed attempts (a token that is not one of this lobby's, or a wrong operator
token) are throttled per client address (``felt.wire.attempts``): past its
allowance a client's calls with a token are RESOURCE_EXHAUSTED
(``AUTH_THROTTLED``) unless the token is a genuine access token, and the
operator token is not compared then, so a guess cannot be confirmed.

Which RPCs the public gateway forwards is declared in ``felt.wire.access``: an
RPC added to either service is refused there until it is declared public. The
operator's view of a hand (``HAND_READER_OPERATOR``) is never served there
either.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from felt.service.bearer import counted
from felt.wire import limits
from felt.wire.attempts import FailedAttempts
from poker.v1.reason_pb2 import Reason
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
EXPIRED = Reason.Name(Reason.TOKEN_EXPIRED)


def _guess(caller: Caller) -> bool:
    """A forged or malformed token, or a wrong operator token (an expired but genuine access
    token is no guess)."""
    return caller.error is not None and caller.error.reason != EXPIRED


class Authenticator:
    """Bearer tokens into callers; ``operator_token`` ("": none) is the operator's."""

    def __init__(
        self,
        access_secret: bytes,
        clock: Callable[[], datetime],
        operator_token: str = "",
        attempts: FailedAttempts | None = None,
    ) -> None:
        self.secret, self.clock = access_secret, clock
        self.operator_token = operator_token.encode()
        self.attempts = attempts  # None: failed attempts are not counted (the fakes' tests)

    def authenticate(self, token: str, client: str = "") -> Caller:
        """The caller ``token`` makes ("" when none was sent); ``client`` (its counted
        address) is throttled after too many failed attempts: :class:`Refused`
        RESOURCE_EXHAUSTED (see the module docstring)."""
        if not token:
            return ANONYMOUS
        return counted(
            self.attempts,
            client,
            lambda: self._authenticate(token),
            lambda: self._access(token),  # an access token by its signature alone
            _guess,
        )

    def _authenticate(self, token: str) -> Caller:
        if len(token) > limits.CREDENTIAL_MAX:
            return Caller(error=BadToken(Reason.TOKEN_INVALID, "not an access token of this lobby"))
        if self.operator_token and hmac.compare_digest(token.encode(), self.operator_token):
            return OPERATOR
        return self._access(token)

    def _access(self, token: str) -> Caller:
        if len(token) > limits.CREDENTIAL_MAX:
            return Caller(error=BadToken(Reason.TOKEN_INVALID, "not an access token of this lobby"))
        try:
            return Caller(claim=verify_access(self.secret, token, self.clock()))
        except BadToken as exc:
            return Caller(error=exc)
