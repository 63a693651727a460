-- Fair, bounded recovery of buy-in sagas (issue #20). The recovery pass used to take the
-- 100 oldest 'reserved' rows every pass, forever: 100 that never finish starved every
-- saga behind them. Now each attempt of the pass is recorded on the row before the table
-- service is called (attempts, last_attempt_at) with when the saga is due again
-- (next_attempt_at: exponential backoff); the pass takes the sagas longest due first
-- (COALESCE(next_attempt_at, created_at): a saga never attempted is due since it was
-- reserved). After a bounded number of attempts stuck_at is set: the pass leaves the
-- saga to an operator (`felt sagas`), its chips still held for it (counted as on the
-- table), who resolves it (seated or refunded, by what the table service shows) or puts
-- it back in the queue. last_error is the last unknown outcome, for the operator.
ALTER TABLE buy_ins
    ADD COLUMN attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    ADD COLUMN last_attempt_at timestamptz,
    ADD COLUMN next_attempt_at timestamptz,
    ADD COLUMN stuck_at timestamptz,
    ADD COLUMN last_error text CHECK (length(last_error) <= 500);
-- The pass's query: RESERVED, not stuck, longest due first.
CREATE INDEX buy_ins_due ON buy_ins ((COALESCE(next_attempt_at, created_at)), saga_id)
    WHERE state = 'reserved' AND stuck_at IS NULL;
-- The operator's list, and the stuck gauge.
CREATE INDEX buy_ins_stuck ON buy_ins (stuck_at, saga_id)
    WHERE state = 'reserved' AND stuck_at IS NOT NULL;
-- A player's buy-in under way at a lounge: a join with another request id is refused
-- (BUY_IN_PENDING) rather than holding a second buy-in.
CREATE INDEX buy_ins_reserved_player ON buy_ins (player_id, lounge_id)
    WHERE state = 'reserved';
