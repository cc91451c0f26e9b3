"""A fake Bot Connector (the Teams side of `serviceUrl`) on 127.0.0.1 that records what the bot sends.

Answers like the connector: a POST to `/v3/conversations/{id}/activities[/{replyToId}]` gets
`201 {"id": ...}` (a streaming update that carries a `streamId` gets `202 {}`), a PUT to
`/v3/conversations/{id}/activities/{activityId}` gets `200 {"id": activityId}`. Failures can be
queued (`fail_next`) to exercise 429/413/403 handling. Any other path is recorded and answered 404.

    async with FakeBotConnector() as connector:
        activity["serviceUrl"] = connector.url
        ...
        final = await connector.wait_for(lambda a: a.body.get("type") == "message")
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer


@dataclass(frozen=True)
class ReceivedActivity:
    """One request the bot made to the connector."""

    method: str
    path: str
    conversation_id: str
    activity_id: str  # the reply-to id of a POST, the edited id of a PUT, "" otherwise
    body: dict[str, Any]
    headers: dict[str, str]
    assigned_id: str = ""  # the id the fake answered with

    @property
    def type(self) -> str:
        return str(self.body.get("type", ""))

    @property
    def text(self) -> str:
        return str(self.body.get("text") or "")

    @property
    def is_update(self) -> bool:
        return self.method == "PUT"

    def entities(self, entity_type: str) -> list[dict[str, Any]]:
        return [e for e in self.body.get("entities") or [] if e.get("type") == entity_type]

    @property
    def stream_info(self) -> dict[str, Any] | None:
        found = self.entities("streaminfo")
        return found[0] if found else None

    @property
    def ai_entity(self) -> dict[str, Any] | None:
        found = self.entities("https://schema.org/Message")
        return found[0] if found else None

    @property
    def citation_names(self) -> list[str]:
        entity = self.ai_entity or {}
        return [c["appearance"]["name"] for c in entity.get("citation") or []]

    @property
    def card_actions(self) -> list[dict[str, Any]]:
        actions: list[dict[str, Any]] = []
        for attachment in self.body.get("attachments") or []:
            actions.extend((attachment.get("content") or {}).get("actions") or [])
        return actions


def is_final(activity: ReceivedActivity) -> bool:
    """The finished answer: a message that carries the AI-generated `schema.org/Message` entity."""
    return activity.type == "message" and activity.ai_entity is not None


@dataclass
class _Failure:
    status: int
    body: dict[str, Any]
    headers: dict[str, str]
    matches: Callable[[ReceivedActivity], bool]
    remaining: int


@dataclass
class FakeBotConnector:
    """The fake connector server; use as an async context manager."""

    received: list[ReceivedActivity] = field(default_factory=list)
    refused: list[ReceivedActivity] = field(default_factory=list)  # answered with an injected failure
    unexpected: list[ReceivedActivity] = field(default_factory=list)
    _failures: list[_Failure] = field(default_factory=list)
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1))
    _changed: asyncio.Condition | None = None
    _server: TestServer | None = None

    async def __aenter__(self) -> FakeBotConnector:
        app = web.Application()
        app.router.add_post("/v3/conversations/{conversation_id}/activities", self._post)
        app.router.add_post("/v3/conversations/{conversation_id}/activities/{activity_id}", self._post)
        app.router.add_put("/v3/conversations/{conversation_id}/activities/{activity_id}", self._put)
        app.router.add_route("*", "/{tail:.*}", self._other)
        self._changed = asyncio.Condition()
        self._server = TestServer(app, host="127.0.0.1")
        await self._server.start_server()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._server is not None:
            await self._server.close()

    @property
    def url(self) -> str:
        """The `serviceUrl` to put in activities (with a trailing slash, as Teams sends it)."""
        assert self._server is not None, "start the fake first"
        return str(self._server.make_url("/"))

    def fail_next(
        self,
        status: int,
        *,
        matches: Callable[[ReceivedActivity], bool] = lambda _: True,
        times: int = 1,
        body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Answer the next `times` matching requests with `status` instead of success."""
        self._failures.append(
            _Failure(
                status=status,
                body=body or {"error": {"code": "Failure", "message": f"injected {status}"}},
                headers=headers or {},
                matches=matches,
                remaining=times,
            )
        )

    def messages(self) -> list[ReceivedActivity]:
        """The `message` activities received (posts and edits), in order."""
        return [a for a in self.received if a.type == "message"]

    async def wait_for(
        self, predicate: Callable[[ReceivedActivity], bool], *, timeout_s: float = 10.0
    ) -> ReceivedActivity:
        """The first received activity matching `predicate`, waiting for it up to `timeout_s`."""
        assert self._changed is not None

        def found() -> ReceivedActivity | None:
            return next((a for a in self.received if predicate(a)), None)

        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: found() is not None), timeout_s)
        match = found()
        assert match is not None
        return match

    async def _post(self, request: web.Request) -> web.Response:
        activity = await self._record(request, activity_id=request.match_info.get("activity_id", ""))
        if isinstance(activity, web.Response):
            return activity
        stream = activity.stream_info
        if stream and stream.get("streamId") and stream.get("streamType") != "final":
            return web.json_response({}, status=202)
        return web.json_response({"id": activity.assigned_id}, status=201)

    async def _put(self, request: web.Request) -> web.Response:
        activity = await self._record(request, activity_id=request.match_info["activity_id"])
        if isinstance(activity, web.Response):
            return activity
        return web.json_response({"id": activity.activity_id}, status=200)

    async def _other(self, request: web.Request) -> web.Response:
        text = await request.text()
        self.unexpected.append(
            ReceivedActivity(
                method=request.method,
                path=request.path,
                conversation_id="",
                activity_id="",
                body={"raw": text},
                headers=dict(request.headers),
            )
        )
        return web.json_response({"error": "not found"}, status=404)

    async def _record(self, request: web.Request, *, activity_id: str) -> ReceivedActivity | web.Response:
        body = json.loads(await request.text() or "{}")
        assigned = activity_id if request.method == "PUT" else f"activity-{next(self._ids)}"
        stream = next((e for e in body.get("entities") or [] if e.get("type") == "streaminfo"), None)
        if stream and stream.get("streamId") and request.method == "POST":
            assigned = stream["streamId"]  # a stream's updates and final message share its id
        activity = ReceivedActivity(
            method=request.method,
            path=request.path,
            conversation_id=request.match_info["conversation_id"],
            activity_id=activity_id,
            body=body,
            headers=dict(request.headers),
            assigned_id=assigned,
        )
        failure = next((f for f in self._failures if f.remaining > 0 and f.matches(activity)), None)
        if failure is not None:
            failure.remaining -= 1
            self.refused.append(activity)
            return web.json_response(failure.body, status=failure.status, headers=failure.headers)
        assert self._changed is not None
        async with self._changed:
            self.received.append(activity)
            self._changed.notify_all()
        return activity


__all__ = ["FakeBotConnector", "ReceivedActivity", "is_final"]
