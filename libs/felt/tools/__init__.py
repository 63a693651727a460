"""Tools and clients: the library's ``felt`` commands, ``felt play``, replay, verify-hand,
PHH hand histories and the hand-history forms.
"""
