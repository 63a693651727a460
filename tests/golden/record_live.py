"""Golden streams recorded from a real run: ``felt serve --dev`` with its AI demo tables.

The synthetic golden streams (``tests.golden.record``) are played by the pure
core. These two are what the real services wrote: the table service (its
snapshots, deck commitments, envelopes with hand ids, request keys and
times) driven by its timers and by real AI workers of all three levels
deciding over gRPC, one Hold'em and one Five-Card Draw demo table. The
stream of each, cut after its first ``--hands`` (12) hands, is stored as Redis
held it (each line the hex of one ``poker.events.v1.StoredEvent``, envelope
included), beside what its fold shows every viewer after each hand and at
the end (``tests.golden.record.views``); ``tests/unit/test_golden_replay.py``
replays both kinds.

To record them again (say why in the commit, as for the synthetic ones), on
an empty Redis database that nothing else uses:

    python -m tests.golden.record_live --redis-url redis://127.0.0.1:6379/6

It starts ``felt serve --dev`` on that database and a free port, waits until
both demo tables have played ``--hands`` hands (every action an AI worker's),
stops it, and writes ``tests/golden/{holdem,draw}-live.*``. The database is
left holding the demo tables' streams; flush it yourself if it is yours.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import redis

from felt.core.rules.events import HandEnded
from felt.storage.eventstore import events_key
from felt.storage.eventstore.codec import decode_event
from tests.golden.record import HERE, views

LIVE = {"holdem-live": "demo-holdem", "draw-live": "demo-draw"}
"""Golden stream name -> the demo table it was recorded from."""


def live_stream_path(name: str) -> Path:
    return HERE / f"{name}.events.jsonl"


def live_views_path(name: str) -> Path:
    return HERE / f"{name}.views.json"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _hands_ended(client: redis.Redis, table_id: str) -> list[bytes]:
    """The table's stored events up to and including its latest ``HandEnded``."""
    entries: list[tuple[bytes, dict[bytes, bytes]]] = client.xrange(events_key(table_id))  # type: ignore[assignment]
    payloads = [fields[b"e"] for _, fields in entries]
    last = 0
    for i, payload in enumerate(payloads, start=1):
        if isinstance(decode_event(payload)[0], HandEnded):
            last = i
    return payloads[:last]


def _cut(payloads: list[bytes], hands: int) -> list[bytes]:
    """The stream up to and including its ``hands``-th ``HandEnded``."""
    ended = 0
    for i, payload in enumerate(payloads, start=1):
        if isinstance(decode_event(payload)[0], HandEnded):
            ended += 1
            if ended == hands:
                return payloads[:i]
    raise ValueError(f"the stream has only {ended} hands")


def record(redis_url: str, hands: int, timeout_s: float) -> dict[str, list[bytes]]:
    """Run ``felt serve --dev`` until both demo tables played ``hands`` hands; their streams."""
    client = redis.Redis.from_url(redis_url)
    if client.dbsize():
        raise SystemExit(f"{redis_url} is not empty: record on a database nothing else uses")
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "FELT_TABLE_ADDR": f"127.0.0.1:{_free_port()}",
        "FELT_BETWEEN_HANDS_MS": "200",
        "FELT_DEV_MODE": "1",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "services.cli", "serve", "--dev"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            streams = {t: _hands_ended(client, t) for t in LIVE.values()}
            counts = {
                t: sum(isinstance(decode_event(p)[0], HandEnded) for p in s)
                for t, s in streams.items()
            }
            if all(c >= hands for c in counts.values()):
                return {name: _cut(streams[table], hands) for name, table in LIVE.items()}
            if server.poll() is not None:
                raise SystemExit(f"felt serve stopped (exit {server.returncode})")
            if time.monotonic() > deadline:
                raise SystemExit(f"timed out with {counts} hands played")
            time.sleep(1.0)
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--redis-url", required=True, help="an empty database nothing else uses")
    parser.add_argument("--hands", type=int, default=12, help="hands per table")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for them")
    args = parser.parse_args(argv)
    for name, payloads in record(args.redis_url, args.hands, args.timeout).items():
        events = [decode_event(p)[0] for p in payloads]
        live_stream_path(name).write_text("".join(p.hex() + "\n" for p in payloads))
        live_views_path(name).write_text(json.dumps(views(events), indent=1) + "\n")
        print(f"{name}: {len(payloads)} events, {args.hands} hands")
    return 0


if __name__ == "__main__":
    sys.exit(main())
