"""What every HTTP request goes through first: a body-size limit, a request id and one log line.

    RequestGuard(max_body_bytes=settings.max_body_bytes).install(app)

A body whose Content-Length is over the limit is answered 413 before a byte of it is read (a chunked body is
cut off by the application's `client_max_size`, set to the same limit). Each request gets an id, sent back as
`X-Request-Id` and written on its log line, which holds the method, the path, the status, the sizes in and out
and the duration, never the body or the query string: what a stranger sends is not logged. Probe routes that
answered 2xx/3xx log at DEBUG so health checks do not drown the rest.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from uuid import uuid4

from aiohttp import web

log = logging.getLogger(__name__)

REQUEST_ID = web.RequestKey("request_id", str)
REQUEST_ID_HEADER = "X-Request-Id"
PROBE_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})
_MAX_PATH_CHARS = 200
_MAX_METHOD_CHARS = 16

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class RequestGuard:
    """aiohttp middleware: 413 for oversized bodies, a request id, one log line per request."""

    def __init__(self, *, max_body_bytes: int) -> None:
        if max_body_bytes <= 0:
            raise ValueError("max_body_bytes must be positive (REGBOT_MAX_BODY_BYTES)")
        self.max_body_bytes = max_body_bytes

    def install(self, app: web.Application) -> None:
        """Add the middleware (first, so it sees every response) and the response-header hook to `app`."""
        app.middlewares.insert(0, self.middleware)
        app.on_response_prepare.append(_add_request_id)

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        request[REQUEST_ID] = uuid4().hex[:16]
        started = time.perf_counter()
        status = 500
        response: web.StreamResponse | None = None
        try:
            if request.content_length is not None and request.content_length > self.max_body_bytes:
                response = web.json_response(
                    {"error": "the request body is too large", "limit_bytes": self.max_body_bytes}, status=413
                )
            else:
                response = await handler(request)
            status = response.status
            return response
        except web.HTTPException as http_error:  # aiohttp's own answers (404, 405, 413 while reading, …)
            status = http_error.status
            raise
        except Exception:
            # A bug of ours, not the caller's: its traceback is logged, the caller gets only the request id.
            log.exception("request %s failed", request[REQUEST_ID])
            status = 500
            response = web.json_response({"error": "internal error", "request_id": request[REQUEST_ID]}, status=500)
            return response
        finally:
            self._log(request, status, response, started)

    def _log(self, request: web.Request, status: int, response: web.StreamResponse | None, started: float) -> None:
        quiet = request.path in PROBE_PATHS and status < 400
        log.log(
            logging.DEBUG if quiet else logging.INFO,
            "%s %s %d",
            request.method[:_MAX_METHOD_CHARS],
            request.path[:_MAX_PATH_CHARS],
            status,
            extra={
                "request_id": request[REQUEST_ID],
                "method": request.method[:_MAX_METHOD_CHARS],
                "path": request.path[:_MAX_PATH_CHARS],
                "status": status,
                "bytes_in": request.content_length,
                "bytes_out": _bytes_out(response),
                "duration_ms": round((time.perf_counter() - started) * 1000, 1),
            },
        )


def _bytes_out(response: web.StreamResponse | None) -> int | None:
    if response is None:
        return None
    if isinstance(response, web.Response):
        return response.content_length
    return response.body_length  # a streamed response: what was written so far


async def _add_request_id(request: web.Request, response: web.StreamResponse) -> None:
    request_id = request.get(REQUEST_ID)
    if request_id:
        response.headers[REQUEST_ID_HEADER] = request_id


__all__ = ["PROBE_PATHS", "REQUEST_ID", "REQUEST_ID_HEADER", "RequestGuard"]
