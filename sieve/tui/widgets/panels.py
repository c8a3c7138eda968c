"""The panels beside the Play transcript: the next scripted step with its hidden note, and the run's figures."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from textual.content import Content
from textual.widgets import Static

from sieve.safe_text import visible
from sieve.scenarios import Scenario, Step
from sieve.store.record.rows import Run
from sieve.store.record.runs import activity
from sieve.store.scoring.labels import money
from sieve.store.scoring.navigation import step_label


class StepPanel(Static):
    """What will be sent next, word for word, and what it tests (shown to the reviewer only)."""

    def on_mount(self) -> None:
        self.border_title = "next step"

    def show(self, scenario: Scenario, entry: tuple[Step, int] | None, live: bool = False) -> None:
        parts: list[tuple[str, str] | str] = []
        if entry is None:
            parts.append(("The script is finished.", "bold"))
            parts.append(("\nType a live message (t) or open the review (v).", "dim"))
        else:
            step, repetition = entry
            # Numbered as Review and Results number it (`g 3` goes to step 3): navigation.step_label.
            label = step_label(scenario, step.id) + (
                f" (repeat {repetition} of {step.repeat})" if step.repeat > 1 else ""
            )
            parts.append((visible(f"{label} [{step.kind}]"), "bold"))
            if step.chapter:
                parts.append((visible(f"   chapter {step.chapter}"), "dim"))
            parts.append("\n" + visible(step.text))
            if step.note:
                parts.append(("\n\nnote (not sent): ", "bold italic"))
                parts.append((visible(step.note), "italic"))
        if live:
            # A colour of the theme's, so that it reads in light themes too.
            parts.append(("\n\nYou are playing live; the script resumes at this step.", "$text-warning"))
        self.update(Content.assemble(*parts))


def _fmt(value: Any, spec: str = "") -> str:
    return "-" if value is None else format(value, spec)


class FiguresPanel(Static):
    """The run's figures: model, provider, tokens, cost, pace, latency, how the last reply ended."""

    def on_mount(self) -> None:
        self.border_title = "figures"

    def show(self, run: Run, last: Mapping[str, Any] | None, streaming: bool = False) -> None:
        """The figures of `run`; `last`, its last reply to have ended; `streaming`, whether a reply streams now."""
        rows = [
            ("model", run["model"]),
            ("endpoint", run["endpoint"]),
            # What the run is doing: Play has it open, so it is playing (a reply streams) or open (between turns).
            ("status", activity(run["status"], run.get("owner"), streaming)),
            ("provider", (last or {}).get("provider")),
            ("tokens", f"{_fmt(run['prompt_tokens'])} in / {_fmt(run['completion_tokens'])} out"),
            ("cost", money(run["cost"])),
        ]
        if last:
            duration, ttft, tokens = last.get("duration"), last.get("ttft"), last.get("completion_tokens")
            pace = tokens / (duration - ttft) if tokens and duration and ttft is not None and duration > ttft else None
            rows += [
                ("last reply", last["status"]),
                (
                    "finish",
                    " / ".join(x for x in (last.get("finish_reason"), last.get("native_finish_reason")) if x) or "-",
                ),
                ("tokens/s", _fmt(pace, ".1f")),
                ("first token", "-" if ttft is None else f"{ttft:.2f} s"),
                ("counted by", last.get("token_source") or "-"),
            ]
        parts: list[tuple[str, str] | str] = []
        for i, (label, value) in enumerate(rows):
            parts.append((f"{label:<12}", "dim"))
            parts.append(visible(str(value if value is not None else "-")) + ("\n" if i < len(rows) - 1 else ""))
        self.update(Content.assemble(*parts))
