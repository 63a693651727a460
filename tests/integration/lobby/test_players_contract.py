"""Contract of the ``Players``, ``Sessions`` and ``Throttle`` ports: PostgreSQL and the fakes."""

from __future__ import annotations

import asyncio
import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from felt.storage.idempotency import RequestKey, RequestReused
from services.lobby.ports import AlreadyRegistered, NameTaken, NewPlayer, Rotation

T0 = datetime(2026, 1, 1, tzinfo=UTC)
HOUR = timedelta(hours=1)


def key(name: str, content: str = "") -> RequestKey:
    return RequestKey(f"c/{name}", hashlib.sha256(content.encode()).digest()[:16])


def new_player(pid: str, name: str, req: str, password: str | None = None) -> NewPlayer:
    return NewPlayer(pid, name, name.casefold(), password, key(req, name), T0)


def token_hash(session_id: str, generation: int) -> bytes:
    return hashlib.sha256(f"{session_id}/{generation}".encode()).digest()


async def test_create_get_and_retry(stores: Any) -> None:
    p = await stores.players.create(new_player("p1", "Alice", "r1"))
    assert (p.player_id, p.display_name, p.registered) == ("p1", "Alice", False)
    assert await stores.players.get("p1") == p
    assert await stores.players.by_name("alice") == p
    assert await stores.players.get("nobody") is None
    assert await stores.players.create(new_player("p1", "Alice", "r1")) == p  # the retry
    with pytest.raises(RequestReused):
        await stores.players.create(new_player("p9", "Bob", "r1"))  # same key, other content


async def test_names_are_unique_case_insensitively(stores: Any) -> None:
    await stores.players.create(new_player("p1", "Alice", "r1"))
    with pytest.raises(NameTaken):
        await stores.players.create(new_player("p2", "ALICE", "r2"))
    assert await stores.players.get("p2") is None


async def test_a_guest_registers_once(stores: Any) -> None:
    await stores.players.create(new_player("p1", "Alice", "r1"))
    p = await stores.players.register("p1", "hash", T0 + HOUR)
    assert p.registered and p.password_hash == "hash" and p.registered_at == T0 + HOUR
    with pytest.raises(AlreadyRegistered):
        await stores.players.register("p1", "other", T0 + HOUR)
    with pytest.raises(KeyError):
        await stores.players.register("nobody", "hash", T0)
    q = await stores.players.create(new_player("p2", "Bob", "r2", password="h2"))
    assert q.registered and q.registered_at == T0


async def test_session_rotation_and_reuse(stores: Any) -> None:
    await stores.players.create(new_player("p1", "Alice", "r1"))
    s = await stores.sessions.start("s1", "p1", key("sign-in"), token_hash, T0, HOUR)
    assert (s.generation, s.expires_at, s.revoked) == (0, T0 + HOUR, False)
    assert await stores.sessions.start("s1", "p1", key("sign-in"), token_hash, T0, HOUR) == s
    with pytest.raises(RequestReused):
        await stores.sessions.start("s2", "p1", key("sign-in", "x"), token_hash, T0, HOUR)

    at = T0 + timedelta(minutes=10)
    outcome, s = await stores.sessions.rotate(token_hash("s1", 0), key("f1"), token_hash, at, HOUR)
    assert outcome is Rotation.ROTATED and s is not None
    assert (s.generation, s.issued_at, s.expires_at) == (1, at, at + HOUR)
    # the same refresh call again: the same answer, nothing revoked
    outcome, again = await stores.sessions.rotate(
        token_hash("s1", 0), key("f1"), token_hash, at, HOUR
    )
    assert outcome is Rotation.RETRIED and again is not None and again.generation == 1
    with pytest.raises(RequestReused):
        await stores.sessions.rotate(token_hash("s1", 0), key("f1", "x"), token_hash, at, HOUR)
    outcome, s = await stores.sessions.rotate(token_hash("s1", 1), key("f2"), token_hash, at, HOUR)
    assert outcome is Rotation.ROTATED and s is not None and s.generation == 2
    # generation 0, rotated long ago, used by another call: the whole family is revoked
    outcome, _ = await stores.sessions.rotate(token_hash("s1", 0), key("f3"), token_hash, at, HOUR)
    assert outcome is Rotation.REUSED
    current = await stores.sessions.get("s1")
    assert current is not None and current.revoked
    outcome, _ = await stores.sessions.rotate(token_hash("s1", 2), key("f4"), token_hash, at, HOUR)
    assert outcome is Rotation.REVOKED
    outcome, _ = await stores.sessions.rotate(b"\0" * 32, key("f5"), token_hash, at, HOUR)
    assert outcome is Rotation.UNKNOWN


