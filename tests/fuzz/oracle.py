"""The fuzzer's oracles: what the raw event stream says a caller may see, and where the chips are.

Everything here is computed from a table's *stored* events, read straight from
Redis and decoded with the codec (``felt.storage.eventstore.codec``), never from the
service's own views or its redaction code: those are what is under test.

* :class:`Ledger` folds a table's raw stream into chips (stacks, the pot, what
  came in by seating and ``AddChips``, what went out by leaving) and cards (who
  was dealt what, what was shown, what the board is), checking on the way that
  the events themselves conserve chips.
* :func:`visible_cards` walks any response, stream item or decision request and
  lists every card it shows, with the hand it belongs to; :meth:`Ledger.allowed`
  says which cards of a hand a viewer may see.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from google.protobuf.message import Message

from felt.core.rules.events import (
    AntePosted,
    BetPlaced,
    BlindPosted,
    HandEnded,
    HandStarted,
    PlayerCalled,
    PotAwarded,
    UncalledBetReturned,
)
from felt.core.table.events import (
    ChipsAdded,
    PlayerLeft,
    PlayerSatIn,
    PlayerSatOut,
    PlayerSeated,
    TableClosed,
    TableCreated,
    TableSnapshotTaken,
)
from felt.messages.events import from_stored_event
from felt.storage.idempotency import SERVER_PREFIX
from poker.events.v1 import events_pb2 as epb
from poker.v1 import table_pb2 as tpb
from poker.v1 import table_service_pb2 as pb


def written_by_server(stored: epb.StoredEvent) -> bool:
    """Whether the service's own timers wrote ``stored`` (its ``request_key`` is ``s/...``).

    Such events may appear while a client call is in flight (the timers run
    concurrently); any other event must carry the key of the call that wrote it
    (``felt.storage.idempotency``).
    """
    return stored.request_key.startswith(SERVER_PREFIX)


@dataclass(frozen=True)
class Violation:
    """An invariant that did not hold. ``kind`` groups repeats of the same defect."""

    kind: str
    detail: str

    def __str__(self) -> str:
        return f"[{self.kind}] {self.detail}"


@dataclass(frozen=True)
class Viewer:
    """Who a message was sent to: a seat's occupant (seated at ``since``) or a spectator."""

    table_id: str
    seat: int | None = None
    since: int = 0  # sequence of the occupant's PlayerSeated (0: trust the seat, e.g. AI)

    def __str__(self) -> str:
        if self.seat is None:
            return f"spectator of {self.table_id!r}"
        return f"seat {self.seat} of {self.table_id!r} (seated at {self.since})"


@dataclass
class HandCards:
    """The cards of one hand as the raw events dealt them."""

    started_at: int
    own: dict[int, set[int]] = field(default_factory=dict)  # seat -> hole and drawn cards
    public: set[int] = field(default_factory=set)  # board and shown cards


