"""Service support shared by every service: structured logs, the metrics/health server."""
