"""The panels beside the Play transcript: the next scripted step with its hidden note, and the run's figures."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from sieve.safe_text import visible
from sieve.scenarios import Step


class StepPanel(Static):
    """What will be sent next, word for word, and what it tests (shown to the reviewer only)."""

    def on_mount(self) -> None:
        self.border_title = "next step"

    def show(self, entry: tuple[Step, int] | None, total: int, position: int, live: bool = False) -> None:
        text = Text()
        if entry is None:
            text.append("The script is finished.", style="bold")
            text.append("\nType a live message (t) or open the review (v).", style="dim")
        else:
            step, repetition = entry
            label = f"{step.id}" + (f" (repeat {repetition} of {step.repeat})" if step.repeat > 1 else "")
            text.append(f"{position + 1} of {total}: {label} [{step.kind}]", style="bold")
            if step.chapter:
                text.append(f"   chapter {step.chapter}", style="dim")
            text.append("\n")
            text.append(visible(step.text))
            if step.note:
                text.append("\n\nnote (not sent): ", style="bold italic")
                text.append(visible(step.note), style="italic")
        if live:
            text.append("\n\nYou are playing live; the script resumes at this step.", style="yellow")
        self.update(text)


def _fmt(value: Any, spec: str = "") -> str:
    return "-" if value is None else format(value, spec)


class FiguresPanel(Static):
    """The run's figures: model, provider, tokens, cost, pace, latency, how the last reply ended."""

    def on_mount(self) -> None:
        self.border_title = "figures"

    def show(self, run: dict[str, Any], last: dict[str, Any] | None) -> None:
        rows = [
            ("model", run["model"]),
            ("endpoint", run["endpoint"]),
            ("status", run["status"]),
            ("provider", (last or {}).get("provider")),
            ("tokens", f"{_fmt(run['prompt_tokens'])} in / {_fmt(run['completion_tokens'])} out"),
            ("cost", "-" if run["cost"] is None else f"${run['cost']:.4f}"),
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
        text = Text()
        for i, (label, value) in enumerate(rows):
            text.append(f"{label:<12}", style="dim")
            text.append(visible(str(value if value is not None else "-")))
            if i < len(rows) - 1:
                text.append("\n")
        self.update(text)
