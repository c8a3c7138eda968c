"""The session runner: drives one run turn by turn and keeps the record of it.

It sends the next scripted step (word for word, whatever the model said before),
or a live message, asks the gateway for the reply, and persists that reply while
it streams. It emits events (turn started, delta, finished, failed) for the TUI
and the batch runner. No Textual here.
"""

from __future__ import annotations

import asyncio
import json
import random
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from sqlite_utils import Database

from sieve.engine.gateway import Gateway, RequestSettings, Result
from sieve.engine.player import Seat, player_messages
from sieve.errors import SieveUsageError
from sieve.scenarios import Scenario, Step
from sieve.store.record import turns as record
from sieve.store.record.rows import Turn
from sieve.store.record.runs import create_run, snapshot

FLUSH_INTERVAL = 0.5  # seconds between writes of a streaming reply: the most a crash can lose
INTERRUPTED = ("interrupted", "interrupted: the run was stopped while the reply streamed")


class ScriptFinished(SieveUsageError):
    """There is no scripted step left to send."""


# -- events ---------------------------------------------------------------------


@dataclass(frozen=True)
class TurnStarted:
    run_id: str
    turn_id: str
    idx: int
    role: str
    origin: str
    text: str
    step_id: str | None = None


@dataclass(frozen=True)
class TurnDelta:
    run_id: str
    turn_id: str
    text: str


@dataclass(frozen=True)
class TurnFinished:
    run_id: str
    turn_id: str
    status: str  # complete | length | filtered | cancelled
    result: Result | None


@dataclass(frozen=True)
class TurnFailed:
    run_id: str
    turn_id: str
    error: str
    attempt: int
    will_retry: bool
    retry_in: float | None = None


Event = TurnStarted | TurnDelta | TurnFinished | TurnFailed


@dataclass(frozen=True)
class RetryPolicy:
    """Retries for errors before the first token: connection errors, 408, 429, 5xx."""

    attempts: int = 4
    base: float = 1.0
    cap: float = 60.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.cap)
        return min(self.cap, self.base * 2 ** (attempt - 1)) * random.uniform(0.8, 1.2)


# -- settings -------------------------------------------------------------------

DEFAULTS: dict[str, Any] = {"temperature": 1.0, "timeout": 240.0}
SETTING_KEYS = ("temperature", "max_tokens", "reasoning_effort", "seed", "timeout", "read_timeout")


SEEDS = 2**31  # seeds a run draws from: every endpoint that takes a seed takes these


def fresh_seed() -> int:
    return secrets.randbelow(SEEDS)


def resolve_settings(model: str, scenario: Scenario, *layers: dict[str, Any] | None) -> RequestSettings:
    """Built-in defaults, then the scenario's [settings], then each layer; None leaves a value alone."""
    merged: dict[str, Any] = dict(DEFAULTS)
    merged.update({k: v for k, v in scenario.settings.items() if k in SETTING_KEYS})
    for layer in layers:
        for key, value in (layer or {}).items():
            if key in SETTING_KEYS and value is not None:
                merged[key] = value
    return RequestSettings(model=model, **{k: merged[k] for k in SETTING_KEYS if k in merged})


def settings_record(settings: RequestSettings, gateway: Gateway, scenario: Scenario) -> dict[str, Any]:
    """What a run stores as the settings it actually used (never a key, only its variable's name)."""
    data = asdict(settings)
    data["system_prompt"] = scenario.system is not None
    data["endpoint_url"] = gateway.endpoint.base_url
    data["api_key_env"] = gateway.endpoint.api_key_env
    data["token_counting"] = "usage, else tokenize" if gateway.endpoint.tokenize_url else "usage, else deltas"
    return data


def request_settings_from_record(data: dict[str, Any]) -> RequestSettings:
    return RequestSettings(**{k: data[k] for k in ("model", *SETTING_KEYS) if k in data})


# -- the runner -----------------------------------------------------------------


