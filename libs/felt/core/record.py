"""``Record``: the base of Felt's immutable value classes (events, commands, setups).

Those classes are frozen dataclasses for equality, hashing, ``repr``,
``dataclasses.replace`` and ``fields``, defined in modules compiled with
mypyc (see ``setup.py``). ``Record`` makes them picklable and copyable: a
compiled frozen dataclass cannot otherwise be (``pickle``, ``copy.copy``
and ``copy.deepcopy`` raise ``FrozenInstanceError`` setting its state).

Those made per event, per hand or per PHH file or action spell out their
``__init__`` with ``object.__setattr__``: mypyc turns it into direct native
stores, about ten times cheaper than the ``__init__`` that ``dataclasses``
generates (an interpreted function, even in a compiled module). Measured
for issue #10: building table views or replaying the PHH corpus runs 8 to
40% slower without it; again for issue #22, with all of them plain,
``felt phh verify`` took 24-40% more CPU and a table's rebuild 8-10% more
(docs/benchmarks.md). That is the hand's events and commands (``Act``,
``Discard``, ``Forfeit``, ``StartHand``), its setup, legal actions and views,
``TableState`` and ``Player`` (rebuilt by every fold step that changes
them), ``Positions``, the per-deal ``DeckCommitted``, ``TableSnapshotTaken``
and ``StartNextHand``, and the PHH reader's and replay's values.

Everything else is a plain ``@dataclass(frozen=True, slots=True)`` with the
generated ``__init__``: classes made once per table or at import
(``TableConfig``, ``Round``, ``VariantRules``) and the table events and
commands a person or an operator causes, a few per seat rather than per
action (``TableCreated``, ``PlayerSeated``, ``SeatTokenReissued``,
``PlayerLeft``, ``PlayerSatOut``, ``PlayerSatIn``, ``ChipsAdded``,
``ActionTimedOut``, ``TableClosed``; ``CreateTable``, ``SeatPlayer``,
``ReissueSeatToken``, ``LeaveSeat``, ``SitOut``, ``SitIn``, ``AddChips``,
``CloseTable``, ``TimeOut``, ``ShowCards``): no benchmark in ``bench/``
makes enough of them to tell the two ``__init__`` apart (figures for issue
#22 in docs/benchmarks.md). A new value class starts plain; write its
``__init__`` out only when a benchmark shows the cost. Uncompiled, the same
code behaves the same, at the dataclass's usual speed.
``tests/unit/test_records.py`` checks every written-out ``__init__``
against its class's fields.

What only the compiled build enforces: argument types (``Act(1, "FOLD")``
raises ``TypeError``, a ``bool`` given for an ``int`` becomes an ``int``;
mypy refuses both either way), that these classes are final (a subclass in
an uncompiled module can be defined but not instantiated), and that
functions of a compiled module cannot be patched (compiled callers ignore a
``setattr`` on the module). Nothing here relies on any of that: write
well-typed code, and add new value classes to a compiled module.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

__all__ = ["Record"]


class Record:
    """Base of a compiled frozen dataclass: pickling and copying (see the module docstring)."""

    __slots__ = ()

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Pickling and copying rebuild through __init__: a compiled frozen class
        # cannot have its attributes set one by one afterwards.
        return (type(self), tuple(getattr(self, f.name) for f in fields(self)))  # type: ignore[arg-type]
