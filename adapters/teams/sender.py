"""`ActivitySender` over an Agents SDK `TurnContext`: the SDK's connector client does the HTTP."""

from __future__ import annotations

import aiohttp
from microsoft_agents.activity import Activity
from microsoft_agents.hosting.core import TurnContext

from adapters.teams.delivery import ConnectorCallFailed, Payload


class TurnContextSender:
    """Sends and edits activities in the conversation of `context`; a refusal is `ConnectorCallFailed`."""

    def __init__(self, context: TurnContext) -> None:
        self._context = context

    async def send(self, activity: Payload) -> str:
        try:
            response = await self._context.send_activity(Activity.model_validate(activity))
        except aiohttp.ClientResponseError as error:
            raise _refusal(error) from error
        return (response.id if response else "") or ""

    async def update(self, activity_id: str, activity: Payload) -> None:
        model = Activity.model_validate(activity)
        model.id = activity_id
        try:
            await self._context.update_activity(model)
        except aiohttp.ClientResponseError as error:
            raise _refusal(error) from error


def _refusal(error: aiohttp.ClientResponseError) -> ConnectorCallFailed:
    return ConnectorCallFailed(
        error.status, retry_after_s=_retry_after_s(error.headers), detail=str(error.message or "")
    )


def _retry_after_s(headers: object) -> float | None:
    value = headers.get("Retry-After") if hasattr(headers, "get") else None
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None  # an HTTP date: fall back to our own backoff
