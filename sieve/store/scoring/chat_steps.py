"""Which scripted steps an imported chat's player messages are, by the quote verifier's own rule.

A message that is a step's text, word for word or nearly, takes that step, so the step
header, `g` and `i` work on the chat. The script is read in order: each player message is matched against the steps not yet
taken, the next one first (a step the player skipped is passed over); a message that is
no step is the player's own, off the script.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sieve.scenarios import Scenario
from sieve.store.scoring import quotes

# (step id, its repetition, the turn's origin: setup, script or filler), or None: a message of the player's own.
Placed = tuple[str, int, str] | None
ORIGINS = {"setup": "setup", "filler": "filler"}


def _same_message(transcript: quotes.Transcript, size: int, message: str) -> bool:
    """Whether `message` is the step's text: found in it exactly or fuzzily (as a quote would be), and as long."""
    found = transcript.locate(message, repeats=True)
    if found.verdict not in ("exact", "fuzzy") or found.start is None or found.end is None:
        return False
    # A quote may be a part of its passage; a message that is a step covers it, nearly all of it.
    covered = (found.end - found.start) / max(1, size)
    return covered * 100 >= quotes.FUZZY_CUTOFF


def matcher(scenario: Scenario) -> Callable[[Sequence[str]], list[Placed]]:
    """A function that places each of a chat's player messages (in order) on the scenario's script."""
    script = scenario.script()
    steps = {
        step.id: (quotes.Transcript([{"id": step.id, "idx": 0, "role": "assistant", "text": step.text}]), step)
        for step, _ in script
    }

    def place(messages: Sequence[str]) -> list[Placed]:
        out: list[Placed] = []
        position = 0
        for message in messages:
            placed: Placed = None
            for at in range(position, len(script)):
                step, repetition = script[at]
                transcript, _ = steps[step.id]
                if message.strip() and _same_message(transcript, len(step.text), message):
                    placed = (step.id, repetition, ORIGINS.get(step.kind, "script"))
                    position = at + 1
                    break
            out.append(placed)
        return out

    return place
