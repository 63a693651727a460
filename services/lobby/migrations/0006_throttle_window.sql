-- The throttle's counts (sign-in attempts, and sign-ups per client address, scope
-- 'sign-up:<address>') are forgotten once their window has passed: the lobby deletes
-- them periodically by window_start, through this index, so the table holds no more
-- rows than the scopes seen in one window.
CREATE INDEX sign_in_failures_window ON sign_in_failures (window_start);
