"""The opponent model: public events only, the right counts, and what the hard bot takes from it."""

from __future__ import annotations

import random

import pytest

from felt.core.rules.commands import StartHand
from felt.core.rules.config import Variant
from felt.core.rules.engine import execute
from felt.core.rules.events import Event
from felt.core.rules.legal import legal_actions
from felt.core.rules.views import redact_all, view_for
from felt.core.table.events import PlayerLeft
from felt.core.table.stats import SeatStats
from felt.players.bots import get_bot
from felt.players.bots.base import situation
from felt.players.bots.hard import Style, TableRead
from felt.players.bots.opponents import ModelBuilder, build_stats
from felt.wire.seat_stats import stats_from_proto, stats_to_proto
from felt_dev.ladder import deck_for, hand_id_for, hand_setup, master_key
from poker.v1 import ai_pb2


def play(variant: Variant, names: list[str], hands: int, seed: int = 7) -> list[list[Event]]:
    """Full (unredacted) histories of ``hands`` ladder hands between ``names`` (seat order)."""
    key = master_key(seed)
    n = len(names)
    bots = {s: get_bot(name) for s, name in enumerate(names)}
    out: list[list[Event]] = []
    for deal in range(hands):
        setup = hand_setup(
            variant, hand_id_for(key, str(deal)), deck_for(variant, key, deal, n), deal % n, n
        )
        state, events = execute(None, StartHand(setup))
        history: list[Event] = list(events)
        rng = random.Random(deal)
        while not state.ended:
            legal = legal_actions(state)
            assert legal is not None
            seat = legal.seat
            cmd = bots[seat].decide(view_for(state, seat), redact_all(history, seat), legal, rng)
            state, events = execute(state, cmd)
            history.extend(events)
        out.append(history)
    return out


@pytest.mark.parametrize("variant", [Variant.NLHE, Variant.DRAW5])
def test_model_holds_no_hidden_card(variant: Variant) -> None:
    """The full stream, the spectator stream and every seat's stream fold to the same model."""
    names = ["hard", "random", "calling_station", "maniac"]
    hands = play(variant, names, 40)
    full = [e for h in hands for e in h]
    stats = build_stats(full)
    assert stats == build_stats(e for h in hands for e in redact_all(h, None))
    for seat in range(len(names)):
        assert stats == build_stats(e for h in hands for e in redact_all(h, seat))
    assert all(s.hands == 40 for s in stats.values())
    assert sum(s.shown for s in stats.values()) > 0  # showdowns were read


@pytest.mark.parametrize("variant", [Variant.NLHE, Variant.DRAW5])
def test_counts_describe_the_styles(variant: Variant) -> None:
    """Heads-up station vs maniac: the station never raises or folds, the maniac always raises."""
    stats = build_stats(e for h in play(variant, ["calling_station", "maniac"], 30) for e in h)
    station, maniac = stats[0], stats[1]
    assert station.hands == maniac.hands == 30
    assert station.pfr == 0 and station.bets == 0 and station.folded == 0
    assert station.first_folded == 0 and station.faced > 0
    assert maniac.pfr == 30 and maniac.folded == 0 and maniac.calls == 0
    assert station.fold_rate() < 0.2 and maniac.aggression() > 0.7 and maniac.checks == 0
    if variant == Variant.DRAW5:
        assert station.pat == 30  # it never draws


def test_rock_and_loose_passive_styles() -> None:
    stats = build_stats(
        e for h in play(Variant.NLHE, ["rock", "loose_passive", "random"], 90) for e in h
    )
    rock, loose = stats[0], stats[1]
    assert rock.vpip_rate(0.5, 1) < 0.2 < loose.vpip_rate(0.5, 1)
    assert loose.pfr == 0
    assert rock.first_folded > 0


def test_a_new_player_in_a_seat_starts_a_new_record() -> None:
    builder = ModelBuilder().observe_all(
        e for h in play(Variant.DRAW5, ["rock", "maniac"], 5) for e in h
    )
    assert set(builder.stats) == {0, 1}
    builder.observe(PlayerLeft(1, 5000))
    assert set(builder.stats) == {0}