@dataclass
class Ledger:
    """A table's chips and cards, folded from its raw stored events."""

    table_id: str
    version: int = 0
    created: bool = False
    config: epb.TableConfig | None = None
    chips_in: int = 0
    chips_out: int = 0
    stacks: dict[int, int] = field(default_factory=dict)
    sitting_out: set[int] = field(default_factory=set)
    leaving: set[int] = field(default_factory=set)
    pot: int = 0
    hand_running: bool = False
    hands_started: int = 0
    showdowns: int = 0  # pots won by a shown hand
    closed: bool = False
    hands: dict[str, HandCards] = field(default_factory=dict)
    request_ids: list[str] = field(default_factory=list)
    # (sequence, total chips at the table) after each event, to check a view at its sequence.
    totals: dict[int, int] = field(default_factory=dict)
    violations: list[Violation] = field(default_factory=list)

    def feed(self, stored: epb.StoredEvent) -> None:
        """Fold the next raw event, noting any way it breaks chip conservation."""
        if stored.sequence != self.version + 1:
            self._bad("stream-gap", f"event {stored.sequence} follows {self.version}")
        self.version = stored.sequence
        if stored.request_key:
            self.request_ids.append(stored.request_key)
        self._cards(stored)
        event, meta = from_stored_event(stored)
        seat = getattr(event, "seat", None)
        if isinstance(event, TableCreated):
            self.created = True
            self.config = stored.table_created.config
        elif isinstance(event, PlayerSeated):
            self.chips_in += event.stack
            self.stacks[event.seat] = event.stack
            self.sitting_out.discard(event.seat)
            self.leaving.discard(event.seat)
        elif isinstance(event, ChipsAdded):
            self.chips_in += event.amount
            self._move(event.seat, event.amount, "ChipsAdded")
        elif isinstance(event, PlayerLeft):
            self.chips_out += event.stack
            had = self.stacks.pop(event.seat, None)
            if had != event.stack:
                self._bad("chips", f"seat {event.seat} left with {event.stack} but had {had}")
            self.sitting_out.discard(event.seat)
            self.leaving.discard(event.seat)
        elif isinstance(event, PlayerSatOut):
            self.sitting_out.add(event.seat)
            if event.reason == "leaving":
                self.leaving.add(event.seat)
        elif isinstance(event, PlayerSatIn):
            self.sitting_out.discard(event.seat)
        elif isinstance(event, TableClosed):
            self.closed = True
        elif isinstance(event, TableSnapshotTaken):
            # A snapshot is the fold so far: its stacks are the ones the events gave.
            if self.hand_running:
                self._bad("snapshot", f"snapshot at {stored.sequence} while a hand runs")
            recorded = {p.seat: p.stack for p in event.players}
            if recorded != self.stacks:
                self._bad("snapshot", f"snapshot stacks {recorded}, the events gave {self.stacks}")
        elif isinstance(event, HandStarted):
            self.hand_running = True
            self.hands_started += 1
            self.pot = 0
            for s in event.setup.seats:
                if self.stacks.get(s.seat) != s.stack:
                    self._bad(
                        "chips",
                        f"hand {meta.hand_id} deals seat {s.seat} in with {s.stack}, "
                        f"the events gave it {self.stacks.get(s.seat)}",
                    )
        elif isinstance(event, AntePosted | BlindPosted | PlayerCalled | BetPlaced):
            assert seat is not None
            self._move(seat, -event.amount, type(event).__name__)
            self.pot += event.amount
        elif isinstance(event, UncalledBetReturned):
            self._move(event.seat, event.amount, "UncalledBetReturned")
            self.pot -= event.amount
        elif isinstance(event, PotAwarded):
            shared = sum(amount for _, amount in event.shares)
            if event.hand:
                self.showdowns += 1
            if shared != event.amount:
                self._bad("chips", f"pot {event.index} of {event.amount} paid out {shared}")
            for winner, amount in event.shares:
                if winner in self.stacks:
                    self.stacks[winner] += amount
                else:
                    self._bad("chips", f"pot share {amount} to seat {winner}, who has left")
            self.pot -= shared
        elif isinstance(event, HandEnded):
            self.hand_running = False
            if self.pot != 0:
                self._bad("chips", f"hand {meta.hand_id} ended with {self.pot} chips unpaid")
                self.pot = 0
            for number, stack in event.stacks:
                if number in self.stacks and self.stacks[number] != stack:
                    self._bad(
                        "chips",
                        f"hand {meta.hand_id} ends seat {number} with {stack}, "
                        f"the events gave it {self.stacks[number]}",
                    )
                    self.stacks[number] = stack
        if self.pot < 0:
            self._bad("chips", f"the pot went negative ({self.pot}) at {stored.sequence}")
        self.totals[stored.sequence] = self.total()

    def total(self) -> int:
        return sum(self.stacks.values()) + self.pot

    def expected_total(self) -> int:
        """Chips brought in by seating and AddChips, minus chips taken out by leaving."""
        return self.chips_in - self.chips_out

    def can_deal(self) -> bool:
        """Whether the events say a new hand must start: two seats in with chips, no hand."""
        config = self.config
        if config is None or self.closed or self.hand_running:
            return False
        if config.HasField("close_time") or config.max_hands:
            return False  # limits and closing times are checked by other means
        least = 1
        draw = config.variant == epb.VARIANT_DRAW5
        if draw and config.HasField("allow_all_in") and not config.allow_all_in:
            cap = config.raise_cap or 4
            least = config.ante + cap * (config.small_bet + config.big_bet)
        ready = [
            s
            for s, stack in self.stacks.items()
            if s not in self.sitting_out and s not in self.leaving and stack >= least
        ]
        return len(ready) >= 2

    def _move(self, seat: int, amount: int, what: str) -> None:
        if seat not in self.stacks:
            self._bad("chips", f"{what} of {amount} for seat {seat}, where nobody sits")
            return
        self.stacks[seat] += amount
        if self.stacks[seat] < 0:
            self._bad("chips", f"{what} leaves seat {seat} with {self.stacks[seat]} chips")

    def _bad(self, kind: str, detail: str) -> None:
        self.violations.append(Violation(kind, f"table {self.table_id!r}: {detail}"))

    # ------------------------------------------------------------------ cards

    def _cards(self, stored: epb.StoredEvent) -> None:
        kind = stored.WhichOneof("event")
        hand_id = stored.hand_id
        if kind == "deck_committed":
            self.hands[stored.deck_committed.hand_id] = HandCards(stored.sequence)
            return
        hand = self.hands.get(hand_id)
        if hand is None:
            return
        if kind == "hole_cards_dealt":
            e = stored.hole_cards_dealt
            hand.own.setdefault(e.seat, set()).update(c.code for c in e.cards)
        elif kind == "cards_drawn":
            d = stored.cards_drawn
            hand.own.setdefault(d.seat, set()).update(c.code for c in d.drawn)
        elif kind == "street_started":
            hand.public.update(c.code for c in stored.street_started.cards)
        elif kind == "cards_shown":
            hand.public.update(c.code for c in stored.cards_shown.cards)

    def allowed(self, viewer: Viewer, hand_id: str) -> set[int]:
        """The cards of ``hand_id`` that ``viewer`` may see (as of the events read so far)."""
        hand = self.hands.get(hand_id)
        if hand is None:
            return set()
        cards = set(hand.public)
        if viewer.seat is not None and viewer.since < hand.started_at:
            cards |= hand.own.get(viewer.seat, set())
        return cards


