"""One decision, as a pure function: a serialized ``DecisionRequest`` in, an API ``Action`` out.

This is the CPU part of the worker, kept free of Redis and gRPC so it can run
in a thread, be tested on its own and be reproduced exactly: the bot's random
source is seeded from the request id, so the same request always gets the
same answer (a redelivered or claimed request is answered identically, which
is what makes a duplicate answer harmless rather than merely refused).

The bot sees only what the request carries, i.e. the seat's redacted view, its
legal actions, the redacted history and the table's public opponent model;
the worker never reads the table's event stream.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from google.protobuf.message import DecodeError

from felt.core.rules.commands import Act, ActionKind, Discard
from felt.core.rules.events import Event
from felt.core.rules.legal import LegalActions
from felt.core.rules.views import HandView
from felt.core.table.events import is_hand_event
from felt.core.table.stats import SeatStats
from felt.messages.events import from_stored_event
from felt.messages.values import ai_level_from_proto
from felt.players.bots import Bot, get_bot
from felt.wire.convert import action_to_proto, hand_view_from_proto, legal_from_proto
from felt.wire.seat_stats import stats_from_proto
from poker.v1 import ai_pb2
from poker.v1 import table_pb2 as tpb


class PoisonRequest(Exception):
    """A request no retry can fix (undecodable, or not convertible to a decision).

    The worker moves it to the dead-letter stream with ``reason`` instead of
    letting it be redelivered forever.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Decision:
    """What to submit for one request, plus how it was reached (for logs and metrics)."""

    action: tpb.Action
    level: str
    command: Act | Discard
    fallback: bool = False
    error: str = ""


def parse_request(payload: bytes | None) -> ai_pb2.DecisionRequest:
    """Decode a stream entry's ``payload``; raises :class:`PoisonRequest` when it is not one."""
    if not payload:
        raise PoisonRequest("undecodable: the entry has no payload field")
    request = ai_pb2.DecisionRequest()
    try:
        request.ParseFromString(payload)
    except DecodeError as exc:
        raise PoisonRequest(f"undecodable: {exc}") from None
    if not request.request_id or not request.table_id:
        raise PoisonRequest("undecodable: request_id and table_id are required")
    if not request.view.HasField("hand") or not request.legal_actions:
        raise PoisonRequest("incomplete: the request has no hand view or no legal actions")
    return request


def deadline_of(request: ai_pb2.DecisionRequest) -> datetime | None:
    """The request's deadline (None when the table has no action clock)."""
    if not request.HasField("deadline"):
        return None
    return request.deadline.ToDatetime(tzinfo=UTC)


def seed_for(request_id: str) -> int:
    """A stable RNG seed for a request (the same on every worker, process and run)."""
    return int.from_bytes(hashlib.sha256(request_id.encode()).digest()[:8], "big")


def domain_inputs(
    request: ai_pb2.DecisionRequest,
) -> tuple[HandView, list[Event], LegalActions, dict[int, SeatStats]]:
    """The bot's inputs rebuilt with the same converters the table service used to build them.

    The last one is the table's opponent model (public, see ``felt.players.bots.opponents``).
    """
    try:
        view = hand_view_from_proto(request.view.hand, request.seat, request.view.table)
        legal = legal_from_proto(request.seat, view.street, request.legal_actions)
        history: list[Event] = []
        for stored in request.history:
            event, _ = from_stored_event(stored)
            # Table events (a DeckCommitted root, seatings) are no input a bot takes.
            if is_hand_event(event):
                history.append(event)
    except (ValueError, KeyError) as exc:  # CodecError is a ValueError
        raise PoisonRequest(f"unconvertible: {type(exc).__name__}: {exc}") from None
    return view, history, legal, stats_from_proto(request.seat_stats)


def safe_action(legal: LegalActions) -> Act | Discard:
    """The cheapest legal move (discard nothing, check, else fold) when a bot fails.

    A bot error is a bug that retrying would repeat (the RNG is seeded), so
    the worker answers with this rather than leave the seat to its clock.
    """
    if legal.max_discard is not None:
        return Discard(legal.seat, ())
    if legal.can_check:
        return Act(legal.seat, ActionKind.CHECK)
    if legal.can_fold:
        return Act(legal.seat, ActionKind.FOLD)
    return Act(legal.seat, ActionKind.CALL)


BotFactory = Callable[[str], Bot]


class Decider:
    """Turns requests into actions with one bot instance per level (bots keep no state)."""

    def __init__(self, factory: BotFactory = get_bot) -> None:
        self._factory = factory
        self._bots: dict[str, Bot] = {}

    def bot(self, level: str) -> Bot:
        bot = self._bots.get(level)
        if bot is None:
            try:
                bot = self._factory(level)
            except ValueError as exc:
                raise PoisonRequest(f"unknown ai_level: {exc}") from None
            self._bots[level] = bot
        return bot

    def decide(self, request: ai_pb2.DecisionRequest) -> Decision:
        """Decide for the request's seat; raises :class:`PoisonRequest` for a bad request."""
        try:
            level = ai_level_from_proto(request.ai_level)
        except ValueError as exc:
            raise PoisonRequest(f"unknown ai_level: {exc}") from None
        if not level:
            raise PoisonRequest("unknown ai_level: AI_LEVEL_UNSPECIFIED")
        bot = self.bot(level)
        view, history, legal, table = domain_inputs(request)
        rng = random.Random(seed_for(request.request_id))
        try:
            command = bot.decide(view, history, legal, rng, table)
        except Exception as exc:  # a bot bug must not stall the table
            command = safe_action(legal)
            return Decision(
                action_to_proto(command),
                level,
                command,
                fallback=True,
                error=f"{type(exc).__name__}: {exc}",
            )
        return Decision(action_to_proto(command), level, command)
