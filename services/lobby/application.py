"""The lobby's use cases, without gRPC: one method per call, plain arguments in, results out.

Handlers (``services.lobby.service``) translate messages to these arguments
and the results back; refusals are raised as
:class:`~services.lobby.refusals.Refused` (or a limit error). Every mutation
takes a :class:`~felt.storage.idempotency.ClientRequest` and is retry-safe: its key is
scoped to the caller (the signed-in player; for a sign-up the request id
itself; for a sign-in the name, the password being checked first) and the
ports find a retried write's first outcome.

A sign-up is three idempotent writes (the player, the starting grant, the
session), so a retry after a crash between them completes it; a player whose
grant was never written gets it on its first look at its chips (the grant's
key is the server's own, one per player).

Why one module of about 460 lines (issue #10): it is one class, :class:`LobbyApp`,
whose sign-up, sign-in and session calls and whose chips calls share its private
helpers (the signed-in check, the account opened on first look, the session
started and its credentials issued). Split in two, each half would reach into
the other's helpers or re-derive them; read whole, every call and what it
relies on are on one page. The lounges and seating use cases live in
``lounges.py`` and ``seating.py`` (they borrow the sign-in check, and seating
the player and account look-ups, from this class).
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
import secrets
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from felt.storage.idempotency import ClientRequest, RequestKey, server_key
from felt.wire import limits
from felt.wire.clients import counted_peer
from poker.v1.reason_pb2 import Reason
from services.lobby.auth import Caller
from services.lobby.names import name_key, new_display_name, skeleton
from services.lobby.paging import page_match, page_token
from services.lobby.ports import (
    Account,
    AlreadyRegistered,
    Ledger,
    Movement,
    NameTaken,
    NewPlayer,
    Player,
    Players,
    Rotation,
    Session,
    Sessions,
    Throttle,
    TopUpRefused,
)
from services.lobby.refusals import (
    ALREADY_ANSWERED,
    BAD_CREDENTIALS,
    NAME_TAKEN,
    NOT_SIGNED_IN,
    SESSION_REVOKED,
    Code,
    Refused,
    reason_of,
    unauthenticated,
)
from services.lobby.tokens import (
    AccessClaim,
    Passwords,
    issue_access,
    refresh_token,
    token_digest,
)


@dataclass(frozen=True, slots=True)
class LobbySecrets:
    access: bytes = field(repr=False)  # signs access tokens
    refresh: bytes = field(repr=False)  # derives refresh tokens


@dataclass(frozen=True, slots=True)
class LobbySettings:
    access_ttl: timedelta = timedelta(minutes=15)
    refresh_ttl: timedelta = timedelta(days=30)
    starting_grant: int = 10_000
    top_up_amount: int = 5_000
    top_up_below: int = 500
    top_up_cooldown: timedelta = timedelta(hours=1)
    sign_in_window: timedelta = timedelta(minutes=15)
    sign_in_max_failures: int = 5  # per client address and name
    sign_in_max_per_name: int = 100  # per name, from every address together
    sign_in_max_per_client: int = 50  # per client address, over every name
    # Sign-ups (CreateGuest, Register) per client address (an IPv6 one by its /48) in a
    # window: accounts are free and each may open lounges that run tables, so one address
    # must not be able to make them without end; a retry of an answered sign-up is not
    # counted again, nor one refused for a taken name (it made nothing).
    sign_up_window: timedelta = timedelta(hours=1)
    sign_up_max_per_client: int = 30
    # How long the retry of a sign-up or sign-in may still be answered with its credentials.
    replay_window: timedelta = timedelta(seconds=60)
    # Lounges one player may have open (or being created) at once: each runs a table, its AI
    # seats playing on, so a free account must not be able to start them without end.
    max_lounges_per_owner: int = 3
    # What one account may win from the house (its net result at lounges with AI seats)
    # per UTC day before it may join no more of them that day (docs/operations.md): chips
    # won are never taken back, so the house's exposure to one account per day is this plus
    # the AI stacks at the lounges it sits at.
    house_daily_win_limit: int = 100_000
    # Refills from the house one busted AI seat may get per UTC day: the house's exposure at
    # one lounge per day is its AI stacks times one plus this.
    ai_refills_per_day: int = 10
    # A new lounge's grace for a busted person's seat when its CreateLounge does not set one
    # (RULES.md: "after a grace the lounge sets (default 5 minutes) the seat is freed").
    busted_grace_s: int = 300


@dataclass(frozen=True, slots=True)
class Credentials:
    access_token: str
    access_expires_at: datetime
    refresh_token: str
    refresh_expires_at: datetime


@dataclass(frozen=True, slots=True)
class Signed:
    player: Player
    credentials: Credentials


@dataclass(frozen=True, slots=True)
class Balance:
    balance: int
    next_top_up_at: datetime | None  # None: whenever the balance is low
    top_up_below: int


@dataclass(frozen=True, slots=True)
class LedgerPage:
    entries: list[Movement]
    next_page_token: str  # "" when there is no more


_PAGE = re.compile(r"e([1-9][0-9]{0,17})")


def client_address(peer: str) -> str:
    """Who is throttled, from gRPC's peer string: ``felt.wire.clients.counted_peer`` (an IPv6
    client by its /64: one subscriber usually holds a whole /64)."""
    return counted_peer(peer)


def sign_up_site(client: str) -> str:
    """Whose sign-ups count together: ``client`` (``client_address``), but an IPv6 one by
    its /48, not its /64. A /48 is what one end site is assigned (RFC 6177; a tunnel broker
    hands one out free): counted by the /64, one such client had its 65,536 /64s' limits."""
    try:
        network = ipaddress.ip_network(client)
    except ValueError:
        return client  # not an address (a Unix socket's peer): as it is
    if isinstance(network, ipaddress.IPv6Network) and network.prefixlen > 48:
        return str(network.supernet(new_prefix=48))
    return client


