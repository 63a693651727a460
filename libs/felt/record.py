"""``Record``: the base of Felt's immutable value classes (events, commands, setups).

Those classes are frozen dataclasses for equality, hashing, ``repr``,
``dataclasses.replace`` and ``fields``, but each spells out its
``__init__`` with ``object.__setattr__``. Why: the modules that define them
are compiled with mypyc (see ``setup.py``), which turns such an ``__init__``
into direct native stores, about ten times cheaper than the ``__init__``
that ``dataclasses`` generates (an interpreted function, even in a compiled
module); replaying a hand builds a few dozen of them. Uncompiled, the same
code behaves the same, at the dataclass's usual speed.
``tests/unit/test_records.py`` checks every such ``__init__`` against its
fields.

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
    """Base of a frozen dataclass whose ``__init__`` is written out (see the module docstring)."""

    __slots__ = ()

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Pickling and copying rebuild through __init__: a compiled frozen class
        # cannot have its attributes set one by one afterwards.
        return (type(self), tuple(getattr(self, f.name) for f in fields(self)))  # type: ignore[arg-type]
