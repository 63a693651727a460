"""``felt audit``'s report and arguments (its run against PostgreSQL is in
tests/integration/lobby/test_house_grpc.py): every failing check printed, the house's result
signed, the winners ranked, and bad arguments refused before any database is reached."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from services import cli
from services.lobby.audit_cli import report, since_of
from services.lobby.ports.ledger import Audit, Winner

NOW = datetime(2026, 12, 3, 5, 30, tzinfo=UTC)


def test_an_audit_that_holds() -> None:
    audit = Audit(1_250_000, 1_219_500, 28_000, 2_500, 1_219_500, 2_500, 0, 0)
    text = report(audit, [(Winner("p-1", 25_500), "Alice"), (Winner("p-2", 7), "Bob")], NOW)
    lines = text.splitlines()
    assert lines[:4] == [
        "chips created               1,250,000",
        "balances                    1,219,500",
        "at tables                      28,000",
        "house                           2,500",
    ]
    assert "check            created == balances + at tables + house: holds" in lines
    assert "house's result   +2,500 (the house is ahead)" in lines
    assert "top winners from the house (since 2026-12-03T05:30:00+00:00):" in lines
    assert lines[-3:] == [
        "    1.          +25,500  p-1  Alice",
        "    2.               +7  p-2  Bob",
        "audit holds",
    ]


def test_an_audit_that_fails_says_which_check() -> None:
    audit = Audit(1_000, 900, 0, -50, 950, -40, 1, 2)
    text = report(audit, [], None)
    assert "created == balances + at tables + house: FAILS (the sum is -150 off)" in text
    assert "balances != their ledger rows (950)" in text
    assert "house != its ledger rows (-40)" in text
    assert "1 lounge(s) paid out more than went in" in text
    assert "2 closed lounge(s) with chips left" in text
    assert "house's result   -50 (the players are ahead)" in text
    assert "top winners from the house (ever): none" in text
    assert text.endswith("AUDIT FAILS") and not audit.holds


def test_since() -> None:
    assert since_of("", NOW) is None
    assert since_of("today", NOW) == datetime(2026, 12, 3, tzinfo=UTC)
    assert since_of("2026-12-01", NOW) == datetime(2026, 12, 1, tzinfo=UTC)
    assert since_of("2026-12-01T10:00:00+01:00", NOW) == datetime(2026, 12, 1, 9, tzinfo=UTC)
    with pytest.raises(ValueError):
        since_of("yesterday", NOW)


@pytest.mark.parametrize(
    ("argv", "why"),
    [
        (["audit", "--database-url", "postgresql://nowhere/x", "--top", "0"], "--top must be"),
        (["audit", "--database-url", "postgresql://nowhere/x", "--top", "101"], "--top must be"),
        (["audit", "--database-url", "postgresql://nowhere/x", "--since", "soon"], "--since"),
    ],
)
def test_bad_arguments_are_refused(
    argv: list[str], why: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(argv) == 2
    assert why in capsys.readouterr().err


def test_without_a_database(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert cli.main(["audit"]) == 2
    assert "set DATABASE_URL" in capsys.readouterr().err


def test_an_unreachable_database(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["audit", "--database-url", "postgresql://postgres@127.0.0.1:1/x"]) == 1
    assert "cannot reach the database" in capsys.readouterr().err
