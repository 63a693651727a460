"""Every bound on what a client may send, declared once and checked at the edge.

A value from the network is hostile until one of these checks has passed: an
unbounded string makes every later read of the table as large (and a token
that embeds it too large for a header); an unbounded amount or duration
overflows int64 or ``datetime`` far from where it came in, and then breaks
the table for good. So the table service checks every string, count, amount
and duration of a request here, before anything is decided, and refuses a
value out of range with ``INVALID_ARGUMENT`` and a message that names the
field and its range, never the value itself (it may be a megabyte).

The README's "Limits" table lists the same bounds; keep them in step.

Chips: every amount is at most :data:`CHIP_CAP`, and so are the chips at one
table altogether (stacks, bets and pots; :func:`table_chips`). That keeps
every sum the service ever forms (a pot, a stack after a win, a stack plus
added chips) far below 2**63, the largest value an ``int64`` field holds.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime

from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp

from felt.core.table.aggregate import TableState
from poker.events.v1 import events_pb2 as epb
from poker.v1.reason_pb2 import Reason

# ------------------------------------------------------------------ the bounds

TABLE_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")
"""Table ids: 1-63 of ``a-z 0-9 -``, not starting with ``-`` (also used in Redis keys)."""
PLAYER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@-]{0,63}")
"""Player ids: 1-64 of ``A-Z a-z 0-9 _ . : @ -``, starting with a letter or digit."""
REQUEST_ID = re.compile(r"[\x21-\x7e]{1,128}")
"""Request ids: 1-128 printable ASCII characters, no spaces (a UUID fits)."""
HAND_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,62}:[0-9]{1,10}")
"""Hand ids as the service makes them: ``<table_id>:<hand number>``."""
DISPLAY_NAME_MAX = 32
"""Display names: at most this many characters (after NFC normalisation)."""
TABLE_NAME_MAX = 64
"""Table names: at most this many characters (after NFC normalisation)."""

CHIP_CAP = 10**12
"""The most chips any amount, and all the chips at one table together, may come to."""
RAISE_CAP_MAX = 20
"""Draw: the most full bets and raises a round may allow (0 picks the default, 4)."""
MAX_HANDS_MAX = 1_000_000
"""The most hands a table can be limited to (0: no limit)."""
MAX_TIMEOUTS_MAX = 100
"""The most consecutive time-outs before a seat is sat out (0: never)."""
DISCARDS_MAX = 5
"""Draw: the most cards a discard may name (the rules then allow 0 to 3)."""

ACTION_CLOCK_MIN_MS = 100
"""The shortest action clock (unset or zero: no clock). Any other duration below it, down
to a nanosecond, is refused: it used to be truncated to 0 ms and stored as no clock at all."""
ACTION_CLOCK_MAX_MS = 24 * 3600 * 1000
"""The longest action clock: one day."""
CLOSE_TIME_AHEAD_MAX_S = 10 * 366 * 24 * 3600
"""How far ahead a table's closing time may be: about ten years."""

LOGGED_ID_MAX = 80
"""How much of an id not yet checked a log line may carry."""

MAX_REQUEST_BYTES = 64 * 1024
"""The largest request message the gRPC server accepts (RESOURCE_EXHAUSTED beyond)."""


class LimitError(ValueError):
    """A value out of its documented range; ``reason`` is the API's ``ErrorInfo.reason``
    (given as a declared ``poker.v1.Reason``, kept as its name: the wire's form)."""

    def __init__(self, reason: Reason.ValueType, message: str) -> None:
        super().__init__(message)
        self.reason = Reason.Name(reason)
        self.message = message


# ------------------------------------------------------------------ strings


def _length(value: str) -> str:
    """How long a refused value is, for a message that does not repeat the value."""
    return f"{len(value)} characters long" if value else "empty"


def check_table_id(table_id: str) -> str:
    if not TABLE_ID.fullmatch(table_id):
        raise LimitError(
            Reason.BAD_TABLE_ID,
            "table_id must be 1-63 characters of a-z, 0-9 and '-', starting with a letter "
            f"or digit (this one is {_length(table_id)})",
        )
    return table_id


def check_player_id(player_id: str) -> str:
    if not PLAYER_ID.fullmatch(player_id):
        raise LimitError(
            Reason.BAD_PLAYER_ID,
            "player_id must be 1-64 characters of A-Z, a-z, 0-9 and '_.:@-', starting with "
            f"a letter or digit (this one is {_length(player_id)})",
        )
    return player_id


def check_request_id(request_id: str) -> str:
    if not REQUEST_ID.fullmatch(request_id):
        raise LimitError(
            Reason.BAD_REQUEST_ID,
            "request_id is required: a client-generated unique id (a UUID) of 1-128 printable "
            f"ASCII characters without spaces (this one is {_length(request_id)})",
        )
    return request_id


