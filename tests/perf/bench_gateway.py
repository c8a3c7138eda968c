"""Gateway throughput against a plain httpx line reader on the same 24,000-token stream.

    python -m tests.perf.bench_gateway

Target (issue 3): the gateway reaches at least 0.9 of the plain reader's throughput.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time

import httpx

from sieve.engine.gateway import Endpoint, Gateway, RequestSettings
from tests.perf.serve import fake_server_process
from tests.perf.timing import machine_line

MODEL = "bench;tokens=24000;comments=1"
MESSAGES = [{"role": "user", "content": "Tell me everything."}]
ROUNDS = 7


async def plain_reader(client: httpx.AsyncClient, url: str) -> int:
    """The least a client can do: read lines, parse each data line, keep the content."""
    parts = []
    body = RequestSettings(model=MODEL).body(MESSAGES)
    async with client.stream("POST", url + "/chat/completions", json=body) as response:
        async for line in response.aiter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                chunk = json.loads(line[6:])
                for choice in chunk.get("choices") or ():
                    content = choice["delta"].get("content")
                    if content:
                        parts.append(content)
    return len(parts)


async def gateway_reader(gateway: Gateway) -> int:
    """Every token, passed on as the gateway does (a network read at a time); how many it counted."""
    count = 0
    async for event in gateway.stream(MESSAGES, RequestSettings(model=MODEL)):
        if not isinstance(event, str):
            count = event.deltas
    return count


async def measure(url: str) -> tuple[list[float], list[float]]:
    plain_times, gateway_times = [], []
    async with httpx.AsyncClient(timeout=60) as client:
        gateway = Gateway(Endpoint(url), client=client)
        for _ in range(2):  # warm up both paths
            await plain_reader(client, url)
            await gateway_reader(gateway)
        for _ in range(ROUNDS):  # interleaved, so drift hits both alike
            start = time.perf_counter()
            assert await plain_reader(client, url) == 24000
            plain_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            assert await gateway_reader(gateway) == 24000
            gateway_times.append(time.perf_counter() - start)
    return plain_times, gateway_times


def main() -> None:
    print(machine_line())  # first: the machine these figures were taken on
    with fake_server_process() as url:
        plain, gateway = asyncio.run(measure(url))
    p, g = statistics.median(plain), statistics.median(gateway)
    ratio = p / g
    print(f"24,000-token stream, median of {ROUNDS}:")
    print(f"  plain httpx line reader  {p * 1000:8.1f} ms  ({24000 / p:,.0f} tokens/s)")
    print(f"  sieve gateway            {g * 1000:8.1f} ms  ({24000 / g:,.0f} tokens/s)")
    print(f"  throughput ratio gateway/plain = {ratio:.3f}  (target >= 0.9: {'met' if ratio >= 0.9 else 'NOT met'})")


if __name__ == "__main__":
    main()
