"""Read PHH (Poker Hand History, TOML) files into a typed :class:`PhhHand`.

PHH is the hand-history format of the University of Toronto Computer Poker
Research Group (github.com/uoftcprg/phh-std). Felt reads it to replay real hands
through its rules core and writes it so other tools (PokerKit) can check
Felt's hands.

Two things shape this module:

* Speed. The conformance verifier replays thousands of files, and the
  standard library's ``tomllib`` alone costs more per file than a whole
  Felt replay. PHH files are almost always one ``key = value`` per line with
  flat literals, so :func:`loads_toml` reads that subset directly and hands
  anything else (multi-line arrays, tables, escapes, dates, comments after a
  value) to ``tomllib``: a line it cannot read on its own sends the whole
  file to ``tomllib``, so the result is always what ``tomllib`` would give.
* Exact chips. Felt plays integer chips, so decimal stakes (``0.25``,
  ``16.35``) are scaled by the smallest power of ten that makes every input
  amount an integer (reported as :attr:`PhhHand.scale`). Finishing stacks
  are kept exact (an ``int``, or a ``Fraction`` when not a whole scaled
  chip), because a split pot with an odd chip is recorded as half chips
  (``10112.5``), which must be seen, not scaled away.

Why one module of this size: it is one format's reader (the fast TOML subset,
the fallback, the action grammar, the chip scaling), compiled with mypyc on
the conformance verifier's hot path.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

from felt.core.cards import RANKS, SUITS, Card
from felt.core.record import Record

__all__ = [
    "PhhAction",
    "PhhError",
    "PhhHand",
    "clear_action_cache",
    "load",
    "loads",
    "loads_toml",
    "parse_action",
    "parse_cards",
]

KNOWN_FIELDS = frozenset(
    {
        "variant",
        "antes",
        "blinds_or_straddles",
        "min_bet",
        "starting_stacks",
        "actions",
        "finishing_stacks",
        "players",
        "ante_trimming_status",
    }
)

MaybeCard = Card | None
Number = int | Decimal


class PhhError(ValueError):
    """A PHH text that cannot be read (bad TOML, a missing field, an unreadable action)."""


# ---------------------------------------------------------------------------
# TOML (fast subset, tomllib for the rest)

# ``key = value`` on one line, the key bare; the value is checked by _value.
_KEY_VALUE = re.compile(r"[ \t]*([A-Za-z0-9_-]+)[ \t]*=[ \t]*(.*)")
_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
_DEC = re.compile(r"-?(?:0|[1-9][0-9]*)\.[0-9]+")


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a TOML number")


_JSON_NUMBERS = json.JSONDecoder(parse_float=Decimal, parse_constant=_no_constants).raw_decode
_NUMBER_TYPES = {int, Decimal}


class _NotSimple(Exception):
    """A value outside the fast subset (the caller falls back to tomllib)."""


def _number(text: str) -> Number:
    if text.isdigit() and text.isascii() and (text[0] != "0" or len(text) == 1):
        return int(text)
    if _INT.fullmatch(text):
        return int(text)
    if _DEC.fullmatch(text):
        return Decimal(text)
    raise _NotSimple


def _scalar(text: str) -> Any:
    first = text[:1]
    if first == "'":
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != "'" or "'" in inner or "\n" in inner:
            raise _NotSimple
        return inner
    if first == '"':
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != '"' or '"' in inner or "\\" in inner:
            raise _NotSimple
        return inner
    if text == "true":
        return True
    if text == "false":
        return False
    return _number(text)


def _value(text: str) -> Any:
    if text[:1] != "[":
        return _scalar(text)
    if text[-1:] != "]":
        raise _NotSimple
    inner = text[1:-1].strip()
    if not inner:
        return []
    quote = inner[0]
    if quote in "'\"":
        # The usual PHH ``actions``/``players`` line: 'a', 'b', ... (pokerkit writes ", ").
        if inner[-1] == ",":
            inner = inner[:-1].rstrip()
        if len(inner) < 2 or inner[-1] != quote:
            raise _NotSimple
        parts = inner[1:-1].split(f"{quote}, {quote}")
        # No quote inside an item: the quotes are exactly the items' own.
        other = "'" if quote == '"' else '"'
        if inner.count(quote) != 2 * len(parts) or other in inner or "\\" in inner:
            raise _NotSimple
        return parts
    # A list of numbers: JSON's number syntax is a subset of TOML's, with the
    # same values, and its C scanner reads one far faster than Python could.
    # Anything else JSON would accept (strings, true, NaN) goes to tomllib.
    try:
        numbers, end = _JSON_NUMBERS(text)
    except ValueError:
        raise _NotSimple from None
    if end != len(text) or not set(map(type, numbers)) <= _NUMBER_TYPES:
        raise _NotSimple
    return numbers


def loads_toml(text: str) -> dict[str, Any]:
    """Parse TOML text with floats as exact ``Decimal``; fast for one-line PHH fields.

    Equivalent to ``tomllib.loads(text, parse_float=Decimal)`` (which it
    falls back to for anything beyond flat one-line literals), including its
    errors, which are raised as :class:`PhhError`.
    """
    out: dict[str, Any] = {}
    key_value = _KEY_VALUE.fullmatch
    try:
        for raw in text.splitlines():
            match = key_value(raw)
            if match is None:
                line = raw.strip()
                if not line or line[0] == "#":
                    continue
                raise _NotSimple
            key, rest = match.groups()
            if key in out:
                raise _NotSimple
            try:
                # Trailing blanks make every value "not simple", so (.*) may keep them.
                out[key] = _value(rest)
            except _NotSimple:
                # e.g. a date/time or a trailing comment: let tomllib read the one line.
                out[key] = tomllib.loads(raw.strip(), parse_float=Decimal)[key]
    except (_NotSimple, tomllib.TOMLDecodeError, KeyError):
        try:
            return tomllib.loads(text, parse_float=Decimal)
        except tomllib.TOMLDecodeError as e:
            raise PhhError(f"not valid TOML: {e}") from e
    return out


# ---------------------------------------------------------------------------
# cards and actions

_CARD_CODES: dict[str, Card] = {}
for _r, _rank in enumerate(RANKS):
    for _s, _suit in enumerate(SUITS):
        _CARD_CODES[_rank + _suit] = _r * 4 + _s
        _CARD_CODES[_rank.lower() + _suit] = _r * 4 + _s
        _CARD_CODES[_rank + _suit.upper()] = _r * 4 + _s
        _CARD_CODES[_rank.lower() + _suit.upper()] = _r * 4 + _s


def parse_cards(text: str) -> tuple[MaybeCard, ...]:
    """``"AcKd"`` -> two cards; ``"??"`` is an unknown card (``None``)."""
    if len(text) == 4:  # the usual hole cards
        first, second = _CARD_CODES.get(text[:2]), _CARD_CODES.get(text[2:])
        if first is not None and second is not None:
            return (first, second)
    if len(text) % 2:
        raise PhhError(f"{text!r} is not a list of cards")
    out: list[MaybeCard] = []
    for i in range(0, len(text), 2):
        code = text[i : i + 2]
        if code == "??":
            out.append(None)
            continue
        c = _CARD_CODES.get(code)
        if c is None:
            raise PhhError(f"{code!r} in {text!r} is not a card")
        out.append(c)
    return tuple(out)


@dataclass(frozen=True, slots=True, init=False)
class PhhAction(Record):
    """One entry of the ``actions`` array (its position there is its index).

    ``op`` is the PHH code: ``dh`` (deal hole), ``db`` (deal board), ``f``,
    ``cc``, ``cbr``, ``sm`` (show or muck), ``sd`` (stand pat/discard),
    ``pb`` (bring-in) or ``""`` for a comment-only entry. ``player`` is the
    0-based index (``p1`` -> 0) of the acting player, or of the player dealt
    to for ``dh``; ``None`` for board dealing. ``amount`` is the ``cbr``
    total in scaled chips. ``cards`` are the dealt or shown cards (``None``
    for ``??``); ``sm`` with no cards or ``-`` is an empty tuple.
    """

    text: str
    op: str
    player: int | None = None
    cards: tuple[MaybeCard, ...] = ()
    amount: int | None = None

    def __init__(
        self,
        text: str,
        op: str,
        player: int | None = None,
        cards: tuple[MaybeCard, ...] = (),
        amount: int | None = None,
    ) -> None:
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "player", player)
        object.__setattr__(self, "cards", cards)
        object.__setattr__(self, "amount", amount)


_PLAYER_OPS = frozenset({"f", "cc", "cbr", "sm", "sd", "pb"})


def _player_index(word: str) -> int:
    number = word[1:]
    if word[:1] != "p" or not (number.isdigit() and number.isascii()) or int(number) < 1:
        raise PhhError(f"{word!r} is not a player (p1, p2, ...)")  # parse_action adds where
    return int(number) - 1


def _split_action(text: str) -> list[str]:
    hash_at = text.find("#")
    return (text if hash_at < 0 else text[:hash_at]).split()


# Parsed actions by scale, then text (see parse_action).
_ACTION_CACHE: dict[int, dict[str, PhhAction]] = {}
_ACTION_CACHE_LIMIT = 1 << 17


def parse_action(text: str, scale: int = 1, index: int | None = None) -> PhhAction:
    """Parse one action string; amounts are multiplied by ``scale`` (must give integers).

    Results are cached: the same strings (``'p3 f'``, ``'d dh p1 AcKd'``)
    recur across thousands of files, and actions are immutable. ``index``
    only serves error messages.
    """
    cache = _ACTION_CACHE.get(scale)
    if cache is None:
        cache = _ACTION_CACHE[scale] = {}
    cached = cache.get(text)
    if cached is not None:
        return cached
    try:
        action = _parse_action(text, scale, index)
    except PhhError as e:
        where, message = _where(text, index), str(e)
        raise PhhError(message if message.startswith(where) else f"{where}: {message}") from None
    if len(cache) >= _ACTION_CACHE_LIMIT:
        cache.clear()
    cache[text] = action
    return action


def clear_action_cache() -> None:
    """Forget the parsed actions (the benchmark starts each run cold, as a new process would)."""
    _ACTION_CACHE.clear()


def _parse_actions(texts: list[str], scale: int) -> tuple[PhhAction, ...]:
    """``parse_action`` over a hand's actions, looking all of them up in the cache at once."""
    cache = _ACTION_CACHE.get(scale)
    if cache is None:
        return tuple(parse_action(text, scale, i) for i, text in enumerate(texts))
    found = list(map(cache.get, texts))
    # all(), not ``None not in``: that would call PhhAction.__eq__ on every action.
    if not all(found):
        for i, action in enumerate(found):
            if action is None:  # parse only what the cache does not hold
                found[i] = parse_action(texts[i], scale, i)
    return tuple(found)  # type: ignore[arg-type]  # every None was replaced


