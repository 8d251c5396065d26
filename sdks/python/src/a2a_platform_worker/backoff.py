"""Exponential backoff with jitter, for reconnecting and for retrying updates."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Backoff:
    """``initial * factor ** attempt`` seconds, capped at ``maximum``, spread by ``±jitter`` (a
    fraction).

    The default, 0.1 s doubling to 1 s ±20 %, stays well under a lease's length, so a worker is back
    within about a second of the platform and keeps its leases.
    """

    initial: float = 0.1
    maximum: float = 1.0
    factor: float = 2.0
    jitter: float = 0.2

    def delay(self, attempt: int, rand: Callable[[], float] = random.random) -> float:
        """Seconds before retry number ``attempt`` (0 for the first retry).

        ``rand`` returns a value in [0, 1); 0.5 yields the delay without jitter.
        """
        base = min(self.maximum, self.initial * self.factor ** max(0, attempt))
        spread = base * self.jitter * (2 * rand() - 1)
        return max(0.0, base + spread)


DEFAULT_BACKOFF = Backoff()
