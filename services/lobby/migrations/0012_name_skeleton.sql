-- Display names unique by how they look, not only as typed: name_skeleton is the UTS #39
-- confusable skeleton of the NFKC-casefolded name (services.lobby.names.skeleton, computed
-- by ICU in the lobby: PostgreSQL has no such function), unique, so that "Alice" and
-- "Аlice" (a Cyrillic А) cannot both be taken. Rows from before this migration have none
-- (NULL, which the unique index does not compare): `felt db migrate` fills them in after
-- its SQL migrations, oldest player first; a row whose skeleton an older player's name
-- already has keeps NULL (its name stays, and no new name can look like either).
ALTER TABLE players ADD COLUMN name_skeleton text;
CREATE UNIQUE INDEX players_name_skeleton ON players (name_skeleton);
