"""Shared test helpers for provider tests."""

from __future__ import annotations

import asyncio

KEY = "sk-test-9f8e7d6c5b4a3210ZYXWVUTSRQ"
"""The API key tests configure; it must never show up anywhere but the auth header."""


class Sleeps:
    """An injectable ``sleep`` that records the waits and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await asyncio.sleep(0)
