"""Page tokens of the lobby's lists (the ledger, lounges, a player's hands): one way to make them.

A token is the page's keyset position as short text, base64url without
padding, so a client treats it as opaque; reading one back refuses anything
the call could not have issued (too long, not base64, not the call's form)
with INVALID_ARGUMENT ``BAD_PAGE_TOKEN``, before any query.
"""

from __future__ import annotations

import base64
import binascii
import re

from felt.wire import limits
from poker.v1.reason_pb2 import Reason

__all__ = ["bad_page_token", "page_match", "page_token"]


def bad_page_token() -> limits.LimitError:
    """The refusal of a token this call did not issue."""
    return limits.LimitError(
        Reason.BAD_PAGE_TOKEN, "page_token must be a next_page_token this call returned, or empty"
    )


def page_token(text: str) -> str:
    """The token for a page position written as ``text`` (ASCII)."""
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def page_match(token: str, form: re.Pattern[str]) -> re.Match[str] | None:
    """The position in ``token`` matched by ``form`` (None for "", the first page)."""
    if not token:
        return None
    bad = bad_page_token()
    if len(token) > limits.PAGE_TOKEN_MAX:
        raise bad
    try:
        text = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode("ascii")
    except (binascii.Error, ValueError):
        raise bad from None
    match = form.fullmatch(text)
    if match is None:
        raise bad
    return match
