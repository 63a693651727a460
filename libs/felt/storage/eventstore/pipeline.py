"""One pipelined Redis connection for the event store's hot path (appends and reads).

redis-py's asyncio client costs about 100 us of CPU per command on top of
the round trip itself (checking a connection out of the pool and back, the
retry wrapper, a stream reader, ...), which is as much as deciding and
encoding an action, and its stream replies go through Python parsing.
Appends and reads need none of that: an append is one self-contained,
atomic script call, a read one ``MULTI``/``EXEC`` block
(:meth:`RedisPipeline.transaction`), so they can share one connection. A
call is written when its turn of the event loop ends (calls made in the
same turn go out in one write), and Redis answers in order, so replies are
matched to callers first-in, first-out.

Semantics are redis-py's: a reply error raises ``redis.exceptions.ResponseError``;
a lost or broken connection raises ``redis.exceptions.ConnectionError`` for
every call in flight (whose outcome is then unknown) and the next call
reconnects; no reply for ``socket_timeout`` seconds while calls are in flight
raises ``redis.exceptions.TimeoutError`` for them and drops the connection.
A caller that is cancelled leaves its call in the pipe (it may still run);
its reply is discarded.

Only plain TCP and Unix-socket clients are covered (``RedisPipeline.for_client``
returns None for TLS or credential providers; the caller then goes through
redis-py). Replies are RESP2.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hashlib
from dataclasses import dataclass
from typing import Any, cast

import hiredis
from redis.asyncio import Redis
from redis.asyncio.connection import Connection, UnixDomainSocketConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

Arg = bytes | str | int


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where and how to connect (taken from a redis-py client's connection settings)."""

    host: str = "127.0.0.1"
    port: int = 6379
    path: str = ""  # a Unix socket instead of host and port
    username: str | None = None
    password: str | None = None
    db: int = 0
    connect_timeout: float | None = 5.0
    timeout: float | None = 5.0


def endpoint_of(redis: Redis) -> Endpoint | None:
    """The endpoint of a redis-py client, or None if this module cannot connect like it."""
    pool = getattr(redis, "connection_pool", None)
    if pool is None:
        return None
    kwargs: dict[str, Any] = pool.connection_kwargs
    if kwargs.get("credential_provider") is not None:
        return None
    timeout = kwargs.get("socket_timeout", 5.0)
    connect_timeout = kwargs.get("socket_connect_timeout", timeout)
    common = {
        "username": kwargs.get("username"),
        "password": kwargs.get("password"),
        "db": int(kwargs.get("db", 0) or 0),
        "connect_timeout": connect_timeout,
        "timeout": timeout,
    }
    if pool.connection_class is Connection:
        host = str(kwargs.get("host", "localhost"))
        return Endpoint(host=host, port=int(kwargs.get("port", 6379)), **common)
    if pool.connection_class is UnixDomainSocketConnection and kwargs.get("path"):
        return Endpoint(path=str(kwargs["path"]), **common)
    return None


def pack(args: tuple[Arg, ...] | list[Arg]) -> bytes:
    """A command in RESP (an array of bulk strings)."""
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        if isinstance(arg, str):
            arg = arg.encode()
        elif not isinstance(arg, bytes):
            arg = b"%d" % arg
        out.append(b"$%d\r\n" % len(arg))
        out.append(arg)
        out.append(b"\r\n")
    return b"".join(out)


