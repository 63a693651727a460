-- The projector's cursor remembers which event stands at its position (a digest of the
-- stored payload), so that after a Redis restart it can tell the stream it resumes is the
-- one it archived, not a tail written again from before it (issue #24). Cursors stored
-- before have none: '' (only the stream's length is checked for them).
ALTER TABLE archive_cursors ADD COLUMN fingerprint text NOT NULL DEFAULT '';