def check_hand_id(hand_id: str) -> str:
    """A hand id in a request: empty (the latest hand) or ``<table_id>:<number>``."""
    if hand_id and not HAND_ID.fullmatch(hand_id):
        raise LimitError(
            Reason.BAD_HAND_ID,
            "hand_id is '<table_id>:<hand number>', as events show it, or empty for the "
            f"latest hand (this one is {_length(hand_id)}, not of that form)",
        )
    return hand_id


PUBLIC_HAND_ID = re.compile(r"[0-9a-f]{32}")
"""A hand's public id: 32 lowercase hex digits (128 random bits), as ``HandView.public_id``."""
SEAT_MAX = 8
"""Seats are numbered 0 to 8 (nine seats at most, in every variant)."""


def check_public_hand_id(hand_id: str) -> str:
    """A hand's public id in a request (required): 32 lowercase hex digits."""
    if not PUBLIC_HAND_ID.fullmatch(hand_id):
        raise LimitError(
            Reason.BAD_HAND_ID,
            "hand_id is the hand's public id, 32 lowercase hex digits "
            f"(this one is {_length(hand_id)}, not of that form)",
        )
    return hand_id


def check_seat(seat: int) -> int:
    if not 0 <= seat <= SEAT_MAX:
        raise LimitError(Reason.BAD_SEAT, f"seat must be 0 to {SEAT_MAX}")
    return seat


# Format characters that are part of writing (joiners in emoji and in Indic and Arabic
# scripts); every other control, format, surrogate, private-use or unassigned code point,
# line and paragraph separator is refused (bidi overrides would let a name spoof others).
_JOINERS = frozenset("\u200c\u200d")
_REFUSED_CATEGORIES = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))


def clean_name(value: str, field: str, longest: int) -> str:
    """A display or table name: NFC normalised, trimmed, printable, at most ``longest`` long.

    Returns the normalised name (what is stored and shown); an empty name stays empty.
    """
    if len(value) > 4 * longest:  # surely too long: do not normalise megabytes first
        raise LimitError(Reason.BAD_NAME, f"{field} is at most {longest} characters long")
    name = unicodedata.normalize("NFC", value).strip()
    if len(name) > longest:
        raise LimitError(Reason.BAD_NAME, f"{field} is at most {longest} characters long")
    for char in name:
        if char not in _JOINERS and unicodedata.category(char) in _REFUSED_CATEGORIES:
            raise LimitError(
                Reason.BAD_NAME,
                f"{field} holds a control or invisible character; names are printable text",
            )
    return name


def clean_display_name(value: str) -> str:
    return clean_name(value, "display_name", DISPLAY_NAME_MAX)


def clean_table_name(value: str) -> str:
    return clean_name(value, "name", TABLE_NAME_MAX)


# ------------------------------------------------------------------ amounts and counts


def check_amount(value: int, field: str, *, zero: bool = False) -> int:
    """A chip amount: 1 to :data:`CHIP_CAP` (0 too when ``zero``)."""
    low = 0 if zero else 1
    if not low <= value <= CHIP_CAP:
        raise LimitError(Reason.BAD_AMOUNT, f"{field} must be {low} to {CHIP_CAP:,} chips")
    return value


def check_count(value: int, field: str, low: int, high: int) -> int:
    if not low <= value <= high:
        raise LimitError(Reason.BAD_CONFIG, f"{field} must be {low} to {high:,}")
    return value


def table_chips(state: TableState) -> int:
    """Every chip at the table: stacks behind, and the running hand's chips.

    A seat dealt into the running hand is counted by its stack when the hand
    began (its chips are then behind, bet or in a pot); a seat that left the
    hand after folding is still counted (an over-estimate, on the safe side).
    """
    hand = state.hand if state.hand_running else None
    in_hand = {s.seat for s in hand.setup.seats} if hand is not None else set()
    total = sum(p.stack for p in state.players if p.seat not in in_hand)
    if hand is not None:
        total += sum(s.stack for s in hand.setup.seats)
    return total


def check_chips_added(state: TableState, amount: int) -> None:
    """Seating a stack or adding chips keeps the table's chips within :data:`CHIP_CAP`."""
    check_amount(amount, "the amount")
    total = table_chips(state)
    if total + amount > CHIP_CAP:
        raise LimitError(
            Reason.CHIP_CAP,
            f"a table holds at most {CHIP_CAP:,} chips altogether; it holds {total:,}, "
            f"so at most {max(0, CHIP_CAP - total):,} more can be brought in",
        )


# ------------------------------------------------------------------ durations and config


def duration_ms(duration: Duration, field: str) -> int:
    """A ``Duration`` in whole milliseconds, refusing a negative or malformed one."""
    seconds, nanos = duration.seconds, duration.nanos
    if seconds < 0 or not 0 <= nanos < 1_000_000_000:
        raise LimitError(Reason.BAD_CONFIG, f"{field} must be a positive duration")
    return min(seconds, 10**12) * 1000 + nanos // 1_000_000


