-- A table's events of no hand (created, seated, chips added, left with a stack, snapshots,
-- closed), written by the projector in the same transaction as the hands and the cursor:
-- the archived mark lets the table service trim the stream below the cursor, so every event
-- below it must be here or in archived_events. The stream's StoredEvent bytes, as stored.
CREATE TABLE archived_table_events (
    table_id         text NOT NULL,
    sequence         bigint NOT NULL CHECK (sequence > 0),
    recorded_at      timestamptz NOT NULL,
    payload          bytea NOT NULL,
    PRIMARY KEY (table_id, sequence)
);
