"""Ladder smoke test: a short run produces the table, CSV, JSON and PNG."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from felt.bots.ladder import Chunk, play_chunk, summarize
from felt.bots.ladder_cli import main, register
from felt.rules.config import Variant


def test_ladder_smoke(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["--hands", "40", "--variant", "both", "--out", str(tmp_path), "--no-progress"]) == 0
    )
    out = capsys.readouterr().out
    assert "hard vs normal" in out and "bb/100" in out and "BB/100" in out
    data = json.loads((tmp_path / "ladder.json").read_text())
    assert len(data["results"]) == 18
    assert all(r["hands"] == 40 for r in data["results"])
    assert (tmp_path / "ladder.csv").read_text().startswith("variant,")
    assert (tmp_path / "ladder.png").stat().st_size > 1000


def test_duplicate_deals_are_zero_sum_for_identical_bots() -> None:
    """The same deterministic bot on both sides of a duplicate pair nets exactly zero."""
    _, pairs = play_chunk(Chunk(Variant.DRAW5, "calling_station", "calling_station", 1, 0, 20))
    assert pairs == [0.0] * 20
    result = summarize(Variant.DRAW5, "a", "b", pairs)
    assert result.per100 == 0 and not result.significant


def test_felt_cli_has_ladder() -> None:
    from felt.cli import build_parser

    args = build_parser().parse_args(["ladder", "--hands", "4", "--variant", "nlhe"])
    assert args.command == "ladder" and args.hands == 4


def test_register_adds_the_subcommand() -> None:
    parser = argparse.ArgumentParser(prog="felt")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["ladder", "--hands", "10", "--variant", "draw", "--workers", "2"])
    assert args.hands == 10 and args.variant == "draw" and args.workers == 2
    assert callable(args.handler)
