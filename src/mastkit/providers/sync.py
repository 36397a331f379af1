"""``run_sync``: await a coroutine from synchronous code (the CLI, scripts, notebooks)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable
from typing import Any, TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")


async def _await(awaitable: Awaitable[T]) -> T:
    return await awaitable


def run_sync(awaitable: Awaitable[T]) -> T:
    """Run ``awaitable`` to completion and return its result.

    Without a running event loop in this thread this is ``asyncio.run``. Inside one (a
    Jupyter cell, an async framework) it runs on a fresh loop in a helper thread and
    blocks until done, instead of failing with "asyncio.run() cannot be called from a
    running event loop".
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await(awaitable))
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(_await(awaitable))
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, name="mastkit-run-sync", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value
