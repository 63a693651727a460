"""What every Felt service shares: its RPC plumbing, structured logs, the metrics/health server."""
