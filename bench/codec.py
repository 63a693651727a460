"""Benchmark of the event codec: encoding and decoding a table's events, against protobuf alone.

Not a test: run ``python bench/codec.py`` (``--help`` for options).

Every event of the two golden tables (``tests/golden``: a Hold'em and a Draw table,
every kind of event) is encoded with its envelope (``encode_event``: the event table's
fill, then the bytes) and decoded again (``decode_event``: the bytes, then the event
table's read). The baseline, in the same rounds, is what protobuf alone costs for the
same messages: ``SerializeToString`` of the already built messages, and
``ParseFromString`` of their bytes. What is left between the two is the codec's own
work (building the message from the event, the event from the message). Each figure is
the best of ``--rounds`` interleaved rounds, the one least disturbed by other load.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from felt.messages.events import EventMeta, to_stored_event
from felt.storage.eventstore.codec import decode_event, encode_event
from poker.events.v1 import events_pb2 as pb
from tests.golden.record import decode_stream, stream_path


def _best(rounds: int, work: dict[str, Callable[[], object]]) -> dict[str, float]:
    best = dict.fromkeys(work, float("inf"))
    for _ in range(rounds):
        for name, run in work.items():
            start = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=100, help="rounds (best kept)")
    args = parser.parse_args(argv)

    events = [
        e for n in ("holdem", "draw") for e in decode_stream(stream_path(n).read_text().split())
    ]
    meta = EventMeta("t-bench", 7, hand_id="h-bench")
    messages = [to_stored_event(e, meta) for e in events]
    blobs = [encode_event(e, meta) for e in events]
    assert [decode_event(b)[0] for b in blobs] == events  # the codec round-trips them

    def parse_all() -> None:
        for b in blobs:
            pb.StoredEvent().ParseFromString(b)

    best = _best(
        args.rounds,
        {
            "encode": lambda: [encode_event(e, meta) for e in events],
            "serialize": lambda: [m.SerializeToString(deterministic=True) for m in messages],
            "decode": lambda: [decode_event(b) for b in blobs],
            "parse": parse_all,
        },
    )
    n = len(events)
    us = {k: v / n * 1e6 for k, v in best.items()}
    print(f"{n} events (golden Hold'em and Draw tables), best of {args.rounds} rounds")
    print(
        f"encode {us['encode']:.2f} us/event; protobuf's serialize alone {us['serialize']:.2f}"
        f" ({us['encode'] / us['serialize']:.1f}x)"
    )
    print(
        f"decode {us['decode']:.2f} us/event; protobuf's parse alone {us['parse']:.2f}"
        f" ({us['decode'] / us['parse']:.1f}x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
