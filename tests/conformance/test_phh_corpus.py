"""Felt replays 2,902 real No-Limit Hold'em hands (PHH) and reaches the recorded stacks.

The corpus (``shared/conformance/phh``, see its README) is play no one here
wrote. Every hand must replay legally and end with the recorded
``finishing_stacks``, with two documented exceptions: eight Pluribus hands
split an odd chip into halves (under RULES.md the first tied winner left of
the button gets it), and one WSOP record omits a fold, so its ``p1 cc`` comes
out of turn and must be refused, naming the action.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

import pytest

from felt.tools.cli import main
from felt.tools.phh.cli import verify_files
from felt.tools.phh.replay import Status, VerifyResult, iter_phh_files, verify_file

CORPUS = Path(__file__).resolve().parents[2].parent / "shared/conformance/phh"
FAULTY = "nlhe/wsop-2019-42-3/00-01-07.phh"
FAULTY_REASON = (
    "action 13 'p1 cc': NOT_YOUR_TURN: it is not seat 0's turn; seat 7 is to act "
    "(p1 is seat 0; p8 is to act)"
)

pytestmark = pytest.mark.skipif(
    not (CORPUS / "MANIFEST.tsv").is_file(),
    reason=f"the shared PHH corpus is not at {CORPUS} (it lives beside the repository)",
)


def _rel(path: str) -> str:
    return Path(path).resolve().relative_to(CORPUS.resolve()).as_posix()


@pytest.fixture(scope="module")
def results() -> Mapping[str, VerifyResult]:
    files = list(iter_phh_files([CORPUS]))
    return {_rel(r.path): r for r in verify_files(files, jobs=2)}


@pytest.fixture(scope="module")
def half_chip_files() -> list[str]:
    """The files the manifest lists as half-chip splits (PokerKit: 'stacks: got ...')."""
    rows = (CORPUS / "MANIFEST.tsv").read_text().splitlines()[1:]
    return [row.split("\t")[0] for row in rows if row.split("\t")[5].startswith("stacks:")]


def test_corpus_totals(results: Mapping[str, VerifyResult]) -> None:
    counts = Counter(r.status for r in results.values())
    assert len(results) == 2902
    assert counts == {Status.PASSED: 2901, Status.FAILED: 1}
    failed = [path for path, r in results.items() if r.status == Status.FAILED]
    assert failed == [FAULTY]


def test_the_faulty_record_is_refused_at_the_out_of_turn_call(
    results: Mapping[str, VerifyResult],
) -> None:
    result = results[FAULTY]
    assert result.status == Status.FAILED
    assert result.reason == FAULTY_REASON
    assert result.stacks is None


def test_half_chip_splits_give_the_odd_chip_left_of_the_button(
    results: Mapping[str, VerifyResult], half_chip_files: list[str]
) -> None:
    assert len(half_chip_files) == 8
    for path in half_chip_files:
        result = results[path]
        assert result.status == Status.PASSED, (path, result.reason)
    pluribus = results["nlhe/pluribus/102/0.phh"]
    assert pluribus.stacks == (10113, 9775, 10000, 10000, 10112, 10000)


def test_decimal_stakes_replay_in_cents(results: Mapping[str, VerifyResult]) -> None:
    handhq = [r for path, r in results.items() if path.startswith("nlhe/handhq/")]
    assert len(handhq) == 9
    assert all(r.status == Status.PASSED for r in handhq)
    assert {r.scale for r in handhq} >= {100}


def test_cli_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["phh", "verify", str(CORPUS)])
    lines = capsys.readouterr().out.splitlines()
    assert status == 1
    assert lines == [f"{CORPUS / FAULTY}: {FAULTY_REASON}", "2901 passed, 1 failed"]


def test_cli_exit_status_and_skipped_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    passing = CORPUS / "nlhe/pluribus/102"
    assert main(["phh", "verify", str(passing)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].endswith(" passed, 0 failed")

    other = tmp_path / "draw.phh"
    other.write_text(
        "variant = 'F5CD'\nantes = [1, 1]\nstarting_stacks = [100, 100]\nactions = []\n"
    )
    assert main(["phh", "verify", str(other), str(passing / "0.phh")]) == 0
    assert capsys.readouterr().out.splitlines() == ["1 passed, 0 failed, 1 skipped"]

    missing = tmp_path / "missing.phh"
    assert main(["phh", "verify", str(missing)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{missing}: cannot read:")
    assert out[-1] == "0 passed, 1 failed"


def test_cli_subprocess() -> None:
    felt = Path(sys.executable).parent / "felt"
    if not felt.exists():
        pytest.skip(f"{felt} is not installed (pip install -e '.[dev]')")
    done = subprocess.run(
        [
            str(felt),
            "phh",
            "verify",
            str(CORPUS / "nlhe/wsop-2019-42-3"),
            str(CORPUS / "nlhe/famous"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == [f"{CORPUS / FAULTY}: {FAULTY_REASON}", "1 passed, 1 failed"]


def test_verify_file_matches_the_batch(results: Mapping[str, VerifyResult]) -> None:
    """One file on its own gets the same verdict as in the parallel run."""
    for path in (FAULTY, "nlhe/pluribus/102/0.phh", "nlhe/handhq/ps-25nl-handhq_1-h09.phh"):
        alone = verify_file(CORPUS / path)
        batch = results[path]
        assert (alone.status, alone.reason, alone.stacks) == (
            batch.status,
            batch.reason,
            batch.stacks,
        )


def test_a_post_is_replayed_with_felt_forced_bets(results: Mapping[str, VerifyResult]) -> None:
    """handhq h09: p3 posts a big blind to join (a negative blind); Felt has no posts."""
    result = results["nlhe/handhq/ps-25nl-handhq_1-h09.phh"]
    assert result.status == Status.PASSED
    assert result.reason == "p3's post of 25 is replayed as part of their first action"
    assert result.scale == 100