def _where(text: str, index: int | None) -> str:
    """How an error names the action (built only for errors: most files have none)."""
    return f"action {index} {text!r}" if index is not None else repr(text)


def _parse_action(text: str, scale: int, index: int | None) -> PhhAction:
    if len(text) == 12 and text.startswith("d dh p") and text[7] == " " and text[6] in "123456789":
        # 'd dh p3 AcKd': most distinct actions in a corpus are hole-card deals like this.
        first, second = _CARD_CODES.get(text[8:10]), _CARD_CODES.get(text[10:])
        if first is not None and second is not None:
            return PhhAction(text, "dh", int(text[6]) - 1, (first, second))
    words = text.split() if "#" not in text else _split_action(text)
    if not words:
        return PhhAction(text, "")
    head = words[0]
    if head == "d":
        if len(words) == 4 and words[1] == "dh":
            return PhhAction(text, "dh", _player_index(words[2]), parse_cards(words[3]))
        if len(words) == 3 and words[1] == "db":
            return PhhAction(text, "db", None, parse_cards(words[2]))
        where = _where(text, index)
        raise PhhError(f"{where} is not a dealing action (d dh pN cards, d db cards)")
    player = _player_index(head)
    if len(words) < 2 or words[1] not in _PLAYER_OPS:
        where = _where(text, index)
        raise PhhError(f"{where} is not a player action (f, cc, cbr, sm, sd, pb)")
    op = words[1]
    if op == "cbr":
        if len(words) != 3:
            raise PhhError("cbr needs one amount")
        amount = _amount(words[2], _where(text, index))
        return PhhAction(text, op, player, amount=_scaled(amount, scale))
    if op in ("sm", "sd") and len(words) == 3:
        shown = () if words[2] == "-" else parse_cards(words[2])
        return PhhAction(text, op, player, shown)
    if len(words) != 2:
        raise PhhError(f"{_where(text, index)} has extra words")
    return PhhAction(text, op, player)


