"""Benchmark of the HTTP gateway: SubmitAction through it, and one table watched by many streams.

Not a test: run ``python bench/gateway.py`` (``--help`` for options).

1. SubmitAction through the gateway (Connect protocol, JSON, the generated
   ``connectrpc`` client) against the same call straight to the table service
   over gRPC, in the same run, in alternating slices so that both see the same
   background load. N clients (default 16) each play their own heads-up table
   (acting for both seats from the previous answer's view; polls between
   hands are not counted). The table service (a subprocess) and this process
   (the clients) are pinned to CPU 0, the gateway (a subprocess) to CPU 1
   (``taskset -a``, on a 2-core machine), the same for both. Printed: requests
   per second, latency, and the CPU time per request of the table service,
   the gateway and the clients. Target: through the gateway >= 0.5x direct.
2. One table watched by W Connect streams (default 1,000, JSON) through the
   gateway (spectators: one upstream gRPC stream for them all), the gateway
   alone on CPU 1, the table service and the watchers' clients on CPU 0
   (``--clients-on-gateway-cpu``: the clients on the gateway's CPU, as this
   benchmark ran before issue #23): events are appended at a steady rate (2/s:
   a lively table) by a seat adding chips; every watcher must receive every
   event, in order; the delivery latency (from before the AddChips call that
   appends an event to its receipt by a watcher) is measured for every event
   and watcher. Printed: p50/p99, the CPU per event of the table service, the
   gateway and the clients (this process: the watchers and the AddChips calls),
   the gateway's memory per watcher (its resident set with the streams open,
   less before) and its CPU time per watcher per event (its CPU while the
   events are appended and delivered, over events x watchers).
   Targets: all delivered, p99 < 200 ms.

   The watchers' client (``--watch-client``): ``lean`` (the default) speaks
   the Connect protocol's server streaming over HTTP/1.1 itself, one TCP
   connection per stream, each item handled in an asyncio protocol's callback
   as its bytes arrive (``LeanStream``); ``connect`` is the generated
   ``connectrpc`` client, ``--http-clients`` of them sharing the streams, as
   the benchmark ran before. Why the lean one: real watchers are browsers on
   their own machines, while the benchmark's 1,000 clients share a core with
   the table service, and the generated client's CPU per event there (85-97 ms
   per event on a quiet machine) was most of what the last watcher waited:
   the harness, not the gateway. Both remain, to compare.

Redis: ``$REDIS_URL`` if set, else a private embedded server; database
``$FELT_BENCH_REDIS_DB`` (default 13) is EMPTIED before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

from _support import Child, bench_redis_url, cpu_seconds, spawn
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from redis.asyncio import Redis
from table_service import POLL_FIRST_S, POLL_MAX_S, SERVICE, Stats, TableClients, next_action

from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_service_connect as connect
from poker.v1 import table_service_pb2 as pb
from services.gateway.codecs import BinaryCodec, CompactJsonCodec

PORT_LINE = r"listening on (?:port |http://127\.0\.0\.1:)(\d+)"
# The table service and the clients share CPU 0 and the gateway has CPU 1, in both cases: the
# baseline's clients are as pinned as the gateway's (the clients' own CPU is printed too).
TABLE_CPU, GATEWAY_CPU, CLIENT_CPU = "0", "1", "0"


def pin(pid: int, cpu: str) -> None:
    """``taskset -a -p -c CPU PID``: every thread of the process (gRPC's too) on that CPU."""
    if (os.cpu_count() or 1) > 1:
        subprocess.run(
            ["taskset", "-a", "-p", "-c", cpu, str(pid)], check=True, capture_output=True
        )


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


# ------------------------------------------------------------------ SubmitAction


Caller = Callable[[int, Stats, float], Awaitable[None]]


class ConnectTables:
    """The same tables as ``tables`` (made over gRPC), played through the gateway in JSON."""

    def __init__(self, url: str, tables: TableClients, binary: bool = False) -> None:
        self.tables = tables
        self.clients = [
            connect.TableServiceClient(
                url,
                codec=BinaryCodec() if binary else CompactJsonCodec(),
                send_compression=None,
            )
            for _ in tables.tables
        ]
        self.request_number = 0

    async def run(self, index: int, stats: Stats, until: float) -> None:
        """As the direct clients (``table_service.TableClients.run``) play: polls between hands
        backing off from 2 to 32 ms, a refusal by the seat's rate limit counted and waited out."""
        client = self.clients[index]
        table = self.tables.tables[index]
        headers = {seat: dict(meta) for seat, meta in table.tokens.items()}
        wait = POLL_FIRST_S
        while time.perf_counter() < until:
            view = table.view
            if view is None or not view.hand.HasField("to_act"):
                stats.polls += 1
                got = await client.get_table_view(pb.GetTableViewRequest(table_id=table.table_id))
                table.view = view = got.view
                if not view.hand.HasField("to_act"):
                    await asyncio.sleep(wait)
                    wait = min(2 * wait, POLL_MAX_S)
                continue
            wait = POLL_FIRST_S
            self.request_number += 1
            request = next_action(table.table_id, view, f"{table.table_id}:gw{self.request_number}")
            start = time.perf_counter()
            try:
                response = await client.submit_action(request, headers=headers[request.seat])
            except ConnectError as err:
                if err.code is Code.RESOURCE_EXHAUSTED:
                    stats.limited += 1  # the seat's rate limit: wait for a token, act again
                    await asyncio.sleep(self.tables.refill_s)
                    continue
                if err.code is not Code.ABORTED:
                    raise
                table.view = None
                continue
            stats.latencies.append(time.perf_counter() - start)
            stats.requests += 1
            table.view = response.view
            if not response.view.hand.HasField("to_act"):
                await asyncio.sleep(POLL_FIRST_S)

    async def close(self) -> None:
        for client in self.clients:
            await client.close()


class Cpu:
    """CPU seconds of the processes measured, over a slice."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = pids
        self.used = dict.fromkeys(pids, 0.0)

    def now(self) -> dict[str, float]:
        own = resource.getrusage(resource.RUSAGE_SELF)
        return {
            name: (own.ru_utime + own.ru_stime) if pid == os.getpid() else cpu_seconds(pid)
            for name, pid in self.pids.items()
        }

    def add(self, before: dict[str, float]) -> None:
        after = self.now()
        for name in self.pids:
            self.used[name] += after[name] - before[name]

    def per_request(self, requests: int) -> str:
        return "  ".join(
            f"{name} {seconds / max(requests, 1) * 1e6:4.0f}" for name, seconds in self.used.items()
        )


async def slice_of(clients: int, seconds: float, run: Caller, stats: Stats, cpu: Cpu) -> None:
    before = cpu.now()
    start = time.perf_counter()
    await asyncio.gather(*(run(i, stats, start + seconds) for i in range(clients)))
    stats.seconds += time.perf_counter() - start
    cpu.add(before)


async def submit_action(
    service: Child,
    gateway: Child,
    clients: int,
    seconds: float,
    slices: int,
    binary: bool,
    seat_rate: float,
) -> float:
    direct = TableClients(service.port, clients, seat_rate)
    await direct.create(f"gw{int(time.time())}")
    via = ConnectTables(f"http://127.0.0.1:{gateway.port}", direct, binary)
    pids = {"table service": service.pid, "gateway": gateway.pid, "clients": os.getpid()}
    cpu_direct, cpu_via = Cpu(pids), Cpu(pids)
    await slice_of(clients, 0.5, direct.run, Stats(), Cpu(pids))  # warm-up
    await slice_of(clients, 0.5, via.run, Stats(), Cpu(pids))
    grpc_stats, connect_stats = Stats(), Stats()
    for _ in range(slices):
        await slice_of(clients, seconds / slices, direct.run, grpc_stats, cpu_direct)
        await slice_of(clients, seconds / slices, via.run, connect_stats, cpu_via)
    await via.close()
    await direct.close()
    print(f"{clients} clients, each its own heads-up table; CPU us per request:")
    print(
        "  "
        + _line("gRPC direct", grpc_stats)
        + "   "
        + cpu_direct.per_request(grpc_stats.requests)
    )
    print(
        "  "
        + _line("via gateway", connect_stats)
        + "   "
        + cpu_via.per_request(connect_stats.requests)
    )
    print(
        f"  refused by the seat rate limit (waited out): direct {grpc_stats.limited:,}, "
        f"via gateway {connect_stats.limited:,}; polls between hands: direct "
        f"{grpc_stats.polls:,}, via gateway {connect_stats.polls:,}"
    )
    ratio = connect_stats.rate / grpc_stats.rate
    kind = "binary" if binary else "JSON"
    print(f"  ratio gateway (Connect {kind}) / direct gRPC: {ratio:.2f}x (target >= 0.5x)")
    return ratio


def _line(label: str, stats: Stats) -> str:
    return (
        f"{label:<12} {stats.rate:7,.0f} req/s  p50 {stats.percentile(50):6.2f} ms"
        f"  p99 {stats.percentile(99):6.2f} ms"
    )


# ------------------------------------------------------------------ watchers


class Seen:
    """What a watcher needs of a stream item: whether it is the snapshot, an event's sequence."""

    __slots__ = ("sequence", "snapshot")

    def __init__(self, snapshot: bool, sequence: int) -> None:
        self.snapshot = snapshot
        self.sequence = sequence


class SeenCodec(CompactJsonCodec[Any]):
    """The watchers' client reads the JSON with ``json.loads``: a browser's JSON.parse, not
    ``json_format`` (which costs a millisecond a message, and would measure the client)."""

    def decode(self, data: bytes | bytearray, message_class: type[Any]) -> Any:
        item = json.loads(data)
        event = item.get("event")
        return Seen(event is None, int(event["sequence"]) if event else 0)


class Watcher:
    """One watcher's record: the sequences it received, in order, their delays, its error."""

    def __init__(self) -> None:
        self.sequences: list[int] = []
        self.delays: list[float] = []
        self.error: BaseException | None = None


class Audience:
    """What all watchers share: when each event was appended (``perf_counter``, from before
    its AddChips call), the last sequence they wait for, and the count of snapshots, which
    says when every stream is open."""

    def __init__(self, total: int, until: int) -> None:
        self.appended: dict[int, float] = {}
        self.opened = asyncio.Event()
        self.until = until
        self.total = total
        self.snapshots = 0

    def snapshot(self) -> None:
        self.snapshots += 1
        if self.snapshots == self.total:
            self.opened.set()

    def event(self, watcher: Watcher, sequence: int) -> bool:
        """Record ``sequence``'s receipt by ``watcher`` now; whether it was the last one."""
        now = time.perf_counter()
        watcher.sequences.append(sequence)
        at = self.appended.get(sequence)
        if at is not None:
            watcher.delays.append(now - at)
        return sequence >= self.until


async def watch(
    client: connect.TableServiceClient, table_id: str, watcher: Watcher, audience: Audience
) -> None:
    """One stream through the generated ``connectrpc`` client (``--watch-client connect``)."""
    try:
        async for item in client.watch_table(pb.WatchTableRequest(table_id=table_id)):
            seen = cast(Seen, item)
            if seen.snapshot:
                audience.snapshot()
            elif audience.event(watcher, seen.sequence):
                return
    except BaseException as exc:  # recorded, reported by the caller
        watcher.error = exc


WATCH_PATH = "/poker.v1.TableService/WatchTable"
STREAM_JSON = "application/connect+json"
END_STREAM = 0x02  # a Connect envelope's flag: the end-of-stream message (JSON)
MAX_HEAD_BYTES = 64 * 1024
MAX_ENVELOPE_BYTES = 16 * 1024 * 1024
# How the gateway writes an event item (json_format: fields in their numbers' order, and
# StoredEvent.sequence is field 1, a uint64, so a string): an item that starts so is an event
# and this is its sequence, read without parsing the rest. Any other item is parsed whole.
EVENT_PREFIX = b'{"event":{"sequence":"'


# Every lean stream reads into this one buffer (``LeanStream.get_buffer``): a transport calls
# get_buffer, recv_into and buffer_updated in one callback, and the bytes are taken out before it
# returns, so the streams of one event loop can share it. asyncio's plain Protocol reads with
# ``sock.recv(256 KiB)``, a fresh 256 KiB buffer per read, which glibc serves from a mapping of
# its own (strace: an mmap, an mremap and a munmap per read): 16 us of CPU per 150-byte read
# against 3 us for ``recv_into`` here (measured on a socketpair), a thousand reads per event.
RECEIVE_BUFFER = memoryview(bytearray(64 * 1024))


class StreamError(Exception):
    """The gateway's answer broke the protocol the lean client speaks (or was not a 200)."""


def envelope(payload: bytes, flags: int = 0) -> bytes:
    """A Connect envelope: 1 flag byte, the payload's length (4 bytes, big-endian), it."""
    return bytes([flags]) + len(payload).to_bytes(4, "big") + payload


def watch_request(host: str, port: int, table_id: str) -> bytes:
    """The whole HTTP/1.1 request of a spectator's ``WatchTable`` (Connect streaming, JSON):
    the same bytes for every watcher, made once."""
    body = envelope(json.dumps({"tableId": table_id}, separators=(",", ":")).encode())
    head = (
        f"POST {WATCH_PATH} HTTP/1.1\r\n"
        f"host: {host}:{port}\r\n"
        f"content-type: {STREAM_JSON}\r\n"
        "connect-protocol-version: 1\r\n"
        f"content-length: {len(body)}\r\n"
        "\r\n"
    )
    return head.encode("ascii") + body


class LeanStream(asyncio.BufferedProtocol):
    """One ``WatchTable`` stream on a TCP connection of its own (``--watch-client lean``).

    Why: the generated client wakes a coroutine and goes through its HTTP library's
    channels for every item; at 1,000 watchers that cost 85-97 ms of CPU per event on the
    core the watchers share with the table service, most of what the last watcher waited
    (docs/benchmarks.md, issue #23). Real watchers are browsers, each on a machine of its
    own, so that cost measured the harness, not Felt. Here each item is handled in
    ``buffer_updated`` as its bytes arrive (read into ``RECEIVE_BUFFER``), in the transport's
    callback: the HTTP head (the status must be 200, the answer ``application/connect+json``
    and chunked, as uvicorn writes a streamed answer), then the chunks and the Connect
    envelopes, all incremental; no task or coroutine per item, and no copy beyond a slice
    when a read holds exactly one chunk holding one envelope (what the gateway writes per
    item). An event's sequence is read from its prefix (``EVENT_PREFIX``, 0.3 us against
    5 us for ``json.loads`` of a 130-byte event, measured); anything else (the snapshot, the
    end-of-stream message) is parsed with ``json.loads``. An error in the end-of-stream
    message, a status other than 200 or a broken frame is the watcher's error, as the
    generated client raises it.
    """

    def __init__(self, request: bytes, watcher: Watcher, audience: Audience) -> None:
        self.request = request
        self.watcher = watcher
        self.audience = audience
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.transport: asyncio.Transport | None = None
        self._headed = False  # the response's head has been read
        self._rest = b""  # bytes of a head or of a chunk-size line cut by a read
        self._chunk_left = 0  # bytes of the current chunk's data still to come
        self._after_chunk = False  # a chunk's data is over: its CRLF comes next
        self._envelope = bytearray()  # an envelope split across chunks or reads
        self._ended = False  # the stream is over (its end message, the last event, a failure)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        self.transport.write(self.request)

    def get_buffer(self, sizehint: int) -> memoryview:
        return RECEIVE_BUFFER

    def buffer_updated(self, nbytes: int) -> None:
        if self._ended:
            return
        data = bytes(RECEIVE_BUFFER[:nbytes])  # the shared buffer is the next stream's next
        try:
            if self._rest:
                data = self._rest + data
                self._rest = b""
            if not self._headed:
                data = self._head(data)
            if data:
                self._dechunk(data)
        except Exception as exc:  # a broken answer: the watcher's error
            self._fail(exc)

    def eof_received(self) -> bool | None:
        return None  # close the transport: connection_lost says whether it was too soon

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._ended:
            self._fail(exc or StreamError("the gateway closed the stream before it ended"))
        if not self.done.done():
            self.done.set_result(None)

    def _fail(self, exc: BaseException) -> None:
        if self.watcher.error is None:
            self.watcher.error = exc
        self._stop()

    def _stop(self) -> None:
        self._ended = True
        if self.transport is not None:
            self.transport.close()

    def _head(self, data: bytes) -> bytes:
        """Read the response's head from ``data``; what follows it (``b""`` if incomplete)."""
        end = data.find(b"\r\n\r\n")
        if end < 0:
            if len(data) > MAX_HEAD_BYTES:
                raise StreamError(f"response head over {MAX_HEAD_BYTES} bytes")
            self._rest = data
            return b""
        status, *lines = data[:end].decode("latin-1").split("\r\n")
        headers = {}
        for line in lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if status.split(" ", 2)[1:2] != ["200"]:
            body = data[end + 4 : end + 4 + 300]
            raise StreamError(f"{status!r}: {body!r}")
        if headers.get("content-type") != STREAM_JSON:
            raise StreamError(f"content-type {headers.get('content-type')!r}, not {STREAM_JSON}")
        if headers.get("transfer-encoding", "").lower() != "chunked":
            raise StreamError("the answer is not chunked (uvicorn chunks a streamed answer)")
        self._headed = True
        return data[end + 4 :]

    def _dechunk(self, data: bytes) -> None:
        """Take the chunks' data out of ``data`` (HTTP/1.1 chunked transfer coding)."""
        pos, end = 0, len(data)
        while pos < end and not self._ended:
            left = self._chunk_left
            if left:
                stop = min(end, pos + left)
                self._piece(data if pos == 0 and stop == end else data[pos:stop])
                self._chunk_left = left - (stop - pos)
                self._after_chunk = not self._chunk_left
                pos = stop
                continue
            eol = data.find(b"\r\n", pos)
            if eol < 0:
                if end - pos > 1024:
                    raise StreamError("a chunk-size line over 1 KiB")
                self._rest = data[pos:]
                return
            if self._after_chunk:
                if eol != pos:
                    raise StreamError("a chunk's data is not followed by CRLF")
                self._after_chunk = False
                pos += 2
                continue
            size = int(data[pos:eol].partition(b";")[0], 16)  # chunk extensions ignored
            if size < 0:
                raise StreamError(f"chunk size {size}")
            pos = eol + 2
            if size == 0:  # the last chunk: the answer is over
                if not self._ended:
                    raise StreamError("the answer ended without an end-of-stream message")
                return
            self._chunk_left = size

    def _piece(self, piece: bytes) -> None:
        """Some of the stream's bytes: the envelopes they complete are handled."""
        buffer = self._envelope
        if not buffer and len(piece) >= 5 and len(piece) == 5 + int.from_bytes(piece[1:5], "big"):
            self._message(piece[0], piece)  # the usual case: one chunk, one envelope
            return
        buffer += piece
        while len(buffer) >= 5 and not self._ended:
            size = 5 + int.from_bytes(buffer[1:5], "big")
            if size > MAX_ENVELOPE_BYTES:
                raise StreamError(f"an envelope of {size} bytes")
            if len(buffer) < size:
                return
            self._message(buffer[0], bytes(buffer[:size]))
            del buffer[:size]

    def _message(self, flags: int, whole: bytes) -> None:
        """One envelope (``whole``: its 5-byte prefix, then the JSON)."""
        if flags == 0:
            if whole.startswith(EVENT_PREFIX, 5):
                start = 5 + len(EVENT_PREFIX)
                sequence = int(whole[start : whole.index(b'"', start)])
            else:
                event = json.loads(whole[5:]).get("event")
                if event is None:
                    self.audience.snapshot()
                    return
                sequence = int(event["sequence"])
            if self.audience.event(self.watcher, sequence):
                self._stop()  # the last event: the watcher is done, as the other client is
            return
        if flags != END_STREAM:
            raise StreamError(f"envelope flags {flags:#04x} (compression was not offered)")
        error = json.loads(whole[5:]).get("error")
        self._ended = True
        if error:
            try:
                code = Code(error.get("code"))
            except ValueError:
                code = Code.UNKNOWN
            self._fail(ConnectError(code, str(error.get("message", ""))))
        else:
            self._stop()


async def lean_watch(
    host: str, port: int, request: bytes, watcher: Watcher, audience: Audience
) -> None:
    """One stream through :class:`LeanStream`, until it ends (its error in ``watcher``)."""
    transport: asyncio.BaseTransport | None = None
    try:
        transport, stream = await asyncio.get_running_loop().create_connection(
            lambda: LeanStream(request, watcher, audience), host, port
        )
        await stream.done
    except BaseException as exc:  # recorded, reported by the caller (as watch's)
        watcher.error = exc
    finally:
        if transport is not None:
            transport.close()


async def watchers(
    service: Child,
    gateway: Child,
    count: int,
    events: int,
    rate: float,
    watch_client: str,
    clients: int,
) -> tuple[bool, float]:
    """Part 2: ``count`` streams watch one table through ``watch_client`` (``lean`` or
    ``connect``: ``clients`` HTTP clients share the streams) while ``events`` are appended;
    whether every watcher got every event in order, and the delivery p99 (ms)."""
    tables = TableClients(service.port, 1)
    table_id = f"watched-{int(time.time())}"
    stub = tables.stubs[0]
    config = epb.TableConfig(variant=epb.VARIANT_NLHE, seat_count=2, small_blind=5, big_blind=10)
    await stub.CreateTable(
        pb.CreateTableRequest(table_id=table_id, config=config, request_id=table_id),
        metadata=SERVICE,
    )
    seated = await stub.SeatPlayer(
        pb.SeatPlayerRequest(
            table_id=table_id, seat=0, player_id="p0", stack=1_000, request_id=f"{table_id}-s"
        ),
        metadata=SERVICE,
    )
    assert seated.seat_token
    token = SERVICE  # AddChips is the lobby's call (its service credential)
    host, port = "127.0.0.1", gateway.port
    pool: list[connect.TableServiceClient] = []
    before_kib = rss_kib(gateway.pid)
    start_sequence = (await stub.GetTable(pb.GetTableRequest(table_id=table_id))).table.sequence
    last = start_sequence + events
    audience = Audience(count, last)
    crowd = [Watcher() for _ in range(count)]
    if watch_client == "lean":
        request = watch_request(host, port, table_id)
        tasks = [asyncio.create_task(lean_watch(host, port, request, w, audience)) for w in crowd]
    else:
        # Several HTTP clients (connection pools) share the streams, as many browsers would.
        url = f"http://{host}:{port}"
        pool = [connect.TableServiceClient(url, codec=SeenCodec()) for _ in range(clients)]
        tasks = [
            asyncio.create_task(watch(pool[i % clients], table_id, w, audience))
            for i, w in enumerate(crowd)
        ]
    await asyncio.wait_for(audience.opened.wait(), 120)
    with_kib = rss_kib(gateway.pid)
    print(
        f"{count:,} Connect streams open on one table (after {audience.snapshots:,} snapshots); "
        f"gateway RSS {before_kib / 1024:.0f} -> {with_kib / 1024:.0f} MiB: "
        f"{(with_kib - before_kib) / count:.1f} KiB per watcher"
    )
    # Append events at `rate` per second, one a call: the seated player adds a chip (no hand
    # runs with one player, so nothing else is appended, and the next event's sequence is
    # known before the call: its time is set before it, so that a watcher that receives the
    # event before this coroutine has the call's answer has its delay measured too).
    sequence = start_sequence
    cpu = Cpu({"table service": service.pid, "gateway": gateway.pid, "clients": os.getpid()})
    cpu_before = cpu.now()
    while sequence < last:
        sent = time.perf_counter()
        audience.appended[sequence + 1] = sent  # from before the call: the append's own time
        added = await stub.AddChips(
            pb.AddChipsRequest(
                table_id=table_id, seat=0, amount=1, request_id=f"{table_id}-add-{sequence}"
            ),
            metadata=token,
        )
        if added.sequence != sequence + 1:
            raise RuntimeError(f"AddChips appended {added.sequence}, not {sequence + 1}")
        sequence = added.sequence
        await asyncio.sleep(max(0.0, 1 / rate - (time.perf_counter() - sent)))
    _, pending = await asyncio.wait(tasks, timeout=60)
    cpu.add(cpu_before)
    for task in pending:
        task.cancel()
    for http_client in pool:
        await http_client.close()
    await tables.close()
    expected = list(range(start_sequence + 1, last + 1))
    complete = sum(1 for w in crowd if w.sequences[: len(expected)] == expected)
    errors = [w.error for w in crowd if w.error is not None]
    delays = sorted(d for w in crowd for d in w.delays)
    p50 = delays[len(delays) // 2] * 1e3 if delays else 0.0
    p99 = delays[min(len(delays) - 1, int(0.99 * len(delays)))] * 1e3 if delays else 0.0
    print(
        f"  {last - start_sequence} events at {rate:.0f}/s: {complete:,}/{count:,} watchers got "
        f"every event in order ({len(errors)} errors, {len(pending)} unfinished); delivery "
        f"p50 {p50:.1f} ms, p99 {p99:.1f} ms (target < 200 ms; {len(delays):,} timed)"
    )
    if errors:
        print(f"  first error: {errors[0]!r}")
    per_event = "  ".join(
        f"{name} {seconds / events * 1e3:.1f}" for name, seconds in cpu.used.items()
    )
    print(f"  CPU ms per event (its {count:,} deliveries): {per_event}")
    print(
        f"  gateway CPU per watcher per event: "
        f"{cpu.used['gateway'] / (events * count) * 1e6:.1f} us"
    )
    return complete == count, p99


# ------------------------------------------------------------------ main


async def main(args: argparse.Namespace) -> None:
    url = bench_redis_url("FELT_BENCH_REDIS_DB", "13")
    redis = Redis.from_url(url)
    await redis.flushdb()
    print(
        f"Redis {url}; {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}; "
        f"table service and clients on CPU {TABLE_CPU}, gateway on CPU {GATEWAY_CPU}"
    )
    env = {
        "REDIS_URL": url,
        "FELT_TABLE_ADDR": "127.0.0.1:0",
        "FELT_BETWEEN_HANDS_MS": "0",
        "FELT_DEV_MODE": "1",  # the development secret, admin calls open: a throw-away bench
        "FELT_LOG_FORMAT": "json",  # logs as in production (development mode: console)
        # the clients act as fast as they can, far past a person's rate limit
        "FELT_SEAT_RATE_PER_S": f"{args.seat_rate:g}",
        "FELT_SEAT_RATE_BURST": str(args.seat_burst),
        "FELT_WATCH_MAX_STREAMS": str(args.watchers + 200),
        "FELT_WATCH_MAX_PER_PEER": str(args.watchers + 200),
        "FELT_WATCH_SEAT_RESERVE": "100",
    }
    service = await spawn("table service", ["-m", "services.table.server"], env, PORT_LINE)
    gateway = await spawn(
        "gateway",
        ["-m", "services.cli", "gateway"],
        {
            "REDIS_URL": url,
            "FELT_GATEWAY_ADDR": "127.0.0.1:0",
            "FELT_TABLE_TARGET": f"127.0.0.1:{service.port}",
            "FELT_GATEWAY_WATCH_PER_ADDRESS": str(args.watchers + 10),
        },
        PORT_LINE,
    )
    print(
        f"the table service's per-seat rate limit is on: {args.seat_rate:g} changes/s, "
        f"burst {args.seat_burst:,} (--seat-rate, --seat-burst)"
    )
    pin(service.pid, TABLE_CPU)
    pin(gateway.pid, GATEWAY_CPU)
    pin(os.getpid(), CLIENT_CPU)
    try:
        ratio = 1.0
        if args.clients:
            print(
                f"\nSubmitAction: through the gateway (Connect, "
                f"{'binary' if args.binary else 'JSON'}) vs straight to the table service (gRPC)"
            )
            ratio = await submit_action(
                service,
                gateway,
                args.clients,
                args.seconds,
                args.slices,
                args.binary,
                args.seat_rate,
            )
        # The gateway has a core of its own (issue #23); the watchers' clients, which decode
        # every message, share the table service's (it sends the gateway one stream).
        if args.clients_on_gateway_cpu:
            pin(os.getpid(), GATEWAY_CPU)
        print(
            f"\nWatchTable: one table, {args.watchers:,} streams through the gateway "
            f"(the watchers' client: {args.watch_client})"
        )
        delivered, p99 = await watchers(
            service,
            gateway,
            args.watchers,
            args.events,
            args.rate,
            args.watch_client,
            args.http_clients,
        )
    finally:
        await gateway.stop()
        await service.stop()
        await redis.flushdb()
        await redis.aclose()
    met = ratio >= 0.5 and delivered and p99 < 200
    print(f"\ntargets {'met' if met else 'NOT met'}")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="per SubmitAction measurement")
    parser.add_argument("--slices", type=int, default=5, help="alternating slices")
    parser.add_argument(
        "--clients", type=int, default=16, help="SubmitAction clients (0: skip that part)"
    )
    parser.add_argument(
        "--seat-rate", type=float, default=10_000, help="the per-seat rate limit, changes/s"
    )
    parser.add_argument(
        "--seat-burst", type=int, default=100_000, help="the per-seat rate limit's burst"
    )
    parser.add_argument("--watchers", type=int, default=1000, help="WatchTable streams")
    parser.add_argument("--events", type=int, default=100, help="events the watchers must get")
    parser.add_argument(
        "--rate", type=float, default=2.0, help="events appended per second (a lively table)"
    )
    parser.add_argument(
        "--watch-client",
        choices=("lean", "connect"),
        default="lean",
        help="the watchers' client: lean (asyncio Protocol, a connection per stream: the "
        "least CPU per event, as browsers on their own machines cost the table's core "
        "nothing) or connect (the generated connectrpc client, as before)",
    )
    parser.add_argument(
        "--http-clients",
        type=int,
        default=20,
        help="HTTP clients the streams share (--watch-client connect)",
    )
    parser.add_argument(
        "--binary",
        action="store_true",
        help="SubmitAction through the gateway in binary protobuf (the web client's), not JSON",
    )
    parser.add_argument(
        "--clients-on-gateway-cpu",
        action="store_true",
        help="the watchers' clients on the gateway's CPU (before issue #23), not the service's",
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse(sys.argv[1:])))
