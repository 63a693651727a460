-- The lobby's first schema: players, sessions (refresh-token families), throttled
-- sign-ins, and the chips ledger. Never edit this file once applied: add 0002_*.sql.

-- A player: a guest (no password) or a registered account. name_key is the display
-- name case-folded, so names are unique case-insensitively. request_key and fingerprint
-- make the sign-up that created the row retry-safe (felt.idempotency).
CREATE TABLE players (
    player_id     text PRIMARY KEY,
    display_name  text NOT NULL,
    name_key      text NOT NULL UNIQUE,
    password_hash text,
    request_key   text NOT NULL UNIQUE,
    fingerprint   bytea NOT NULL,
    created_at    timestamptz NOT NULL,
    registered_at timestamptz
);

-- A session is one refresh-token family: a sign-in (or sign-up) starts it, every
-- refresh moves it to its next generation, sign-out or the reuse of a rotated
-- refresh token revokes it (and with it every access token it issued).
CREATE TABLE sessions (
    session_id  text PRIMARY KEY,
    player_id   text NOT NULL REFERENCES players ON DELETE CASCADE,
    request_key text NOT NULL UNIQUE,
    fingerprint bytea NOT NULL,
    generation  integer NOT NULL DEFAULT 0 CHECK (generation >= 0),
    issued_at   timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    revoked_at  timestamptz,
    revoked_why text
);
CREATE INDEX sessions_player ON sessions (player_id);

-- Refresh tokens, by their SHA-256 only. rotated_key names the refresh call that
-- replaced the token (its retry gets the same next token; any other use is a reuse).
CREATE TABLE refresh_tokens (
    token_hash        bytea PRIMARY KEY,
    session_id        text NOT NULL REFERENCES sessions ON DELETE CASCADE,
    generation        integer NOT NULL,
    rotated_key       text,
    rotated_fingerprint bytea,
    UNIQUE (session_id, generation)
);

-- Failed sign-ins per scope ('player:<id>', 'name:<name_key>') in the current window.
CREATE TABLE sign_in_failures (
    scope        text PRIMARY KEY,
    failures     integer NOT NULL CHECK (failures > 0),
    window_start timestamptz NOT NULL
);

-- A player's chips: the balance is the sum of the player's ledger rows, kept here
-- too so that a movement checks and updates it under one row lock. Never negative.
CREATE TABLE accounts (
    player_id      text PRIMARY KEY REFERENCES players ON DELETE CASCADE,
    balance        bigint NOT NULL CHECK (balance >= 0),
    last_top_up_at timestamptz
);

-- One row per movement of chips, each with its idempotency key: grants and top-ups
-- create chips; a buy-in moves them to a table, a cash-out or a closed table brings
-- them back. Chips on tables = -(sum of the buy-in, cash-out and table-closed rows).
CREATE TABLE ledger (
    entry_id      bigserial PRIMARY KEY,
    player_id     text NOT NULL REFERENCES accounts ON DELETE CASCADE,
    kind          text NOT NULL
        CHECK (kind IN ('grant', 'top_up', 'buy_in', 'cash_out', 'table_closed')),
    amount        bigint NOT NULL CHECK (amount <> 0),
    balance_after bigint NOT NULL CHECK (balance_after >= 0),
    table_id      text,
    movement_key  text NOT NULL UNIQUE,
    fingerprint   bytea NOT NULL,
    created_at    timestamptz NOT NULL,
    CHECK ((kind = 'buy_in') = (amount < 0))
);
CREATE INDEX ledger_player ON ledger (player_id, entry_id DESC);
