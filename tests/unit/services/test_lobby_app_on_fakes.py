"""The lobby's use cases on the in-memory ports: no PostgreSQL, no gRPC, no network.

``LobbyApp`` runs on the fakes with callers made by a real ``Authenticator``
from the tokens the app issued, as the interceptor makes them, and a clock
the tests move. What is asserted is what a client sees: results, refusal
codes and reasons, and that a refused or retried request changes nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from datetime import UTC, datetime, timedelta

import pytest
from argon2 import PasswordHasher

from felt.storage.idempotency import ClientRequest, RequestKey, RequestReused
from felt.wire.limits import LimitError
from services.lobby.application import (
    Credentials,
    LobbyApp,
    LobbySecrets,
    LobbySettings,
    client_address,
)
from services.lobby.auth import ANONYMOUS, Authenticator, Caller
from services.lobby.memory import MemoryLedger, MemoryPlayers, MemorySessions, MemoryThrottle
from services.lobby.ports import Kind, Ledger, Movement
from services.lobby.refusals import Code, Refused, refusal
from services.lobby.tokens import Passwords

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
SECRETS = LobbySecrets(b"a" * 32, b"r" * 32)
CHEAP = PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)  # tests only
PASSWORD = "correct horse battery"


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


class CountingPasswords(Passwords):
    """Real Argon2 (cheap parameters) that counts the passwords it checks and hashes."""

    def __init__(self) -> None:
        super().__init__(CHEAP)
        self.verified = self.hashed = 0

    async def verify(self, stored: str | None, password: str) -> bool:
        self.verified += 1
        return await super().verify(stored, password)

    async def hash(self, password: str) -> str:
        self.hashed += 1
        return await super().hash(password)


class Lobby:
    def __init__(self, ledger: Ledger | None = None, settings: LobbySettings | None = None) -> None:
        self.clock = Clock()
        self.ledger = ledger or MemoryLedger()
        self.sessions = MemorySessions()
        self.passwords = CountingPasswords()
        self.app = LobbyApp(
            MemoryPlayers(),
            self.sessions,
            MemoryThrottle(),
            self.ledger,
            self.passwords,
            SECRETS,
            settings or LobbySettings(),
            self.clock,
        )
        self.auth = Authenticator(SECRETS.access, self.clock)

    def caller(self, credentials: Credentials) -> Caller:
        return self.auth.authenticate(credentials.access_token)


def req(request_id: str, call: str = "call", content: str = "") -> ClientRequest:
    return ClientRequest(request_id, call, content.encode())


def guest_id(n: int | str) -> str:
    return f"guest-request-{n:0>8}"


async def refused(coro: Awaitable[object]) -> Refused:
    """The refusal a call ends with, as the interceptor would map it."""
    with pytest.raises((Refused, LimitError, RequestReused)) as info:
        await coro
    answer = refusal(info.value)
    assert answer is not None
    return answer


@pytest.fixture
def lobby() -> Lobby:
    return Lobby()


async def test_a_guest_in_one_call_with_a_starting_grant(lobby: Lobby) -> None:
    signed = await lobby.app.create_guest("  Alice ", req(guest_id(1), content="Alice"))
    assert signed.player.display_name == "Alice" and not signed.player.registered
    caller = lobby.caller(signed.credentials)
    assert (await lobby.app.player(caller, "")).player_id == signed.player.player_id
    balance = await lobby.app.balance(caller)
    assert balance.balance == LobbySettings().starting_grant and balance.next_top_up_at is None
    assert signed.credentials.access_expires_at == T0 + LobbySettings().access_ttl
    # the retry: the same player and the same credentials, no second grant
    again = await lobby.app.create_guest("Alice", req(guest_id(1), content="Alice"))
    assert again == signed
    totals = await lobby.ledger.totals()
    assert totals.created == LobbySettings().starting_grant
    # the same id with other content is refused
    reused = await refused(lobby.app.create_guest("Bob", req(guest_id(1), content="Bob")))
    assert reused.reason == "REQUEST_ID_REUSED"


async def test_a_replayed_sign_up_hands_out_no_session_its_owner_has_moved_on_from(
    lobby: Lobby,
) -> None:
    """Whoever learns a guest's request id cannot take the account over by replaying it."""
    ask = req(guest_id(1), content="Alice")
    signed = await lobby.app.create_guest("Alice", ask)
    lobby.clock.now += timedelta(seconds=5)
    assert await lobby.app.create_guest("Alice", ask) == signed  # a quick retry: its answer
    await lobby.app.refresh(signed.credentials.refresh_token, req("f1"))
    replay = await refused(lobby.app.create_guest("Alice", ask))
    assert (replay.code, replay.reason) == (Code.FAILED_PRECONDITION, "REQUEST_ALREADY_ANSWERED")
    # untouched, but older than the window: refused too (checked before any password)
    other = req(guest_id(2), content="Bert")
    await lobby.app.create_guest("Bert", other)
    lobby.clock.now += LobbySettings().replay_window
    assert (await refused(lobby.app.create_guest("Bert", other))).reason == (
        "REQUEST_ALREADY_ANSWERED"
    )
    # signed out: refused at once
    third = req(guest_id(3), content="Cleo")
    cleo = await lobby.app.create_guest("Cleo", third)
    await lobby.app.sign_out(lobby.caller(cleo.credentials), req("o1"))
    assert (await refused(lobby.app.create_guest("Cleo", third))).reason == (
        "REQUEST_ALREADY_ANSWERED"
    )
    # a registration and a sign-in alike
    reg = req("r1", content="Dora")
    dora = await lobby.app.register("Dora", PASSWORD, reg)
    await lobby.app.refresh(dora.credentials.refresh_token, req("f2"))
    assert (await refused(lobby.app.register("Dora", PASSWORD, reg))).reason == (
        "REQUEST_ALREADY_ANSWERED"
    )
    signed_in = await lobby.app.sign_in("Dora", PASSWORD, req("s1"))
    assert await lobby.app.sign_in("Dora", PASSWORD, req("s1")) == signed_in
    await lobby.app.refresh(signed_in.credentials.refresh_token, req("f3"))
    assert (await refused(lobby.app.sign_in("Dora", PASSWORD, req("s1")))).reason == (
        "REQUEST_ALREADY_ANSWERED"
    )


