-- Leaving a lounge: the buy-in saga's second half, on the buy-in's own row. 'leaving' is
-- written (each leave request's key in leave_requests, so a retry finds its saga, and a
-- second leave of a leaving seat is recorded too) before the table
-- service is asked to free the seat (LeaveSeat with the seat token, request id
-- leave/<saga_id>); leave_sequence is the table's sequence that call answered with,
-- from which the lobby reads the seat's PlayerLeft (at once, or when the hand in play
-- ends). 'left' is written with the cash-out (ledger key cash-out/<saga_id>, so the
-- chips come back once), left_stack = PlayerLeft's stack, and the lounge's seat freed,
-- in one transaction. A 'leaving' row is a leave the recovery pass drives on.
ALTER TABLE buy_ins DROP CONSTRAINT buy_ins_state_check;
ALTER TABLE buy_ins DROP CONSTRAINT buy_ins_check;
ALTER TABLE buy_ins
    ADD CONSTRAINT buy_ins_state_check
        CHECK (state IN ('reserved', 'seated', 'compensated', 'leaving', 'left')),
    ADD CONSTRAINT buy_ins_seat_token_check
        CHECK ((state IN ('seated', 'leaving', 'left')) = (seat_token IS NOT NULL)),
    ADD COLUMN leave_sequence bigint CHECK (leave_sequence > 0),
    ADD COLUMN left_stack bigint CHECK (left_stack >= 0),
    ADD CONSTRAINT buy_ins_left_check CHECK ((state = 'left') = (left_stack IS NOT NULL));
CREATE INDEX buy_ins_leaving ON buy_ins (created_at) WHERE state = 'leaving';
CREATE INDEX buy_ins_player_lounge ON buy_ins (player_id, lounge_id)
    WHERE state IN ('seated', 'leaving');
CREATE TABLE leave_requests (
    request_key  text PRIMARY KEY,
    fingerprint  bytea NOT NULL,
    saga_id      text NOT NULL REFERENCES buy_ins ON DELETE CASCADE
);
