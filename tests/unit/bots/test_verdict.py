"""The done-when verdict: paired differences over common deals, and the checks they feed."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from felt.core.rules.config import Variant
from felt_dev.ladder import summarize
from felt_dev.ladder_cli import main
from felt_dev.verdict import compare, exploitation, markdown, verdict


def test_a_paired_difference_cancels_the_luck_two_matches_share() -> None:
    """Two bots whose per-deal results differ by a constant: paired, the interval is a point."""
    rng = random.Random(5)
    luck = [rng.gauss(0, 10) for _ in range(400)]
    a = [x + 0.2 for x in luck]
    d = compare(Variant.DRAW5, 2, "rock", "hard", "normal", a, luck)
    assert d.paired
    assert d.per100 == pytest.approx(10.0)  # 0.2 units per deal of 2 hands = 10 per 100 hands
    assert d.ci_low == pytest.approx(10.0) and d.ci_high == pytest.approx(10.0)
    # The same samples treated as independent would not even show the difference.
    unpaired = compare(Variant.DRAW5, 2, "rock", "hard", "normal", a, luck[:-1])
    assert not unpaired.paired and unpaired.ci_low < 0 < unpaired.ci_high


def test_exploitation_compares_hard_with_the_better_other_level() -> None:
    rng = random.Random(9)
    luck = [rng.gauss(0, 20) for _ in range(300)]
    deals = {
        (Variant.NLHE, 2, "hard", "rock"): [x + 1.0 for x in luck],
        (Variant.NLHE, 2, "normal", "rock"): [x + 0.5 for x in luck],
        (Variant.NLHE, 2, "easy", "rock"): [x - 0.5 for x in luck],
        (Variant.NLHE, 2, "normal", "easy"): [x + 0.3 for x in luck],
    }
    results = [summarize(v, a, b, xs, s) for (v, s, a, b), xs in deals.items()]
    (diff,) = exploitation(deals, results)
    assert (diff.opponent, diff.other) == ("rock", "normal")
    assert diff.per100 == pytest.approx(25.0)
    checks = verdict(results, [diff])
    assert [(c.criterion, c.status) for c in checks] == [
        ("hard beats", "n.s."),  # +1 unit a deal inside the luck's spread over 300 deals
        ("hard exploits at least as well", "yes"),
        ("levels ordered", "n.s."),
    ]
    text = markdown(results, [diff], checks)
    assert "Verdict: 1 of 3 checks hold at 95%." in text
    assert "| NLHE | heads-up | rock | +25.0 vs normal |" in text


def test_the_cli_writes_the_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pairings = "hard:rock,normal:rock,easy:rock,normal:easy"
    assert (
        main(
            [
                *("--hands", "30", "--variant", "draw", "--tables", "heads-up"),
                *("--pairings", pairings, "--seed", "4", "--no-progress", "--out", str(tmp_path)),
            ]
        )
        == 0
    )
    assert "Verdict:" in capsys.readouterr().out
    data = json.loads((tmp_path / "ladder.json").read_text())
    assert [d["opponent"] for d in data["differences"]] == ["rock"]
    assert data["differences"][0]["paired"] is True
    assert {c["criterion"] for c in data["checks"]} == {
        "hard beats",
        "hard exploits at least as well",
        "levels ordered",
    }
    assert (tmp_path / "ladder.md").read_text().startswith("| variant |")
