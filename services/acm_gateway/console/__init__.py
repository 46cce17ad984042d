"""The operator console (docs/console.md): static HTML, JS and CSS shipped in this package, served by the gateway's
HTTP listener under /console/. It reads and changes nothing by itself: the page calls the public HTTP/JSON API
with the operator's key, so it can do exactly what that key can. Its routes of its own: /console/api/whoami says
whose key it is and refuses an agent key (the console is for a client's admin); /console/api/results lists the
benchmark plots (results/*.png) and serves each, to an admin key only."""

from __future__ import annotations

import json
import logging
import mimetypes
import re
import time
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Protocol

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.types import Receive, Scope, Send

from acm.domain.errors import Unauthenticated
from acm.domain.scope import KeyRole
from acm.ports.stores import ApiKey
from acm_gateway.request_log import _key_id

requests_log = logging.getLogger("acm.requests")

PREFIX = "/console"
RESULTS = "/api/results"
_PLOT = re.compile(r"[\w.-]+\.png")  # the names served from the results folder: its PNG files, nothing nested
STATIC: Traversable = files(__name__).joinpath("static")
# The page only runs its own script and talks to this origin; stored text can never become markup or script.
SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


class KeyCheck(Protocol):
    async def authenticate(self, secret: str | None) -> ApiKey: ...


def _json(status: int, body: dict[str, str]) -> Response:
    return Response(json.dumps(body), status, media_type="application/json", headers=SECURITY_HEADERS)


def _secret(request: Request) -> str | None:
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return request.headers.get("x-api-key")


class Console:
    """ASGI app for every path under /console."""

    def __init__(self, keys: KeyCheck, results_dir: Path | None = None) -> None:
        """``results_dir``: the benchmark results whose plots the console shows (None: none)."""
        self._keys = keys
        self._results = results_dir
        self._files = {f.name: f for f in STATIC.iterdir() if f.is_file()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        start = time.perf_counter()
        request = Request(scope, receive)
        response = await self._respond(request)
        await response(scope, receive, send)
        if request.url.path.startswith(f"{PREFIX}/api/") and requests_log.isEnabledFor(logging.INFO):
            # One line per call of the console's own routes, as for the API's: the key's id, never the key.
            metadata = tuple((h, request.headers[h]) for h in ("authorization", "x-api-key") if h in request.headers)
            ms = (time.perf_counter() - start) * 1000
            requests_log.info(
                "HTTP %s %s key=%s %d %.1f ms",
                request.method,
                request.url.path,
                _key_id(metadata),
                response.status_code,
                ms,
            )

    async def _respond(self, request: Request) -> Response:
        path = request.url.path.removeprefix(PREFIX)
        if request.method not in ("GET", "HEAD"):
            return _json(405, {"message": f"{request.method} is not served under {PREFIX}"})
        if path == "":
            return RedirectResponse(f"{PREFIX}/", 308)
        if path == "/api/whoami":
            return await self._whoami(request)
        if path == RESULTS or path.startswith(f"{RESULTS}/"):
            return await self._plots(request, path.removeprefix(RESULTS).removeprefix("/"))
        name = path.removeprefix("/") or "index.html"
        found = self._files.get(name)  # only the shipped files: no path is ever joined from the request
        if found is None:
            return _json(404, {"message": f"no console page {path!r}"})
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        return Response(found.read_bytes(), media_type=kind, headers=SECURITY_HEADERS)

    async def _admin(self, request: Request) -> ApiKey | Response:
        """The request's key when it is an admin key; else the refusal to send (401 or 403)."""
        try:
            key = await self._keys.authenticate(_secret(request))
        except Unauthenticated as exc:
            return _json(401, {"message": str(exc)})
        if key.grant.role is not KeyRole.ADMIN:
            return _json(
                403,
                {
                    "message": f"key {key.key_id} has the role '{key.grant.role}': the console needs an admin key "
                    f"of the client (acm keys create --client {key.client_id})"
                },
            )
        return key

    async def _whoami(self, request: Request) -> Response:
        key = await self._admin(request)
        if isinstance(key, Response):
            return key
        return _json(200, {"keyId": key.key_id, "clientId": key.client_id, "name": key.name, "role": key.grant.role})

    async def _plots(self, request: Request, name: str) -> Response:
        key = await self._admin(request)
        if isinstance(key, Response):
            return key
        plots = {p.name: p for p in self._results.glob("*.png")} if self._results and self._results.is_dir() else {}
        if not name:
            return Response(
                json.dumps({"plots": sorted(plots)}), media_type="application/json", headers=SECURITY_HEADERS
            )
        found = plots.get(name) if _PLOT.fullmatch(name) else None  # only a listed file: no path from the request
        if found is None:
            return _json(404, {"message": f"no plot {name!r}"})
        return Response(found.read_bytes(), media_type="image/png", headers=SECURITY_HEADERS)