async def test_display_names_are_checked_and_unique_case_insensitively(lobby: Lobby) -> None:
    await lobby.app.create_guest("Alice", req(guest_id(1), content="1"))
    for n, name in enumerate(["ALICE", "alice", "\uff21lice"]):
        taken = await refused(lobby.app.create_guest(name, req(guest_id(f"t{n}"), content=name)))
        assert (taken.code, taken.reason) == (Code.ALREADY_EXISTS, "NAME_TAKEN")
    for n, name in enumerate(["", "   ", "x" * 33, "bad\u0000name", "rtl\u202eoverride"]):
        bad = await refused(lobby.app.create_guest(name, req(guest_id(f"b{n}"), content=name)))
        assert (bad.code, bad.reason) == (Code.INVALID_ARGUMENT, "BAD_NAME")
    # NFC: a decomposed name is stored composed, and is the same name as the composed one
    signed = await lobby.app.create_guest("Zoe\u0301", req(guest_id(2), content="2"))
    assert signed.player.display_name == "Zo\u00e9"
    same = await refused(lobby.app.create_guest("ZO\u00c9", req(guest_id(3), content="3")))
    assert same.reason == "NAME_TAKEN"
    short = await refused(lobby.app.create_guest("Carol", req("1", content="Carol")))
    assert short.reason == "BAD_REQUEST_ID"


