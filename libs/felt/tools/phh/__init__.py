"""PHH (Poker Hand History) both ways: replay real hands through Felt, export Felt's hands.

``parse`` reads ``.phh`` files, ``replay`` plays them through ``felt.core.rules``
and judges the result, ``export`` writes hands played by Felt as PHH, and
``cli`` adds ``felt phh verify|export`` to the ``felt`` command.
"""
