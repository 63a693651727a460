-- The hand archive (felt.archive, written by `felt projector`): every finished hand once,
-- named by its unguessable public id, with its seats, pots and every stored event (the
-- stream's StoredEvent bytes, so a hand can be folded and redacted again), and the
-- projector's read position per table, written in the same transaction as the rows.
-- No foreign keys: rows are only ever written by the archive adapter, a hand's rows in
-- one transaction, and COPY into tables without FK triggers is what keeps it fast.
CREATE TABLE archived_hands (
    hand_id          text PRIMARY KEY,
    table_id         text NOT NULL,
    number           integer NOT NULL,
    table_hand_id    text NOT NULL,
    variant          text NOT NULL,
    button           smallint NOT NULL,
    started_at       timestamptz NOT NULL,
    ended_at         timestamptz NOT NULL,
    first_sequence   bigint NOT NULL CHECK (first_sequence > 0),
    last_sequence    bigint NOT NULL CHECK (last_sequence >= first_sequence),
    deck_root        text NOT NULL,
    deck_leaf_count  integer NOT NULL,
    board            smallint[] NOT NULL,
    -- When the transaction that archived it began (ended_at to archived_at: the lag).
    archived_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (table_id, number)
);
-- One row per dealt-in seat: the player as the table recorded them, the result and the
-- summary flags a player's statistics add up (felt.archive.summary). ended_at is the
-- hand's, copied here so a player's history is one index range scan.
CREATE TABLE archived_seats (
    hand_id          text NOT NULL,
    seat             smallint NOT NULL,
    player_id        text NOT NULL,
    display_name     text NOT NULL,
    ai_level         text NOT NULL,
    stack_start      bigint NOT NULL,
    stack_end        bigint NOT NULL,
    net              bigint NOT NULL,
    shown            smallint[] NOT NULL,
    vpip             boolean NOT NULL,
    pfr              boolean NOT NULL,
    went_to_showdown boolean NOT NULL,
    won_at_showdown  boolean NOT NULL,
    ended_at         timestamptz NOT NULL,
    PRIMARY KEY (hand_id, seat)
);
CREATE INDEX archived_seats_player ON archived_seats (player_id, ended_at DESC, hand_id DESC);
CREATE TABLE archived_pots (
    hand_id          text NOT NULL,
    index            smallint NOT NULL,
    amount           bigint NOT NULL,
    eligible         smallint[] NOT NULL,
    share_seats      smallint[] NOT NULL,
    share_amounts    bigint[] NOT NULL,
    winning_hand     text NOT NULL,
    PRIMARY KEY (hand_id, index)
);
CREATE TABLE archived_events (
    hand_id          text NOT NULL,
    sequence         bigint NOT NULL,
    recorded_at      timestamptz NOT NULL,
    payload          bytea NOT NULL,
    PRIMARY KEY (hand_id, sequence)
);
-- How far each table's stream is archived (felt.archive.values.Cursor): the position,
-- the seated players at it (seat, player_id, display_name, ai_level) and the last hand.
CREATE TABLE archive_cursors (
    table_id         text PRIMARY KEY,
    position         bigint NOT NULL CHECK (position >= 0),
    players          jsonb NOT NULL,
    last_hand        text NOT NULL,
    last_table_hand  text NOT NULL,
    updated_at       timestamptz NOT NULL DEFAULT now()
);