async def test_register_sign_in_and_bad_credentials(lobby: Lobby) -> None:
    signed = await lobby.app.register("Bob", PASSWORD, req("r1", content="Bob"))
    assert signed.player.registered
    assert signed.player.password_hash is not None and PASSWORD not in signed.player.password_hash
    again = await lobby.app.sign_in("bob", PASSWORD, req("s1"))
    assert again.player.player_id == signed.player.player_id
    assert again.credentials.refresh_token != signed.credentials.refresh_token  # a new session
    wrong = await refused(lobby.app.sign_in("Bob", "wrong password", req("s2")))
    assert (wrong.code, wrong.reason) == (Code.UNAUTHENTICATED, "BAD_CREDENTIALS")
    nobody = await refused(lobby.app.sign_in("Nobody", PASSWORD, req("s3")))
    assert nobody.reason == "BAD_CREDENTIALS"  # the same answer as a wrong password
    short = await refused(lobby.app.register("Eve", "short", req("r2", content="Eve")))
    assert short.reason == "BAD_PASSWORD"
    # a registration retried with another password gets no credentials
    retry = await refused(lobby.app.register("Bob", "another password", req("r1", content="Bob")))
    assert retry.reason == "BAD_CREDENTIALS"


async def test_failed_sign_ins_are_throttled(lobby: Lobby) -> None:
    await lobby.app.register("Bob", PASSWORD, req("r1", content="Bob"))
    for i in range(LobbySettings().sign_in_max_failures):
        assert (await refused(lobby.app.sign_in("Bob", "wrong pass", req(f"w{i}")))).reason == (
            "BAD_CREDENTIALS"
        )
    throttled = await refused(lobby.app.sign_in("Bob", PASSWORD, req("ok1")))
    assert (throttled.code, throttled.reason) == (Code.RESOURCE_EXHAUSTED, "TOO_MANY_SIGN_INS")
    # unknown names are throttled alike (guessing which names exist gains nothing)
    for i in range(LobbySettings().sign_in_max_failures):
        await refused(lobby.app.sign_in("Ghost", "wrong pass", req(f"g{i}")))
    assert (await refused(lobby.app.sign_in("Ghost", "x" * 8, req("g9")))).reason == (
        "TOO_MANY_SIGN_INS"
    )
    lobby.clock.now += LobbySettings().sign_in_window + timedelta(seconds=1)
    await lobby.app.sign_in("Bob", PASSWORD, req("ok2"))


async def test_concurrent_guesses_are_checked_no_more_than_the_limit(lobby: Lobby) -> None:
    """30 wrong passwords at once (and the right one among them): at most the limit are
    checked; the rest are refused unchecked, so a burst gains no extra guesses."""
    await lobby.app.register("Bob", PASSWORD, req("r1", content="Bob"))
    lobby.passwords.verified = 0
    most = LobbySettings().sign_in_max_failures
    guesses = [lobby.app.sign_in("Bob", f"wrong pass {i}", req(f"w{i}")) for i in range(30)]
    guesses.append(lobby.app.sign_in("Bob", PASSWORD, req("right")))
    answers = await asyncio.gather(*guesses, return_exceptions=True)
    assert lobby.passwords.verified <= most
    reasons = [refusal(a).reason for a in answers if isinstance(a, Exception)]  # type: ignore[union-attr]
    assert reasons.count("TOO_MANY_SIGN_INS") >= 31 - most
    assert reasons.count("BAD_CREDENTIALS") <= most


async def test_a_guesser_locks_out_its_own_address_not_the_owner(lobby: Lobby) -> None:
    await lobby.app.register("Bob", PASSWORD, req("r1", content="Bob"))
    most = LobbySettings().sign_in_max_failures
    for i in range(most):
        wrong = await refused(lobby.app.sign_in("Bob", "wrong pass", req(f"w{i}"), "6.6.6.6"))
        assert wrong.reason == "BAD_CREDENTIALS"
    lobby.passwords.verified = 0
    shut = await refused(lobby.app.sign_in("Bob", PASSWORD, req("w9"), "6.6.6.6"))
    assert shut.reason == "TOO_MANY_SIGN_INS" and lobby.passwords.verified == 0
    # the owner, from its own address, signs in (and keeps doing so while the guesser tries)
    assert (await lobby.app.sign_in("Bob", PASSWORD, req("ok1"), "1.2.3.4")).player
    assert (await lobby.app.sign_in("Bob", PASSWORD, req("ok2"), "1.2.3.4")).player
    # a success clears its own address's failures on that name
    for i in range(most - 1):
        await refused(lobby.app.sign_in("Bob", "typo pass", req(f"t{i}"), "1.2.3.4"))
    await lobby.app.sign_in("Bob", PASSWORD, req("ok3"), "1.2.3.4")
    for i in range(most):
        typo = await refused(lobby.app.sign_in("Bob", "typo pass", req(f"u{i}"), "1.2.3.4"))
        assert typo.reason == "BAD_CREDENTIALS"


