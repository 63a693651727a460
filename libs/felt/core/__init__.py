"""The pure core: cards, hand evaluation, value classes, a hand (rules) and a table.

No I/O, clock or randomness: decide(state, command) -> events, apply(state, event) -> state.
"""
