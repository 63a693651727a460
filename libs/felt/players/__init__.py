"""Players: the AI levels, their baselines, the opponent model and equity."""