def test_rates_shrink_to_the_prior() -> None:
    assert SeatStats().fold_rate(prior=0.4) == 0.4
    assert SeatStats(faced=1000, folded=0).fold_rate() < 0.01
    assert SeatStats(hands=2, vpip=1) + SeatStats(hands=3, vpip=3) == SeatStats(hands=5, vpip=4)


def test_wire_round_trip_and_hostile_counts() -> None:
    table = {0: SeatStats(hands=10, vpip=4, pfr=2, faced=5, folded=3), 3: SeatStats(hands=1)}
    assert stats_from_proto(stats_to_proto(table)) == table
    bad = [
        ai_pb2.SeatStats(seat=2, hands=3, vpip=99, faced=1, folded=50),
        ai_pb2.SeatStats(seat=40, hands=5),
        ai_pb2.SeatStats(seat=-1, hands=5),
    ]
    read = stats_from_proto(bad)
    assert set(read) == {2}
    assert read[2].vpip == 3 and read[2].folded == 1 and 0 <= read[2].fold_rate() <= 1


def test_hard_reads_stations_and_folders() -> None:
    """No bluffs into players who never fold, more against players who fold too much."""
    hands = play(Variant.NLHE, ["hard", "calling_station"], 2)
    state, _ = execute(
        None,
        StartHand(hand_setup(Variant.NLHE, "h-x", deck_for(Variant.NLHE, master_key(1), 0), 0)),
    )
    legal = legal_actions(state)
    assert legal is not None and hands
    sit = situation(view_for(state, legal.seat), [], legal)
    other = 1 - legal.seat
    station = {other: SeatStats(hands=50, vpip=50, faced=60, folded=0, calls=80)}
    folder = {other: SeatStats(hands=50, vpip=20, faced=60, folded=50, bets=10, calls=5, checks=20)}
    assert TableRead.of(None, sit, 0.1).bluff == 0.1
    s = TableRead.of(station, sit, 0.1)
    assert s.bluff == 0.0 and s.stations and s.value_boost > 0
    f = TableRead.of(folder, sit, 0.1)
    assert f.bluff > 0.1 and not f.stations
    # A maniac's bets are not credible; its raising range is wide.
    maniac = Style.of(SeatStats(hands=50, vpip=50, pfr=50, bets=90, calls=0, checks=2), True)
    assert maniac.credible < 0.5 and maniac.pfr > 0.8
    assert Style.of(SeatStats(hands=50), True).credible == 1.0


def test_tight_players_still_have_a_range() -> None:
    """A seat that almost never enters a pot gets a narrow range, never an empty one."""
    from felt.players.bots.hard import _share

    assert _share(0.0) == 0.04 and _share(0.016) == 0.04 and _share(3.0) == 1.0
    stats = build_stats(
        e
        for h in play(Variant.NLHE, ["hard", "rock", "rock", "rock", "rock", "rock"], 30)
        for e in h
    )
    assert stats[1].vpip < stats[1].hands


def test_heads_up_pot_folds_are_counted_apart() -> None:
    """Facing a later-round bet in a pot down to two players counts in ``hu_faced`` too.

    Dealt heads-up, every pot is such a pot; at a full table only some are, and
    a request from before the field existed reads as "nothing seen yet".
    """
    heads_up = build_stats(e for h in play(Variant.NLHE, ["random", "normal"], 60) for e in h)
    assert all(s.hu_faced == s.faced and s.hu_folded == s.folded for s in heads_up.values())
    names = ["random", "normal", "random", "normal", "random", "normal"]
    full = build_stats(e for h in play(Variant.NLHE, names, 80) for e in h)
    assert all(s.hu_folded <= s.hu_faced <= s.faced for s in full.values())
    assert 0 < sum(s.hu_faced for s in full.values()) < sum(s.faced for s in full.values())
    assert stats_from_proto(stats_to_proto(full)) == full
    old = stats_from_proto([ai_pb2.SeatStats(seat=1, hands=9, faced=6, folded=4)])
    assert old[1].hu_faced == 0 and old[1].hu_fold_rate() == 0.4
    hostile = stats_from_proto([ai_pb2.SeatStats(seat=1, faced=3, hu_faced=9, hu_folded=9)])
    assert hostile[1].hu_faced == 3 and hostile[1].hu_folded == 3