@dataclass
class Session:
    db: Database
    scenario: Scenario
    gateway: Gateway
    run_id: str
    settings: RequestSettings
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    on_event: Callable[[Event], None] | None = None
    flush_interval: float = FLUSH_INTERVAL
    # In the TUI a cancelled reply was the reviewer's choice; headless, it is an interruption.
    reviewer_cancels: bool = True
    # Whether anyone draws the text as it streams (Play does, a headless batch does not):
    # without a reader, no event is made per token.
    stream_deltas: bool = True
    # How `play` goes: a model in the player's seat after the script (or, without the
    # script, right after the setup message).
    seat: Seat | None = None
    follow_script: bool = True

    @classmethod
    def start(
        cls,
        db: Database,
        scenario: Scenario,
        gateway: Gateway,
        settings: RequestSettings,
        *,
        repeat: int = 0,
        origin: str = "script",
        **options: Any,
    ) -> Session:
        """Create a new run (with its scenario snapshot and settings) and a session on it.

        A run given no seed gets one of its own, recorded in its settings: repeats of one
        configuration must be independent draws (an endpoint that starts every request from
        the same state, as llama.cpp's server does, otherwise gives each repeat the same replies).
        """
        if settings.seed is None:
            settings = replace(settings, seed=fresh_seed())
        run_id = create_run(
            db,
            scenario,
            model=settings.model,
            endpoint=gateway.endpoint.label,
            settings=settings_record(settings, gateway, scenario),
            origin=origin,
            repeat=repeat,
        )
        record.claim_run(db, run_id)
        if scenario.system:
            record.add_turn(db, run_id, idx=0, role="system", origin="setup", text=scenario.system)
        return cls(db, scenario, gateway, run_id, settings, **options)

    @classmethod
    def open(cls, db: Database, run_id: str, gateway: Gateway, **options: Any) -> Session:
        """A session on an existing run, with the scenario as it was snapshotted for it."""
        run = record.get_run(db, run_id)
        scenario = snapshot(db, run["scenario_sha256"], run["scenario"])
        record.claim_run(db, run_id)
        return cls(db, scenario, gateway, run_id, request_settings_from_record(run["settings"]), **options)

    # -- where the run stands ----------------------------------------------------

    def turns(self) -> list[Turn]:
        return record.chosen_turns(self.db, self.run_id)

    def position(self) -> int:
        """How many scripted messages have been sent."""
        return record.script_position(self.db, self.run_id)

    def next_entry(self) -> tuple[Step, int] | None:
        """The scripted step to send next, with its repetition number, or None at the end."""
        script = self.scenario.script()
        position = self.position()
        return script[position] if position < len(script) else None

    def needs_reply(self) -> bool:
        """Whether the last prompt has no usable reply (none yet, failed or interrupted)."""
        last = record.last_turn(self.db, self.run_id)
        if last is None:
            return False
        if last["origin"] == "player" and last["status"] not in ("complete", "length"):
            return False  # the player model's message never came: there is nothing to answer
        return last["role"] == "user" or last["status"] in ("failed", "interrupted", "streaming")

    def messages(self, before_idx: int) -> list[dict[str, str]]:
        """The conversation sent to the model for the reply at `before_idx`."""
        return record.conversation(self.db, self.run_id, before_idx)

    def emit(self, event: Event) -> None:
        if self.on_event is not None:
            self.on_event(event)

    # -- actions -----------------------------------------------------------------

    async def send_next(self) -> Result:
        """Send the next scripted step word for word and stream the reply."""
        entry = self.next_entry()
        if entry is None:
            raise ScriptFinished(f"run {self.run_id}: the script of {self.scenario.name} is finished")
        step, repetition = entry
        origin = "setup" if step.kind == "setup" else ("filler" if step.kind == "filler" else "script")
        return await self._prompt(step.text, origin, step.id, repetition)

    async def send_live(self, text: str) -> Result:
        """Send the reviewer's own message; the run records that it left the script here."""
        if not text.strip():
            raise SieveUsageError("a live message needs some text")
        record.mark_left_script(self.db, self.run_id, self.position())
        return await self._prompt(text, "live", None, None)

    async def regenerate(self) -> Result:
        """Ask again for the reply to the last prompt; earlier replies stay as alternatives."""
        last = record.last_turn(self.db, self.run_id)
        if last is None or last["role"] == "system":
            raise SieveUsageError("nothing has been sent yet: there is no reply to regenerate")
        if last["origin"] == "player" and last["status"] not in ("complete", "length"):
            raise SieveUsageError("the player model's message failed: there is no reply to regenerate")
        idx = last["idx"] + 1 if last["role"] == "user" else last["idx"]
        return await self._reply(idx, record.next_alt(self.db, self.run_id, idx))

    async def send_played(self, seat: Seat) -> Result:
        """A model in the player's seat writes the next player message under its brief; the model under test answers.

        Returns the reply's result, or the player message's if that failed (then no reply is asked for).
        """
        record.mark_left_script(self.db, self.run_id, self.position())
        last = record.last_turn(self.db, self.run_id)
        idx = last["idx"] + 1 if last else 0
        messages = player_messages(self.scenario, self.turns(), seat.player)
        played = await self._reply(idx, 0, seat=seat, messages=messages)
        if played.status not in ("complete", "length"):
            return played
        return await self._reply(idx + 1, 0)

    def planned_turns(self) -> int:
        """How many turns `play` finishes in all: a reply per scripted message, two per model-played round."""
        sent = len(self.scenario.script()) if self.follow_script else 1
        return sent + (2 * self.seat.turns if self.seat else 0)

    async def play(
        self, stop: asyncio.Event | None = None, seat: Seat | None = None, script: bool | None = None
    ) -> str:
        """Play the rest of the script, then `seat.turns` model-played turns if a seat is given; returns the status.

        Without the script (`script=False`), only the setup message is sent before the
        player model takes over. A reply that fails (after retries) stops the run as
        failed; a filtered reply or a ceiling hit is recorded and the script goes on.
        """
        seat = seat or self.seat
        script = self.follow_script if script is None else script
        if self.needs_reply():
            result = await self.regenerate()
            if result.status == "failed":
                return self.close("failed", result.error)
        while self.next_entry() is not None and (script or self.position() == 0):
            if stop is not None and stop.is_set():
                return "running"
            result = await self.send_next()
            if result.status == "failed":
                return self.close("failed", result.error)
        played = sum(1 for t in self.turns() if t["origin"] == "player") if seat else 0
        while seat is not None and played < seat.turns:
            if stop is not None and stop.is_set():
                return "running"
            result = await self.send_played(seat)
            played += 1
            if result.status == "failed":
                return self.close("failed", result.error)
        return self.close("complete")

    def branch(self, upto_idx: int) -> Session:
        """A new run sharing this run's turns up to `upto_idx`, ready to go on from there."""
        new_id = record.branch_run(self.db, self.run_id, upto_idx)
        record.claim_run(self.db, new_id)
        return replace(self, run_id=new_id)

    def close(self, status: str, error: str | None = None) -> str:
        record.set_run_status(self.db, self.run_id, status, error)
        return status

    # -- the turn ----------------------------------------------------------------

    async def _prompt(self, text: str, origin: str, step_id: str | None, repetition: int | None) -> Result:
        last = record.last_turn(self.db, self.run_id)
        idx = last["idx"] + 1 if last else 0
        turn_id = record.add_turn(
            self.db,
            self.run_id,
            idx=idx,
            role="user",
            origin=origin,
            text=text,
            step_id=step_id,
            step_repeat=repetition,
        )
        self.emit(TurnStarted(self.run_id, turn_id, idx, "user", origin, text, step_id))
        return await self._reply(idx + 1, 0)

    async def _reply(
        self, idx: int, alt: int, seat: Seat | None = None, messages: list[dict[str, str]] | None = None
    ) -> Result:
        """Stream a turn at `idx`: the model's reply, or (with a seat) the player model's message."""
        record.claim_run(self.db, self.run_id)  # a finished run that goes on live is running again
        gateway, settings = (seat.gateway, seat.settings) if seat else (self.gateway, self.settings)
        role, origin = ("user", "player") if seat else ("assistant", "reply")
        if alt and settings.seed is not None:  # a regeneration asks for another draw, not the same one again
            settings = replace(settings, seed=(settings.seed + alt) % SEEDS)
        messages = self.messages(idx) if messages is None else messages
        turn_id = record.add_turn(
            self.db,
            self.run_id,
            idx=idx,
            role=role,
            origin=origin,
            status="streaming",
            alt=alt,
            played_by=seat.settings.model if seat else None,
            played_settings=json.dumps(seat.record(), sort_keys=True) if seat else None,
        )
        self.emit(TurnStarted(self.run_id, turn_id, idx, role, origin, ""))
        parts: list[str] = []
        attempt = 1
        result: Result  # set by the last attempt, or by the failure that ended them
        try:
            while True:
                parts.clear()
                result = await self._stream_once(turn_id, messages, parts, gateway, settings)
                if result.status == "failed" and result.retryable and not result.text and attempt < self.retry.attempts:
                    delay = self.retry.delay(attempt, result.retry_after)
                    record.finish_turn(self.db, turn_id, "streaming", "", {"error": result.error}, attempts=attempt)
                    self.emit(TurnFailed(self.run_id, turn_id, result.error or "", attempt, True, delay))
                    await asyncio.sleep(delay)
                    attempt += 1
                    continue
                break
            await self._count_tokens(result, messages, gateway, settings)
        except asyncio.CancelledError:
            # The reviewer's cancel (Play's c) keeps the text as cancelled; a headless
            # run that is stopped (Ctrl-C) was interrupted, and resuming asks again.
            status, why = ("cancelled", "cancelled by the reviewer") if self.reviewer_cancels else INTERRUPTED
            self._end_turn(turn_id, status, "".join(parts), {"error": why}, attempt)
            self.emit(TurnFinished(self.run_id, turn_id, "cancelled", None))
            raise
        except Exception as exc:
            # Whatever broke (the store, a bug), the turn must not stay streaming: it
            # fails with the text that had arrived, and the run stops as failed.
            where = gateway.endpoint.url
            result = Result(status="failed", text="".join(parts), error=f"POST {where}: {type(exc).__name__}: {exc}")
        fields = {k: getattr(result, k) for k in record.RESULT_FIELDS}
        self._end_turn(turn_id, result.status, result.text, fields, attempt)
        if result.status == "failed":
            self.emit(TurnFailed(self.run_id, turn_id, result.error or "", attempt, False))
        else:
            self.emit(TurnFinished(self.run_id, turn_id, result.status, result))
            if self.next_entry() is None and seat is None:
                self.close("complete")
        return result

    async def _stream_once(
        self,
        turn_id: str,
        messages: list[dict[str, str]],
        parts: list[str],
        gateway: Gateway,
        settings: RequestSettings,
    ) -> Result:
        """One request: deltas go out as events and to disk (every flush interval); returns how it ended."""
        result: Result | None = None
        last_flush = time.monotonic()
        async for event in gateway.stream(messages, settings):
            if isinstance(event, str):
                parts.append(event)
                if self.stream_deltas:
                    self.emit(TurnDelta(self.run_id, turn_id, event))
                if time.monotonic() - last_flush >= self.flush_interval:
                    record.save_partial(self.db, turn_id, "".join(parts))
                    last_flush = time.monotonic()
            else:
                result = event
        if result is None:  # the gateway promises a Result last; if it broke that, say so
            result = Result(status="failed", text="".join(parts), error="the stream ended without a result")
        return result

    def _end_turn(self, turn_id: str, status: str, text: str, fields: dict[str, Any], attempts: int) -> None:
        """Record how the reply ended; if its details cannot be stored, at least its text and that it ended."""
        try:
            record.finish_turn(self.db, turn_id, status, text, fields, attempts=attempts)
        except Exception as exc:
            error = f"the reply's details could not be stored ({type(exc).__name__}: {exc})"
            # If this fails too (the disk is full), the turn stays streaming until the
            # run is opened again: recovery and resuming mark it interrupted.
            record.finish_turn(self.db, turn_id, "failed", text, {"error": error}, attempts=attempts)

    async def _count_tokens(
        self, result: Result, messages: list[dict[str, str]], gateway: Gateway, settings: RequestSettings
    ) -> None:
        """Token counts where the server sent no usage: its tokenizer if it has one, else the deltas."""
        if result.token_source == "usage" or (result.completion_tokens is not None):
            return
        counted = await gateway.count_tokens(result.text, settings.model)
        if counted is not None:
            # The server's own tokenizer over the message texts; the chat template's
            # own tokens are not included in the prompt count.
            result.completion_tokens = counted
            result.prompt_tokens = await gateway.count_tokens("\n".join(m["content"] for m in messages), settings.model)
            result.token_source = "tokenize"
        elif result.deltas:
            result.completion_tokens = result.deltas
            result.token_source = "deltas"