@dataclass(frozen=True)
class Seen:
    """One card a message shows, and the hand it belongs to ('' if the message names none)."""

    hand_id: str
    card: int
    where: str


def visible_cards(message: Message, hand_id: str = "") -> Iterator[Seen]:
    """Every card ``message`` shows, walking all its fields (protos of any of the APIs).

    The hand a card belongs to comes from the nearest enclosing ``StoredEvent``
    or ``HandView`` (a ``WatchTableResponse``'s proofs belong to its event). A
    stored deck (``HandSetup.deck``) counts as showing every card in it.
    """
    if isinstance(message, epb.StoredEvent | tpb.HandView):
        hand_id = message.hand_id
    elif isinstance(message, pb.WatchTableResponse) and message.HasField("event"):
        hand_id = message.event.hand_id
    if isinstance(message, epb.Card):
        if message.WhichOneof("kind") == "code":
            yield Seen(hand_id, message.code, "card")
        return
    if isinstance(message, tpb.CardProof):
        yield Seen(hand_id, message.card, "card proof")
        return
    if isinstance(message, epb.HandSetup):
        for code in message.deck:
            yield Seen(hand_id, code, "deck")
    for descriptor, value in message.ListFields():
        if descriptor.message_type is None:
            continue
        items = value if descriptor.is_repeated else [value]
        for item in items:
            yield from visible_cards(item, hand_id)


def secrets_in(message: Message) -> Iterator[str]:
    """Secret fields a redacted message must never carry: deck seeds and token hashes."""
    if isinstance(message, epb.DeckCommitted) and message.seed:
        yield "DeckCommitted.seed"
    if isinstance(message, epb.PlayerSeated) and message.token_hash:
        yield "PlayerSeated.token_hash"
    for descriptor, value in message.ListFields():
        if descriptor.message_type is None:
            continue
        items = value if descriptor.is_repeated else [value]
        for item in items:
            yield from secrets_in(item)


def leaks(ledger: Ledger, viewer: Viewer, message: Message, what: str) -> list[Violation]:
    """Cards (and secrets) in ``message`` that ``viewer`` may not see, as violations."""
    out: list[Violation] = []
    allowed: dict[str, set[int]] = {}
    for seen in visible_cards(message):
        if seen.hand_id not in allowed:
            allowed[seen.hand_id] = ledger.allowed(viewer, seen.hand_id)
        if seen.card not in allowed[seen.hand_id]:
            owner = _owner(ledger, seen.hand_id, seen.card)
            out.append(
                Violation(
                    f"card-leak/{what}",
                    f"{what} showed {viewer} the {seen.where} {seen.card} of hand "
                    f"{seen.hand_id!r} ({owner})",
                )
            )
            break  # one per message is enough to report
    out.extend(
        Violation(f"secret-leak/{what}", f"{what} showed {viewer} a {name}")
        for name in secrets_in(message)
    )
    return out


def _owner(ledger: Ledger, hand_id: str, card: int) -> str:
    hand = ledger.hands.get(hand_id)
    if hand is None:
        return "a hand the events do not know"
    for seat, cards in hand.own.items():
        if card in cards:
            return f"dealt to seat {seat}, never shown"
    return "never dealt: still in the deck"
