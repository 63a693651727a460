"""Felt: an event-sourced poker backend. ``felt.rules`` is the pure rules core."""

__version__ = "0.1.0"
