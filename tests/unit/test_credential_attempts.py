"""Failed credential attempts per client (``felt.wire.attempts``) and what a production
service credential must be (``felt.wire.credentials``): pure, with a fake clock."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from felt.wire.attempts import AttemptLimits, FailedAttempts
from felt.wire.credentials import credential_problems, is_player_token
from felt.wire.tokens import DEV_SERVICE_TOKEN, SeatClaim, issue_token
from services.lobby.tokens import AccessClaim, issue_access


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_client_is_throttled_after_its_burst_and_refills_per_minute() -> None:
    clock = Clock()
    attempts = FailedAttempts(AttemptLimits(burst=3, per_minute=6), clock)
    assert not attempts.exhausted("1.2.3.4")
    for _ in range(3):
        attempts.failed("1.2.3.4")
    assert attempts.exhausted("1.2.3.4")
    assert not attempts.exhausted("1.2.3.5")  # another client is another count
    clock.now += 10  # 6 a minute: one attempt back after 10 s
    assert not attempts.exhausted("1.2.3.4")
    attempts.failed("1.2.3.4")
    assert attempts.exhausted("1.2.3.4")
    clock.now += 3600
    assert not attempts.exhausted("1.2.3.4")  # never more than the burst back
    for _ in range(3):
        attempts.failed("1.2.3.4")
    assert attempts.exhausted("1.2.3.4")


def test_the_buckets_are_bounded() -> None:
    attempts = FailedAttempts(AttemptLimits(burst=1, per_minute=1, max_clients=10), Clock())
    for n in range(100):
        attempts.failed(f"10.0.0.{n}")
    assert len(attempts) == 10


def test_the_limits_from_the_environment() -> None:
    assert AttemptLimits.from_env({}) == AttemptLimits()
    limits = AttemptLimits.from_env(
        {"FELT_AUTH_FAILURE_BURST": "5", "FELT_AUTH_FAILURE_PER_MIN": "60"}
    )
    assert (limits.burst, limits.per_minute) == (5, 60)
    for name, bad in (("FELT_AUTH_FAILURE_BURST", "0"), ("FELT_AUTH_FAILURE_PER_MIN", "x")):
        with pytest.raises(ValueError, match=name) as refused:
            AttemptLimits.from_env({name: bad})
        assert repr(bad) not in str(refused.value)


def test_players_tokens_are_told_from_service_credentials() -> None:
    seat = issue_token(b"s" * 32, SeatClaim("t", 0, "p", 0))
    access = issue_access(b"a" * 32, AccessClaim("p", "s", datetime.now(UTC)))
    assert is_player_token(seat) and is_player_token(access)
    for credential in (DEV_SERVICE_TOKEN, "x", "r1." + "A" * 43, "v1.x.y", seat + "=", ""):
        assert not is_player_token(credential), credential


def test_what_a_production_credential_must_be() -> None:
    strong, other = "k" * 32, "j" * 48
    assert credential_problems({"FELT_ADMIN_TOKEN": strong, "FELT_AI_TOKEN": other}) == []
    weak = credential_problems({"FELT_ADMIN_TOKEN": "x", "FELT_AI_TOKEN": ""})
    assert weak[0].startswith("FELT_ADMIN_TOKEN must be at least 32 bytes (it has 1)")
    assert weak[1] == "FELT_AI_TOKEN is unset"
    same = credential_problems({"FELT_ADMIN_TOKEN": strong, "FELT_AI_TOKEN": strong})
    assert same == ["FELT_ADMIN_TOKEN and FELT_AI_TOKEN must differ"]
    shaped = issue_token(b"s" * 32, SeatClaim("t", 0, "p", 0))
    (problem,) = credential_problems({"FELT_AI_TOKEN": shaped})
    assert "shape of a player's token" in problem and shaped not in problem
