"""The shared owner-aware router (``felt.service.table_router``) on the in-memory leases and
instance directory: where a table's calls go, how a caller follows a table that moved, and
what it does when an instance cannot be reached. Real Redis: the lease and directory contract
suites; real instances: tests/integration/gateway and tests/e2e/test_failover.py."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]
from redis.exceptions import ConnectionError as RedisConnectionError

from felt.service.table_router import Channels, OwnerCalls, TableRouter, unreachable
from felt.storage.eventstore import MemoryEventStore
from felt.storage.instances import MemoryTableInstances


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def made(clock: Clock) -> tuple[MemoryEventStore, MemoryTableInstances, TableRouter]:
    leases, instances = MemoryEventStore(clock=clock), MemoryTableInstances(clock)
    router = TableRouter("default:1", leases, instances, route_ttl_s=1.0, clock=clock)
    return leases, instances, router


async def test_a_route_follows_the_lease_and_the_directory() -> None:
    clock = Clock()
    leases, instances, router = made(clock)
    assert await router.address("t1") == "default:1"  # nobody owns it, nobody announced
    await leases.acquire_lease("t1", "inst-b", 10_000)
    await instances.announce("inst-b", "b:2", 10_000)
    assert await router.address("t1") == "default:1"  # remembered for a second
    clock.now += 1.5
    assert await router.address("t1") == "b:2"
    await leases.release_lease("t1", "inst-b")
    await leases.acquire_lease("t1", "inst-c", 10_000)  # c never announced itself
    router.forget("t1")
    assert await router.address("t1") == "b:2"  # an announced instance adopts it
    assert await router.address("Not A Table!") == "default:1"  # nothing looked up


async def test_tables_nobody_owns_spread_over_the_announced_instances_alike() -> None:
    clock = Clock()
    _, instances, router = made(clock)
    for name in "abc":
        await instances.announce(f"inst-{name}", f"{name}:1", 10_000)
    picks = {t: await router.address(t) for t in (f"t{n}" for n in range(60))}
    assert set(picks.values()) == {"a:1", "b:1", "c:1"}  # every instance adopts some
    _, _, other = made(clock)
    other.instances = instances  # another caller, the same directory: the same picks
    assert {t: await other.address(t) for t in picks} == picks


async def test_an_unreachable_instance_adopts_nothing_for_a_while() -> None:
    clock = Clock()
    _, instances, router = made(clock)
    await instances.announce("inst-a", "a:1", 60_000)
    await instances.announce("inst-b", "b:1", 60_000)  # crashed, still announced
    table = ""
    for n in range(100):
        if await router.address(table := f"t{n}") == "b:1":
            break
    router.forget(table, unreachable="b:1")
    assert await router.address(table) == "a:1"
    clock.now += router.suspect_s + 0.1
    router.forget(table)
    assert await router.address(table) == "b:1"  # its time as a suspect is over
    router.forget(table, unreachable="a:1")
    router.forget(table, unreachable="b:1")
    assert await router.address(table) in ("a:1", "b:1")  # all unreachable: still a choice


async def test_the_owner_is_asked_even_if_it_was_unreachable() -> None:
    clock = Clock()
    leases, instances, router = made(clock)
    await instances.announce("inst-a", "a:1", 60_000)
    await leases.acquire_lease("t1", "inst-a", 10_000)
    router.forget("t1", unreachable="a:1")
    assert await router.address("t1") == "a:1"  # only its owner may run it


def refusal(code: grpc.StatusCode, reason: str = "") -> grpc.aio.AioRpcError:
    """An error as the table service sends it (an ``ErrorInfo`` with ``reason``), or, without
    a reason, as gRPC reports an address it could not reach."""
    trailers = grpc.aio.Metadata()
    if reason:
        status = status_pb2.Status(code=code.value[0], message="refused")
        status.details.add().Pack(error_details_pb2.ErrorInfo(reason=reason, domain="felt"))
        trailers.add("grpc-status-details-bin", status.SerializeToString())
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), trailers, details="refused")


def test_an_unreachable_address_is_told_from_an_instance_that_answered() -> None:
    assert unreachable(refusal(grpc.StatusCode.UNAVAILABLE))
    assert not unreachable(refusal(grpc.StatusCode.UNAVAILABLE, "TABLE_ELSEWHERE"))
    assert not unreachable(refusal(grpc.StatusCode.NOT_FOUND))


class Instance:
    """A stub of one address: answers with its address, or raises what it is told to."""

    def __init__(self, address: str, log: list[str]) -> None:
        self.address = address
        self.log = log
        self.error: grpc.aio.AioRpcError | None = None

    async def answer(self) -> str:
        self.log.append(self.address)
        if self.error is not None:
            raise self.error
        return self.address


def calls_on(router: TableRouter) -> tuple[OwnerCalls[Instance], dict[str, Instance], list[str]]:
    log: list[str] = []
    stubs: dict[str, Instance] = {}
    calls: OwnerCalls[Instance] = OwnerCalls(router, lambda _channel: Instance("", log))
    for address in ("a:1", "b:1", "default:1"):
        stubs[address] = calls._stubs[address] = Instance(address, log)
    return calls, stubs, log


def answer(stub: Instance) -> Awaitable[str]:
    return stub.answer()


async def test_a_call_follows_a_table_that_moved_once() -> None:
    clock = Clock()
    leases, instances, router = made(clock)
    calls, stubs, log = calls_on(router)
    await instances.announce("inst-a", "a:1", 60_000)
    await instances.announce("inst-b", "b:1", 60_000)
    await leases.acquire_lease("t1", "inst-a", 300)
    assert await calls.call("t1", answer) == "a:1"
    # a crashes; its lease lapses and b adopts the table while the route is remembered
    stubs["a:1"].error = refusal(grpc.StatusCode.UNAVAILABLE)
    clock.now += 0.5
    await leases.acquire_lease("t1", "inst-b", 1_000)
    log.clear()
    assert await calls.call("t1", answer) == "b:1"
    assert log == ["a:1", "b:1"]  # one failure, one retry at the new owner


async def test_a_call_is_retried_once_only_and_only_after_unavailable() -> None:
    clock = Clock()
    leases, instances, router = made(clock)
    calls, stubs, log = calls_on(router)
    await instances.announce("inst-a", "a:1", 60_000)
    await leases.acquire_lease("t1", "inst-a", 60_000)
    stubs["a:1"].error = refusal(grpc.StatusCode.UNAVAILABLE)  # a's lease has not lapsed yet
    with pytest.raises(grpc.aio.AioRpcError):
        await calls.call("t1", answer)
    assert log == ["a:1"]  # the route names a again: no second try there
    stubs["a:1"].error = refusal(grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN")
    log.clear()
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await calls.call("t1", answer)
    assert caught.value.code() is grpc.StatusCode.FAILED_PRECONDITION and log == ["a:1"]


async def test_without_a_directory_every_call_goes_to_the_default() -> None:
    calls, _, log = calls_on(TableRouter("default:1"))
    assert await calls.call("t1", answer) == "default:1"
    fixed: OwnerCalls[Instance] = OwnerCalls.fixed(Instance("only", log))
    call: Callable[[Instance], Awaitable[str]] = answer
    assert await fixed.call("t1", call) == "only"


class FailingLeases(MemoryEventStore):
    """Leases whose store can be cut off (Redis down for the routers)."""

    down = False

    async def lease_owner(self, table_id: str) -> str | None:
        if self.down:
            raise RedisConnectionError("Redis is down")
        return await super().lease_owner(table_id)


async def test_no_retry_elsewhere_when_the_route_could_not_be_read() -> None:
    """Redis unreadable: the route falls back to the default, which says nothing about the
    owner, so an UNAVAILABLE there is not followed to another instance (it would adopt a
    table its owner still runs)."""
    clock = Clock()
    leases, instances = FailingLeases(clock=clock), MemoryTableInstances(clock)
    router = TableRouter("default:1", leases, instances, route_ttl_s=1.0, clock=clock)
    calls, stubs, log = calls_on(router)
    await instances.announce("inst-a", "a:1", 60_000)
    await leases.acquire_lease("t1", "inst-a", 60_000)
    assert await router.address("t1") == "a:1"
    # a answers that its storage is unreachable, and the routers cannot read Redis either
    stubs["a:1"].error = refusal(grpc.StatusCode.UNAVAILABLE, "STORAGE_UNAVAILABLE")
    leases.down = True
    with pytest.raises(grpc.aio.AioRpcError):
        await calls.call("t1", answer)
    assert log == ["a:1"]  # not sent on to the default
    assert await router.locate("t1") == ("default:1", False)
    log.clear()
    stubs["default:1"].error = refusal(grpc.StatusCode.UNAVAILABLE)
    with pytest.raises(grpc.aio.AioRpcError):
        await calls.call("t1", answer)
    assert log == ["default:1"]  # no second try anywhere


async def test_channels_of_addresses_no_longer_announced_are_closed() -> None:
    clock = Clock()
    _, instances, router = made(clock)
    calls: OwnerCalls[grpc.aio.Channel] = OwnerCalls(router, lambda channel: channel, Channels())
    await instances.announce("inst-a", "a:1", 60_000)
    await instances.announce("inst-b", "b:1", 2_000)
    picks = {await calls.owner(f"t{n}") for n in range(20)}
    assert {address for address, _ in picks} == {"a:1", "b:1"}
    clock.now += 3.0  # b's announcement lapsed (it was replaced, or stopped)
    address, _ = await calls.owner("t-next")  # the directory is read again
    assert address == "a:1"
    assert set(calls._stubs) == {"a:1"}
    assert set(calls.channels._channels) == {"a:1"}
    await calls.close()
