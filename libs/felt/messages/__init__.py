"""The core's values and events as ``poker.events.v1`` protobuf messages, both ways.

The one place both boundaries share: storage (``felt.storage.eventstore.codec``, events to
bytes) and the wire (``felt.wire.convert``, views, redacted events and proofs) build on it.
``values``: enums, cards, setups, configs; ``events``: the event table and the envelope.
"""