def test_first_in_raises_are_counted_by_seat_class() -> None:
    """Open chances and opens: heads-up the button is first in every hand it deals.

    At a full table the normal bot opens wider from the button and small blind
    than earlier, and the record shows it; the wire carries the counts (capped).
    """
    heads_up = build_stats(e for h in play(Variant.NLHE, ["normal", "normal"], 60) for e in h)
    for s in heads_up.values():
        assert s.open_chances == s.late_open_chances == 30  # its 30 buttons
        assert 0 < s.late_opened <= s.opened <= s.pfr
    names = ["normal"] * 6
    full = build_stats(e for h in play(Variant.NLHE, names, 300) for e in h)
    total = sum(full.values(), SeatStats())
    assert total.late_open_chances < total.open_chances
    assert total.open_rate(True, 0.3) > total.open_rate(False, 0.3) + 0.1
    assert stats_from_proto(stats_to_proto(full)) == full
    hostile = stats_from_proto(
        [ai_pb2.SeatStats(seat=1, hands=4, open_chances=9, opened=9, late_opened=7)]
    )
    s = hostile[1]
    assert s.open_chances == 4 and s.opened == 4 and s.late_opened == 0
    assert 0 <= s.open_rate(False, 0.2) <= 1 and 0 <= s.open_rate(True, 0.2) <= 1


def test_a_request_claiming_more_pat_hands_than_draws_reads_as_always_pat() -> None:
    """Hostile counts (pat above the hands that reached the draw) stay a rate of at most 1."""
    hostile = stats_from_proto([ai_pb2.SeatStats(seat=1, hands=80, pat=80, saw_later=0)])
    assert hostile[1].pat_rate() <= 1.0
    assert 0.0 <= Style.of(hostile[1], heads_up=True).pat <= 1.0
    many = stats_from_proto([ai_pb2.SeatStats(seat=1, hands=80, pat=80, saw_later=20)])
    assert many[1].pat_rate() <= 1.0


def test_re_raises_are_counted_apart_from_raises_over_limps() -> None:
    """``reraised`` counts first-round raises made facing a raise, nothing else.

    Beside limpers (`loose_passive`) the tight player raises often without being first
    in: over the limps. Those raises are in its PFR but are not re-raises, so its
    re-raise rate stays low, which a rate read as ``pfr - opened`` got wrong.
    """
    names = ["tag", "loose_passive", "tag", "loose_passive", "tag", "loose_passive"]
    stats = build_stats(e for h in play(Variant.NLHE, names, 300) for e in h)
    tight = sum((stats[s] for s in (0, 2, 4)), SeatStats())
    assert tight.reraised <= tight.first_faced
    assert (tight.pfr - tight.opened) / tight.first_faced > 0.3  # mostly raises over limps
    assert tight.reraise_rate() < 0.1
    assert stats_from_proto(stats_to_proto(stats)) == stats
    # An older request has no re-raise count: the rate is the prior's pull toward none seen.
    old = stats_from_proto([ai_pb2.SeatStats(seat=1, hands=50, first_faced=40, pfr=20)])
    assert old[1].reraised == 0 and old[1].reraise_rate() < 0.07
    hostile = stats_from_proto([ai_pb2.SeatStats(seat=1, hands=9, first_faced=5, reraised=50)])
    assert hostile[1].reraised == 5 and hostile[1].reraise_rate() <= 1.0


@pytest.mark.parametrize("variant", [Variant.NLHE, Variant.DRAW5])
def test_re_raises_are_counted(variant: Variant) -> None:
    """Players who raise whatever they face re-raise: the count sees it, in both games."""
    stats = build_stats(e for h in play(variant, ["maniac", "maniac", "maniac"], 40) for e in h)
    total = sum(stats.values(), SeatStats())
    assert 0 < total.reraised <= total.first_faced
    assert total.reraise_rate() > 0.3
    # Re-raised players face several raises a hand: the count is of decisions, above
    # the hands, and the wire carries it as it is (a cap at the hands trimmed it).
    assert total.first_faced > total.hands
    assert stats_from_proto(stats_to_proto(stats)) == stats
