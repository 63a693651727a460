"""The table service's credentials at the edge: what counts as a guess, and tokens that
could never be compared (a non-ASCII character) refused as wrong, never as a fault."""

from __future__ import annotations

import pytest

from felt.wire.attempts import AttemptLimits, FailedAttempts
from services.table.auth import Authenticator, Secrets
from services.table.refusals import Refused

ADMIN = "table-credentials-admin-token-0123456789"
AI = "table-credentials-ai-token-0123456789abcd"
SECRETS = Secrets(b"table-credentials-secret-0123456789abcdef", ADMIN, AI)


def test_the_service_credential_with_a_seat_token_that_no_longer_checks_out_is_no_guess() -> None:
    """The lobby retries its stored seat tokens (after a secret rotation, a seat left): that
    must never throttle the lobby out of its own calls."""
    attempts = FailedAttempts(AttemptLimits(burst=3, per_minute=1))
    auth = Authenticator(SECRETS, attempts)
    for _ in range(20):
        caller = auth.authenticate(ADMIN, seat_token="v1.not-a-seat-token.sig", client="lobby")
        assert caller.admin
    assert not attempts.exhausted("lobby")
    assert auth.authenticate(ADMIN, client="lobby").admin


def test_wrong_credentials_are_still_counted() -> None:
    attempts = FailedAttempts(AttemptLimits(burst=3, per_minute=1))
    auth = Authenticator(SECRETS, attempts)
    for _ in range(3):
        assert not auth.authenticate("a-wrong-credential-0123456789abcdef", client="x").admin
    with pytest.raises(Refused) as refused:
        auth.authenticate("a-wrong-credential-0123456789abcdef", client="x")
    assert refused.value.reason == "AUTH_THROTTLED"


@pytest.mark.parametrize("token", ["v1.abc.é", "é" * 40, "v1.eyJ0Ijoi.ü", "w1.a.ß"])
def test_a_token_with_a_non_ascii_character_is_a_wrong_one_not_a_fault(token: str) -> None:
    """``hmac.compare_digest`` raises on a ``str`` outside ASCII: the comparisons are of bytes,
    so such a token is refused like any wrong one (no INTERNAL, no traceback in the logs)."""
    caller = Authenticator(SECRETS).authenticate(token)
    assert not caller.admin and not caller.ai and caller.error
    with_seat = Authenticator(SECRETS).authenticate(ADMIN, seat_token=token)
    assert with_seat.admin
