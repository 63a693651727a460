-- RULES.md, "Chips at the table and sitting out": a player left with no chips after a hand
-- sits out until chips are added; after a grace the lounge sets the seat is freed and the
-- player leaves the table. The grace, in seconds, is the lounge's (CreateLoungeRequest's
-- busted_grace_s): 0 never frees a seat, else 60 s to a day; existing lounges get the
-- default, 5 minutes.
ALTER TABLE lounges ADD COLUMN busted_grace_s integer NOT NULL DEFAULT 300
    CHECK (busted_grace_s = 0 OR busted_grace_s BETWEEN 60 AND 86400);

-- The busted seats' pass (services/lobby/busted.py) counts a person's grace from when it
-- first saw the seat's buy-in (saga) busted since the table's busted_hand (the number of the
-- hand whose end left the seat with no chips, GetTableView's Seat.busted_hand). A later bust
-- (chips added and lost again) is another hand: the row is replaced and the grace starts
-- anew. One row per seated buy-in at most; the conditional LeaveSeat that frees the seat
-- names that hand (request id busted/<saga>/<hand>), so a stale decision changes nothing.
CREATE TABLE busted_seats (
    saga_id     text PRIMARY KEY REFERENCES buy_ins (saga_id),
    busted_hand integer NOT NULL CHECK (busted_hand > 0),
    seen_at     timestamptz NOT NULL
);