async def test_expired_and_revoked_sessions(stores: Any) -> None:
    await stores.players.create(new_player("p1", "Alice", "r1"))
    await stores.sessions.start("s1", "p1", key("a"), token_hash, T0, HOUR)
    outcome, _ = await stores.sessions.rotate(
        token_hash("s1", 0), key("f"), token_hash, T0 + HOUR, HOUR
    )
    assert outcome is Rotation.EXPIRED
    await stores.sessions.start("s2", "p1", key("b"), token_hash, T0, HOUR)
    assert await stores.sessions.revoke("s2", T0, "signed_out") is True
    assert await stores.sessions.revoke("s2", T0, "signed_out") is False
    assert await stores.sessions.revoke("nope", T0, "signed_out") is False
    outcome, _ = await stores.sessions.rotate(token_hash("s2", 0), key("g"), token_hash, T0, HOUR)
    assert outcome is Rotation.REVOKED


async def test_two_refreshes_with_one_token_rotate_it_once(stores: Any) -> None:
    await stores.players.create(new_player("p1", "Alice", "r1"))
    await stores.sessions.start("s1", "p1", key("a"), token_hash, T0, HOUR)
    results = await asyncio.gather(
        *(
            stores.sessions.rotate(token_hash("s1", 0), key(f"f{i}"), token_hash, T0, HOUR)
            for i in range(5)
        )
    )
    outcomes = sorted(r[0].value for r in results)
    assert outcomes.count(Rotation.ROTATED.value) == 1
    assert set(outcomes) <= {Rotation.ROTATED.value, Rotation.REUSED.value, "revoked"}
    current = await stores.sessions.get("s1")
    assert current is not None and current.revoked  # a stolen token's race ends the family


async def test_throttle_counts_per_scope_in_a_window(stores: Any) -> None:
    window = timedelta(minutes=15)
    both = {"player:p1": 5, "name:alice": 5}
    for i in range(3):
        assert await stores.throttle.reserve(both, T0 + timedelta(minutes=i), window)
    assert await stores.throttle.reserve({"name:bob": 5}, T0, window)
    assert await stores.throttle.failures(["player:p1"], T0 - window) == 3
    assert await stores.throttle.failures(["name:bob", "name:alice"], T0 - window) == 3
    assert await stores.throttle.failures(["name:carol"], T0 - window) == 0
    assert await stores.throttle.failures(["player:p1"], T0) == 0  # its window started at T0
    later = T0 + window + timedelta(minutes=1)
    assert await stores.throttle.reserve({"player:p1": 5}, later, window)  # starts over
    assert await stores.throttle.failures(["player:p1"], later - window) == 1
    await stores.throttle.clear(["player:p1", "name:alice"])
    assert await stores.throttle.failures(["player:p1", "name:alice"], T0 - window) == 0
    assert await stores.throttle.failures(["name:bob"], T0 - window) == 1


async def test_throttle_refuses_past_a_limit_and_counts_nothing_then(stores: Any) -> None:
    window = timedelta(minutes=15)
    assert await stores.throttle.reserve({"name:bob": 2, "client:a": 3}, T0, window)
    assert await stores.throttle.reserve({"name:bob": 2, "client:a": 3}, T0, window)
    # name:bob is full: nothing is counted, not even in client:a
    assert not await stores.throttle.reserve({"name:bob": 2, "client:a": 3}, T0, window)
    assert await stores.throttle.failures(["client:a"], T0 - window) == 2
    assert await stores.throttle.reserve({"name:eve": 2, "client:a": 3}, T0, window)
    assert not await stores.throttle.reserve({"name:eve": 2, "client:a": 3}, T0, window)
    assert await stores.throttle.failures(["name:eve"], T0 - window) == 1


