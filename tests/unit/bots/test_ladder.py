"""Ladder smoke test: a short run produces the table, CSV, JSON and PNG."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from felt.core.rules.config import Variant
from felt_dev.ladder import PAIRINGS, Chunk, play_chunk, summarize
from felt_dev.ladder_cli import main, register


def test_ladder_smoke(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                *("--hands", "40", "--variant", "both", "--out", str(tmp_path)),
                *("--no-progress", "--tables", "heads-up", "--seed", "3"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "hard vs normal" in out and "bb/100" in out and "BB/100" in out
    data = json.loads((tmp_path / "ladder.json").read_text())
    assert len(data["results"]) == 2 * len(PAIRINGS)
    assert all(r["hands"] == 40 for r in data["results"])
    assert data["options"]["seed"] == 3
    assert (tmp_path / "ladder.csv").read_text().startswith("variant,")
    assert (tmp_path / "ladder.png").stat().st_size > 1000


def test_duplicate_deals_are_zero_sum_for_identical_bots() -> None:
    """The same deterministic bot on both sides of a duplicate pair nets exactly zero."""
    _, pairs = play_chunk(Chunk(Variant.DRAW5, "calling_station", "calling_station", 1, 0, 20))
    assert pairs == [0.0] * 20
    result = summarize(Variant.DRAW5, "a", "b", pairs)
    assert result.per100 == 0 and not result.significant


def test_felt_cli_has_ladder() -> None:
    """The installed ``felt`` command has it (composed in services.cli, deferred: the library
    does not import the dev tooling), and hands it the arguments to parse."""
    from felt.tools.cli import Deferred
    from services.cli import SUBCOMMAND_MODULES

    ladder = next(m for m in SUBCOMMAND_MODULES if isinstance(m, Deferred))
    assert ladder.name == "ladder" and ladder.module == "felt_dev.ladder_cli"
    assert ladder.module == register.__module__


def test_register_adds_the_subcommand() -> None:
    parser = argparse.ArgumentParser(prog="felt")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["ladder", "--hands", "10", "--variant", "draw", "--workers", "2"])
    assert args.hands == 10 and args.variant == "draw" and args.workers == 2
    assert callable(args.handler)


def test_full_tables_rotate_the_seats_and_report_per_hand() -> None:
    """A 5-handed Draw chunk: every deal is played once per seat, identical bots net zero."""
    _, deals = play_chunk(Chunk(Variant.DRAW5, "calling_station", "calling_station", 1, 0, 6, 5))
    assert deals == [0.0] * 6
    _, deals = play_chunk(Chunk(Variant.NLHE, "maniac", "rock", 1, 0, 4, 6))
    assert len(deals) == 4 and any(d != 0 for d in deals)
    result = summarize(Variant.NLHE, "maniac", "rock", deals, seats=6)
    assert result.hands == 24 and result.pairing == "maniac vs 5x rock"


def test_cli_plays_full_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--hands", "12", "--variant", "draw", "--tables", "full", "--seed", "9"]
    assert main([*args, "--pairings", "hard:rock", "--no-progress", "--out", str(tmp_path)]) == 0
    assert "hard vs 4x rock" in capsys.readouterr().out
    rows = json.loads((tmp_path / "ladder.json").read_text())["results"]
    assert [(r["seats"], r["hands"]) for r in rows] == [(5, 10)]
