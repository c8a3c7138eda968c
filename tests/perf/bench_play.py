"""Streaming a 24,000-token reply into the Play screen, against the gateway alone on the same stream.

    python -m tests.perf.bench_play [--quick]

Both are timed from the moment the request goes out to the end of the reply; for the
screen, to the end of the frame that shows all of it (timing.reply_to_paint).

Target (issue 4): the Play screen takes under 1.3 times the gateway's time.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sieve import scenarios, store
from sieve.engine.endpoints import Endpoints
from sieve.engine.gateway import Endpoint, Gateway, RequestSettings
from sieve.engine.session import Session, resolve_settings
from sieve.tui.app import SieveApp
from sieve.tui.screens.play import PlayScreen
from tests.perf.serve import fake_server_process
from tests.perf.timing import machine_line, reply_to_paint
from tests.support.tui_helpers import screen_is, wait_until

# As fast as the server can send (raw throughput: every character still has to be laid
# out and drawn), and at 2,000 tokens a second, faster than any hosted model streams
# (whether the screen keeps up with the stream).
PACES = {"full speed": "bench;tokens=24000", "2,000 tokens/s": "bench;tokens=24000;delay=0.0005"}
if "--quick" in sys.argv:
    PACES.pop("2,000 tokens/s")
ROUNDS = 2


async def gateway_alone(url: str, model: str) -> float:
    async with Gateway(Endpoint(url)) as gateway:
        start = time.perf_counter()
        async for _event in gateway.stream([{"role": "user", "content": "Go."}], RequestSettings(model=model)):
            pass
        return time.perf_counter() - start


async def play_screen(url: str, model: str) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        db = store.open_db(Path(tmp) / "bench.db")
        train = scenarios.load("train")
        session = Session.start(db, train, Gateway(Endpoint(url)), resolve_settings(model, train))
        app = SieveApp(db, Endpoints(), "bench", first=lambda: PlayScreen(session))
        async with app.run_test(size=(160, 50)) as pilot:
            await wait_until(pilot, screen_is(app, PlayScreen))
            screen = app.screen
            elapsed = await reply_to_paint(screen, session, pilot)
            transcript = screen.query_one("TranscriptView")
            shown = len(transcript.text_of(transcript.keys[-1]))
        return elapsed, shown


def main() -> None:
    print(machine_line())  # first: the machine these figures were taken on
    with fake_server_process() as url:
        for label, model in PACES.items():
            alone = [asyncio.run(gateway_alone(url, model)) for _ in range(ROUNDS)]
            screen = [asyncio.run(play_screen(url, model)) for _ in range(ROUNDS)]
            a = statistics.median(alone)
            p = statistics.median(t for t, _ in screen)
            print(f"24,000-token reply at {label}, median of {ROUNDS}:")
            print(f"  gateway alone            {a:6.2f} s")
            print(f"  into the Play screen     {p:6.2f} s  ({screen[0][1]:,} characters shown)")
            print(f"  ratio = {p / a:.2f}  (target < 1.3: {'met' if p / a < 1.3 else 'NOT met'})")


if __name__ == "__main__":
    main()
