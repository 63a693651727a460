"""Who calls the table service: the bearer token's checks, and the principal they give.

Authentication is split in two, as seat checks must be:

1. **The token itself**, once per call, before the handler runs
   (``services.table.interceptors.AuthInterceptor`` calls
   :meth:`Authenticator.authenticate` and puts the :class:`Caller` in a
   context variable, :func:`current_caller`): whether it is the admin token,
   the AI workers' token, or a seat token with a genuine signature that has
   not expired (verified tokens are cached; expiry is checked on every use).
2. **What the call asks for**, by the use case at the point where the call
   checked it before (so that a call's refusals keep their order: an unknown
   table is NOT_FOUND whatever the token): :meth:`Caller.require_admin`,
   :meth:`Caller.for_seat` (the token's table and seat), and under the table's
   lock :func:`check_occupant` (the token belongs to the seat's current
   occupant, so that nobody can slip in between the check and the append).

**The service credential** (``FELT_ADMIN_TOKEN``: the lobby's, and an
operator's) is the only key to the calls that move chips or seats in or out:
``CreateTable``, ``SeatPlayer``, ``LeaveSeat``, ``AddChips``, ``CloseTable``
(:meth:`Caller.for_service_seat`). Players get their seat tokens from the
lobby, which buys them in and cashes them out; a player who could leave or add
chips at the table directly would move chips the lobby's ledger never sees.
The service acts for one occupant by sending that seat's token as well
(``x-felt-seat-token`` metadata: the lobby's leave of its player, checked
against the occupant like any seat token and keyed as that seat), or for
whoever sits at the seat without it (closing a table, AI seats). Nothing is
open without it, development mode included: there the credential is the
public :data:`DEV_SERVICE_TOKEN`.

**Watch grants** (``felt.wire.tokens.issue_watch_grant``, minted by the internal
``IssueWatchGrant`` for the lobby's ``WatchLounge``) open a private table's
spectator reads (:meth:`Caller.check_spectator`); they act for no seat.

Which RPCs are whose is declared once, in ``felt.wire.access``:
:data:`SERVICE_ONLY_RPCS` (the service credential's) and :data:`PUBLIC_RPCS`
(players' and spectators'). The public gateway forwards only the public ones
(``services/gateway/edge.py``), so an RPC added to the service is refused there
until it is declared public; a test holds the two lists to the service's methods.

Failed attempts are throttled per client address (``felt.wire.attempts``): past
its allowance a client's calls with a token are RESOURCE_EXHAUSTED
(``AUTH_THROTTLED``) unless the token is a genuine seat token, and the static
credentials are not even compared then, so a guess cannot be confirmed.

Nothing here knows gRPC: the fakes' service tests build callers with
:meth:`Authenticator.authenticate` from a plain token.
"""

from __future__ import annotations

import hmac
import time
from dataclasses import dataclass, field, replace

from felt.config.settings import FELT_SEAT_TOKEN_TTL_S
from felt.core.table.aggregate import TableState
from felt.service.bearer import counted
from felt.service.refusals import reason_of
from felt.storage.idempotency import (
    ADMIN_PRINCIPAL,
    ai_principal,
    seat_principal,
    service_principal,
)
from felt.wire.access import PUBLIC, SERVICE_ONLY, TABLE_SERVICE
from felt.wire.attempts import FailedAttempts
from felt.wire.tokens import DEV_SERVICE_TOKEN as DEV_SERVICE_TOKEN
from felt.wire.tokens import (
    EXPIRED,
    WATCH_GRANT_EXPIRED,
    SeatClaim,
    TokenError,
    WatchClaim,
    is_watch_grant,
    token_hash,
    verify_token,
    verify_watch_grant,
)
from felt.wire.tokens import SEAT_TOKEN_HEADER as SEAT_TOKEN_HEADER
from poker.v1.reason_pb2 import Reason
from services.table.refusals import Code, Refused

# The reasons of a genuine but expired credential: renewed, never counted as a guess.
_RENEWABLE = frozenset({EXPIRED, WATCH_GRANT_EXPIRED})
DEFAULT_TOKEN_TTL_S = FELT_SEAT_TOKEN_TTL_S.default  # a day unless configured
_VERIFIED_TOKENS = 10_000  # how many verified tokens to remember

SERVICE_ONLY_RPCS = SERVICE_ONLY[TABLE_SERVICE]
"""The internal calls: the service credential's only (:meth:`Caller.require_admin`), never
forwarded by the public gateway (declared in ``felt.wire.access``)."""
PUBLIC_RPCS = PUBLIC[TABLE_SERVICE]
"""What players (with their seat tokens) and spectators call: all the public gateway forwards."""


@dataclass(frozen=True, slots=True)
class Secrets:
    """Shared secrets: token signing, and the credentials of admins and AI workers.

    ``token_ttl_s`` is the lifetime of the seat tokens issued here (0: they never
    expire, which only tokens minted elsewhere with the secret may want).
    """

    token_secret: bytes = field(repr=False)
    admin_token: str = field(default="", repr=False)
    ai_token: str = field(default="", repr=False)
    token_ttl_s: int = DEFAULT_TOKEN_TTL_S


