"""A fuzzer of the lobby and history services (issue #20): see ``tests.fuzz.lobby.machine``.

The short run is ``tests/integration/lobby/test_lobby_fuzz.py``; the long run is
``python -m tests.fuzz.lobby --minutes 30``. The chips oracle is
``tests.fuzz.lobby.audit.audit``.
"""