def display_name(value: str) -> str:
    """A name as sign-in reads it: cleaned only (a name taken before the rules of
    ``services.lobby.names`` still signs in); a sign-up's name is ``new_display_name``."""
    name = limits.clean_display_name(value)
    if not name:
        raise limits.LimitError(Reason.BAD_NAME, "display_name is required (1-32 characters)")
    return name


class LobbyApp:
    def __init__(
        self,
        players: Players,
        sessions: Sessions,
        throttle: Throttle,
        ledger: Ledger,
        passwords: Passwords,
        secrets_: LobbySecrets,
        settings: LobbySettings,
        clock: Callable[[], datetime],
    ) -> None:
        self.players, self.sessions, self.throttle, self.ledger = (
            players,
            sessions,
            throttle,
            ledger,
        )
        self.passwords, self.secrets, self.settings, self.clock = (
            passwords,
            secrets_,
            settings,
            clock,
        )

    # -------------------------------------------------------------- signing up and in

    async def create_guest(self, name: str, request: ClientRequest, client: str = "") -> Signed:
        """``client``: the caller's address (``client_address``), its sign-ups limited."""
        limits.check_guest_request_id(request.request_id)
        name = new_display_name(name)
        key = request.key("guest")
        async with self._sign_up_counted(key, client):
            return await self._sign_up(name, None, "", key)

    async def register(
        self, name: str, password: str, request: ClientRequest, client: str = ""
    ) -> Signed:
        """``request``'s content must not hold the password (handlers clear it): the key's
        fingerprint is a fast hash, a password only ever gets a slow one.

        The name is looked up before the password is hashed: a taken name costs no Argon2
        (anyone could otherwise make the server hash without end), unless it is this very
        request's retry (then its password is checked, not hashed)."""
        limits.check_request_id(request.request_id)
        name = new_display_name(name)
        limits.check_password(password)
        key = request.key(f"register/{name_key(name)}")
        async with self._sign_up_counted(key, client):
            if await self._taken(name):
                if await self.players.by_request(key) is None:
                    raise NAME_TAKEN
                return await self._sign_up(name, None, password, key)  # the retry
            hashed = await self.passwords.hash(password)
            return await self._sign_up(name, hashed, password, key)

    async def _taken(self, name: str) -> bool:
        """Whether a player has this name or one that looks like it (its skeleton)."""
        return (
            await self.players.by_name(name_key(name)) is not None
            or await self.players.by_skeleton(skeleton(name)) is not None
        )

    @contextlib.asynccontextmanager
    async def _sign_up_counted(self, key: RequestKey, client: str) -> AsyncIterator[None]:
        """Count a sign-up from ``client`` (RESOURCE_EXHAUSTED ``TOO_MANY_SIGN_UPS`` past
        ``sign_up_max_per_client`` in ``sign_up_window``), reserved before the sign-up runs
        so that concurrent ones never pass the limit, as the sign-in throttle does. A retry
        of a sign-up that made its player is not counted again (it makes nothing new); one
        refused for a taken name is given back."""
        if await self.players.by_request(key) is not None:
            yield  # a retry: counted when it was first made
            return
        s, scope = self.settings, f"sign-up:{sign_up_site(client)}"
        if not await self.throttle.reserve(
            {scope: s.sign_up_max_per_client}, self.clock(), s.sign_up_window
        ):
            raise Refused(
                Code.RESOURCE_EXHAUSTED,
                f"too many sign-ups from your address (at most {s.sign_up_max_per_client} in "
                f"{_duration(s.sign_up_window)}); try again later",
                Reason.TOO_MANY_SIGN_UPS,
            )
        try:
            yield
        except Refused as exc:
            if exc.reason == NAME_TAKEN.reason:
                await self.throttle.refund([scope])
            raise

    async def forget_old_attempts(self) -> int:
        """Drop the throttle's counts whose window has passed (run periodically by the
        server), so its rows stay as many as the addresses and names seen in one window."""
        s = self.settings
        longest = max(s.sign_in_window, s.sign_up_window)
        return await self.throttle.prune(self.clock() - longest)

    async def _sign_up(
        self, name: str, hashed: str | None, password: str, key: RequestKey
    ) -> Signed:
        at = self.clock()
        new = NewPlayer(
            f"p-{secrets.token_hex(10)}", name, name_key(name), hashed, key, at, skeleton(name)
        )
        try:
            player = await self.players.create(new)
        except NameTaken:
            raise NAME_TAKEN from None
        if (
            player.player_id != new.player_id
            and player.created_at + self.settings.replay_window <= at
        ):
            raise ALREADY_ANSWERED  # an old replay: not even an answer about the password
        if player.password_hash != hashed and not await self.passwords.verify(  # a retry
            player.password_hash, password
        ):
            raise BAD_CREDENTIALS  # a retry of a registration, with another password
        await self._account(player.player_id)
        return Signed(player, await self._start_session(player, key))

    async def sign_in(
        self, name: str, password: str, request: ClientRequest, client: str = ""
    ) -> Signed:
        """Throttled, with no password checked past a limit (RESOURCE_EXHAUSTED
        ``TOO_MANY_SIGN_INS`` until the window has passed), in three scopes:

        * per client address and name (``sign_in_max_failures``, 5): a guesser's own limit;
          it locks out only that address, never the name's owner signing in from elsewhere;
        * per client address (``sign_in_max_per_client``): the Argon2 work one address can
          cause, over every name (unknown names cost a decoy hash, so they count too);
        * per name (``sign_in_max_per_name``, far above the first): a ceiling against
          guessing from many addresses. It could refuse the owner too, but reaching it takes
          as many addresses as it is times the first; a per-name limit that never refused
          would stop no distributed guessing at all, one as low as the first would let
          anyone lock anyone out.

        ``client`` is the caller's address (``client_address``; an IPv6 client by its /64).
        The attempt is reserved (counted) *before* the password is checked, in every scope
        at once, and given back when it was right: checking takes a while, and a count read
        before and written after would let every concurrent guess be checked."""
        limits.check_request_id(request.request_id)
        name = display_name(name)
        limits.check_password(password)
        at, key_of_name = self.clock(), name_key(name)
        s = self.settings
        guesser, address, of_name = (
            f"client-name:{client}/{key_of_name}",
            f"client:{client}",
            f"name:{key_of_name}",
        )
        reserved = {
            guesser: s.sign_in_max_failures,
            address: s.sign_in_max_per_client,
            of_name: s.sign_in_max_per_name,
        }
        if not await self.throttle.reserve(reserved, at, s.sign_in_window):
            raise Refused(
                Code.RESOURCE_EXHAUSTED,
                "too many failed sign-ins for this name; wait a few minutes and try again",
                Reason.TOO_MANY_SIGN_INS,
            )
        player = await self.players.by_name(key_of_name)
        stored = player.password_hash if player is not None else None
        # Always one Argon2 verification: an unknown name or a guest (no password) is checked
        # against the decoy hash, so that the answer takes as long as for a registered name
        # and its time does not tell which names exist.
        right = await self.passwords.verify(stored, password)
        if player is None or not right:
            raise BAD_CREDENTIALS  # the reserved attempt stays counted: a failure
        await self.throttle.clear([guesser])
        await self.throttle.refund([address, of_name])
        key = request.key(f"sign-in/{player.player_id}")
        return Signed(player, await self._start_session(player, key))

    async def upgrade_guest(self, caller: Caller, password: str, request: ClientRequest) -> Player:
        """The guest keeps its id, name and chips; a retry (same password) answers the same."""
        claim = await self.signed_in(caller)
        limits.check_request_id(request.request_id)
        limits.check_password(password)
        hashed = await self.passwords.hash(password)
        try:
            return await self.players.register(claim.player_id, hashed, self.clock())
        except AlreadyRegistered:
            player = await self._player(claim.player_id)
            if await self.passwords.verify(player.password_hash, password):
                return player  # the retry of this upgrade
            raise Refused(
                Code.FAILED_PRECONDITION,
                "this account has a password already",
                Reason.ALREADY_REGISTERED,
            ) from None

    async def refresh(self, token: str, request: ClientRequest) -> Credentials:
        limits.check_request_id(request.request_id)
        if not token or len(token) > limits.CREDENTIAL_MAX:
            raise unauthenticated(Reason.REFRESH_TOKEN_INVALID, "not a refresh token of this lobby")
        digest = token_digest(token)
        key = request.key(f"refresh/{digest.hex()}")
        outcome, session = await self.sessions.rotate(
            digest, key, self._refresh_digest, self.clock(), self.settings.refresh_ttl
        )
        if outcome in (Rotation.ROTATED, Rotation.RETRIED):
            assert session is not None
            return self._credentials(session)
        raise {
            Rotation.UNKNOWN: unauthenticated(
                Reason.REFRESH_TOKEN_INVALID, "not a refresh token of this lobby"
            ),
            Rotation.EXPIRED: unauthenticated(
                Reason.SESSION_EXPIRED, "the session has expired: sign in again"
            ),
            Rotation.REVOKED: SESSION_REVOKED,
            Rotation.REUSED: unauthenticated(
                Reason.REFRESH_TOKEN_REUSED,
                "this refresh token was already exchanged: the session is signed out "
                "everywhere (if this was not you, change your password)",
            ),
        }[outcome]

    async def sign_out(self, caller: Caller, request: ClientRequest) -> None:
        """Revokes the session; a retry (the session already signed out) is answered the same."""
        claim = self._claim(caller)
        limits.check_request_id(request.request_id)
        session = await self.sessions.get(claim.session_id)
        if session is None or session.player_id != claim.player_id:
            raise SESSION_REVOKED
        await self.sessions.revoke(claim.session_id, self.clock(), "signed_out")

    # -------------------------------------------------------------- players and chips

    async def player(self, caller: Caller, player_id: str) -> Player:
        claim = await self.signed_in(caller)
        if player_id:
            limits.check_player_id(player_id)
        player = await self.players.get(player_id or claim.player_id)
        if player is None:
            raise Refused(Code.NOT_FOUND, "no such player", Reason.NO_PLAYER)
        return player

    async def balance(self, caller: Caller) -> Balance:
        claim = await self.signed_in(caller)
        account = await self._account(claim.player_id)
        last, cooldown = account.last_top_up_at, self.settings.top_up_cooldown
        next_at = last + cooldown if last is not None and last + cooldown > self.clock() else None
        return Balance(account.balance, next_at, self.settings.top_up_below)

    async def ledger_page(self, caller: Caller, page_size: int, page_token: str) -> LedgerPage:
        claim = await self.signed_in(caller)
        size = limits.check_page_size(page_size)
        before = _page_position(page_token)
        await self._account(claim.player_id)
        rows = await self.ledger.entries(claim.player_id, before, size + 1)
        more = len(rows) > size
        rows = rows[:size]
        token = _page_token(rows[-1].entry_id) if more else ""
        return LedgerPage(rows, token)

    async def top_up(self, caller: Caller, request: ClientRequest) -> tuple[Movement, int]:
        claim = await self.signed_in(caller)
        limits.check_request_id(request.request_id)
        await self._account(claim.player_id)
        s = self.settings
        try:
            movement = await self.ledger.top_up(
                claim.player_id,
                s.top_up_amount,
                s.top_up_below,
                s.top_up_cooldown,
                request.key(f"player/{claim.player_id}"),
                self.clock(),
            )
        except TopUpRefused as exc:
            raise Refused(Code.FAILED_PRECONDITION, exc.message, reason_of(exc.reason)) from None
        account = await self._account(claim.player_id)
        return movement, account.balance

    # -------------------------------------------------------------- helpers

    def _claim(self, caller: Caller) -> AccessClaim:
        if caller.error is not None:
            raise unauthenticated(reason_of(caller.error.reason), caller.error.message)
        if caller.claim is None:
            raise NOT_SIGNED_IN
        return caller.claim

    async def signed_in(self, caller: Caller) -> AccessClaim:
        """The caller's claim, if its session is live (not signed out, not revoked)."""
        claim = self._claim(caller)
        session = await self.sessions.get(claim.session_id)
        if session is None or session.revoked or session.player_id != claim.player_id:
            raise SESSION_REVOKED
        return claim

    async def _player(self, player_id: str) -> Player:
        player = await self.players.get(player_id)
        if player is None:
            raise Refused(Code.NOT_FOUND, "no such player", Reason.NO_PLAYER)
        return player

    async def _account(self, player_id: str) -> Account:
        """The player's chips account, opened with its starting grant if it has none yet."""
        account = await self.ledger.account(player_id)
        if account is None:
            key = server_key("grant", player_id, 0)
            await self.ledger.open(player_id, self.settings.starting_grant, key, self.clock())
            account = await self.ledger.account(player_id)
            assert account is not None
        return account

    def _refresh_digest(self, session_id: str, generation: int) -> bytes:
        return token_digest(refresh_token(self.secrets.refresh, session_id, generation))

    async def _start_session(self, player: Player, key: RequestKey) -> Credentials:
        """A new session, or for the retry of the call that started one, that session's
        credentials again: only while it is as it was answered (generation 0, live) and for
        ``replay_window`` after. A request id is no secret kept for ever (a guest's is all
        its sign-up), so a later replay must not hand out a session its owner has since
        refreshed, signed out of, or simply gone on using."""
        proposed, at = f"s-{secrets.token_hex(12)}", self.clock()
        session = await self.sessions.start(
            proposed, player.player_id, key, self._refresh_digest, at, self.settings.refresh_ttl
        )
        if session.session_id != proposed and (
            session.generation != 0
            or session.revoked
            or session.issued_at + self.settings.replay_window <= at
        ):
            raise ALREADY_ANSWERED
        return self._credentials(session)

    def _credentials(self, session: Session) -> Credentials:
        access_expires = min(session.issued_at + self.settings.access_ttl, session.expires_at)
        claim = AccessClaim(session.player_id, session.session_id, access_expires)
        return Credentials(
            issue_access(self.secrets.access, claim),
            access_expires,
            refresh_token(self.secrets.refresh, session.session_id, session.generation),
            session.expires_at,
        )


def _duration(span: timedelta) -> str:
    minutes = int(span.total_seconds()) // 60
    if minutes % 60 == 0 and minutes >= 60:
        hours = minutes // 60
        return "an hour" if hours == 1 else f"{hours} hours"
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def _page_token(entry_id: int) -> str:
    return page_token(f"e{entry_id}")


def _page_position(token: str) -> int | None:
    match = page_match(token, _PAGE)
    return int(match[1]) if match is not None else None
