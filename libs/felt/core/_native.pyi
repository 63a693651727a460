"""Type stub for the ``felt._native`` C extension (libs/felt/native/felt_native.c)."""

from array import array
from collections.abc import Sequence

from _typeshed import ReadableBuffer

CATEGORY_SHIFT: int
MAJOR_SHIFT: int

def evaluate(
    c1: int, c2: int, c3: int, c4: int, c5: int, c6: int = ..., c7: int = ..., /
) -> int: ...
def evaluate_many(cards: ReadableBuffer, k: int, /) -> array[int]: ...
def holdem_equity(
    hero: ReadableBuffer,
    board: ReadableBuffer,
    dead: ReadableBuffer,
    ranges: Sequence[tuple[ReadableBuffer, Sequence[float]] | None],
    samples: int,
    seed: int,
    /,
) -> tuple[float, float, float]: ...
def draw_equity(
    hero: ReadableBuffer,
    keep: ReadableBuffer,
    dead: ReadableBuffer,
    opponents: Sequence[tuple[int, int]],
    samples: int,
    seed: int,
    /,
) -> tuple[float, float, float]: ...
