"""A model in the player's seat: it plays the player under a brief, and the model under test answers it.

The story seed names what a fixed script cannot do: "the sideways questions, the
refusals to engage, the attempts to break the world open". A player model is
given a brief (the scenario's `[[players]]`) and the conversation seen from the
player's side: the world's replies as what it is told, its own earlier messages
as what it said. It never sees the steps' hidden notes, the rubrics or anything
else the reviewer sees; only the brief, the opening message and the exchange.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sieve.scenarios import Player, Scenario

if TYPE_CHECKING:  # only for the annotations: the CLI reads this module's constants without loading httpx
    from sieve.engine.gateway import Gateway, RequestSettings

DEFAULT_TURNS = 5  # model-played turns in one go, so nothing runs away
PLAYER_MAX_TOKENS = 400  # a player's message is one short paragraph; the scenario's ceiling is for the world
INSTRUCTION = (
    "You are the player in a roleplay game. A game master plays the world and every other character; "
    "you play only your own character.\n\n{brief}\n\n"
    "The game began with this message of yours to the game master:\n---\n{setup}\n---\n\n"
    "Write only your next message as the player: what your character says or does, in one short paragraph. "
    "Do not write the game master's part, do not narrate what the world does, do not explain yourself."
)
NOTHING_YET = "(The game master has not answered yet. Write your first message.)"


@dataclass
class Seat:
    """Who sits in the player's seat: a brief, and a model on a gateway with its settings."""

    player: Player
    gateway: Gateway
    settings: RequestSettings
    turns: int = DEFAULT_TURNS
    extra: dict[str, Any] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        """What a model-played turn stores about how it was played (never a key, only its variable's name)."""
        return {
            "brief": self.player.id,
            "model": self.settings.model,
            "endpoint": self.gateway.endpoint.label,
            "api_key_env": self.gateway.endpoint.api_key_env,
            "temperature": self.settings.temperature,
            "max_tokens": self.settings.max_tokens,
            "seed": self.settings.seed,
        }


def player_messages(scenario: Scenario, turns: Sequence[Mapping[str, Any]], player: Player) -> list[dict[str, str]]:
    """The request a player model gets: its brief, the opening message, and the exchange with roles swapped.

    Only texts of turns go in: the scenario's notes, rubrics and probes never do.
    """
    setup = next((t["text"] for t in turns if t["role"] == "user" and t["origin"] == "setup"), "")
    messages = [{"role": "system", "content": INSTRUCTION.format(brief=player.brief.strip(), setup=setup.strip())}]
    for turn in turns:
        if not turn["text"] or turn["role"] == "system" or turn["origin"] == "setup" or turn["status"] == "failed":
            continue
        role = "user" if turn["role"] == "assistant" else "assistant"  # swapped: the world speaks to the player
        if messages[-1]["role"] == role:  # two of a kind in a row (a reply that never came): keep them together
            messages[-1] = {"role": role, "content": messages[-1]["content"] + "\n\n" + turn["text"]}
        else:
            messages.append({"role": role, "content": turn["text"]})
    if messages[-1]["role"] != "user":
        messages.append({"role": "user", "content": NOTHING_YET})
    return messages
