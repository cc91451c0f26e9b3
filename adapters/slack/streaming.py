"""Showing an answer in a Slack thread while it is written.

Two writers put text into Slack messages:

- `NativeStreamWriter`: `chat.startStream` / `appendStream` / `stopStream`. Appends carry only new text;
  the sources and buttons go as `blocks` on stop (stop never resends the text, it would be appended).
  When an append fails the message is finished with `chat.update` from the text kept here.
- `MessageUpdateWriter`: a placeholder posted at once and edited with `chat.update` about once a second.

`AnswerStreamer` drives one writer for one answer: it paces status lines (`StatusThrottle`) and flushes,
splits long answers over several messages (each within Slack's limits), and switches from the native writer
to the update writer when `chat.startStream` is not available.

Calls that a later call supersedes (status lines, intermediate appends and edits) go through a
`best_effort_client` that does not wait out a 429: Slack's `Retry-After` can be tens of seconds, and the
answer must not stall behind a status line. Finishing a message uses the client that retries.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.blocks import AnswerBlocksRequest, Block, build_answer_blocks
from adapters.slack.errors import is_rate_limited, slack_error_code
from adapters.slack.status import STATUS_INTERVAL_S, Sleep, StatusThrottle
from adapters.text import escape_markup

logger = logging.getLogger(__name__)

StreamMode = Literal["auto", "native", "update"]
_T = TypeVar("_T")

# One Slack message holds at most this much answer text: under chat.update's ~4,000-character text
# cap and the 12,000-character markdown block, with room for the sources and buttons.
MESSAGE_PART_CHARS = 3500
NATIVE_INTERVAL_S = 0.75  # appendStream is Tier 4 (100+/min)
UPDATE_INTERVAL_S = 1.0  # chat.update is Tier 3 (50+/min)
_MAX_INTERVAL_S = 8.0


class StreamTarget(BaseModel):
    """Where an answer goes: a thread, and the person it answers (the live stream's recipient)."""

    model_config = ConfigDict(frozen=True)

    channel: str
    thread_ts: str
    team: str = ""
    user: str = ""


class StreamUnavailable(Exception):
    """`chat.startStream` is refused here (unknown method, not enabled, wrong surface)."""


def _text_blocks(part_text: str, blocks: list[Block]) -> list[Block]:
    return build_answer_blocks(AnswerBlocksRequest(answer_text=part_text)) + blocks


class MessageWriter(ABC):
    """Writes the parts of one answer into Slack messages, one message at a time.

    `best_effort_client` (defaults to `client`) sends what a later call supersedes; `client` finishes a message.
    """

    interval_s: float

    def __init__(
        self, client: AsyncWebClient, target: StreamTarget, *, best_effort_client: AsyncWebClient | None = None
    ) -> None:
        self._client = client
        self._best_effort = best_effort_client or client
        self._target = target
        self._ts: str | None = None  # the message being written

    @abstractmethod
    async def show_status(self, text: str) -> None:
        """Show what the bot is doing before any answer text is visible."""

    @abstractmethod
    async def push(self, part_text: str, new_text: str) -> bool:
        """Show the current message's text so far; False when Slack asked us to slow down."""

    @abstractmethod
    async def close(self, part_text: str, new_text: str, blocks: list[Block], *, rewrite: bool) -> None:
        """Finish the current message with its whole text and `blocks`; the next push starts a new one.

        `rewrite` says the text already shown differs from `part_text` and must be replaced.
        """


class MessageUpdateWriter(MessageWriter):
    """A placeholder message edited with chat.update; each part is a message of its own."""

    interval_s = UPDATE_INTERVAL_S

    async def show_status(self, text: str) -> None:
        status = f"_{escape_markup(text)}_"
        blocks = [{"type": "context", "elements": [{"type": "mrkdwn", "text": status}]}]
        try:
            await self._post_or_update(self._best_effort, text, blocks)
        except SlackApiError as error:
            logger.info("slack status placeholder not shown: %s", slack_error_code(error))

    async def push(self, part_text: str, new_text: str) -> bool:
        try:
            await self._post_or_update(self._best_effort, part_text, _text_blocks(part_text, []))
        except SlackApiError as error:
            logger.info("slack update skipped: %s", slack_error_code(error))
            return not is_rate_limited(error)
        return True

    async def close(self, part_text: str, new_text: str, blocks: list[Block], *, rewrite: bool) -> None:
        all_blocks = _text_blocks(part_text, blocks)
        try:
            await self._post_or_update(self._client, part_text, all_blocks)
        except SlackApiError as error:
            if self._ts is None:
                raise
            # chat.update and chat.postMessage are limited separately: post the final text anew.
            logger.warning("slack final update failed (%s); posting it as a new message", slack_error_code(error))
            self._ts = None
            await self._post_or_update(self._client, part_text, all_blocks)
        self._ts = None

    async def _post_or_update(self, client: AsyncWebClient, text: str, blocks: list[Block]) -> None:
        if self._ts is None:
            response = await client.chat_postMessage(
                channel=self._target.channel, thread_ts=self._target.thread_ts, text=text, blocks=blocks
            )
            self._ts = str(response["ts"])
        else:
            await client.chat_update(channel=self._target.channel, ts=self._ts, text=text, blocks=blocks)


class NativeStreamWriter(MessageWriter):
    """Slack's streaming methods; each part is one stream, started lazily with its first text."""

    interval_s = NATIVE_INTERVAL_S

    def __init__(
        self, client: AsyncWebClient, target: StreamTarget, *, best_effort_client: AsyncWebClient | None = None
    ) -> None:
        super().__init__(client, target, best_effort_client=best_effort_client)
        self._broken = False  # an append failed: the part is finished with chat.update
        self._status_supported = True

    async def show_status(self, text: str) -> None:
        if self._ts is not None or not self._status_supported:
            return
        try:
            await self._best_effort.assistant_threads_setStatus(
                channel_id=self._target.channel, thread_ts=self._target.thread_ts, status=text
            )
        except SlackApiError as error:
            if not is_rate_limited(error):
                self._status_supported = False
            logger.info("slack thinking status not shown: %s", slack_error_code(error))

    async def push(self, part_text: str, new_text: str) -> bool:
        if self._broken:
            return True  # kept locally; close() shows it with chat.update
        try:
            if self._ts is None:
                await self._start(self._best_effort, new_text)
            else:
                await self._best_effort.chat_appendStream(
                    channel=self._target.channel, ts=self._ts, markdown_text=new_text
                )
        except SlackApiError as error:
            if is_rate_limited(error):
                return False
            logger.warning("slack appendStream failed (%s); finishing with chat.update", slack_error_code(error))
            self._broken = True
        return True

    async def close(self, part_text: str, new_text: str, blocks: list[Block], *, rewrite: bool) -> None:
        try:
            if self._ts is None:
                await self._start(self._client, part_text)
                new_text, rewrite = "", False
            if not (self._broken or rewrite):
                try:
                    await self._client.chat_stopStream(
                        channel=self._target.channel,
                        ts=self._ts,
                        markdown_text=new_text or None,
                        blocks=blocks or None,
                    )
                    return
                except SlackApiError as error:
                    logger.warning(
                        "slack stopStream failed (%s); finishing with chat.update",
                        slack_error_code(error),
                    )
            else:
                await self._stop_quietly()
            await self._client.chat_update(
                channel=self._target.channel,
                ts=self._ts,
                text=part_text,
                blocks=_text_blocks(part_text, blocks),
            )
        finally:
            self._ts = None
            self._broken = False

    async def _start(self, client: AsyncWebClient, markdown_text: str) -> None:
        try:
            response = await client.chat_startStream(
                channel=self._target.channel,
                thread_ts=self._target.thread_ts,
                markdown_text=markdown_text,
                recipient_team_id=self._target.team or None,
                recipient_user_id=self._target.user or None,
            )
        except SlackApiError as error:
            if is_rate_limited(error):
                raise
            raise StreamUnavailable(str(slack_error_code(error))) from error
        self._ts = str(response["ts"])

    async def _stop_quietly(self) -> None:
        """End the streaming state so chat.update is accepted; a stream that is already over is fine."""
        try:
            await self._client.chat_stopStream(channel=self._target.channel, ts=self._ts)
        except SlackApiError as error:
            logger.info("slack stopStream before update: %s", slack_error_code(error))


def choose_split(text: str, start: int, limit: int, *, min_end: int) -> int:
    """Where the message starting at `start` ends: a paragraph, line or sentence break near `start + limit`.

    Never before `min_end` (text already shown in that message), never inside an `&amp;` entity.
    """
    end = start + limit
    low = min(max(min_end, start + limit // 2), end)
    window = text[low:end]
    for separator in ("\n\n", "\n", ". ", " "):
        found = window.rfind(separator)
        if found > 0:
            return low + found + len(separator)
    entity = text.rfind("&", max(low, end - 5), end)
    if entity > low and ";" not in text[entity:end]:
        return entity
    return end


class AnswerStreamer:
    """Shows one answer in one thread: paced status lines, text flushed at the writer's pace, the final blocks.

    A status line held back by the throttle is sent from a task of its own; a lock keeps it from crossing
    the answer's own calls, and once answer text exists no status line is sent.
    """

    def __init__(
        self,
        writer: MessageWriter,
        *,
        fallback: Callable[[], MessageWriter] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Sleep = asyncio.sleep,
        part_chars: int = MESSAGE_PART_CHARS,
        status_interval_s: float = STATUS_INTERVAL_S,
    ) -> None:
        self._writer = writer
        self._fallback = fallback
        self._clock = clock
        self._part_chars = part_chars
        self._interval_s = writer.interval_s
        self._text = ""  # the whole sanitised answer so far
        self._part_start = 0  # where the current message begins in _text
        self._shown = 0  # how much of _text Slack has
        self._last_flush = -math.inf
        self._finished = False
        self._writing = asyncio.Lock()
        self._statuses = StatusThrottle(self._show_status, interval_s=status_interval_s, clock=clock, sleep=sleep)

    @property
    def text(self) -> str:
        return self._text

    async def status(self, text: str) -> None:
        """Show a status line (paced, newest wins), unless answer text is already on its way."""
        if not self._text and not self._finished:
            await self._statuses.offer(text)

    async def write(self, text: str) -> None:
        """Add sanitised answer text; it reaches Slack at the next flush."""
        if not text:
            return
        self._text += text
        self._statuses.stop()
        if self._clock() - self._last_flush >= self._interval_s:
            async with self._writing:
                await self._flush()

    async def finish(self, text: str, blocks: list[Block]) -> None:
        """Show the final sanitised text and the blocks under it; earlier parts of a long answer stay."""
        self._finished = True
        self._statuses.stop()
        async with self._writing:
            await self._finish(text, blocks)

    async def _show_status(self, text: str) -> None:
        async with self._writing:
            if self._text or self._finished:
                return  # the answer overtook a held-back line
            await self._with_writer(lambda writer: writer.show_status(text))

    async def _finish(self, text: str, blocks: list[Block]) -> None:
        rewrite = False
        if text.startswith(self._text[: self._shown]):
            self._text = text
        else:
            rewrite = True
            self._text = self._text[: self._part_start] + text[self._part_start :]
            self._shown = self._part_start
        await self._close_full_parts()
        part_text, new_text = self._text[self._part_start :], self._text[self._shown :]
        await self._with_writer(lambda writer: writer.close(part_text, new_text, blocks, rewrite=rewrite))
        self._shown = len(self._text)

    async def _flush(self) -> None:
        await self._close_full_parts()
        if len(self._text) > self._shown:
            part_text, new_text = self._text[self._part_start :], self._text[self._shown :]
            shown = await self._with_writer(lambda writer: writer.push(part_text, new_text))
            if shown:
                self._shown = len(self._text)
                self._interval_s = self._writer.interval_s
            else:
                self._interval_s = min(self._interval_s * 2, _MAX_INTERVAL_S)
        self._last_flush = self._clock()

    async def _close_full_parts(self) -> None:
        while len(self._text) - self._part_start > self._part_chars:
            end = choose_split(self._text, self._part_start, self._part_chars, min_end=self._shown)
            part_text, new_text = self._text[self._part_start : end], self._text[self._shown : end]
            await self._with_writer(
                lambda writer, part_text=part_text, new_text=new_text: writer.close(
                    part_text, new_text, [], rewrite=False
                )
            )
            self._part_start = self._shown = end

    async def _with_writer(self, call: Callable[[MessageWriter], Awaitable[_T]]) -> _T:
        try:
            return await call(self._writer)
        except StreamUnavailable as error:
            if self._fallback is None:
                raise
            logger.info("slack native streaming unavailable (%s); editing a message instead", error)
            self._writer = self._fallback()
            self._fallback = None
            self._interval_s = self._writer.interval_s
            return await call(self._writer)


class AnswerStreamerFactory:
    """Builds a streamer per answer for the configured mode; in `auto`, remembers a refused native stream.

    `best_effort_client` is the same Web API without the 429 retry handler (defaults to `client`).
    """

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        mode: StreamMode = "auto",
        best_effort_client: AsyncWebClient | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Sleep = asyncio.sleep,
        part_chars: int = MESSAGE_PART_CHARS,
    ) -> None:
        if mode not in ("auto", "native", "update"):
            raise ValueError(f"stream mode must be auto, native or update, not {mode!r}")
        self._client = client
        self._best_effort = best_effort_client or client
        self._mode = mode
        self._clock = clock
        self._sleep = sleep
        self._part_chars = part_chars
        self._native_refused = False

    def create(self, target: StreamTarget) -> AnswerStreamer:
        def update_writer() -> MessageWriter:
            return MessageUpdateWriter(self._client, target, best_effort_client=self._best_effort)

        def fallback() -> MessageWriter:
            if self._mode == "auto":
                self._native_refused = True
            return update_writer()

        writer: MessageWriter
        fallback_writer: Callable[[], MessageWriter] | None = None
        if self._mode == "update" or (self._mode == "auto" and self._native_refused):
            writer = update_writer()
        else:
            writer = NativeStreamWriter(self._client, target, best_effort_client=self._best_effort)
            fallback_writer = fallback
        return AnswerStreamer(
            writer, fallback=fallback_writer, clock=self._clock, sleep=self._sleep, part_chars=self._part_chars
        )


__all__ = [
    "MESSAGE_PART_CHARS",
    "AnswerStreamer",
    "AnswerStreamerFactory",
    "MessageUpdateWriter",
    "MessageWriter",
    "NativeStreamWriter",
    "StreamMode",
    "StreamTarget",
    "StreamUnavailable",
    "choose_split",
]