def _amount(word: str, where: str) -> Number:
    """A bet amount: a non-negative number (``Decimal`` also reads forms like ``1e3``)."""
    value: Number
    try:
        value = _number(word)
    except _NotSimple:
        try:
            value = Decimal(word)
        except ArithmeticError:
            raise PhhError(f"{where}: {word!r} is not an amount") from None
        if not value.is_finite():
            raise PhhError(f"{where}: {word!r} is not an amount") from None
    if value < 0:
        raise PhhError(f"{where}: {word!r} is not an amount")
    return value


def _scaled(value: Number, scale: int) -> int:
    scaled = value * scale
    if isinstance(scaled, Decimal):
        if scaled != scaled.to_integral_value():
            raise PhhError(f"amount {value} is not a whole number of chips at scale {scale}")
        return int(scaled)
    return scaled


def _exact(value: Number, scale: int) -> int | Fraction:
    """``value * scale`` exactly: an int for whole chips, a Fraction for a recorded half chip."""
    if isinstance(value, Decimal):
        if value == value.to_integral_value():
            return int(value) * scale
        exact = Fraction(value) * scale
        return exact.numerator if exact.denominator == 1 else exact
    return value * scale


def _decimals(value: Number) -> int:
    """Digits after the point that ``value`` really needs (``2.50`` -> 1, ``10000.0`` -> 0)."""
    if isinstance(value, int) or value == value.to_integral_value():
        return 0
    exponent = value.normalize().as_tuple().exponent
    assert isinstance(exponent, int)
    return -exponent