@dataclass(frozen=True, slots=True)
class Credential:
    """A bearer token checked for its signature, table and seat (not yet for its occupant)."""

    seat: int
    token_hash: str
    ai: bool = False
    service: bool = False  # the service credential, for whoever sits at the seat

    @property
    def principal(self) -> str:
        """Who calls, for idempotency keys: the AI workers or the service for this seat, or
        this very token."""
        if self.ai:
            return ai_principal(self.seat)
        if self.service:
            return service_principal(self.seat)
        return seat_principal(self.seat, self.token_hash)


@dataclass(frozen=True, slots=True)
class Caller:
    """The caller as its bearer token says, checked for what the token is (step one).

    ``admin``: the service credential (the admin token) was sent; then ``claim``
    is that of the seat token sent with it, if any. ``ai``: the AI workers' token.
    Otherwise ``claim`` is the seat token's claim, or ``error`` says why the token
    is none.
    """

    token: bool = False
    admin: bool = False
    ai: bool = False
    claim: SeatClaim | None = None
    token_hash: str = ""
    error: str = ""
    error_reason: str = ""
    watch: WatchClaim | None = None  # a genuine, unexpired watch grant (a spectator's)

    def expired_since_opened(self) -> bool:
        """A player's seat token that was good when the call began and has expired since:
        a stream it opened ends then (the service credential, which may name an expired
        token to let its player leave, and the AI workers' token never expire here)."""
        claim = self.claim
        if self.admin or self.ai or claim is None or not claim.expires_at:
            return False
        return claim.expires_at < int(time.time())

    def require_admin(self) -> str:
        """The admin (service) principal: UNAUTHENTICATED without a token, PERMISSION_DENIED
        (``SERVICE_ONLY``) with a player's or the AI workers' token."""
        if not self.admin:
            if not self.token:
                raise Refused(
                    Code.UNAUTHENTICATED,
                    "this call is internal: it needs the service credential",
                    Reason.SERVICE_CREDENTIAL_REQUIRED,
                )
            raise Refused(
                Code.PERMISSION_DENIED,
                "this call is internal, for the lobby's service credential only: players "
                "take, leave and top up seats through the lobby",
                Reason.SERVICE_ONLY,
            )
        return ADMIN_PRINCIPAL

    def check_spectator(self, table_id: str, state: TableState | None) -> None:
        """A spectator's read (no seat asked for): open at a public table; at a private one
        only with a watch grant or the seat token of a current occupant of this table, the
        AI workers' token or the service credential. Anyone else is told NOT_FOUND, as for
        no table (the answer does not say that a private table exists); an expired grant or
        seat token UNAUTHENTICATED with its reason, so that its holder renews it; the token
        of a seat left (or reissued) PERMISSION_DENIED ``NOT_OCCUPANT``: a seat token is a
        private table's key only while its holder sits there (then a watch grant, which the
        lobby gives its seats, owner and invitees)."""
        if state is None or not state.config.private or self.admin or self.ai:
            return
        if self.watch is not None and self.watch.table_id == table_id:
            return
        if self.claim is not None and self.claim.table_id == table_id:
            player = state.player(self.claim.seat)
            if player is not None and hmac.compare_digest(self.token_hash, player.token_hash):
                return
            raise Refused(
                Code.PERMISSION_DENIED,
                "this seat token's seat was left (or its token replaced): a private table is "
                "read with its occupant's seat token or a watch grant",
                Reason.NOT_OCCUPANT,
            )
        if self.error_reason in _RENEWABLE:
            raise Refused(Code.UNAUTHENTICATED, self.error, reason_of(self.error_reason))
        raise Refused(Code.NOT_FOUND, "no table has this table_id", Reason.NO_TABLE)

    def for_service_seat(self, table_id: str, seat: int) -> Credential:
        """An internal call for a seat: the service credential, as the seat token sent with it
        (checked as :meth:`for_seat` checks one) or, without one, for whoever sits there."""
        self.require_admin()
        if self.claim is None and not self.error:
            return Credential(seat, "", service=True)
        return self._seat_token(table_id, seat)

    def for_seat(self, table_id: str, seat: int) -> Credential:
        """A genuine token for this table and seat (or the AI workers' token), or a refusal."""
        if not self.token:
            raise Refused(
                Code.UNAUTHENTICATED,
                "send the seat token as 'authorization: Bearer <token>' metadata",
                Reason.SEAT_TOKEN_REQUIRED,
            )
        if self.ai:
            return Credential(seat, "", ai=True)
        return self._seat_token(table_id, seat)

    def _seat_token(self, table_id: str, seat: int) -> Credential:
        claim = self.claim
        if claim is None and self.watch is not None:
            raise Refused(
                Code.PERMISSION_DENIED,
                "a watch grant reads a private table as a spectator and acts for no seat: "
                "a seat's calls take its seat token",
                Reason.WATCH_GRANT_NOT_A_SEAT,
            )
        if claim is None:
            raise Refused(
                Code.UNAUTHENTICATED,
                self.error
                or f"the service credential acts as a seat with its token in {SEAT_TOKEN_HEADER}",
                reason_of(self.error_reason) or Reason.BAD_SEAT_TOKEN,
            )
        if claim.table_id != table_id:
            raise Refused(
                Code.PERMISSION_DENIED,
                "this token is for another table than the table_id asked for",
                Reason.WRONG_TABLE,
            )
        if claim.seat != seat:
            raise Refused(
                Code.PERMISSION_DENIED,
                "this token is for another seat than the seat asked for",
                Reason.WRONG_SEAT,
            )
        return Credential(seat, self.token_hash)


