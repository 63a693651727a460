-- Fair, bounded recovery of add-chips sagas, as of buy-ins (migration 0011): each attempt
-- of the recovery pass is recorded on the row before the table service is called
-- (attempts, last_attempt_at) with when the saga is due again (next_attempt_at:
-- exponential backoff); the pass takes the sagas longest due first
-- (COALESCE(next_attempt_at, created_at)). After a bounded number of attempts stuck_at is
-- set: the pass leaves the saga to an operator (`felt sagas`), its chips still held for it
-- (counted as at the table), who resolves it (added or refunded, by the table service's
-- answer to the saga's own request) or puts it back in the queue. last_error is the last
-- unknown outcome, for the operator.
ALTER TABLE chip_adds
    ADD COLUMN attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    ADD COLUMN last_attempt_at timestamptz,
    ADD COLUMN next_attempt_at timestamptz,
    ADD COLUMN stuck_at timestamptz,
    ADD COLUMN last_error text CHECK (length(last_error) <= 500);
-- The pass's query: RESERVED, not stuck, longest due first (replaces the oldest-first one).
DROP INDEX chip_adds_unfinished;
CREATE INDEX chip_adds_due ON chip_adds ((COALESCE(next_attempt_at, created_at)), saga_id)
    WHERE state = 'reserved' AND stuck_at IS NULL;
-- The operator's list, and the stuck gauge.
CREATE INDEX chip_adds_stuck ON chip_adds (stuck_at, saga_id)
    WHERE state = 'reserved' AND stuck_at IS NOT NULL;
-- A closing lounge's chip adds under way (a lounge closes once none holds chips).
CREATE INDEX chip_adds_reserved_lounge ON chip_adds (lounge_id) WHERE state = 'reserved';
