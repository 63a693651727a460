"""The ``Players`` port: who plays, by id and by name, and a guest's one upgrade."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from felt.storage.idempotency import RequestKey


@dataclass(frozen=True, slots=True)
class Player:
    player_id: str
    display_name: str
    password_hash: str | None  # None: a guest
    created_at: datetime
    registered_at: datetime | None

    @property
    def registered(self) -> bool:
        return self.password_hash is not None


@dataclass(frozen=True, slots=True)
class NewPlayer:
    player_id: str
    display_name: str  # already clean (felt.wire.limits.clean_display_name)
    name_key: str  # the name case-folded: unique
    password_hash: str | None
    request: RequestKey
    at: datetime
    # The name's confusable skeleton (``services.lobby.names.skeleton``): unique too, so that
    # no two players' names look alike. None: none recorded, the name unique by name_key only.
    skeleton: str | None = None


class NameTaken(Exception):
    """Another player has this display name (compared case-insensitively), or one that looks
    like it (the same skeleton)."""


class AlreadyRegistered(Exception):
    """The player has a password already: a guest upgrades once."""


class Players(Protocol):
    async def create(self, new: NewPlayer) -> Player:
        """Add ``new``; its retry (same request key and fingerprint) finds the same player.
        Raises :class:`NameTaken` or ``RequestReused``."""
        ...

    async def get(self, player_id: str) -> Player | None: ...

    async def by_name(self, name_key: str) -> Player | None: ...

    async def by_skeleton(self, skeleton: str) -> Player | None:
        """The player whose name has this confusable skeleton, if one has."""
        ...

    async def by_request(self, request: RequestKey) -> Player | None:
        """The player ``request`` created, if it did (``RequestReused`` if that key was used
        with another fingerprint)."""
        ...

    async def register(self, player_id: str, password_hash: str, at: datetime) -> Player:
        """Give a guest a password (:class:`AlreadyRegistered` if it has one; KeyError if the
        player does not exist)."""
        ...
