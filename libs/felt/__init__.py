"""Felt: an event-sourced poker backend. ``felt.core.rules`` is the pure rules core."""

from felt.compiled import warn_if_stale

__version__ = "0.1.0"

warn_if_stale()
