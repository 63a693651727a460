"""The ``Players`` port in memory."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from felt.storage.idempotency import RequestKey, RequestReused
from services.lobby.ports.players import AlreadyRegistered, NameTaken, NewPlayer, Player


class MemoryPlayers:
    def __init__(self) -> None:
        self._players: dict[str, Player] = {}
        self._names: dict[str, str] = {}  # name_key -> player_id
        self._skeletons: dict[str, str] = {}  # skeleton -> player_id
        self._requests: dict[str, tuple[bytes, str]] = {}  # request key -> (fingerprint, id)

    async def create(self, new: NewPlayer) -> Player:
        first = self._requests.get(new.request.key)
        if first is not None:
            if first[0] != new.request.fingerprint:
                raise RequestReused()
            return self._players[first[1]]
        if new.name_key in self._names or (
            new.skeleton is not None and new.skeleton in self._skeletons
        ):
            raise NameTaken(new.display_name)
        player = Player(
            new.player_id,
            new.display_name,
            new.password_hash,
            new.at,
            new.at if new.password_hash is not None else None,
        )
        self._players[player.player_id] = player
        self._names[new.name_key] = player.player_id
        if new.skeleton is not None:
            self._skeletons[new.skeleton] = player.player_id
        self._requests[new.request.key] = (new.request.fingerprint, player.player_id)
        return player

    async def get(self, player_id: str) -> Player | None:
        return self._players.get(player_id)

    async def by_name(self, name_key: str) -> Player | None:
        player_id = self._names.get(name_key)
        return None if player_id is None else self._players[player_id]

    async def by_skeleton(self, skeleton: str) -> Player | None:
        player_id = self._skeletons.get(skeleton)
        return None if player_id is None else self._players[player_id]

    async def by_request(self, request: RequestKey) -> Player | None:
        first = self._requests.get(request.key)
        if first is None:
            return None
        if first[0] != request.fingerprint:
            raise RequestReused()
        return self._players[first[1]]

    async def register(self, player_id: str, password_hash: str, at: datetime) -> Player:
        player = self._players[player_id]
        if player.registered:
            raise AlreadyRegistered(player_id)
        player = replace(player, password_hash=password_hash, registered_at=at)
        self._players[player_id] = player
        return player