class _Protocol(asyncio.Protocol):
    """The connection: writes batched per loop turn, replies handed out in order."""

    def __init__(self, loop: asyncio.AbstractEventLoop, timeout: float | None) -> None:
        self.loop = loop
        self.timeout = timeout
        self.transport: asyncio.Transport | None = None
        self.reader = hiredis.Reader(protocolError=RedisConnectionError, replyError=ResponseError)
        self.waiters: collections.deque[asyncio.Future[Any]] = collections.deque()
        self.outgoing: list[bytes] = []
        self.closed = False
        self.error: Exception | None = None
        # The watchdog: when a reply last came (or the first call began waiting).
        self.progress_at = 0.0
        self.watchdog: asyncio.TimerHandle | None = None

    # ------------------------------------------------------------------ asyncio

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's are not subclasses

    def data_received(self, data: bytes) -> None:
        reader = self.reader
        waiters = self.waiters
        try:
            reader.feed(data)
            while (reply := reader.gets()) is not False:
                if not waiters:
                    raise RedisConnectionError("Redis sent a reply nobody asked for")
                future = waiters.popleft()
                if future.done():  # its caller was cancelled
                    continue
                if isinstance(reply, ResponseError):
                    future.set_exception(reply)
                else:
                    future.set_result(reply)
        except RedisConnectionError as exc:  # a protocol error: the stream is unusable
            self._fail(exc)
            return
        if waiters:
            self.progress_at = self.loop.time()

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(RedisConnectionError(f"connection to Redis lost: {exc or 'closed'}"))

    # ------------------------------------------------------------------ calls

    def send(self, command: bytes) -> asyncio.Future[Any]:
        if self.closed:
            raise self.error or RedisConnectionError("connection to Redis closed")
        future = self.loop.create_future()
        if not self.waiters:
            self.progress_at = self.loop.time()
            if self.timeout and self.watchdog is None:
                self.watchdog = self.loop.call_at(self.progress_at + self.timeout, self._watch)
        self.waiters.append(future)
        if not self.outgoing:
            self.loop.call_soon(self._flush)
        self.outgoing.append(command)
        return future

    def _flush(self) -> None:
        outgoing = self.outgoing
        if self.closed or not outgoing or self.transport is None:
            outgoing.clear()
            return
        data = outgoing[0] if len(outgoing) == 1 else b"".join(outgoing)
        outgoing.clear()
        self.transport.write(data)

    def _watch(self) -> None:
        self.watchdog = None
        if self.closed or not self.waiters or not self.timeout:
            return
        due = self.progress_at + self.timeout
        if self.loop.time() >= due:
            self._fail(RedisTimeoutError(f"no reply from Redis in {self.timeout} s"))
        else:
            self.watchdog = self.loop.call_at(due, self._watch)

    def _fail(self, exc: Exception, *, abort: bool = True) -> None:
        """Close the connection; every call still waiting gets ``exc``."""
        if not self.closed:
            self.closed = True
            self.error = exc
        if self.watchdog is not None:
            self.watchdog.cancel()
            self.watchdog = None
        if abort and self.transport is not None:
            self.transport.abort()
        self.outgoing.clear()
        while self.waiters:
            future = self.waiters.popleft()
            if not future.done():
                future.set_exception(type(exc)(*exc.args))

    def close(self) -> None:
        """Close gracefully (what was written is still sent); calls waiting get an error."""
        transport = self.transport
        self._fail(RedisConnectionError("connection to Redis closed"), abort=False)
        if transport is not None:
            transport.close()


def _retrieved(task: asyncio.Task[Any]) -> None:
    """Mark a connect's failure as seen: its callers may all have been cancelled."""
    if not task.cancelled():
        task.exception()