# ---------------------------------------------------------------------------
# the hand


@dataclass(frozen=True, slots=True, init=False)
class PhhHand(Record):
    """A PHH hand with amounts in integer chips (input amounts x ``scale``).

    Per-player lists are in PHH order: ``p1`` is the first seat left of the
    button, the last player the button (heads-up, ``p1`` is the big blind but
    ``antes``/``blinds_or_straddles`` still list the small blind's first, as
    PokerKit reads them). ``finishing_stacks`` are exact amounts of scaled
    chips: ints, except that a recorded half chip shows as ``Fraction(20225, 2)``.
    ``extra`` holds every other field as parsed (``None`` given to the
    constructor stands for an empty mapping).
    """

    variant: str
    starting_stacks: tuple[int, ...]
    antes: tuple[int, ...]
    blinds_or_straddles: tuple[int, ...]
    min_bet: int | None
    actions: tuple[PhhAction, ...]
    finishing_stacks: tuple[int | Fraction, ...] | None
    players: tuple[str, ...]
    scale: int = 1
    ante_trimming_status: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __init__(
        self,
        variant: str,
        starting_stacks: tuple[int, ...],
        antes: tuple[int, ...],
        blinds_or_straddles: tuple[int, ...],
        min_bet: int | None,
        actions: tuple[PhhAction, ...],
        finishing_stacks: tuple[int | Fraction, ...] | None,
        players: tuple[str, ...],
        scale: int = 1,
        ante_trimming_status: bool = False,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        object.__setattr__(self, "variant", variant)
        object.__setattr__(self, "starting_stacks", starting_stacks)
        object.__setattr__(self, "antes", antes)
        object.__setattr__(self, "blinds_or_straddles", blinds_or_straddles)
        object.__setattr__(self, "min_bet", min_bet)
        object.__setattr__(self, "actions", actions)
        object.__setattr__(self, "finishing_stacks", finishing_stacks)
        object.__setattr__(self, "players", players)
        object.__setattr__(self, "scale", scale)
        object.__setattr__(self, "ante_trimming_status", ante_trimming_status)
        object.__setattr__(self, "extra", {} if extra is None else extra)

    @property
    def player_count(self) -> int:
        return len(self.starting_stacks)

    @property
    def half_chip_players(self) -> tuple[int, ...]:
        """Players (0-based) whose recorded finishing stack is not a whole chip."""
        if self.finishing_stacks is None:
            return ()
        return tuple(i for i, v in enumerate(self.finishing_stacks) if v.denominator != 1)


_INT_ONLY = {int}
_STR_ONLY = {str}


def _is_amount(v: Any) -> bool:
    """An int or finite Decimal; TOML booleans are ints to Python, so exclude them."""
    kind = type(v)
    return kind is int or (kind is Decimal and v.is_finite())


def _numbers(data: Mapping[str, Any], key: str, count: int | None) -> list[Number]:
    raw = data.get(key)
    if raw is None:
        return [0] * count if count is not None else []
    if _is_amount(raw):
        if count is None:
            raise PhhError(f"{key} must be a list")
        return [raw] * count  # one amount for everyone, as PokerKit reads it
    if not isinstance(raw, list):
        raise PhhError(f"{key} must be a list of numbers, not {raw!r}")
    out: list[Number]
    if set(map(type, raw)) <= _INT_ONLY:  # the usual all-int list (bools are not ints here)
        out = list(raw)
    else:
        out = []
        for v in raw:
            if not _is_amount(v):
                raise PhhError(f"{key} holds {v!r}, which is not an amount")
            out.append(v)
    if count is not None:
        if len(out) > count:
            raise PhhError(f"{key} lists {len(out)} amounts for {count} players")
        out += [0] * (count - len(out))
    return out


def from_mapping(data: Mapping[str, Any]) -> PhhHand:
    """Build a :class:`PhhHand` from parsed TOML (floats as ``Decimal``)."""
    variant = data.get("variant")
    if not isinstance(variant, str):
        raise PhhError("the 'variant' field is missing or not a string")
    stacks_raw = _numbers(data, "starting_stacks", None)
    if not stacks_raw:
        raise PhhError("the 'starting_stacks' field is missing or empty")
    n = len(stacks_raw)
    antes_raw = _numbers(data, "antes", n)
    blinds_raw = _numbers(data, "blinds_or_straddles", n)
    min_bet_raw = data.get("min_bet")
    if min_bet_raw is not None and not _is_amount(min_bet_raw):
        raise PhhError(f"min_bet must be an amount, not {min_bet_raw!r}")
    action_texts = data.get("actions")
    if not isinstance(action_texts, list) or not set(map(type, action_texts)) <= _STR_ONLY:
        raise PhhError("the 'actions' field is missing or not a list of strings")

    # Amounts in the actions decide the scale too (a bet of 0.75 at 1/2 stakes).
    # Without a point or an exponent anywhere in them, every amount is whole.
    amounts: list[Number] = []
    joined = "".join(action_texts)
    fractional = "." in joined or "e" in joined or "E" in joined
    for i, text in enumerate(action_texts if fractional else ()):
        if "cbr" in text:
            words = _split_action(text)
            if len(words) == 3 and words[1] == "cbr":
                amounts.append(_amount(words[2], f"action {i} {text!r}"))
    inputs = [*stacks_raw, *antes_raw, *blinds_raw, *amounts]
    if min_bet_raw is not None:
        inputs.append(min_bet_raw)
    whole = set(map(type, inputs)) <= _INT_ONLY  # the usual case: no decimal anywhere
    digits = 0 if whole else max((_decimals(v) for v in inputs if type(v) is Decimal), default=0)
    scale = 10**digits

    def scaled(values: list[Number]) -> tuple[int, ...]:
        if whole:
            return tuple(values)  # type: ignore[arg-type]  # all ints, checked above
        return tuple(_scaled(v, scale) for v in values)

    actions = _parse_actions(action_texts, scale)
    finishing: tuple[int | Fraction, ...] | None = None
    if data.get("finishing_stacks") is not None:
        finishing_raw = _numbers(data, "finishing_stacks", None)
        if len(finishing_raw) != n:
            raise PhhError(f"finishing_stacks lists {len(finishing_raw)} stacks for {n} players")
        if scale == 1 and set(map(type, finishing_raw)) <= _INT_ONLY:
            finishing = tuple(finishing_raw)  # type: ignore[arg-type]  # all ints, checked
        else:
            finishing = tuple(_exact(v, scale) for v in finishing_raw)
    players_raw = data.get("players")
    players = tuple(map(str, players_raw)) if isinstance(players_raw, list) else ()
    return PhhHand(
        variant=variant,
        starting_stacks=scaled(stacks_raw),
        antes=scaled(antes_raw),
        blinds_or_straddles=scaled(blinds_raw),
        min_bet=None if min_bet_raw is None else _scaled(min_bet_raw, scale),
        actions=actions,
        finishing_stacks=finishing,
        players=players,
        scale=scale,
        ante_trimming_status=bool(data.get("ante_trimming_status", False)),
        extra={k: v for k, v in data.items() if k not in KNOWN_FIELDS},
    )


def loads(text: str) -> PhhHand:
    """Parse PHH text."""
    return from_mapping(loads_toml(text))


def load(path: str | Path) -> PhhHand:
    """Parse a ``.phh`` file (UTF-8)."""
    return loads(_text(_read(path)))


def _read(path: str | Path) -> bytes:
    """The file's bytes, read with bare system calls.

    ``open()`` builds a buffered file object per call, which costs as much
    as parsing a small hand; the verifier reads thousands of files.
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _text(data: bytes) -> str:
    try:
        return data.decode()
    except UnicodeDecodeError as e:
        raise PhhError(f"not UTF-8 text: {e}") from e
