"""PHH parsing: the fast TOML subset, chip scaling, half chips and action syntax.

The fast reader must give exactly what ``tomllib`` gives (it falls back to it
for anything unusual), and scaling must make every input amount an integer
without hiding a half chip in the finishing stacks.
"""

from __future__ import annotations

import datetime
import tomllib
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from felt.core.cards import cards
from felt.tools.phh.parse import PhhError, load, loads, loads_toml, parse_action, parse_cards

CORPUS = Path(__file__).resolve().parents[2].parent / "shared/conformance/phh"

BASE = """variant = 'NT'
ante_trimming_status = true
antes = [0, 0, 0]
blinds_or_straddles = [1, 2, 0]
min_bet = 2
starting_stacks = [200, 200, 200]
actions = ['d dh p1 AcKd', 'd dh p2 ????', 'd dh p3 2h2d', 'p3 f', 'p1 cc', 'p2 cc']
"""


def _tomllib(text: str) -> dict[str, object]:
    return tomllib.loads(text, parse_float=Decimal)


@pytest.mark.parametrize(
    "text",
    [
        BASE,
        BASE + "finishing_stacks = [198, 202, 200]\n",
        "a = 1\nb = -2\nc = 0.25\nd = 'x # y'\ne = \"q\"\nf = true\ng = false\n",
        "a = [1, 2, 3,]\nb = []\nc = ['x', 'y',]\nd = [0.10, 0.25, 0]\n",
        "# comment\n\n  a = 1  \nb = 2 # trailing comment\n",
        "time = 00:00:01\nday = 1979-05-27\n",
        'name = "tab\\tand \\"quote\\""\n',
        "names = ['say \"hi\"']\n",
        "names = [\"a\", 'b']\n",
        "actions = [\n  'd dh p1 AcKd',  # Ivey\n  'p1 f',\n]\nx = 1\n",
        "[table]\nkey = 1\n",
        "a.b = 1\n",
        "big = 1_000\nplus = +5\nexp = 1e3\n",
        "s = '''multi\nline'''\n",
    ],
)
def test_fast_toml_reads_like_tomllib(text: str) -> None:
    assert loads_toml(text) == _tomllib(text)


@pytest.mark.parametrize("text", ["a = 1\na = 2\n", "a = [1, 2\n", "a = 007\n", "a = 'x\n"])
def test_bad_toml_is_a_phh_error(text: str) -> None:
    with pytest.raises(tomllib.TOMLDecodeError):
        _tomllib(text)
    with pytest.raises(PhhError, match="not valid TOML"):
        loads_toml(text)


_KEYS = ["a", "b", "c-d", "e_f", "'q'", "a.b", "1"]
_VALUES = [
    "1", "-1", "007", "1.50", "-0.0", "1e3", "+5", "1_0", "'a'", "''", "'a''", '"a\\"b"',
    "'#'", "'a' # c", "true", "True", "[1, 2]", "[1,2,]", "[]", "[,]", "['a', 'b']",
    "['a','b']", "['a', \"b\"]", "[1, 'a']", "[[1]]", "[0.10, 0.25, 0]", "00:00:01",
    "1979-05-27", "{a = 1}", "'x", "[1, 2", "'''", "[',]", "['']", "[ 1, 2 ]  ",
    # number lists go through a JSON scanner first: what JSON reads and TOML does not
    "[NaN]", "[-Infinity]", "[1, true]", "[1, null]", '[1, "a"]', "[1, {}]", "[01]",
    "[1e5, 2E-3]", "[-0, 0.0]", "[\t1 ,2]", "[1_000]", "[+1]", "[0x1f]", "[inf]", "[1.]",
]  # fmt: skip


def _outcome(parse: Callable[[str], object], text: str) -> tuple[str, object]:
    try:
        return "ok", parse(text)
    except (tomllib.TOMLDecodeError, PhhError):
        return "error", None


@settings(max_examples=600, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(_KEYS), st.sampled_from([" = ", "="]), st.sampled_from(_VALUES)),
        min_size=1,
        max_size=4,
    )
)
def test_fast_toml_agrees_with_tomllib_on_odd_lines(lines: list[tuple[str, str, str]]) -> None:
    text = "\n".join("".join(line) for line in lines)
    assert _outcome(loads_toml, text) == _outcome(_tomllib, text)


