"""Waiting for a condition in a test: poll it until a deadline instead of sleeping a fixed time."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable


async def wait_until(
    condition: Callable[[], object | Awaitable[object]], *, timeout_s: float = 5.0, interval_s: float = 0.001
) -> None:
    """Let other tasks run until `condition()` is truthy (it may be async); fail after `timeout_s`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while True:
        value = condition()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {timeout_s} s")
        await asyncio.sleep(interval_s)


__all__ = ["wait_until"]