class RedisPipeline:
    """Redis commands pipelined over one connection, opened on first use and reopened as needed."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self._protocol: _Protocol | None = None
        # The connection being opened, in a task of its own: a caller cancelled while
        # waiting for it must not cancel the connect for the others waiting too.
        self._connecting: asyncio.Task[_Protocol] | None = None
        self._scripts: dict[str, bytes] = {}  # sha1 -> script
        self._closed = False

    @classmethod
    def for_client(cls, redis: Redis) -> RedisPipeline | None:
        """A pipeline to the server ``redis`` talks to, if it is a plain TCP or Unix client."""
        endpoint = endpoint_of(redis)
        return cls(endpoint) if endpoint is not None else None

    async def call(self, *args: Arg) -> Any:
        """Run one command; its reply (bytes, int, list, ...) or ``ResponseError``."""
        protocol = await self._ready()
        return await protocol.send(pack(args))

    async def transaction(self, *commands: tuple[Arg, ...]) -> list[Any]:
        """Run ``commands`` in one ``MULTI``/``EXEC``; their replies, in order.

        The whole block is queued in one go, with no await in between, so no
        other caller's command can land inside it. A command Redis refuses
        raises ``ResponseError`` (the first one, when several fail).
        """
        protocol = await self._ready()
        block = [("MULTI",), *commands, ("EXEC",)]
        futures = [protocol.send(pack(command)) for command in block]
        replies = await asyncio.gather(*futures, return_exceptions=True)
        # A refusal while queueing (replies[1:-1]) explains the EXECABORT that follows it.
        for reply in replies:
            if isinstance(reply, BaseException):
                raise reply
        executed = cast("list[Any]", replies[-1])
        for reply in executed:
            if isinstance(reply, ResponseError):
                raise reply
        return executed

    def script(self, body: str) -> str:
        """Register a Lua script for :meth:`run_script`; returns its SHA-1."""
        sha = hashlib.sha1(body.encode()).hexdigest()
        self._scripts[sha] = body.encode()
        return sha

    async def run_script(self, sha: str, keys: list[str], args: list[Arg]) -> Any:
        """``EVALSHA``, falling back to ``EVAL`` when Redis does not have the script (yet)."""
        try:
            return await self.call("EVALSHA", sha, len(keys), *keys, *args)
        except ResponseError as exc:
            if not str(exc).startswith("NOSCRIPT"):
                raise
        # Redis ran nothing: send the script itself (which also caches it).
        return await self.call("EVAL", self._scripts[sha], len(keys), *keys, *args)

    async def _ready(self) -> _Protocol:
        """The open connection of this event loop, (re)connecting when there is none."""
        protocol = self._protocol
        if protocol is None or protocol.closed or protocol.loop is not asyncio.get_running_loop():
            protocol = await self._connect()
        return protocol

    async def _connect(self) -> _Protocol:
        if self._closed:
            raise RedisConnectionError("the event store's Redis connection is closed")
        loop = asyncio.get_running_loop()
        old = self._protocol
        if old is not None and old.loop is not loop:
            # Used from another event loop now (tests, a restarted loop): that
            # connection belongs to the old loop; drop it rather than leak it.
            self._protocol = None
            with contextlib.suppress(Exception):
                old.close()
        task = self._connecting
        if task is None or task.done() or task.get_loop() is not loop:
            task = self._connecting = loop.create_task(self._open_and_keep(loop))
            task.add_done_callback(_retrieved)
        # Every caller waits through a shield: cancelling one leaves the connect running.
        return await asyncio.shield(task)

    async def _open_and_keep(self, loop: asyncio.AbstractEventLoop) -> _Protocol:
        """Open a connection and make it the current one (even if every caller gave up)."""
        protocol = await self._open(loop)
        if self._closed:  # closed while connecting
            protocol.close()
            raise RedisConnectionError("the event store's Redis connection is closed")
        self._protocol = protocol
        return protocol

    async def _open(self, loop: asyncio.AbstractEventLoop) -> _Protocol:
        e = self.endpoint
        protocol = _Protocol(loop, e.timeout)
        try:
            async with asyncio.timeout(e.connect_timeout):
                if e.path:
                    await loop.create_unix_connection(lambda: protocol, e.path)
                else:
                    await loop.create_connection(lambda: protocol, e.host, e.port)
                # As redis-py: AUTH when a username or a password is set.
                hello: list[asyncio.Future[Any]] = []
                if e.username or e.password:
                    auth: tuple[Arg, ...] = (
                        ("AUTH", e.username, e.password or "")
                        if e.username
                        else ("AUTH", e.password or "")
                    )
                    hello.append(protocol.send(pack(auth)))
                if e.db:
                    hello.append(protocol.send(pack(("SELECT", e.db))))
                # Wait for every answer (none left unread), then report the first error.
                answers = await asyncio.gather(*hello, return_exceptions=True)
                for answer in answers:
                    if isinstance(answer, BaseException):
                        raise answer
        except BaseException as exc:
            protocol.close()
            if isinstance(exc, RedisConnectionError) or not isinstance(exc, Exception):
                raise
            raise RedisConnectionError(f"cannot connect to Redis: {exc}") from exc
        return protocol

    async def aclose(self) -> None:
        """Close the connection; later calls fail instead of reconnecting."""
        self._closed = True
        task, self._connecting = self._connecting, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        if self._protocol is not None:
            self._protocol.close()
            self._protocol = None
