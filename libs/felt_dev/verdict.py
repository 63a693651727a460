"""Issue #14's done-when, checked from one ladder run: who beats whom, and by how much more.

Three checks, each at 95% confidence, per variant and table format:

- **beats**: hard's result against every other bot and baseline is above zero
  (the pairing's interval excludes zero on the positive side);
- **exploits**: against each baseline, hard wins at least as much as the
  better of easy and normal. The difference is measured *paired*: every
  pairing of a run plays the same decks (``ladder.deck_for``, common random
  numbers), so deal ``k`` of hard's match and deal ``k`` of normal's match
  share their cards, and the per-deal differences are the samples. That
  removes the card luck the two matches have in common, and the interval is
  far narrower than one treating the matches as independent (which the
  earlier docs did);
- **ordered**: hard beats normal and normal beats easy.

Why a module of its own: the ladder plays and summarises, this judges; the
rules of judgement (what "at least the best of the others" means) are the
issue's and change on their own schedule.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from felt.core.rules.config import Variant
from felt.players.bots import BASELINES
from felt_dev.ladder import Z95, PairingResult, mean_and_stderr, table_name, unit_name

# Per-deal results of one run: (variant, seats, first, second) -> first's net per deal, in units.
DealResults = Mapping[tuple[Variant, int, str, str], Sequence[float]]


@dataclass(frozen=True, slots=True)
class Difference:
    """How much more ``first`` wins than ``other`` against ``opponent``, per 100 hands.

    ``paired`` says whether the per-deal differences were used (both matches
    played the same deals) or the two results' errors were combined as if
    independent (deal counts differ).
    """

    variant: str
    seats: int
    opponent: str
    first: str
    other: str
    per100: float
    ci_low: float
    ci_high: float
    unit: str
    paired: bool

    @property
    def table(self) -> str:
        return table_name(self.seats)

    def as_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["table"] = self.table
        return d


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the verdict: a criterion, where it applies, the evidence and whether it holds.

    ``status`` is ``"yes"`` (holds at 95%), ``"no"`` (the opposite holds at
    95%) or ``"n.s."`` (the interval contains zero: not shown either way).
    """

    criterion: str
    variant: str
    table: str
    subject: str
    per100: float
    ci_low: float
    ci_high: float
    unit: str
    status: str

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _status(low: float, high: float) -> str:
    return "yes" if low > 0 else "no" if high < 0 else "n.s."


def compare(
    variant: Variant,
    seats: int,
    opponent: str,
    first: str,
    other: str,
    a: Sequence[float],
    b: Sequence[float],
) -> Difference:
    """``first``'s per-deal results ``a`` minus ``other``'s ``b``, both against ``opponent``.

    Equal lengths mean the same deals (the ladder's common random numbers),
    so the difference is taken deal by deal; otherwise the two means and
    their standard errors are combined as independent samples.
    """
    if len(a) == len(b) and len(a) > 1:
        diffs = [x - y for x, y in zip(a, b, strict=True)]
        mean, se = mean_and_stderr(diffs)
        paired = True
    else:
        ma, sa = mean_and_stderr(a)
        mb, sb = mean_and_stderr(b)
        mean, se = ma - mb, math.hypot(sa, sb)
        paired = False
    per100, err = mean / seats * 100, se / seats * 100
    return Difference(
        variant=variant.value,
        seats=seats,
        opponent=opponent,
        first=first,
        other=other,
        per100=per100,
        ci_low=per100 - Z95 * err,
        ci_high=per100 + Z95 * err,
        unit=unit_name(variant),
        paired=paired,
    )


def exploitation(deals: DealResults, results: Sequence[PairingResult]) -> list[Difference]:
    """Hard minus the better of easy and normal, against each baseline each was played against."""
    by_key = {(r.variant, r.seats, r.first, r.second): r for r in results}
    out = []
    for variant, seats in dict.fromkeys((v, s) for v, s, _, _ in deals):
        for base in BASELINES:
            hard = deals.get((variant, seats, "hard", base))
            others = [
                (by_key[(variant.value, seats, level, base)].per100, level)
                for level in ("normal", "easy")
                if (variant, seats, level, base) in deals
            ]
            if hard is None or not others:
                continue
            best = max(others)[1]
            out.append(
                compare(
                    variant, seats, base, "hard", best, hard, deals[(variant, seats, best, base)]
                )
            )
    return out


def verdict(results: Sequence[PairingResult], differences: Sequence[Difference]) -> list[Check]:
    """Every check the run's pairings allow, in the issue's order."""
    checks = [_pairing_check("hard beats", r) for r in results if r.first == "hard"]
    for d in differences:
        subject = f"hard - {d.other} vs {d.opponent}"
        checks.append(_check("hard exploits at least as well", d.variant, d.table, subject, d))
    checks += [
        _pairing_check("levels ordered", r)
        for r in results
        if (r.first, r.second) == ("normal", "easy")
    ]
    return checks


def _pairing_check(criterion: str, r: PairingResult) -> Check:
    return _check(criterion, r.variant, table_name(r.seats), r.pairing, r)


def _check(
    criterion: str, variant: str, table: str, subject: str, r: PairingResult | Difference
) -> Check:
    status = _status(r.ci_low, r.ci_high)
    return Check(criterion, variant, table, subject, r.per100, r.ci_low, r.ci_high, r.unit, status)


def markdown(
    results: Sequence[PairingResult], differences: Sequence[Difference], checks: Sequence[Check]
) -> str:
    """The run as Markdown: every pairing, the paired differences and the verdict's tally."""
    lines = [
        "| variant | table | pairing | hands | result | 95% CI |",
        "|---|---|---|---:|---:|---|",
    ]
    for r in results:
        ns = "" if r.significant else " (n.s.)"
        lines.append(
            f"| {r.variant} | {table_name(r.seats)} | {r.pairing} | {r.hands} | "
            f"{r.per100:+.1f} {r.unit} | [{r.ci_low:+.1f}, {r.ci_high:+.1f}]{ns} |"
        )
    if differences:
        lines += [
            "",
            "Against each baseline, hard minus the better of normal and easy (paired over the "
            "same deals):",
            "",
            "| variant | table | baseline | hard - best other | 95% CI |",
            "|---|---|---|---:|---|",
        ]
        for d in differences:
            ns = " (n.s.)" if _status(d.ci_low, d.ci_high) == "n.s." else ""
            lines.append(
                f"| {d.variant} | {d.table} | {d.opponent} | {d.per100:+.1f} vs {d.other} | "
                f"[{d.ci_low:+.1f}, {d.ci_high:+.1f}]{ns} |"
            )
    return "\n".join([*lines, "", tally(checks)])


def tally(checks: Sequence[Check]) -> str:
    """How many checks hold at 95%, and each one that does not (as the run prints it)."""
    held = sum(1 for c in checks if c.status == "yes")
    lines = [f"Verdict: {held} of {len(checks)} checks hold at 95%."]
    failing = [c for c in checks if c.status != "yes"]
    if failing:
        lines += ["", "Not shown at 95%:", ""]
        for c in failing:
            lines.append(
                f"- {c.criterion}, {c.variant} {c.table}: {c.subject} {c.per100:+.1f} {c.unit} "
                f"[{c.ci_low:+.1f}, {c.ci_high:+.1f}] ({c.status})"
            )
    return "\n".join(lines) + "\n"
