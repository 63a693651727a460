"""The per-address sign-up limit on the real stores (PostgreSQL and the fakes): what one
client can get around it by."""

from __future__ import annotations

from datetime import UTC, datetime

from argon2 import PasswordHasher

from felt.storage.idempotency import ClientRequest
from services.lobby.application import LobbyApp, LobbySecrets, LobbySettings, client_address
from services.lobby.refusals import Refused
from services.lobby.tokens import Passwords

from .conftest import Stores

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def lobby_on(stores: Stores, settings: LobbySettings) -> LobbyApp:
    return LobbyApp(
        stores.players,
        stores.sessions,
        stores.throttle,
        stores.ledger,
        Passwords(PasswordHasher(time_cost=1, memory_cost=64, parallelism=1)),
        LobbySecrets(b"a" * 32, b"r" * 32),
        settings,
        lambda: T0,
    )


async def test_one_ipv6_site_cannot_multiply_its_sign_ups_by_its_64s(stores: Stores) -> None:
    """A /48 is one end site's assignment (RFC 6177; a free tunnel broker hands out one):
    65,536 /64s. Counted by the /64, one such client made 65,536 times the limit of
    accounts an hour; its sign-ups count together, as one IPv4 address's do."""
    lobby = lobby_on(stores, LobbySettings(sign_up_max_per_client=3))
    made = 0
    for n in range(8):  # eight /64s of 2001:db8:7::/48
        peer = f"ipv6:[2001:db8:7:{n:x}::1]:5000"
        try:
            await lobby.create_guest(
                f"Site {n}", ClientRequest(f"guest-request-{n:04}", "g", b""), client_address(peer)
            )
        except Refused as exc:
            assert exc.reason == "TOO_MANY_SIGN_UPS"
        else:
            made += 1
    assert made == 3
    other_site = client_address("ipv6:[2001:db8:8::1]:5000")  # another /48: its own count
    assert await lobby.create_guest(
        "Elsewhere", ClientRequest("guest-request-0100", "g", b""), other_site
    )
