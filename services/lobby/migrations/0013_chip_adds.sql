-- Adding chips at the table: the buy-in's saga on a seat already taken, one row per saga.
-- 'reserved' is written in the transaction that takes the chips from the balance (a
-- buy_in ledger row, key add-chips/<saga_id>); the table service is then asked to add
-- them (AddChips as the seat: its token when reserved, kept here so every retry is the
-- same request to the table; request id add-chips/<saga_id>, and max_stack, the
-- lounge's max_buy_in, which the table checks on the stack it adds to). 'added' is
-- written with the seat's stack after; on a refusal 'compensated' with the refund (a
-- cash_out row, key add-chips-refund/<saga_id>, so the chips come back once). A
-- 'reserved' row is a saga the recovery pass drives on. Its chips count as at the
-- table, as a reserved buy-in's do; a seat's cash-out takes its whole stack, these too.
CREATE TABLE chip_adds (
    saga_id      text PRIMARY KEY,
    player_id    text NOT NULL REFERENCES players ON DELETE CASCADE,
    lounge_id    text NOT NULL REFERENCES lounges ON DELETE CASCADE,
    buy_in_id    text NOT NULL REFERENCES buy_ins ON DELETE CASCADE,
    seat         smallint NOT NULL CHECK (seat >= 0),
    seat_token   text NOT NULL,
    amount       bigint NOT NULL CHECK (amount > 0),
    max_stack    bigint NOT NULL CHECK (max_stack > 0),
    state        text NOT NULL CHECK (state IN ('reserved', 'added', 'compensated')),
    stack_after  bigint CHECK (stack_after >= 0),
    refusal      text,
    request_key  text NOT NULL UNIQUE,
    fingerprint  bytea NOT NULL,
    created_at   timestamptz NOT NULL,
    CHECK ((state = 'added') = (stack_after IS NOT NULL)),
    CHECK ((state = 'compensated') = (refusal IS NOT NULL))
);
CREATE INDEX chip_adds_unfinished ON chip_adds (created_at) WHERE state = 'reserved';
CREATE INDEX chip_adds_held ON chip_adds (player_id) WHERE state = 'reserved';
