"""The embedded model's speed on its two servers: xllamacpp (the `local` extra) against llama-cpp-python.

    python -m tests.perf.bench_local [--quick] [--default-threads]

Both serve the same GGUF as sieve starts them (one thread, no extra weight buffers), one after
the other in rounds, so that a change of load hits both alike. Each round sends each server the
same requests: the keykeeper test's first message with a fresh seed (a cold prompt, so the
prompt is read whole) and a reply cut at the ceiling. Figures per server, medians over rounds:

- reply tokens/s: the reply's tokens after the first, over the time from the first to the last;
- prompt tokens/s: the prompt's tokens over the time to the first token;

each counted by the server's own tokenizer, then the ratio xllamacpp / llama-cpp-python (issue 30's
target: at least 1). `--default-threads` adds xllamacpp with llama.cpp's default threads (OpenMP,
every core), the setting sieve does not ship. The load average is printed before and after: on a
shared machine the figures say how the two compare on it that minute, not what either can do.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import statistics
import sys
import time

from sieve import scenarios
from sieve.engine.gateway import Gateway, RequestSettings, Result
from sieve.engine.local_model import MODEL_NAME, LocalModel
from tests.perf.timing import machine_line

ROUNDS = 5
MAX_TOKENS = 200
FIRST_MESSAGE = scenarios.load("keykeeper").steps[0].text


async def one_reply(gateway: Gateway, round_: int) -> tuple[float, float]:
    """(reply tokens/s, prompt tokens/s) of one request."""
    # The round in the prompt as well as the seed: no prompt cache spares the reading.
    messages = [{"role": "user", "content": f"(round {round_}) {FIRST_MESSAGE}"}]
    settings = RequestSettings(model=MODEL_NAME, max_tokens=MAX_TOKENS, seed=1000 + round_, temperature=1.0)
    result = None
    async for event in gateway.stream(messages, settings):
        if isinstance(event, Result):
            result = event
    assert result is not None and result.status in ("complete", "length"), result and result.error
    assert result.ttft is not None and result.duration is not None
    reply = await counted(gateway, result.text)
    prompt = await counted(gateway, messages[0]["content"])
    streaming = result.duration - result.ttft
    return (reply - 1) / streaming if streaming > 0 and reply > 1 else 0.0, prompt / result.ttft


async def counted(gateway: Gateway, text: str) -> int:
    """Tokens by the server's tokenizer, asked again if a busy machine kept it from answering in time."""
    for _ in range(3):
        tokens = await gateway.count_tokens(text, MODEL_NAME)
        if tokens:
            return tokens
    raise SystemExit(f"the server's tokenizer gave no count for a text of {len(text)} characters")


async def measure(model: LocalModel, round_: int) -> tuple[float, float]:
    async with Gateway(model.endpoint()) as gateway:
        return await one_reply(gateway, round_)


def main() -> None:
    print(machine_line())  # first: the machine these figures were taken on
    rounds = 2 if "--quick" in sys.argv else ROUNDS
    servers = ["xllamacpp"]
    threads: dict[str, int] = {}  # sieve's own choice where not named
    if importlib.util.find_spec("llama_cpp") is not None:
        servers.append("llama-cpp-python")
    else:
        print("llama-cpp-python is not installed (pip install -e '.[local-llama-cpp]'): no baseline, no ratio")
    if "--default-threads" in sys.argv:
        servers.append("xllamacpp, llama.cpp's default threads")
        threads[servers[-1]] = -1
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in servers}
    for round_ in range(rounds):
        for name in servers:
            # A new server each round, as a newly started sieve finds it.
            model = LocalModel(server=name.split(",")[0], threads=threads.get(name))
            model.start()
            try:
                figures[name].append(asyncio.run(measure(model, round_)))
            finally:
                model.stop()
    print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{rounds} rounds, replies of up to {MAX_TOKENS} tokens, medians:")
    medians = {}
    for name, rows in figures.items():
        reply = statistics.median(r[0] for r in rows)
        prompt = statistics.median(r[1] for r in rows)
        medians[name] = (reply, prompt)
        spread = f"{min(r[0] for r in rows):.1f}-{max(r[0] for r in rows):.1f}"
        print(f"  {name:40s} reply {reply:6.1f} tokens/s ({spread})   prompt {prompt:7.1f} tokens/s")
    if "llama-cpp-python" in medians:
        (xr, xp), (lr, lp) = medians["xllamacpp"], medians["llama-cpp-python"]
        print(f"ratio xllamacpp / llama-cpp-python: reply {xr / lr:.2f}, prompt {xp / lp:.2f} (target: at least 1)")


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"({time.perf_counter() - start:.0f} s)")