async def test_a_name_has_a_ceiling_against_guessing_from_many_addresses() -> None:
    lobby = Lobby(settings=LobbySettings(sign_in_max_per_name=8))
    await lobby.app.register("Bob", PASSWORD, req("r1", content="Bob"))
    for n in range(8):  # 4 addresses, 2 guesses each: under each address's own limit
        await refused(lobby.app.sign_in("Bob", "wrong pass", req(f"w{n}"), f"10.0.0.{n // 2}"))
    lobby.passwords.verified = 0
    ceiling = await refused(lobby.app.sign_in("Bob", "wrong pass", req("w9"), "10.0.0.99"))
    assert ceiling.reason == "TOO_MANY_SIGN_INS" and lobby.passwords.verified == 0


async def test_one_address_cannot_make_the_server_hash_without_end() -> None:
    """Sign-ins over many names from one address are capped (a guest's name costs a decoy
    hash); a taken name in Register costs no hash."""
    lobby = Lobby(settings=LobbySettings(sign_in_max_per_client=12, sign_up_max_per_client=50))
    await lobby.app.register("Bob", PASSWORD, req("r1", content="Bob"))
    lobby.passwords.verified = lobby.passwords.hashed = 0
    for n in range(30):
        await lobby.app.create_guest(f"Guest {n}", req(guest_id(n), content=f"{n}"))
    answers = [
        await refused(lobby.app.sign_in(f"Guest {n}", "wrong pass", req(f"n{n}"), "6.6.6.6"))
        for n in range(30)
    ]
    assert [a.reason for a in answers].count("BAD_CREDENTIALS") == 12
    assert [a.reason for a in answers].count("TOO_MANY_SIGN_INS") == 18
    assert lobby.passwords.verified == 12
    # another address is not held back
    assert (await lobby.app.sign_in("Bob", PASSWORD, req("ok"), "1.2.3.4")).player
    for n in range(20):
        taken = await refused(lobby.app.register("BOB", PASSWORD, req(f"x{n}", content="BOB")))
        assert taken.reason == "NAME_TAKEN"
    assert lobby.passwords.hashed == 0


async def test_sign_ups_per_address_are_limited_in_a_window() -> None:
    lobby = Lobby(settings=LobbySettings(sign_up_max_per_client=3))
    here, there = "203.0.113.7", "198.51.100.1"
    await lobby.app.create_guest("G1", req(guest_id(1), content="G1"), here)
    await lobby.app.register("R1", PASSWORD, req("r1", content="R1"), here)
    await lobby.app.create_guest("G2", req(guest_id(2), content="G2"), here)
    lobby.passwords.hashed = 0
    for answer in (
        await refused(lobby.app.create_guest("G3", req(guest_id(3), content="G3"), here)),
        await refused(lobby.app.register("R2", PASSWORD, req("r2", content="R2"), here)),
    ):
        assert (answer.code, answer.reason) == (Code.RESOURCE_EXHAUSTED, "TOO_MANY_SIGN_UPS")
    assert lobby.passwords.hashed == 0  # refused before any hashing
    assert await lobby.app.players.by_name("g3") is None  # nothing made
    # a retry of an answered sign-up is answered, and not counted again
    again = await lobby.app.create_guest("G2", req(guest_id(2), content="G2"), here)
    assert again.player.display_name == "G2"
    assert (await lobby.app.register("R1", PASSWORD, req("r1", content="R1"), here)).player
    # another address has its own count
    assert (await lobby.app.create_guest("G4", req(guest_id(4), content="G4"), there)).player
    # a window later the address may sign up again
    lobby.clock.now += LobbySettings().sign_up_window
    assert (await lobby.app.create_guest("G3", req(guest_id(3), content="G3"), here)).player


