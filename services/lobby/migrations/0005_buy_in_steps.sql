-- The buy-in saga's two writes as one call each (issue #11's speed): reserving and
-- seating were a transaction of five statements each, every one a round trip from the
-- lobby; as a function each is one statement, run in autocommit (its own transaction,
-- so no BEGIN and COMMIT round trips either). Their steps, checks and locks are the
-- ones PgBuyIns ran one by one, in the same order: a function of the default VOLATILE
-- kind takes a fresh snapshot for each statement (READ COMMITTED), so a look-up after a
-- lock wait sees what the holder of the lock committed, as before. What they return is
-- turned into BuyIn (or InsufficientChips, NoAccount, RequestReused) by PgBuyIns.

-- Reserve: lock the player's account (serialises the player's sagas and chips moves),
-- find this request's first saga (a retry: returned with its fingerprint, nothing
-- written), check the balance, take the buy-in from it with its ledger row, record the
-- saga RESERVED with the player's display name. r_outcome: 'reserved', 'first' (a retry:
-- r_saga is the first saga, its fingerprint to compare), 'insufficient' or 'no_account'
-- (nothing written); r_balance: the balance after (or, refused, as it is).
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
                         request_key, fingerprint, created_at)
        SELECT p_saga_id, p_player_id, p.display_name, p_lounge_id, p_seat, p_amount,
               'reserved', p_request_key, p_fingerprint, p_at
        FROM players p WHERE p.player_id = p_player_id
        RETURNING * INTO STRICT r_saga;
    r_outcome := 'reserved';
END
$$;

-- Seated: lock the saga; from RESERVED only, the table service's seat replaces whatever
-- the lounge's view had there (seats_taken counts it if the seat was free), and the saga
-- is SEATED with its seat token. From any other state nothing changes; r_saga is the saga
-- as it is (all NULL: no such saga).
CREATE FUNCTION lobby_seat_buy_in(
    p_saga_id text,
    p_seat smallint,
    p_seat_token text,
    p_seat_token_expires_at timestamptz,
    OUT r_saga buy_ins
) LANGUAGE plpgsql AS $$
DECLARE
    replaced boolean;  -- someone sat there in the lounge's view: the seat is counted
BEGIN
    SELECT * INTO r_saga FROM buy_ins b WHERE b.saga_id = p_saga_id FOR UPDATE;
    IF NOT FOUND OR r_saga.state <> 'reserved' THEN
        RETURN;
    END IF;
    DELETE FROM lounge_seats s WHERE s.lounge_id = r_saga.lounge_id AND s.seat = p_seat;
    replaced := FOUND;
    INSERT INTO lounge_seats (lounge_id, seat, player_id, display_name, ai_level, stack)
        VALUES (r_saga.lounge_id, p_seat, r_saga.player_id, r_saga.display_name, 0,
                r_saga.amount);
    IF NOT replaced THEN
        UPDATE lounges l SET seats_taken = l.seats_taken + 1
            WHERE l.lounge_id = r_saga.lounge_id;
    END IF;
    UPDATE buy_ins b SET state = 'seated', seat = p_seat, seat_token = p_seat_token,
                         seat_token_expires_at = p_seat_token_expires_at
        WHERE b.saga_id = p_saga_id
        RETURNING * INTO STRICT r_saga;
END
$$;
