"""The lounges ``felt play`` creates: one table configuration per variant.

Stakes are small and the action clock generous (a person at a terminal reads
the table before acting); a seat that times out twice in a row is sat out, as
at the demo tables, so walking away never stalls the AI players.
"""

from __future__ import annotations

from google.protobuf.duration_pb2 import Duration

from poker.events.v1 import events_pb2 as epb

ACTION_CLOCK_S = 60
MAX_TIMEOUTS = 2


def table_config(variant: str, seats: int) -> epb.TableConfig:
    """A table of ``seats`` seats for ``variant`` (``holdem`` or ``draw``)."""
    clock = Duration(seconds=ACTION_CLOCK_S)
    if variant == "holdem":
        return epb.TableConfig(
            variant=epb.VARIANT_NLHE,
            seat_count=min(max(seats, 2), 9),
            small_blind=5,
            big_blind=10,
            action_clock=clock,
            max_consecutive_timeouts=MAX_TIMEOUTS,
        )
    if variant == "draw":
        return epb.TableConfig(
            variant=epb.VARIANT_DRAW5,
            seat_count=min(max(seats, 2), 6),
            ante=1,
            small_bet=10,
            big_bet=20,
            action_clock=clock,
            max_consecutive_timeouts=MAX_TIMEOUTS,
        )
    raise ValueError(f"unknown variant {variant!r}: holdem or draw")