ANONYMOUS = Caller()


def _guess(caller: Caller) -> bool:
    """A forged or malformed token, or a wrong credential: not a genuine seat token or watch
    grant, expired or not (a caller made of a token always has ``error`` or a credential).
    The service credential with a seat token that no longer checks out (a secret rotated, a
    seat left) is no guess: counting it would throttle the lobby out of its own calls."""
    return bool(caller.error) and not caller.admin and caller.error_reason not in _RENEWABLE


def check_occupant(state: TableState | None, credential: Credential) -> None:
    """Step two, under the table's lock: the token belongs to the seat's current occupant."""
    if state is None:
        raise Refused(Code.NOT_FOUND, "the table does not exist", Reason.NO_TABLE)
    seat = credential.seat
    player = state.player(seat)
    if player is None:
        raise Refused(Code.NOT_FOUND, "nobody sits at the seat asked for", Reason.EMPTY_SEAT)
    if credential.service:
        return  # the service credential, for whoever sits there
    if credential.ai:
        if not player.ai_level:
            raise Refused(
                Code.PERMISSION_DENIED,
                "the AI workers' token acts for AI seats only; the seat asked for is a human's",
                Reason.HUMAN_SEAT,
            )
    elif not hmac.compare_digest(credential.token_hash, player.token_hash):
        raise Refused(
            Code.PERMISSION_DENIED,
            "this token belonged to an earlier occupant of the seat",
            Reason.NOT_OCCUPANT,
        )


class Authenticator:
    """Step one for every call: what a bearer token is (see the module docstring)."""

    def __init__(self, secrets: Secrets, attempts: FailedAttempts | None = None) -> None:
        self.secrets = secrets
        self.attempts = attempts  # None: failed attempts are not counted (the fakes' tests)
        # Tokens whose signature checked out (verifying is a JSON parse and two hashes):
        # token -> (claim, hash). Expiry is still checked on every use.
        self._verified: dict[str, tuple[SeatClaim, str]] = {}

    def authenticate(self, token: str, seat_token: str = "", client: str = "") -> Caller:
        """The caller sending ``token`` ("" when none was sent) and, with the service
        credential, ``seat_token`` (the seat it acts as; ignored with any other token).
        ``client`` (its counted address) is throttled after too many failed attempts:
        :class:`Refused` RESOURCE_EXHAUSTED (see the module docstring)."""
        if not token:
            return ANONYMOUS
        return counted(
            self.attempts,
            client,
            lambda: self._authenticate(token, seat_token),
            lambda: self._signed_caller(token),  # a seat token or watch grant by its signature
            _guess,
        )

    def _authenticate(self, token: str, seat_token: str) -> Caller:
        secrets = self.secrets
        if secrets.admin_token and hmac.compare_digest(
            token.encode(), secrets.admin_token.encode()
        ):
            if not seat_token:
                return Caller(token=True, admin=True)
            # The service names an occupant with its token: a genuine one, expired or not (a
            # player seated for longer than a token lives must still be able to leave).
            return replace(self._seat_caller(seat_token, 0), admin=True)
        if secrets.ai_token and hmac.compare_digest(token.encode(), secrets.ai_token.encode()):
            return Caller(token=True, ai=True)
        return self._signed_caller(token)

    def _signed_caller(self, token: str) -> Caller:
        """A seat token's or a watch grant's caller, by its signature alone (the static
        credentials are not compared: a throttled address's guesses confirm nothing)."""
        if is_watch_grant(token):
            try:
                watch = verify_watch_grant(self.secrets.token_secret, token, int(time.time()))
            except TokenError as exc:
                return Caller(token=True, error=str(exc), error_reason=exc.reason)
            return Caller(token=True, watch=watch)
        return self._seat_caller(token, int(time.time()))

    def _seat_caller(self, token: str, now: int) -> Caller:
        """A seat token's caller; ``now`` 0 takes an expired token too."""
        known = self._verified.get(token)
        if known is not None and not (known[0].expires_at and known[0].expires_at < now):
            claim, hashed = known
        else:
            try:
                claim = verify_token(self.secrets.token_secret, token, now)
            except TokenError as exc:
                return Caller(token=True, error=str(exc), error_reason=exc.reason)
            hashed = token_hash(token)
            if len(self._verified) >= _VERIFIED_TOKENS:
                self._verified.pop(next(iter(self._verified)))
            self._verified[token] = (claim, hashed)
        return Caller(token=True, claim=claim, token_hash=hashed)
