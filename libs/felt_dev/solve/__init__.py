"""The offline solver of hard's floor (issue #25): CFR+ over abstractions of heads-up games.

``felt solve`` (``felt_dev.solve_cli``) runs it and writes the tables the runtime ships
(``felt/players/bots/data``); ``felt.players.bots.floor`` reads them.
"""