def check_close_time(stamp: Timestamp, now: datetime) -> None:
    """A new table's closing time: after ``now`` (the request's time) and at most about ten
    years ahead. One in the past (the epoch included) would close the table before its
    first hand; it used to be accepted as long as it was after 1970."""
    if not 0 <= stamp.nanos < 1_000_000_000:
        raise LimitError(
            Reason.BAD_CONFIG, "close_time must be a valid time (nanos 0 to 999,999,999)"
        )
    now_ms = int(now.timestamp() * 1000)
    at_ms = stamp.seconds * 1000 + stamp.nanos // 1_000_000
    if at_ms <= now_ms:
        raise LimitError(
            Reason.BAD_CONFIG, "close_time must be in the future (after the request), or unset"
        )
    if stamp.seconds - int(now.timestamp()) > CLOSE_TIME_AHEAD_MAX_S:
        raise LimitError(Reason.BAD_CONFIG, "close_time is at most ten years ahead")


def check_table_config(config: epb.TableConfig, now: datetime) -> None:
    """Every number of a new table's config within its bounds (the rules check the rest).

    The rules core then checks how the numbers relate (seats per variant,
    small blind <= big blind, Draw's ante and bets). Stored configs are not
    checked again: a table created under older bounds still loads.
    """
    for field in ("small_blind", "big_blind", "ante", "small_bet", "big_bet"):
        check_amount(getattr(config, field), field, zero=True)  # the rules say which are > 0
    check_count(config.raise_cap, "raise_cap", 0, RAISE_CAP_MAX)
    check_count(config.max_hands, "max_hands", 0, MAX_HANDS_MAX)
    check_count(config.max_consecutive_timeouts, "max_consecutive_timeouts", 0, MAX_TIMEOUTS_MAX)
    if config.HasField("action_clock"):
        clock = config.action_clock
        ms = duration_ms(clock, "action_clock")
        # Zero is no clock; any other duration is a clock and must be one (a microsecond is
        # not "no clock", though it is 0 in whole milliseconds).
        if (clock.seconds or clock.nanos) and not ACTION_CLOCK_MIN_MS <= ms <= ACTION_CLOCK_MAX_MS:
            raise LimitError(
                Reason.BAD_CONFIG,
                f"action_clock must be {ACTION_CLOCK_MIN_MS} ms to one day, or unset for no clock",
            )
    if config.HasField("close_time"):
        check_close_time(config.close_time, now)


# ------------------------------------------------------------------ the lobby

PASSWORD_MIN = 8
PASSWORD_MAX = 128
"""Passwords: 8-128 characters (argon2 hashes any length; the bound keeps hashing cheap)."""
PAGE_SIZE_DEFAULT = 50
PAGE_SIZE_MAX = 100
"""Lists: at most this many items a page (0 asks for the default)."""
PAGE_TOKEN_MAX = 128
"""Page tokens are opaque and short; a longer one is not one the service issued."""
CREDENTIAL_MAX = 1024
"""Access and refresh tokens: longer is not a token the lobby issued."""
GUEST_REQUEST_ID_MIN = 16
"""A guest sign-up's request_id is all that makes its retry the caller's: a UUID, not ``1``."""


INVITE_CODE_MAX = 64
"""Invite codes: the lobby issues 12 characters; a longer one is none of its."""


def check_invite_code(invite_code: str) -> str:
    """An invite code in a request: empty (none) or at most :data:`INVITE_CODE_MAX` long."""
    if len(invite_code) > INVITE_CODE_MAX:
        raise LimitError(
            Reason.BAD_INVITE_CODE, f"invite_code is at most {INVITE_CODE_MAX} characters long"
        )
    return invite_code


def check_password(password: str) -> str:
    if not PASSWORD_MIN <= len(password) <= PASSWORD_MAX:
        raise LimitError(
            Reason.BAD_PASSWORD,
            f"password must be {PASSWORD_MIN} to {PASSWORD_MAX} characters long "
            f"(this one is {_length(password)})",
        )
    return password


def check_page_size(page_size: int) -> int:
    """A page size: 0 means the default; otherwise 1 to :data:`PAGE_SIZE_MAX`."""
    if page_size == 0:
        return PAGE_SIZE_DEFAULT
    if not 1 <= page_size <= PAGE_SIZE_MAX:
        raise LimitError(
            Reason.BAD_PAGE_SIZE, f"page_size must be 0 (the default) or 1 to {PAGE_SIZE_MAX}"
        )
    return page_size


def check_guest_request_id(request_id: str) -> str:
    check_request_id(request_id)
    if len(request_id) < GUEST_REQUEST_ID_MIN:
        raise LimitError(
            Reason.BAD_REQUEST_ID,
            f"a guest sign-up's request_id must be a random UUID (at least "
            f"{GUEST_REQUEST_ID_MIN} characters): it is what makes its retry yours",
        )
    return request_id