async def test_a_sign_up_refused_for_a_taken_name_is_not_counted() -> None:
    lobby = Lobby(settings=LobbySettings(sign_up_max_per_client=2))
    await lobby.app.create_guest("Ann", req(guest_id(1), content="Ann"), "203.0.113.7")
    for n in range(5):
        taken = await refused(
            lobby.app.create_guest("ANN", req(guest_id(10 + n), content="ANN"), "203.0.113.7")
        )
        assert taken.reason == "NAME_TAKEN"
        taken = await refused(
            lobby.app.register("ann", PASSWORD, req(f"r{n}", content="ann"), "203.0.113.7")
        )
        assert taken.reason == "NAME_TAKEN"
    assert await lobby.app.create_guest("Bo", req(guest_id(2), content="Bo"), "203.0.113.7")
    full = await refused(
        lobby.app.create_guest("Cy", req(guest_id(3), content="Cy"), "203.0.113.7")
    )
    assert full.reason == "TOO_MANY_SIGN_UPS"


async def test_sign_ups_from_one_ipv6_site_count_together() -> None:
    lobby = Lobby(settings=LobbySettings(sign_up_max_per_client=2))
    peers = ["ipv6:[2001:db8:1:2::1]:5000", "ipv6:[2001:db8:1:2:ffff::9]:6000"]
    for n, peer in enumerate(peers):
        await lobby.app.create_guest(
            f"V{n}", req(guest_id(n), content=f"V{n}"), client_address(peer)
        )
    third = client_address("ipv6:%5B2001:db8:1:2:abcd::1%5D:7000")
    full = await refused(lobby.app.create_guest("V9", req(guest_id(9), content="V9"), third))
    assert full.reason == "TOO_MANY_SIGN_UPS"
    next_64 = client_address("ipv6:[2001:db8:1:3::1]:5000")  # the same /48: one site
    full = await refused(lobby.app.create_guest("V7", req(guest_id(7), content="V7"), next_64))
    assert full.reason == "TOO_MANY_SIGN_UPS"
    other = client_address("ipv6:[2001:db8:2::1]:5000")  # the next /48
    assert (await lobby.app.create_guest("V8", req(guest_id(8), content="V8"), other)).player


async def test_concurrent_sign_ups_never_pass_the_limit() -> None:
    lobby = Lobby(settings=LobbySettings(sign_up_max_per_client=4))
    answers = await asyncio.gather(
        *(
            lobby.app.create_guest(f"C{n}", req(guest_id(n), content=f"C{n}"), "203.0.113.7")
            for n in range(12)
        ),
        return_exceptions=True,
    )
    assert sum(not isinstance(a, BaseException) for a in answers) == 4
    assert {a.reason for a in answers if isinstance(a, Refused)} == {"TOO_MANY_SIGN_UPS"}


async def test_old_throttle_counts_are_forgotten() -> None:
    lobby = Lobby()
    await lobby.app.create_guest("Ann", req(guest_id(1), content="Ann"), "203.0.113.7")
    await refused(lobby.app.sign_in("Ann", "wrong pass", req("w1"), "203.0.113.7"))
    assert await lobby.app.forget_old_attempts() == 0
    lobby.clock.now += LobbySettings().sign_up_window  # the longer of the two windows
    assert await lobby.app.forget_old_attempts() == 4  # the sign-up's and the sign-in's 3


async def test_a_guest_upgrades_and_keeps_its_chips(lobby: Lobby) -> None:
    signed = await lobby.app.create_guest("Dana", req(guest_id(1), content="Dana"))
    caller = lobby.caller(signed.credentials)
    guest_sign_in = await refused(lobby.app.sign_in("Dana", PASSWORD, req("s0")))
    assert guest_sign_in.reason == "BAD_CREDENTIALS"  # a guest has no password yet
    player = await lobby.app.upgrade_guest(caller, PASSWORD, req("u1"))
    assert player.registered and player.player_id == signed.player.player_id
    assert await lobby.app.upgrade_guest(caller, PASSWORD, req("u1")) == player  # the retry
    twice = await refused(lobby.app.upgrade_guest(caller, "another password", req("u2")))
    assert (twice.code, twice.reason) == (Code.FAILED_PRECONDITION, "ALREADY_REGISTERED")
    again = await lobby.app.sign_in("dana", PASSWORD, req("s1"))
    assert again.player.player_id == player.player_id
    balance = await lobby.app.balance(lobby.caller(again.credentials))
    assert balance.balance == LobbySettings().starting_grant


