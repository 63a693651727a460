"""Every ``Record`` (a compiled frozen dataclass, most with ``__init__`` written out) works as one.

``felt.core.record`` explains why most of those ``__init__`` methods are written
out; this checks that each one matches its class's fields (names, order,
defaults), so a field added to an event without its ``__init__`` line is
caught here, and that the classes stay immutable, comparable and copyable. The compiled build
checks argument types at run time, so the sample values have the fields'
types.
"""

from __future__ import annotations

import ast
import collections.abc
import copy
import dataclasses
import enum
import importlib
import pickle
import sys
import types
import typing
from typing import Any

import pytest

from felt.compiled import COMPILED_MODULES, PACKAGE
from felt.core.record import Record

# Typed as Any: each is a dataclass, which mypy cannot tell from ``RecordClass``.
RecordClass = type[Any]


def _records() -> list[RecordClass]:
    found: dict[str, RecordClass] = {}
    for name in COMPILED_MODULES:
        module = importlib.import_module("felt." + name.replace("/", "."))
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Record) and value is not Record:
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[k] for k in sorted(found)]


RECORDS = _records()
each_record = pytest.mark.parametrize("cls", RECORDS, ids=lambda c: c.__name__)


class NoSample(AssertionError):
    """``_value`` cannot make a value of this type."""


def _value(kind: Any, k: int) -> Any:
    """A value of type ``kind``, different for each ``k`` where the type allows."""
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        options = typing.get_args(kind)
        try:
            return _value(next(a for a in options if a is not type(None)), k)
        except NoSample:
            if type(None) in options:
                return None  # e.g. a hand state: the optional field is left empty
            raise
    if kind is bool:
        return k % 2 == 1
    if kind is int:
        return 1000 + k
    if kind is str:
        return f"value {k}"
    if kind is bytes:
        return f"bytes {k}".encode()
    if kind is float:
        return k + 0.5
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        members = list(kind)
        return members[k % len(members)]
    if typing.get_origin(kind) is tuple:
        return (k,)  # compiled code checks that it is a tuple, not what it holds
    if typing.get_origin(kind) is collections.abc.Mapping:
        return {"key": k}
    if isinstance(kind, type) and issubclass(kind, Record):
        return _sample(kind, 100 * (k + 1))
    raise NoSample(f"no sample value for {kind!r}: extend _value")


def _hints(cls: RecordClass) -> dict[str, Any]:
    """The fields' types, read from the source: a compiled class keeps only simplified ones."""
    module = sys.modules[cls.__module__]
    source = PACKAGE.parent / (cls.__module__.replace(".", "/") + ".py")
    tree = ast.parse(source.read_text())
    body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls.__name__)
    return {
        item.target.id: eval(ast.unparse(item.annotation), vars(module))
        for item in body.body
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
    }


def _values(cls: RecordClass, start: int = 0) -> dict[str, Any]:
    """A value for every field of ``cls``, each distinct where its type allows."""
    hints = _hints(cls)
    return {f.name: _value(hints[f.name], start + k) for k, f in enumerate(dataclasses.fields(cls))}


def _sample(cls: RecordClass, start: int = 0) -> Any:
    return cls(*_values(cls, start).values())


def test_the_value_classes_of_the_hot_path_are_records() -> None:
    names = {cls.__name__ for cls in RECORDS}
    assert {"BetPlaced", "HandStarted", "HandSetup", "SeatSetup", "Act", "LegalActions"} <= names
    assert {"PhhAction", "PhhHand", "VerifyResult"} <= names
    # With the generated __init__ (made once), still Records: pickled and deep-copied.
    assert {"TableConfig", "Round", "VariantRules"} <= names


@each_record
def test_init_sets_every_field_by_position_and_by_name(cls: RecordClass) -> None:
    assert dataclasses.is_dataclass(cls)
    values = _values(cls)
    for record in (cls(*values.values()), cls(**values)):
        assert {name: getattr(record, name) for name in values} == values


@each_record
def test_init_defaults_are_the_fields_defaults(cls: RecordClass) -> None:
    values = _values(cls)
    required = {
        f.name: values[f.name]
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    record = cls(**required)
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            assert getattr(record, f.name) == f.default, f.name
        elif f.default_factory is not dataclasses.MISSING:
            assert getattr(record, f.name) == f.default_factory(), f.name
    with pytest.raises(TypeError):
        cls(**required, not_a_field=1)


@each_record
def test_records_are_immutable_values(cls: RecordClass) -> None:
    record, same, other = _sample(cls), _sample(cls), _sample(cls, 7)
    for f in dataclasses.fields(cls):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(record, f.name, getattr(other, f.name))
    assert record == same
    if all(isinstance(v, collections.abc.Hashable) for v in _values(cls).values()):
        assert hash(record) == hash(same)
    assert record != other
    last = dataclasses.fields(cls)[-1].name
    changed = dataclasses.replace(record, **{last: getattr(other, last)})
    assert getattr(changed, last) == getattr(other, last)
    assert repr(record).startswith(f"{cls.__name__}(")


@each_record
def test_records_pickle_and_copy(cls: RecordClass) -> None:
    record = _sample(cls)
    assert pickle.loads(pickle.dumps(record)) == record
    assert copy.deepcopy(record) == record
    assert copy.copy(record) == record
