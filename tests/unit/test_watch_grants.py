"""Watch grants (``felt.wire.tokens``): a spectator's signed key to one private table, never
mistaken for a seat token nor the other way round."""

from __future__ import annotations

import pytest

from felt.wire.tokens import (
    WATCH_GRANT_EXPIRED,
    SeatClaim,
    TokenError,
    WatchClaim,
    is_watch_grant,
    issue_token,
    issue_watch_grant,
    verify_token,
    verify_watch_grant,
)

SECRET = b"watch-grant-tests-secret-0123456789"
NOW = 1_800_000_000


def test_a_grant_names_its_table_until_it_expires() -> None:
    grant = issue_watch_grant(SECRET, WatchClaim("l-friends", NOW + 60))
    assert is_watch_grant(grant)
    assert verify_watch_grant(SECRET, grant, NOW) == WatchClaim("l-friends", NOW + 60)
    assert grant != issue_watch_grant(SECRET, WatchClaim("l-friends", NOW + 60))  # a nonce
    with pytest.raises(TokenError) as expired:
        verify_watch_grant(SECRET, grant, NOW + 61)
    assert expired.value.reason == WATCH_GRANT_EXPIRED


def test_forged_altered_and_oversized_grants_are_refused() -> None:
    grant = issue_watch_grant(SECRET, WatchClaim("l-friends", NOW + 60))
    version, payload, signature = grant.split(".")
    other = issue_watch_grant(SECRET, WatchClaim("l-other", NOW + 60)).split(".")[1]
    for bad in (
        issue_watch_grant(b"another-secret-0123456789012345", WatchClaim("l-friends", NOW + 60)),
        f"{version}.{other}.{signature}",  # another table's payload under this signature
        f"{version}.{payload}",
        "w1." + "a" * 600,
        "",
    ):
        with pytest.raises(TokenError):
            verify_watch_grant(SECRET, bad, NOW)


def test_seat_tokens_and_grants_are_not_interchangeable() -> None:
    seat_token = issue_token(SECRET, SeatClaim("l-friends", 1, "p1", NOW + 60))
    assert not is_watch_grant(seat_token)
    with pytest.raises(TokenError):
        verify_watch_grant(SECRET, seat_token, NOW)
    grant = issue_watch_grant(SECRET, WatchClaim("l-friends", NOW + 60))
    with pytest.raises(TokenError):
        verify_token(SECRET, grant, NOW)
    # The same payload signed as the other kind does not verify either.
    _, payload, _ = grant.split(".")
    _, _, seat_signature = issue_token(SECRET, SeatClaim("x", 0, "p", 0)).split(".")
    with pytest.raises(TokenError):
        verify_watch_grant(SECRET, f"w1.{payload}.{seat_signature}", NOW)
