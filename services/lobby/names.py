"""Display names a player may take, and when two names are the same name.

A name is shown to every player at a table, so a look-alike of another player's name
(a Cyrillic ``a``, U+0430, for the Latin one, a trailing zero-width joiner, ``rn`` for ``m``)
or of the lobby's own AI labels (``Bot 1 (easy)``) lets one player pass for another.
So a new name is checked here, beyond ``felt.wire.limits.clean_display_name`` (length,
printable), by Unicode's own rules, through ICU (PyICU, ``icu``):

* **one name, one skeleton**: names are compared by :func:`skeleton`, the UTS #39
  confusable skeleton (ICU's ``SpoofChecker.getSkeleton``, over Unicode's
  confusables.txt) of the NFKC-casefolded name, case-folded once more (the skeleton
  maps ``0`` to ``O``); the players' store keeps it unique;
* **no mixed-script confusables**: ICU's restriction-level check at *moderately
  restrictive* (UTS #39 section 5.2: Latin may be mixed with one other script, but not
  with Cyrillic, Greek or Cherokee, whose letters copy Latin's), plus its invisible
  (a repeated combining mark) and mixed-numbers (digits of two systems) checks;
* **joiners only where a script needs them**: U+200C/U+200D only in the contexts
  IDNA's ContextJ rules (RFC 5892 appendix A.1, A.2) allow them, after a virama
  (Devanagari and the other Indic scripts) or, for the non-joiner, between joining
  letters (Arabic, Persian), and never first or last;
* **the AI labels are reserved**: the lobby names its AI seats ``Bot <seat> (<level>)``
  (``services.lobby.lounges``), so a name that reads as ``Bot <digits>`` is refused,
  whatever its case, spacing, digits or look-alike letters.

Names stored before these rules keep working (sign-in looks a name up by its
:func:`name_key`, as before); only new names are checked.
"""

from __future__ import annotations

import re
import unicodedata

import icu  # type: ignore[import-untyped]

from felt.wire import limits
from poker.v1.reason_pb2 import Reason

ZWNJ, ZWJ = "\u200c", "\u200d"
_VIRAMA = 9  # Canonical_Combining_Class=Virama
# ICU's UJoiningType values (uchar.h; PyICU exposes the property but not its enum).
_JT_DUAL, _JT_LEFT, _JT_RIGHT, _JT_TRANSPARENT = 2, 3, 4, 5

_LEVELS = "easy|normal|hard"  # what services.lobby.lounges calls its AI levels
# "Bot 1", "bot12 (hard)", "BOT 3 (anything)": on the name's letters and digits alone.
_LABEL = re.compile(r"bot\d")
# The same read on a skeleton, where "1" became "l" and "0" "o": the whole label only,
# so that "Botlover" stays a name.
_LABEL_SKELETON = re.compile(rf"bot[\dlo]+(?:{_LEVELS})?")

_CHECKER = icu.SpoofChecker()
_CHECKER.setRestrictionLevel(icu.URestrictionLevel.MODERATELY_RESTRICTIVE)
_CHECKER.setChecks(
    icu.USpoofChecks.RESTRICTION_LEVEL | icu.USpoofChecks.INVISIBLE | icu.USpoofChecks.MIXED_NUMBERS
)


def name_key(display_name: str) -> str:
    """What makes two names equal as typed: compatibility-normalised and case-folded, so
    that ``Alice``, ``ALICE`` and the full-width ``Alice`` (U+FF21...) are one name. Sign-in
    looks a name up by it."""
    return unicodedata.normalize("NFKC", display_name).casefold()


def skeleton(display_name: str) -> str:
    """What makes two names look alike: the UTS #39 skeleton of the name's :func:`name_key`,
    case-folded: ``Alice``, ``ALICE``, the same with a Cyrillic ``A`` (U+0410) or with a
    zero-width joiner in it have one. Unique among players."""
    return str(_CHECKER.getSkeleton(0, name_key(display_name))).casefold()


def new_display_name(value: str) -> str:
    """The name a sign-up may take (cleaned as ``felt.wire.limits.clean_display_name``), or
    ``LimitError`` (INVALID_ARGUMENT): ``BAD_NAME`` for a misplaced joiner or a mix of
    scripts, ``NAME_RESERVED`` for the AI seats' label. The messages say what is wrong
    with the name, never the name."""
    name = limits.clean_display_name(value)
    if not name:
        raise limits.LimitError(Reason.BAD_NAME, "display_name is required (1-32 characters)")
    _check_joiners(name)
    if _CHECKER.check(name) != 0:
        raise limits.LimitError(
            Reason.BAD_NAME,
            "display_name mixes scripts whose letters look alike (such as Latin with Cyrillic "
            "or Greek), digits of two systems, or repeats a combining mark",
        )
    if is_ai_label(name):
        raise limits.LimitError(
            Reason.NAME_RESERVED,
            "display_name reads as the lobby's AI seats' label (\"Bot <seat> (<level>)\"), "
            "which is reserved",
        )
    return name


def is_ai_label(name: str) -> bool:
    """Whether ``name`` reads as ``Bot <digits>``, as the lobby labels its AI seats."""
    key = name_key(name)
    if _LABEL.match(_compact(key)):
        return True
    for form in (key, unicodedata.normalize("NFKC", name)):
        shape = _compact(str(_CHECKER.getSkeleton(0, form)).casefold())
        if _LABEL_SKELETON.fullmatch(shape):
            return True
    return False


def _compact(text: str) -> str:
    """Only the letters and digits: "Bot 1 (easy)" -> "bot1easy"."""
    return "".join(c for c in text if c.isalnum())


def _check_joiners(name: str) -> None:
    """ZWJ and ZWNJ only where IDNA's ContextJ rules allow them (RFC 5892 A.1, A.2)."""
    for i, char in enumerate(name):
        if char not in (ZWJ, ZWNJ):
            continue
        if i == 0 or i == len(name) - 1:
            raise limits.LimitError(
                Reason.BAD_NAME, "display_name may not begin or end with a zero-width joiner"
            )
        if unicodedata.combining(name[i - 1]) == _VIRAMA:
            continue  # after a virama: both are allowed (Indic conjuncts, half forms)
        if char == ZWNJ and _between_joining_letters(name, i):
            continue
        raise limits.LimitError(
            Reason.BAD_NAME,
            "display_name has a zero-width joiner where its script needs none (they are "
            "allowed after a virama, and a non-joiner between joining letters)",
        )


def _between_joining_letters(name: str, at: int) -> bool:
    """RFC 5892 A.1: (Joining_Type:{L,D})(Joining_Type:T)* ZWNJ (Joining_Type:T)*
    (Joining_Type:{R,D})."""
    before = at - 1
    while before >= 0 and _joining_type(name[before]) == _JT_TRANSPARENT:
        before -= 1
    after = at + 1
    while after < len(name) and _joining_type(name[after]) == _JT_TRANSPARENT:
        after += 1
    return (
        before >= 0
        and after < len(name)
        and _joining_type(name[before]) in (_JT_LEFT, _JT_DUAL)
        and _joining_type(name[after]) in (_JT_RIGHT, _JT_DUAL)
    )


def _joining_type(char: str) -> int:
    return int(icu.Char.getIntPropertyValue(char, icu.UProperty.JOINING_TYPE))
