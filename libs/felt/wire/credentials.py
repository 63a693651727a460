"""Players' tokens and service credentials: told apart by their shape, and how strong a
service credential must be.

Two kinds of bearer token exist:

* **players' tokens**, which the public gateway forwards: the lobby's access tokens
  (``a1.<payload>.<signature>``, ``services.lobby.tokens``) and the table's seat tokens
  (``v1.<payload>.<signature>``, ``felt.wire.tokens``): a base64url payload and an
  HMAC-SHA256 signature (43 base64url characters);
* **service credentials**, static strings the operator chooses: ``FELT_ADMIN_TOKEN``
  (the lobby's key to the table service's internal calls, and the operator's to the
  history service) and ``FELT_AI_TOKEN`` (the AI workers' key to AI seats).

The gateway holds no credential, yet must never forward one (issue #20: the AI
workers' token, sent through the gateway, read any AI seat's hole cards): it
forwards a bearer token only if it has a player's token's shape (:func:`is_player_token`),
and production refuses to start with a service credential of that shape, under
:data:`MIN_CREDENTIAL_BYTES` bytes, or one credential for both
(:func:`credential_problems`).
"""

from __future__ import annotations

import re

from felt.wire.limits import CREDENTIAL_MAX

MIN_CREDENTIAL_BYTES = 32
"""The least a production service credential may be (``openssl rand -base64 48`` is 64)."""

_PLAYER_TOKEN = re.compile(r"(?:a1|v1|w1)\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}")


def is_player_token(token: str) -> bool:
    """Whether ``token`` has the shape of a lobby access token, a seat token or a watch grant
    (a private lounge's spectators'; genuine or not: only the services, which hold the
    secrets, can tell)."""
    return len(token) <= CREDENTIAL_MAX and _PLAYER_TOKEN.fullmatch(token) is not None


def credential_problems(credentials: dict[str, str]) -> list[str]:
    """What is wrong, for production, with these service credentials (setting name ->
    value; an empty value is unset): each at least :data:`MIN_CREDENTIAL_BYTES` bytes, not
    shaped like a player's token (the gateway would forward it), no two the same. The
    values themselves are never named."""
    problems = []
    for name, value in credentials.items():
        size = len(value.encode())
        if not value:
            problems.append(f"{name} is unset")
        elif size < MIN_CREDENTIAL_BYTES:
            problems.append(
                f"{name} must be at least {MIN_CREDENTIAL_BYTES} bytes (it has {size}); "
                "e.g. `openssl rand -base64 48`"
            )
        elif is_player_token(value):
            problems.append(
                f"{name} has the shape of a player's token (a1./v1./w1.<payload>.<signature>), "
                "which the gateway forwards: choose a random one"
            )
    names = list(credentials)
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            if credentials[first] and credentials[first] == credentials[second]:
                problems.append(f"{first} and {second} must differ")
    return problems
