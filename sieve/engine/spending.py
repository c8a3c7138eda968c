"""What requests cost before they are sent: an endpoint's published prices, estimates, and a limit never passed.

Prices come from the endpoint's `GET /models` where it publishes them (OpenRouter: each model's
`pricing.prompt` and `pricing.completion`, US dollars per token, as strings). Tokens are
estimated from the text (about four characters a token, the judge's packet estimate). A
`Budget` (`--max-cost USD`) holds every request to its worst case before it is sent, the
prompt as estimated and the whole reply ceiling: a request is sent only if that worst case,
with what is spent and what requests in flight hold, stays within the limit; when a request
ends, its hold becomes what it cost (the usage's cost, else its tokens at the prices). So the
spend never passes the limit, and what was not sent is counted.

A request that does not fit while others are in flight waits for them to settle (`acquire`): their
worst cases are rarely what they cost, so it is refused only when what was really spent, with what
is still in flight, leaves it no room. How many requests run at once (`--concurrency`) decides
when a request goes out, never whether.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from sieve.errors import SieveUsageError

CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN + 1


@dataclass(frozen=True)
class Price:
    """US dollars per token."""

    prompt: float
    completion: float

    def cost(self, prompt_tokens: float, completion_tokens: float) -> float:
        return prompt_tokens * self.prompt + completion_tokens * self.completion


FREE = Price(0.0, 0.0)


async def published_prices(client: httpx.AsyncClient, base_url: str, headers: dict[str, str]) -> dict[str, Price]:
    """model -> its price, from the endpoint's /models; {} when it publishes none (or cannot be asked)."""
    try:
        response = await client.get(base_url.rstrip("/") + "/models", headers=headers, timeout=30.0)
        response.raise_for_status()
        data = response.json().get("data") or []
    except (httpx.HTTPError, ValueError, AttributeError):
        return {}
    out = {}
    for entry in data if isinstance(data, list) else []:
        pricing = entry.get("pricing") if isinstance(entry, dict) else None
        if not isinstance(pricing, dict):
            continue
        try:
            prompt, completion = float(pricing.get("prompt", "nan")), float(pricing.get("completion", "nan"))
        except (TypeError, ValueError):
            continue
        if math.isfinite(prompt) and math.isfinite(completion) and prompt >= 0 and completion >= 0:
            out[str(entry.get("id"))] = Price(prompt, completion)
    return out


def money(value: float) -> str:
    return f"${value:.4f}"


@dataclass
class Budget:
    """A limit on what requests may cost (`--max-cost`), shared by every request of a command."""

    limit: float
    prices: dict[str, Price]  # by model
    spent: float = 0.0
    held: float = 0.0  # the worst cases of the requests in flight
    in_flight: int = 0
    refused: int = 0
    refused_worst: float = 0.0
    unpriced_sent: list[str] = field(default_factory=list)
    # Requests waiting for one in flight to settle: each is woken when one does (settle is not async, as it
    # runs in a generator's `finally`).
    _waiting: list[asyncio.Future[None]] = field(default_factory=list, repr=False)

    def price(self, model: str) -> Price:
        if model not in self.prices:
            raise SieveUsageError(f"--max-cost needs a price for {model}: the endpoint publishes none at /models")
        return self.prices[model]

    def worst_case(self, messages: Sequence[dict[str, str]], model: str, max_tokens: int | None) -> float:
        prompt = sum(estimate_tokens(m.get("content") or "") for m in messages)
        return self.price(model).cost(prompt, max_tokens or 0)

    def _fits(self, worst: float, held: float) -> bool:
        return self.spent + held + worst <= self.limit + 1e-12

    def hold(self, worst: float) -> bool:
        """Whether a request of this worst case may be sent now; if so, it is held until `settle`. Final: it
        does not wait for the requests in flight (`acquire` does)."""
        if not self._fits(worst, self.held):
            self._refuse(worst)
            return False
        self.held += worst
        self.in_flight += 1
        return True

    async def acquire(self, worst: float) -> bool:
        """Whether a request of this worst case may be sent, held until `settle` if so. While it does not fit
        beside the requests in flight it waits for them to settle; it is refused only when what was spent,
        with what is still in flight once they have, leaves it no room."""
        while not self._fits(worst, self.held):
            if not self.in_flight or not self._fits(worst, 0.0):
                # Nothing in flight to wait for, or the spend alone already leaves no room: spent only grows.
                self._refuse(worst)
                return False
            woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiting.append(woken)
            try:
                await woken
            finally:
                if woken in self._waiting:
                    self._waiting.remove(woken)
        self.held += worst
        self.in_flight += 1
        return True

    def _refuse(self, worst: float) -> None:
        self.refused += 1
        self.refused_worst += worst

    def settle(self, worst: float, cost: float) -> None:
        self.in_flight -= 1
        self.held = max(0.0, self.held - worst) if self.in_flight else 0.0
        self.spent += min(cost, worst) if cost > worst else cost
        waiting, self._waiting = self._waiting, []
        for woken in waiting:
            if not woken.done():
                woken.set_result(None)

    def actual(self, result: Any, messages: Sequence[dict[str, str]], model: str) -> float:
        """What a finished request cost: the usage's cost, else its tokens (or the estimate) at the prices."""
        if getattr(result, "cost", None) is not None:
            return float(result.cost)
        prompt = result.prompt_tokens or sum(estimate_tokens(m.get("content") or "") for m in messages)
        return self.price(model).cost(prompt, result.completion_tokens or result.deltas or 0)

    def refusal(self, worst: float) -> str:
        return (
            f"not sent: at worst {money(worst)} more would pass --max-cost {money(self.limit)} "
            f"({money(self.spent)} spent, {money(self.held)} held by requests in flight)"
        )

    def summary(self) -> str:
        """What a command says when it ends: what was spent, and what the limit left unsent."""
        said = f"spent {money(self.spent)} of --max-cost {money(self.limit)}"
        if self.refused:
            said += (
                f"; stopped before passing it: {self.refused} requests not sent "
                f"(at worst {money(self.refused_worst)}); left: {money(self.limit - self.spent)}"
            )
        return said
