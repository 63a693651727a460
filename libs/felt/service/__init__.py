"""What every Felt service shares: its settings, its RPC plumbing."""
