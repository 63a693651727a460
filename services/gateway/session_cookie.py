"""The refresh token of a browser's session in an HttpOnly cookie, out of the page's reach.

A refresh token lives 30 days and is worth a fresh access token to whoever
holds it: kept in ``localStorage``, any script that ever ran in the page
(an injected one, a compromised dependency) could read it and keep the
session. For the web client's own calls the gateway keeps it where no
script can read it:

* an answer carrying credentials (``CreateGuest``, ``Register``,
  ``SignIn``, ``RefreshSession``) has its ``refresh_token`` moved into a
  ``Set-Cookie``: ``HttpOnly``, ``SameSite=Strict``, ``Path`` the
  ``RefreshSession`` endpoint alone (no other call carries it), ``Max-Age``
  the token's lifetime (from ``refresh_token_expire_time``), ``Secure`` when
  the page was served over TLS (its ``Origin`` is ``https``) or
  ``FELT_GATEWAY_SECURE_COOKIE=always``; the body keeps every other field
  (its ``refresh_token_expire_time`` too) with ``refresh_token`` empty;
* a ``RefreshSession`` with no token in its body is sent with the cookie's;
* a ``SignOut`` answer, and a ``RefreshSession`` refused
  ``UNAUTHENTICATED`` (spent, expired, revoked: the cookie can never work
  again), clear the cookie (``Max-Age=0``).

"The web client's own calls" are a browser's same-origin calls: a
``Sec-Fetch-Site: same-origin`` header, or, from a browser that sends none,
an ``Origin`` naming the very host the request was sent to (``Host``). A
browser sets both itself and no page can forge them, so a page of another
site (``SameSite=Strict`` already keeps the cookie from its requests) or of
another origin allowed by CORS never gets a call answered from the cookie,
and its answers keep the token in the body as before (such a page is an API
client of its own). API clients (curl, apps; ``felt play`` calls the lobby
over gRPC) send neither header: their token stays in the body, and a token
in the body is always used as it is.
"""

from __future__ import annotations

import re
import time
import urllib.parse
from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import Any

from connectrpc.code import Code
from connectrpc.errors import ConnectError
from google.protobuf.message import Message

from felt.wire.limits import CREDENTIAL_MAX
from poker.v1 import lobby_pb2
from services.gateway.codecs import Raw
from services.gateway.config import SECURE_MODES
from services.gateway.forward import Ctx

COOKIE = "felt_refresh"
COOKIE_PATH = "/poker.v1.LobbyService/RefreshSession"
# RFC 6265's cookie-octets (the lobby's tokens are base64url and dots).
_COOKIE_VALUE = re.compile(r"[!#-+\--:<-\[\]-~]{1,%d}" % CREDENTIAL_MAX)  # noqa: UP031

# The lobby's calls whose answer carries ``credentials`` (the Connect stubs' names).
_ISSUING = ("create_guest", "register", "sign_in", "refresh_session")

Unary = Callable[[Message, Ctx], Awaitable[Raw]]


def same_origin_browser(ctx: Ctx) -> bool:
    """Whether the call is a browser's from a page of the gateway's own origin."""
    headers = ctx.request_headers
    site = headers.get("sec-fetch-site")
    if site is not None:
        return site == "same-origin"
    origin = headers.get("origin")
    host = headers.get("host")
    if not origin or not host:
        return False
    parsed = urllib.parse.urlsplit(origin)
    return parsed.scheme in ("http", "https") and parsed.netloc.lower() == host.lower()


def cookie_token(ctx: Ctx) -> str:
    """The refresh token in the request's ``felt_refresh`` cookie ("" if none, or if it is
    longer than a token the lobby issues)."""
    for header in ctx.request_headers.getall("cookie"):
        for pair in header.split(";"):
            name, sep, value = pair.strip().partition("=")
            if sep and name == COOKIE:
                value = value.strip().strip('"')
                return value if len(value) <= CREDENTIAL_MAX else ""
    return ""


class SessionCookies:
    """Wraps the lobby's forwarded calls (``Forwarder.implementation()``) with the cookie."""

    def __init__(self, secure: str = "auto", clock: Callable[[], float] = time.time) -> None:
        if secure not in SECURE_MODES:
            raise ValueError(f"secure must be one of {SECURE_MODES}")
        self.secure = secure
        self.clock = clock

    def wrap(self, calls: SimpleNamespace) -> SimpleNamespace:
        """``calls`` with the credential-issuing calls and ``sign_out`` cookie-aware."""
        for name in _ISSUING:
            setattr(calls, name, self._issuing(getattr(calls, name), name == "refresh_session"))
        calls.sign_out = self._signing_out(calls.sign_out)
        return calls

    def _issuing(self, call: Unary, refresh: bool) -> Unary:
        async def issuing(request: Message, ctx: Ctx) -> Raw:
            if not same_origin_browser(ctx):
                return await call(request, ctx)
            if refresh and not getattr(request, "refresh_token", ""):
                request.refresh_token = cookie_token(ctx)  # type: ignore[attr-defined]
            try:
                answer = await call(request, ctx)
            except ConnectError as error:
                if refresh and error.code is Code.UNAUTHENTICATED:
                    ctx.response_headers.add("set-cookie", self._cookie(ctx, "", 0))
                raise
            return self._moved_to_cookie(answer, ctx)

        return issuing

    def _signing_out(self, call: Unary) -> Unary:
        async def signing_out(request: Message, ctx: Ctx) -> Raw:
            if same_origin_browser(ctx):
                # Whatever the lobby answers: the browser asked to forget its session.
                ctx.response_headers.add("set-cookie", self._cookie(ctx, "", 0))
            return await call(request, ctx)

        return signing_out

    def _moved_to_cookie(self, answer: Raw, ctx: Ctx) -> Raw:
        message: Any = answer.message()
        credentials: lobby_pb2.Credentials = message.credentials
        if not _COOKIE_VALUE.fullmatch(credentials.refresh_token):
            return answer  # none (or not a value a cookie can hold: left in the body)
        expires = credentials.refresh_token_expire_time.seconds
        max_age = max(0, int(expires - self.clock())) if expires else 0
        ctx.response_headers.add(
            "set-cookie", self._cookie(ctx, credentials.refresh_token, max_age)
        )
        credentials.refresh_token = ""
        return Raw(message.SerializeToString(), answer.message_class)

    def _cookie(self, ctx: Ctx, value: str, max_age: int) -> str:
        attributes = [
            f"{COOKIE}={value}",
            f"Path={COOKIE_PATH}",
            f"Max-Age={max_age}",
            "HttpOnly",
            "SameSite=Strict",
        ]
        origin = ctx.request_headers.get("origin", "")
        if self.secure == "always" or (self.secure == "auto" and origin.startswith("https://")):
            attributes.append("Secure")
        return "; ".join(attributes)