async def test_token_lifecycle_expiry_refresh_reuse_and_sign_out(lobby: Lobby) -> None:
    signed = await lobby.app.create_guest("Erin", req(guest_id(1), content="Erin"))
    first = signed.credentials
    assert (await refused(lobby.app.balance(ANONYMOUS))).reason == "TOKEN_MISSING"
    lobby.clock.now += LobbySettings().access_ttl
    expired = await refused(lobby.app.balance(lobby.caller(first)))
    assert (expired.code, expired.reason) == (Code.UNAUTHENTICATED, "TOKEN_EXPIRED")
    second = await lobby.app.refresh(first.refresh_token, req("f1"))
    assert second.access_expires_at == lobby.clock.now + LobbySettings().access_ttl
    assert await lobby.app.refresh(first.refresh_token, req("f1")) == second  # the retry
    await lobby.app.balance(lobby.caller(second))
    third = await lobby.app.refresh(second.refresh_token, req("f2"))
    # the first refresh token, spent, used again (stolen?): the whole session ends
    reused = await refused(lobby.app.refresh(first.refresh_token, req("f3")))
    assert (reused.code, reused.reason) == (Code.UNAUTHENTICATED, "REFRESH_TOKEN_REUSED")
    assert (await refused(lobby.app.balance(lobby.caller(third)))).reason == "SESSION_REVOKED"
    assert (await refused(lobby.app.refresh(third.refresh_token, req("f4")))).reason == (
        "SESSION_REVOKED"
    )


async def test_sign_out_revokes_access_and_refresh(lobby: Lobby) -> None:
    await lobby.app.register("Finn", PASSWORD, req("r1", content="Finn"))
    signed = await lobby.app.sign_in("Finn", PASSWORD, req("s1"))
    caller = lobby.caller(signed.credentials)
    await lobby.app.sign_out(caller, req("o1"))
    await lobby.app.sign_out(caller, req("o1"))  # the retry answers the same
    assert (await refused(lobby.app.balance(caller))).reason == "SESSION_REVOKED"
    gone = await refused(lobby.app.refresh(signed.credentials.refresh_token, req("f1")))
    assert gone.reason == "SESSION_REVOKED"
    other = await lobby.app.sign_in("Finn", PASSWORD, req("s2"))  # other sessions live on
    await lobby.app.balance(lobby.caller(other.credentials))


async def test_forged_and_foreign_tokens_are_refused(lobby: Lobby) -> None:
    signed = await lobby.app.create_guest("Gus", req(guest_id(1), content="Gus"))
    token = signed.credentials.access_token
    head, payload, signature = token.split(".")
    forged = lobby.auth.authenticate(f"{head}.{payload}.{signature[::-1]}")
    assert (await refused(lobby.app.balance(forged))).reason == "TOKEN_INVALID"
    foreign = Authenticator(b"x" * 32, lobby.clock).authenticate(token)
    assert (await refused(lobby.app.balance(foreign))).reason == "TOKEN_INVALID"
    assert (await refused(lobby.app.balance(lobby.auth.authenticate("a" * 5000)))).reason == (
        "TOKEN_INVALID"
    )
    bogus = await refused(lobby.app.refresh("r1.not-a-token", req("f1")))
    assert bogus.reason == "REFRESH_TOKEN_INVALID"


