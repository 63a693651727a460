"""A full ladder table seated with a mix of styles (issue #25: "also seated among a mix").

The field sits from the bot under test's left, cycling through the mix, so over a deal's
rotations every style plays from every position relative to it; a one-style field seats
as it always did; a mix is never played heads-up.
"""

from __future__ import annotations

import pytest

from felt.core.rules.config import Variant
from felt_dev.ladder import FULL_TABLE, chunks, play_chunk, seat_names
from felt_dev.ladder_cli import _mixes, bar_label


def test_a_one_style_field_seats_as_before() -> None:
    for hero in range(6):
        names = seat_names("hard", "lag", hero, 6)
        assert list(names) == list(range(6))
        assert names == {s: "hard" if s == hero else "lag" for s in range(6)}


def test_a_mix_cycles_from_the_left_and_each_style_meets_every_position() -> None:
    mix = "a+b+c+d"
    seen: dict[str, set[int]] = {style: set() for style in "abcd"}
    for hero in range(5):
        names = seat_names("hard", mix, hero, 5)
        assert names[hero] == "hard"
        assert [names[(hero + k) % 5] for k in range(1, 5)] == ["a", "b", "c", "d"]
        for seat, name in names.items():
            if seat != hero:
                seen[name].add((seat - hero) % 5)
    # Relative to hard, each style sits one place: it still meets every position of the
    # button, which moves with the deal.
    assert all(len(places) == 1 for places in seen.values())
    six = seat_names("hard", mix, 0, 6)
    assert [six[s] for s in range(1, 6)] == ["a", "b", "c", "d", "a"]


def test_a_mix_is_played_at_full_tables_only() -> None:
    work = list(
        chunks(
            [Variant.NLHE, Variant.DRAW5], [("hard", "lag+nit")], 60, 1, 10, ("heads-up", "full")
        )
    )
    assert work and all(c.seats == FULL_TABLE[c.variant] for c in work)


def test_a_mixed_table_plays_with_every_style_seated() -> None:
    chunk = next(
        iter(chunks([Variant.DRAW5], [("hard", "rock+calling_station")], 10, 7, 2, ("full",)))
    )
    done, per_deal = play_chunk(chunk)
    assert done is chunk and len(per_deal) == chunk.count


def test_the_cli_expands_groups_and_refuses_unknown_bots() -> None:
    groups: dict[str, tuple[str, ...]] = {"pair": ("rock", "calling_station")}
    assert _mixes("pair", "hard,normal", groups) == (
        ("hard", "rock+calling_station"),
        ("normal", "rock+calling_station"),
    )
    assert _mixes("rock+easy", "hard", {}) == (("hard", "rock+easy"),)
    with pytest.raises(SystemExit, match="unknown bot"):
        _mixes("rock+nobody", "hard", {})


def test_a_long_mix_label_wraps_after_a_plus_and_keeps_every_name() -> None:
    pairing = "hard vs mix lag+nit+value_station+check_raiser+tight_aggressive+maniac_plus"
    label = bar_label(pairing, width=30)
    lines = label.split("\n")
    assert len(lines) > 1
    assert all(len(line) <= 30 for line in lines)
    assert all(line.endswith("+") for line in lines[:-1])
    assert label.replace("\n", "") == pairing
    assert bar_label("hard vs 5x lag") == "hard vs 5x lag"
