"""What every Felt service process shares: the RPC kit (interceptors, refusals, bearer
parsing, the serve loop), structured logs and the metrics/health server.

The services (``services/``) use it; it names none of them (the library never does).
"""
