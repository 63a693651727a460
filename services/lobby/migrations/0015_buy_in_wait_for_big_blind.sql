-- A newcomer may join a Hold'em lounge waiting for the big blind (JoinLoungeRequest's
-- wait_for_big_blind): the choice is kept with the buy-in saga, so that a client's retry
-- and the recovery pass seat the player (SeatPlayer) as first asked. Existing sagas did not
-- ask: false.
ALTER TABLE buy_ins ADD COLUMN wait_for_big_blind boolean NOT NULL DEFAULT false;

-- lobby_reserve_buy_in (migration 0005) records the choice with the saga it inserts: the
-- same steps, one more argument (so the old function, which cannot record it, is dropped).
DROP FUNCTION lobby_reserve_buy_in(
    text, text, text, smallint, bigint, text, bytea, text, bytea, timestamptz
);
CREATE FUNCTION lobby_reserve_buy_in(
    p_saga_id text,
    p_player_id text,
    p_lounge_id text,
    p_seat smallint,
    p_amount bigint,
    p_request_key text,
    p_fingerprint bytea,
    p_movement_key text,
    p_movement_fingerprint bytea,
    p_at timestamptz,
    p_wait_for_big_blind boolean,
    OUT r_outcome text,
    OUT r_balance bigint,
    OUT r_saga buy_ins
) LANGUAGE plpgsql AS $$
BEGIN
    SELECT a.balance INTO r_balance FROM accounts a WHERE a.player_id = p_player_id FOR UPDATE;
    IF NOT FOUND THEN
        r_outcome := 'no_account';
        RETURN;
    END IF;
    SELECT * INTO r_saga FROM buy_ins b WHERE b.request_key = p_request_key;
    IF FOUND THEN
        r_outcome := 'first';
        RETURN;
    END IF;
    IF r_balance < p_amount THEN
        r_outcome := 'insufficient';
        RETURN;
    END IF;
    r_balance := r_balance - p_amount;
    UPDATE accounts a SET balance = r_balance WHERE a.player_id = p_player_id;
    INSERT INTO ledger (player_id, kind, amount, balance_after, table_id, movement_key,
                        fingerprint, created_at)
        VALUES (p_player_id, 'buy_in', -p_amount, r_balance, p_lounge_id, p_movement_key,
                p_movement_fingerprint, p_at);
    INSERT INTO buy_ins (saga_id, player_id, display_name, lounge_id, seat, amount, state,
                         request_key, fingerprint, created_at, wait_for_big_blind)
        SELECT p_saga_id, p_player_id, p.display_name, p_lounge_id, p_seat, p_amount,
               'reserved', p_request_key, p_fingerprint, p_at, p_wait_for_big_blind
        FROM players p WHERE p.player_id = p_player_id
        RETURNING * INTO STRICT r_saga;
    r_outcome := 'reserved';
END
$$;