async def test_throttle_refunds_one_attempt(stores: Any) -> None:
    window = timedelta(minutes=15)
    for _ in range(3):
        await stores.throttle.reserve({"client:a": 9, "name:bob": 9}, T0, window)
    await stores.throttle.reserve({"client:b": 9}, T0, window)
    await stores.throttle.refund(["client:a", "client:b", "name:nobody"])
    assert await stores.throttle.failures(["client:a"], T0 - window) == 2
    assert await stores.throttle.failures(["client:b", "name:nobody"], T0 - window) == 0
    assert await stores.throttle.failures(["name:bob"], T0 - window) == 3
    assert await stores.throttle.reserve({"client:b": 1}, T0, window)  # it starts over


async def test_throttle_prunes_the_windows_that_have_passed(stores: Any) -> None:
    window = timedelta(hours=1)
    await stores.throttle.reserve({"sign-up:1.2.3.4": 9}, T0, window)
    await stores.throttle.reserve({"sign-up:1.2.3.4": 9}, T0 + timedelta(minutes=5), window)
    await stores.throttle.reserve({"name:bob": 9}, T0 + timedelta(minutes=10), window)
    assert await stores.throttle.prune(T0 - timedelta(seconds=1)) == 0
    assert await stores.throttle.prune(T0 + timedelta(minutes=5)) == 1  # by its window's start
    assert await stores.throttle.failures(["sign-up:1.2.3.4"], T0 - window) == 0
    assert await stores.throttle.failures(["name:bob"], T0 - window) == 1
    assert await stores.throttle.prune(T0 + window) == 1
    assert await stores.throttle.failures(["name:bob"], T0 - window) == 0


async def test_players_by_request(stores: Any) -> None:
    p = await stores.players.create(new_player("p1", "Alice", "r1"))
    assert await stores.players.by_request(key("r1", "Alice")) == p
    assert await stores.players.by_request(key("r2", "Alice")) is None
    with pytest.raises(RequestReused):
        await stores.players.by_request(key("r1", "other content"))


async def test_concurrent_reservations_never_pass_the_limit(stores: Any) -> None:
    """The sign-in throttle's race: 30 attempts at once, at most the limit get through."""
    window = timedelta(minutes=15)
    got = await asyncio.gather(
        *(stores.throttle.reserve({"name:bob": 5, "player:p1": 5}, T0, window) for _ in range(30))
    )
    assert sum(got) == 5
    assert await stores.throttle.failures(["name:bob", "player:p1"], T0 - window) == 5


async def test_one_sign_up_racing_itself_creates_one_player(stores: Any) -> None:
    results = await asyncio.gather(
        *(stores.players.create(new_player(f"p{i}", "Alice", "r1")) for i in range(8))
    )
    assert len({p.player_id for p in results}) == 1
    assert await stores.players.by_name("alice") == results[0]


def look(pid: str, name: str, req: str, skeleton: str) -> NewPlayer:
    return NewPlayer(pid, name, name.casefold(), None, key(req, name), T0, skeleton)


async def test_names_are_unique_by_their_skeleton(stores: Any) -> None:
    """Two names that differ as typed but share a confusable skeleton are one name."""
    alice = await stores.players.create(look("p1", "Alice", "r1", "alice"))
    assert await stores.players.by_skeleton("alice") == alice
    assert await stores.players.by_skeleton("bob") is None
    with pytest.raises(NameTaken):  # a Cyrillic A (U+0410): another key, the same look
        await stores.players.create(look("p2", "\u0410lice", "r2", "alice"))
    assert await stores.players.get("p2") is None
    assert await stores.players.by_name("\u0430lice") is None
    # a retry of the first sign-up still finds its player
    assert await stores.players.create(look("p1", "Alice", "r1", "alice")) == alice
    # rows without a skeleton (named before it was recorded) never clash on it
    await stores.players.create(new_player("p3", "Old", "r3"))
    await stores.players.create(new_player("p4", "Older", "r4"))
    bob = await stores.players.create(look("p5", "Bob", "r5", "bob"))
    assert await stores.players.by_skeleton("bob") == bob


async def test_look_alikes_racing_each_other_create_one_player(stores: Any) -> None:
    names = ["Alice", "\u0410lice", "A\u200dlice", "ALICE", "\uff21lice"]
    results = await asyncio.gather(
        *(stores.players.create(look(f"p{i}", n, f"r{i}", "alice")) for i, n in enumerate(names)),
        return_exceptions=True,
    )
    made = [r for r in results if not isinstance(r, BaseException)]
    assert len(made) == 1
    assert all(isinstance(r, NameTaken) for r in results if isinstance(r, BaseException))
    assert await stores.players.by_skeleton("alice") == made[0]
