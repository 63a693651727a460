-- Display names unique by how they look, not only as typed: name_skeleton is the UTS #39
-- confusable skeleton of the NFKC-casefolded name (services.lobby.names.skeleton, computed
-- by ICU in the lobby: PostgreSQL has no such function), unique, so that "Alice" and
-- "Аlice" (a Cyrillic А) cannot both be taken. Rows from before this migration have none
-- (NULL, which the unique index does not compare): `felt db migrate` fills them in after
-- its SQL migrations, oldest player first; a row whose skeleton an older player's name
-- already has keeps NULL (its name stays, and no new name can look like either).
ALTER TABLE players ADD COLUMN name_skeleton text;
CREATE UNIQUE INDEX players_name_skeleton ON players (name_skeleton);

-- A free top-up counts the chips a player holds at tables (its buy-ins not yet compensated
-- or left, services.lobby.ports.ledger.RETURNED_STATES) with its balance: this index finds
-- them without reading every buy-in the player ever made.
CREATE INDEX buy_ins_player_held ON buy_ins (player_id)
    WHERE state NOT IN ('compensated', 'left');
