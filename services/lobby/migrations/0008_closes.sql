-- Closing lounges. A lounge is 'closing' from its owner's CloseLounge (or its table
-- ending by itself at its hands or time limit) until every seat's chips are home:
-- each player's seat, once the table vacated it, is settled in one transaction (its
-- stack credited as a 'table_closed' movement, ledger key table-closed/<saga_id>, the
-- saga 'left', the lounge's seat freed); then it is 'closed' and its AI seats are
-- cleared. A closing lounge's seat still held by its player is given the table's
-- sequence then as its buy-in's leave_sequence (before the seat is asked to leave), so
-- its PlayerLeft is read after it, as a leave's is. ends_by_itself marks the lounges whose table closes at a limit
-- (max_hands or close_time), which the recovery pass looks at to settle them.
ALTER TABLE lounges DROP CONSTRAINT lounges_state_check;
ALTER TABLE lounges
    ADD CONSTRAINT lounges_state_check
        CHECK (state IN ('creating', 'open', 'closing', 'closed')),
    ADD COLUMN ends_by_itself boolean NOT NULL DEFAULT false;
CREATE INDEX lounges_closing ON lounges (created_at) WHERE state = 'closing';
CREATE INDEX lounges_ending ON lounges (listing_id) WHERE state = 'open' AND ends_by_itself;
CREATE INDEX buy_ins_lounge_unsettled ON buy_ins (lounge_id, created_at)
    WHERE state IN ('reserved', 'seated', 'leaving');
