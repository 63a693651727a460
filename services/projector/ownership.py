"""Which live projector follows which table: rendezvous (highest random weight) hashing.

Every projector computes the same answer from the same member list, with no
coordination: a table goes to the member with the highest hash of (member,
table). When a member joins or leaves, only the tables it wins or held move
(about 1/n of them), so a rebalance is small. During a change two members may
briefly both want a table; the lease (``ProjectorFeed.claim``) lets only one
follow it, and the archive's cursor check makes even a stale follower harmless.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence


def _weight(member: str, table_id: str) -> bytes:
    return hashlib.blake2b(f"{member}\0{table_id}".encode(), digest_size=8).digest()


def owner_of(table_id: str, members: Sequence[str]) -> str | None:
    """The member that should follow ``table_id`` (None when there are no members)."""
    if not members:
        return None
    return max(members, key=lambda m: (_weight(m, table_id), m))