async def test_top_up_when_low_with_a_cool_down(lobby: Lobby) -> None:
    signed = await lobby.app.create_guest("Hal", req(guest_id(1), content="Hal"))
    caller, pid = lobby.caller(signed.credentials), signed.player.player_id
    assert (await refused(lobby.app.top_up(caller, req("t1")))).reason == "NOT_LOW"
    settings = LobbySettings()
    spend = settings.starting_grant - settings.top_up_below + 1
    await lobby.ledger.move(pid, Kind.BUY_IN, spend, req("b").key("test"), T0, "t")
    movement, balance = await lobby.app.top_up(caller, req("t2"))
    assert movement.kind is Kind.TOP_UP and balance == settings.top_up_below - 1 + 5000
    assert await lobby.app.top_up(caller, req("t2")) == (movement, balance)  # the retry
    await lobby.ledger.move(pid, Kind.BUY_IN, balance, req("b2").key("test"), T0, "t")
    cooling = await refused(lobby.app.top_up(caller, req("t3")))
    assert (cooling.code, cooling.reason) == (Code.FAILED_PRECONDITION, "COOLING_DOWN")
    assert (await lobby.app.balance(caller)).next_top_up_at == T0 + settings.top_up_cooldown
    lobby.clock.now = T0 + settings.top_up_cooldown
    fresh = await lobby.app.refresh(signed.credentials.refresh_token, req("f"))
    _, balance = await lobby.app.top_up(lobby.caller(fresh), req("t4"))
    assert balance == settings.top_up_amount
    totals = await lobby.ledger.totals()
    assert totals.balances + totals.on_tables == totals.created


async def test_ledger_in_pages(lobby: Lobby) -> None:
    signed = await lobby.app.create_guest("Ida", req(guest_id(1), content="Ida"))
    caller, pid = lobby.caller(signed.credentials), signed.player.player_id
    for i in range(4):
        await lobby.ledger.move(pid, Kind.BUY_IN, 10 + i, req(f"b{i}").key("t"), T0, "t")
    page = await lobby.app.ledger_page(caller, 3, "")
    assert [m.amount for m in page.entries] == [-13, -12, -11] and page.next_page_token
    rest = await lobby.app.ledger_page(caller, 3, page.next_page_token)
    assert [m.kind for m in rest.entries] == [Kind.BUY_IN, Kind.GRANT]
    assert rest.next_page_token == ""
    for token in ["garbage!", "ZTA", "x" * 200]:
        assert (await refused(lobby.app.ledger_page(caller, 3, token))).reason == "BAD_PAGE_TOKEN"
    assert (await refused(lobby.app.ledger_page(caller, 101, ""))).reason == "BAD_PAGE_SIZE"


class FlakyLedger(MemoryLedger):
    """Fails the first starting grant, as if the lobby died between a sign-up's writes."""

    def __init__(self) -> None:
        super().__init__()
        self.failures = 1

    async def open(self, player_id: str, grant: int, request: RequestKey, at: datetime) -> Movement:
        if self.failures:
            self.failures -= 1
            raise ConnectionError("the database went away")
        return await super().open(player_id, grant, request, at)


async def test_a_sign_up_cut_short_is_completed_by_its_retry_with_one_grant() -> None:
    lobby = Lobby(FlakyLedger())
    with pytest.raises(ConnectionError):
        await lobby.app.create_guest("Jo", req(guest_id(1), content="Jo"))
    signed = await lobby.app.create_guest("Jo", req(guest_id(1), content="Jo"))
    assert (await lobby.app.balance(lobby.caller(signed.credentials))).balance == 10_000
    totals = await lobby.ledger.totals()
    assert (totals.created, totals.balances) == (10_000, 10_000)


def test_client_address_is_what_the_throttle_counts() -> None:
    assert client_address("ipv4:1.2.3.4:5678") == "1.2.3.4"
    assert client_address("ipv6:[2001:db8:1:2:3:4:5:6]:443") == "2001:db8:1:2::/64"
    assert client_address("ipv6:%5B2001:db8:1:2:ff::1%5D:443") == "2001:db8:1:2::/64"
    assert client_address("ipv6:[::ffff:1.2.3.4]:9") == "1.2.3.4"
    assert client_address("unix:/run/felt.sock") == "unix:/run/felt.sock"
