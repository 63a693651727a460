-- Buy-ins: the seating saga's state machine, one row per saga. 'reserved' is written in
-- the transaction that takes the chips from the balance (ledger key buy-in/<saga_id>);
-- the table service is then asked to seat the player (request id buy-in/<saga_id>, so
-- a retry after a crash gets the same seat and token); 'seated' is written with the
-- lounge's seat, or on a refusal 'compensated' with the refund (ledger key
-- buy-in-refund/<saga_id>, so the chips come back once). A 'reserved' row is a saga
-- the recovery pass drives on. seat_token is the player's secret at the table: it is
-- returned to that player only (the retried call), never listed.
CREATE TABLE buy_ins (
    saga_id       text PRIMARY KEY,
    player_id     text NOT NULL REFERENCES players ON DELETE CASCADE,
    display_name  text NOT NULL,
    lounge_id     text NOT NULL REFERENCES lounges ON DELETE CASCADE,
    seat          smallint CHECK (seat >= 0),
    amount        bigint NOT NULL CHECK (amount > 0),
    state         text NOT NULL CHECK (state IN ('reserved', 'seated', 'compensated')),
    seat_token    text,
    seat_token_expires_at timestamptz,
    refusal       text,
    request_key   text NOT NULL UNIQUE,
    fingerprint   bytea NOT NULL,
    created_at    timestamptz NOT NULL,
    CHECK ((state = 'seated') = (seat_token IS NOT NULL)),
    CHECK ((state = 'compensated') = (refusal IS NOT NULL))
);
CREATE INDEX buy_ins_unfinished ON buy_ins (created_at) WHERE state = 'reserved';
