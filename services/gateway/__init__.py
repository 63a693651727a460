"""The HTTP gateway: Felt's gRPC services served to browsers and apps over Connect.

See ``services.gateway.app`` for what it serves and ``services.gateway.config``
for its settings.
"""