def test_fast_toml_matches_tomllib_on_the_corpus() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"PHH corpus not found at {CORPUS}")
    files = sorted(CORPUS.rglob("*.phh"))
    for path in files[:: max(1, len(files) // 300)] + sorted(CORPUS.glob("nlhe/[!p]*/*.phh")):
        text = path.read_text()
        assert loads_toml(text) == _tomllib(text), path


def test_integer_stakes_keep_scale_one() -> None:
    hand = loads(BASE)
    assert hand.scale == 1
    assert hand.variant == "NT"
    assert hand.starting_stacks == (200, 200, 200)
    assert hand.blinds_or_straddles == (1, 2, 0)
    assert hand.min_bet == 2
    assert hand.finishing_stacks is None
    assert hand.players == ()
    assert hand.ante_trimming_status is True


def test_decimal_stakes_scale_by_the_smallest_power_of_ten() -> None:
    text = """variant = 'NT'
antes = [0, 0, 0, 0]
blinds_or_straddles = [0.10, 0.25, 0, 0]
min_bet = 0.25
starting_stacks = [25, 54.75, 16.35, 24.65]
actions = ['p3 f', 'p4 cbr 0.75', 'p1 f', 'p2 cc']
finishing_stacks = [24.90, 54.25, 16.35, 25.25]
"""
    hand = loads(text)
    assert hand.scale == 100
    assert hand.starting_stacks == (2500, 5475, 1635, 2465)
    assert hand.blinds_or_straddles == (10, 25, 0, 0)
    assert hand.min_bet == 25
    assert hand.actions[1].amount == 75
    assert hand.finishing_stacks == tuple(map(Fraction, (2490, 5425, 1635, 2525)))
    assert hand.half_chip_players == ()


def test_trailing_zeros_do_not_inflate_the_scale() -> None:
    text = BASE.replace("antes = [0, 0, 0]", "antes = [2.50, 2.50, 2.50]").replace(
        "starting_stacks = [200, 200, 200]", "starting_stacks = [200.0, 200.00, 200]"
    )
    hand = loads(text)
    assert hand.scale == 10
    assert hand.antes == (25, 25, 25)
    assert hand.starting_stacks == (2000, 2000, 2000)


def test_an_action_amount_alone_can_set_the_scale() -> None:
    hand = loads(BASE.replace("'p3 f'", "'p3 cbr 4.125'"))
    assert hand.scale == 1000
    assert hand.actions[3].amount == 4125
    assert hand.starting_stacks == (200_000, 200_000, 200_000)


def test_half_chips_are_detected_not_scaled_away() -> None:
    hand = loads(BASE + "finishing_stacks = [199.5, 200.5, 200.0]\n")
    assert hand.scale == 1  # finishing stacks do not set the scale
    assert hand.finishing_stacks == (Fraction(399, 2), Fraction(401, 2), Fraction(200))
    assert hand.half_chip_players == (0, 1)


def test_half_chips_at_decimal_stakes() -> None:
    text = BASE.replace("blinds_or_straddles = [1, 2, 0]", "blinds_or_straddles = [0.01, 0.02, 0]")
    hand = loads(text + "finishing_stacks = [199.995, 200.005, 200]\n")
    assert hand.scale == 100
    assert hand.finishing_stacks is not None
    assert hand.finishing_stacks[0] == Fraction(39999, 2)
    assert hand.half_chip_players == (0, 1)


def test_pluribus_half_chip_file() -> None:
    path = CORPUS / "nlhe/pluribus/102/0.phh"
    if not path.is_file():
        pytest.skip(f"PHH corpus not found at {CORPUS}")
    hand = load(path)
    assert hand.scale == 1
    assert hand.finishing_stacks is not None
    assert hand.finishing_stacks[0] == Fraction(20225, 2)
    assert hand.half_chip_players == (0, 4)
    assert hand.players[5] == "Pluribus"
    assert hand.extra["hand"] == 0


def test_other_fields_are_kept_as_parsed() -> None:
    hand = loads(BASE + "venue = 'PokerStars'\ntime = 00:00:01\nseats = [2, 4, 5]\n")
    assert hand.extra == {
        "venue": "PokerStars",
        "time": datetime.time(0, 0, 1),
        "seats": [2, 4, 5],
    }


def test_scalar_forced_bets_apply_to_everyone_and_short_lists_are_padded() -> None:
    hand = loads(BASE.replace("antes = [0, 0, 0]", "antes = 1").replace("[1, 2, 0]", "[1, 2]"))
    assert hand.antes == (1, 1, 1)
    assert hand.blinds_or_straddles == (1, 2, 0)


def test_actions() -> None:
    hand = loads(BASE)
    dealt, unknown = hand.actions[0], hand.actions[1]
    assert (dealt.op, dealt.player, dealt.cards) == ("dh", 0, cards("AcKd"))
    assert unknown.cards == (None, None)
    fold = hand.actions[3]
    assert (fold.op, fold.player, fold.text) == ("f", 2, "p3 f")
    assert parse_action("d db 2c3d4h").cards == cards("2c3d4h")
    assert parse_action("d db 2c3d4h").player is None
    assert parse_action("p2 cbr 300  # a comment").amount == 300
    assert parse_action("p1 sm AcKd").cards == cards("AcKd")
    assert parse_action("p1 sm -").cards == ()
    assert parse_action("p1 sm").cards == ()
    assert parse_action("p10 f").player == 9
    assert parse_action("# only a comment").op == ""
    assert parse_cards("As??") == (cards("As")[0], None)
    assert parse_cards("tC") == cards("Tc")


@pytest.mark.parametrize(
    "text",
    ["d dh p1 AcKd", "d dh p9 2h2d", "d dh p3 tCkD", "d dh p1 Ac??", "d dh p12 AcKd",
     "d dh p4 AcKd#x", "d dh p1 AcKdQh"],
)  # fmt: skip
def test_hole_card_deals_read_alike_on_every_path(text: str) -> None:
    # The common 'd dh pN XxYy' shape has a fast path; the general one must agree with it.
    words = text.split("#")[0].split()
    dealt = parse_action(text)
    assert (dealt.op, dealt.player, dealt.cards) == (
        "dh",
        int(words[2][1:]) - 1,
        parse_cards(words[3]),
    )


def test_actions_are_cached_and_shared() -> None:
    assert parse_action("p3 cbr 225") is parse_action("p3 cbr 225")
    assert parse_action("p3 cbr 2.25", 100).amount == 225


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ("x1 f", "is not a player"),
        ("p0 f", "is not a player"),
        ("p1 raise 5", "is not a player action"),
        ("p1 cbr", "cbr needs one amount"),
        ("p1 cbr ten", "is not an amount"),
        ("p1 cbr -5", "is not an amount"),
        ("p1 f now", "extra words"),
        ("d dh p1 AcK", "is not a list of cards"),
        ("d dh p1 AcKx", "is not a card"),
        ("d xx p1", "is not a dealing action"),
    ],
)
def test_bad_actions_name_the_action(action: str, message: str) -> None:
    text = BASE.replace("'p3 f'", f"'{action}'")
    with pytest.raises(PhhError, match=message) as excinfo:
        loads(text)
    assert "action 3" in str(excinfo.value)


def test_an_amount_finer_than_the_scale_is_refused() -> None:
    with pytest.raises(PhhError, match="not a whole number"):
        parse_action("p1 cbr 2.5", 1)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("variant = 'NT'\n", ""), "'variant' field is missing"),
        (("starting_stacks = [200, 200, 200]\n", ""), "'starting_stacks' field is missing"),
        (("actions = [", "actions = 5\nx = ["), "'actions' field is missing"),
        (("antes = [0, 0, 0]", "antes = [0, 0, 0, 0]"), "antes lists 4 amounts for 3 players"),
        (("min_bet = 2", "min_bet = 'two'"), "min_bet must be an amount"),
        (("antes = [0, 0, 0]", "antes = [0, true, 0]"), "not an amount"),
    ],
)
def test_bad_fields(edit: tuple[str, str], message: str) -> None:
    with pytest.raises(PhhError, match=message):
        loads(BASE.replace(*edit))


def test_finishing_stacks_must_match_the_players() -> None:
    with pytest.raises(PhhError, match="finishing_stacks lists 2 stacks for 3 players"):
        loads(BASE + "finishing_stacks = [300, 300]\n")
