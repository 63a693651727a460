"""``felt replay`` on a real bot run (issue 12, "done when"): the hands ``felt serve`` plays,
``felt projector`` archives and ``felt lobby`` serves, shown as each seat saw them.

The bots play both demo tables; once enough hands are archived, every seat of sampled
archived hands (and of the hand in play at each table) is replayed with ``felt replay
--operator --seat N --json``, the command's own path, and checked against the operator's
full view: the seat holds all of its own cards and none of another seat's that were not
shown. ``felt verify-hand --public-id`` checks each sampled hand's cards as a spectator.
"""

from __future__ import annotations

import asyncio
import json
import time

import asyncpg
import grpc
import pytest

from felt.core.cards import card_str
from felt.tools.client.replay import events_of
from poker.events.v1 import events_pb2 as epb
from poker.v1 import history_service_pb2 as hpb
from poker.v1 import history_service_pb2_grpc as hrpc
from poker.v1 import table_service_pb2 as pb
from poker.v1 import table_service_pb2_grpc as rpc
from tests.e2e.test_projector_kill import _start_projector, archive_db  # noqa: F401 - fixture
from tests.e2e.test_serve import READY, Launcher, _free_port, launcher  # noqa: F401
from tests.felt_command import run_felt
from tests.unit.test_history import CARD, _secret_cards

pytestmark = pytest.mark.timeout(300)
OPERATOR = "operator-token-of-the-replay-e2e-test-0123456789"
HANDS = 30  # archived hands to wait for, of both variants
SAMPLE = 10  # archived hands of each variant replayed as each of their seats


async def _wait_for_hands(dsn: str) -> list[tuple[str, str, str]]:
    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=2)
    try:
        deadline = time.monotonic() + 120
        while True:
            rows = await pool.fetch(
                "SELECT hand_id, table_id, variant FROM archived_hands ORDER BY ended_at"
            )
            variants = {r["variant"] for r in rows}
            if len(rows) >= HANDS and variants == {"NLHE", "DRAW5"}:
                return [(r["hand_id"], r["table_id"], r["variant"]) for r in rows]
            assert time.monotonic() < deadline, f"only {len(rows)} hands archived"
            await asyncio.sleep(1)
    finally:
        await pool.close()


async def _live_hand(table_id: str, table_port: int) -> str:
    """The public id of the hand in play (waiting out the pause between hands)."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{table_port}") as channel:
        stub = rpc.TableServiceStub(channel)
        for _ in range(100):
            view = await stub.GetTableView(pb.GetTableViewRequest(table_id=table_id), timeout=10)
            if view.view.hand.public_id and view.view.hand.street != epb.STREET_COMPLETE:
                return view.view.hand.public_id
            await asyncio.sleep(0.05)
    raise AssertionError(f"no hand in play at {table_id}")


def _check_each_seat(hand: str, table: str, lobby_port: int) -> int:
    """Replay ``hand`` as each of its seats; returns how many seats were checked."""
    target = f"127.0.0.1:{lobby_port}"
    status, out, err = run_felt("replay", hand, "--target", target, "--table", table, "--operator",
                             "--json", FELT_ADMIN_TOKEN=OPERATOR)  # fmt: skip
    assert status == 0, err
    full = json.loads(out)
    assert full["viewer"]["role"] == "operator"
    outputs = {}
    for seat in full["seats"]:
        number = str(seat["seat"])
        status, out, err = run_felt("replay", hand, "--target", target, "--table", table,
                                    "--operator", "--seat", number, "--json",
                                    FELT_ADMIN_TOKEN=OPERATOR)  # fmt: skip
        assert status == 0, err
        mine = json.loads(out)
        assert mine["viewer"] == {"role": "seat", "seat": seat["seat"]}
        own = next(s for s in mine["seats"] if s["seat"] == seat["seat"])
        assert own["dealt"] == seat["dealt"] and None not in own["dealt"]
        outputs[seat["seat"]] = out
    # The oracle: the operator's events, which hold every card, read after the replays (a hand
    # in play goes on meanwhile: what was public when a seat's replay was read still is).
    with grpc.insecure_channel(target) as channel:
        response = hrpc.HistoryServiceStub(channel).GetHandHistory(
            hpb.HistoryServiceGetHandHistoryRequest(hand_id=hand, table_id=table),
            metadata=(("authorization", f"Bearer {OPERATOR}"),),
            timeout=10,
        )
    raw = events_of(response)
    for seat_number, out in outputs.items():
        secret = {card_str(c) for c in _secret_cards(raw, seat_number)}
        assert not secret & set(CARD.findall(out)), f"seat {seat_number} of {hand}"
    return len(full["seats"])


async def test_felt_replay_shows_archived_and_live_hands_as_each_seat_saw_them(
    launcher: Launcher,  # noqa: F811
    archive_db: str,  # noqa: F811
) -> None:
    # Ports picked now: fixed ones in the ephemeral range were taken, now and then.
    table_port, lobby_port = _free_port(), _free_port()
    # Nobody watches the demo tables here: without FELT_TABLE_IDLE_GRACE_S=0 they would rest
    # a minute after the start (services.table.rest), and a loaded machine can take that long
    # to archive and check the hands before the live ones are looked for.
    serve = await launcher.start(
        "serve",
        "--dev",
        "--workers",
        "2",
        FELT_TABLE_ADDR=f"127.0.0.1:{table_port}",
        FELT_TABLE_IDLE_GRACE_S="0",
    )
    assert serve.first_line.startswith(READY), (serve.first_line, serve.log.read_text())
    await _start_projector(launcher, archive_db, "p-replay")
    lobby = await launcher.start(
        "lobby",
        "--dev",
        DATABASE_URL=archive_db,
        FELT_LOBBY_ADDR=f"127.0.0.1:{lobby_port}",
        FELT_TABLE_ADDR=f"127.0.0.1:{table_port}",
        FELT_ADMIN_TOKEN=OPERATOR,
    )
    assert "listening" in lobby.first_line, (lobby.first_line, lobby.log.read_text())
    hands = await _wait_for_hands(archive_db)
    checked = 0
    for variant in ("NLHE", "DRAW5"):
        sample = [h for h in hands if h[2] == variant][-SAMPLE:]
        for hand, table, _ in sample:
            checked += await asyncio.to_thread(_check_each_seat, hand, table, lobby_port)
            status, out, err = await asyncio.to_thread(
                run_felt, "verify-hand", "--public-id", hand, "--history-target",
                f"127.0.0.1:{lobby_port}",
            )  # fmt: skip
            assert status == 0 and "NOT" not in out, (out, err)
    for table in ("demo-holdem", "demo-draw"):
        live = await _live_hand(table, table_port)
        checked += await asyncio.to_thread(_check_each_seat, live, table, lobby_port)
    assert checked >= 2 * SAMPLE * 2
