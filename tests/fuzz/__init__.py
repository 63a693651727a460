"""An API fuzzer for the table service (issue #9): see ``tests.fuzz.machine`` and docs/testing.md.

The short run is ``tests/integration/table/test_api_fuzz.py``; the long run is
``python -m tests.fuzz --minutes 30``.
"""
