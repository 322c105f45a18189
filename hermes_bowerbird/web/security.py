"""Who may use the inspector: the holder of the start-up token, on 127.0.0.1, with headers that keep pages inert."""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from urllib.parse import urlencode

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

TOKEN_FIELD = "token"
ALLOWED_HOSTS = ("127.0.0.1", "localhost")
OPEN_PREFIXES = ("/static/",)
# Memories are untrusted text: no inline script, no foreign origin, no framing, no referrer carrying the token.
HEADERS: Mapping[str, str] = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
DENIED = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Bowerbird: token needed</title>
<link rel="stylesheet" href="/static/inspector.css"></head><body><main class="denied"><h1>Token needed</h1>
<p>This memory inspector only answers the link that <code>bowerbird serve</code> printed when it started
(it ends in <code>?token=...</code>). Open that link again, or restart <code>bowerbird serve</code> for a new one.</p>
</main></body></html>"""


def token_matches(given: str | None, token: str) -> bool:
    """Constant-time comparison; a missing value never matches."""
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


def cookie_name(request: Request) -> str:
    """One cookie per port: cookies ignore ports, and two inspectors may run side by side."""
    return f"bowerbird_token_{request.url.port or 80}"


def denied() -> Response:
    return HTMLResponse(DENIED, status_code=403)


class TokenGate:
    """Reads need the token (once in the URL, then a same-site cookie); writes check the form's token themselves.

    A link with `?token=` is answered by setting the cookie and redirecting to the same page without the token,
    so the token does not linger in the address bar or the history.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        response = self._answer(Request(scope))
        if response is not None:
            await response(scope, receive, with_headers(send))
            return
        await self.app(scope, receive, with_headers(send))

    def _answer(self, request: Request) -> Response | None:
        """A response of the gate's own (403, or the cookie-setting redirect), or None to pass the request on."""
        if request.url.path.startswith(OPEN_PREFIXES) or request.method not in ("GET", "HEAD"):
            return None  # static files are public; every write route checks the token in its form
        given = request.query_params.get(TOKEN_FIELD)
        if given is not None:
            if not token_matches(given, self.token):
                return denied()
            return self._enter(request)
        if not token_matches(request.cookies.get(cookie_name(request)), self.token):
            return denied()
        return None

    def _enter(self, request: Request) -> Response:
        kept = [(k, v) for k, v in request.query_params.multi_items() if k != TOKEN_FIELD]
        path = "/" + request.url.path.lstrip("/")  # never "//host": that would leave this site
        target = path + ("?" + urlencode(kept) if kept else "")
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(
            cookie_name(request), self.token, httponly=True, samesite="strict", path="/"
        )
        return response


def with_headers(send: Send) -> Send:
    """Add the security headers to every response."""

    async def sender(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            for name, value in HEADERS.items():
                headers[name] = value
        await send(message)

    return sender
