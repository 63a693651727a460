"""The lobby's rules, pure: what a saga's transition does (its state after, the chips it
credits, the seat it frees), decided on the saga as stored and applied by a unit of work
(:mod:`services.lobby.domain.unit`) that each adapter provides for its storage, so the
PostgreSQL adapters and the in-memory fakes run the same rules."""
