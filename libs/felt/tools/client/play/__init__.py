"""``felt play``: a terminal client that plays a lounge against AI players.

It talks to the lobby and the table service through the public gRPC API only
(:mod:`.session`), shows what the seat's redacted view holds and offers only
what the server's legal actions allow (:mod:`.model`), on a Textual screen
(:mod:`.app`).
"""
