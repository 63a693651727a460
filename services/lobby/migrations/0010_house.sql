-- The house account: the chips its AI seats play with. A lounge's AI seat is funded
-- from the house (a 'house_seat' row, ledger key s/house-seat/<lounge_id>/<seat>/0
-- with its fingerprint sealing the amount, written before the table service seats it) and settled back when the seat is
-- vacated at the lounge's close, or refunded whole when the lounge fails to be created
-- (a 'house_return' row, key s/house-return/<lounge_id>/<seat>/0: once per seat). The
-- house's balance may go below zero: it is the house's result (what its AI seats won,
-- net, from the players). Conservation, with the house:
--   chips created (grants, top-ups) == balances + chips at tables + the house's balance
-- (the query is in docs/operations.md, "The house account and the chips audit").
CREATE TABLE house_account (
    house   boolean PRIMARY KEY DEFAULT true CHECK (house),  -- one row
    balance bigint NOT NULL                                   -- may be negative
);

CREATE TABLE house_ledger (
    entry_id      bigserial PRIMARY KEY,
    kind          text NOT NULL CHECK (kind IN ('house_seat', 'house_return')),
    amount        bigint NOT NULL CHECK (amount <> 0),  -- what the house's balance changed by
    balance_after bigint NOT NULL,
    lounge_id     text NOT NULL,  -- no foreign key: the ledger outlives what it records
    seat          smallint NOT NULL CHECK (seat >= 0),
    movement_key  text NOT NULL UNIQUE,
    fingerprint   bytea NOT NULL,
    created_at    timestamptz NOT NULL,
    CHECK ((kind = 'house_seat') = (amount < 0))
);
CREATE INDEX house_ledger_lounge ON house_ledger (lounge_id, seat);

-- A lounge that cannot be created (the table service refused its table or an AI seat
-- for good) is 'failed': not listed, not counted against its owner's lounges, its AI
-- seats cleared and their house chips returned. failure says why.
ALTER TABLE lounges DROP CONSTRAINT lounges_state_check;
ALTER TABLE lounges
    ADD CONSTRAINT lounges_state_check
        CHECK (state IN ('creating', 'open', 'closing', 'closed', 'failed')),
    ADD COLUMN failure text;

-- An AI seat's table sequence when a closing pass saw it still held (its PlayerLeft is
-- after it), as a player's buy-in's leave_sequence is.
ALTER TABLE lounge_seats ADD COLUMN leave_sequence bigint;

-- The AI seats of lounges not closed yet were seated with chips no row backed: they
-- are funded from the house now, as a new lounge's are, so that their chips come back
-- to the house (not from nowhere) when the lounge closes.
INSERT INTO house_account (house, balance)
SELECT true, -coalesce(sum(s.stack), 0)
FROM lounge_seats s JOIN lounges l USING (lounge_id)
WHERE s.ai_level > 0 AND l.state IN ('creating', 'open', 'closing');

INSERT INTO house_ledger (kind, amount, balance_after, lounge_id, seat, movement_key,
                          fingerprint, created_at)
SELECT 'house_seat', -s.stack,
       -sum(s.stack) OVER (ORDER BY l.listing_id, s.seat),
       s.lounge_id, s.seat, k.key,
       substring(sha256(convert_to(k.key || ':' || s.stack, 'UTF8')) FROM 1 FOR 16), now()
FROM lounge_seats s
JOIN lounges l USING (lounge_id)
CROSS JOIN LATERAL (SELECT 's/house-seat/' || s.lounge_id || '/' || s.seat || '/0' AS key) k
WHERE s.ai_level > 0 AND l.state IN ('creating', 'open', 'closing')
ORDER BY l.listing_id, s.seat;

-- The audit's per-lounge checks (no lounge pays out more than went in; a closed or
-- failed lounge has nothing left at its table) cover the lounges closed from here on:
-- one closed before the house existed may have paid out its AI seats' unbacked chips.
ALTER TABLE lounges ADD COLUMN audited boolean NOT NULL DEFAULT true;
UPDATE lounges SET audited = false WHERE state IN ('closed', 'closing');
