"""Storage: ports with one adapter per technology and an in-memory fake (event store,
decision queue, registry, instances, hand archive) and the SQL migration runner.
"""
