-- A busted AI seat is refilled from the house between hands (RULES.md, "Chips at the table
-- and sitting out"): each refill is a saga of two steps, the house's chips first (a
-- 'house_seat' row, key s/house-seat/<lounge_id>/<seat>/<n>, n = 1, 2, ... per seat; the
-- seat's first funding is n = 0), then AddChips at the table with request id
-- lounge/<lounge_id>/ai/<seat>/refill/<n>. 'funded' until the table adds it ('added', on the
-- seat) or refuses it for good ('returned': the table closed or the seat gone, the chips back
-- to the house, a 'house_return' row, key s/house-refill-return/...). A refusal for now (the
-- seat not at 0) leaves it 'funded' for the seat's next bust. At most one refill per seat is
-- 'funded' at a time; a closing lounge drives its own.
CREATE TABLE ai_refills (
    lounge_id  text NOT NULL,  -- no foreign key: the ledger's rows outlive the lounge's
    seat       smallint NOT NULL CHECK (seat >= 0),
    n          integer NOT NULL CHECK (n >= 1),
    amount     bigint NOT NULL CHECK (amount > 0),
    state      text NOT NULL CHECK (state IN ('funded', 'added', 'returned')),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (lounge_id, seat, n)
);
CREATE UNIQUE INDEX ai_refills_one_funded ON ai_refills (lounge_id, seat) WHERE state = 'funded';
