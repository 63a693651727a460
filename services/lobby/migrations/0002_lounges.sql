-- Lounges: the lobby's tables. A lounge is created 'creating' (its row and its AI
-- seats in one transaction), then its table is created in the table service and its
-- AI players seated there (each call idempotent by a request id derived from the
-- lounge), then it is 'open'. A retry of the create call, or the recovery pass,
-- drives a 'creating' lounge forward. lounge_id is the table service's table_id.
CREATE TABLE lounges (
    lounge_id     text PRIMARY KEY,
    listing_id    bigserial NOT NULL UNIQUE,
    owner_id      text NOT NULL REFERENCES players ON DELETE CASCADE,
    name          text NOT NULL,
    variant       smallint NOT NULL CHECK (variant IN (1, 2)),
    config        bytea NOT NULL,  -- the poker.events.v1.TableConfig, serialized
    stake         bigint NOT NULL CHECK (stake > 0),  -- big blind (Hold'em), small bet (Draw)
    seat_count    smallint NOT NULL CHECK (seat_count BETWEEN 2 AND 9),
    seats_taken   smallint NOT NULL DEFAULT 0 CHECK (seats_taken BETWEEN 0 AND seat_count),
    free_seats    smallint GENERATED ALWAYS AS (seat_count - seats_taken) STORED,
    min_buy_in    bigint NOT NULL CHECK (min_buy_in > 0),
    max_buy_in    bigint NOT NULL CHECK (max_buy_in >= min_buy_in),
    private       boolean NOT NULL,
    invite_code   text,
    state         text NOT NULL CHECK (state IN ('creating', 'open')),
    request_key   text NOT NULL UNIQUE,
    fingerprint   bytea NOT NULL,
    created_at    timestamptz NOT NULL,
    CHECK (private = (invite_code IS NOT NULL))
);
-- Listing open public lounges newest first, by keyset (listing_id < the page token's):
-- the first index serves every listing (filters are checked on the rows it walks in
-- order, and stop at the page size); the second serves a listing of one variant.
CREATE INDEX lounges_listing ON lounges (listing_id DESC)
    WHERE state = 'open' AND NOT private;
CREATE INDEX lounges_listing_variant ON lounges (variant, listing_id DESC)
    WHERE state = 'open' AND NOT private;
CREATE INDEX lounges_creating ON lounges (created_at) WHERE state = 'creating';

-- Who sits where. An AI seat is written with its lounge; ai_level 0 is a human.
CREATE TABLE lounge_seats (
    lounge_id    text NOT NULL REFERENCES lounges ON DELETE CASCADE,
    seat         smallint NOT NULL CHECK (seat >= 0),
    player_id    text NOT NULL,
    display_name text NOT NULL,
    ai_level     smallint NOT NULL CHECK (ai_level BETWEEN 0 AND 3),
    stack        bigint NOT NULL CHECK (stack > 0),
    PRIMARY KEY (lounge_id, seat)
);
