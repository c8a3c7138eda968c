"""The request settings a run can carry, each defined once with its type and range.

Scenario `[settings]`, run plans, the command line's options and the New Run
dialog all read this table, so a value one of them accepts the others accept too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from sieve.errors import SieveUsageError

INT64 = 2**63 - 1


class SettingError(SieveUsageError):
    """A setting typed by a person that is not valid: names the setting and what is wrong."""


@dataclass(frozen=True)
class Setting:
    name: str
    kind: type  # int, float or str
    help: str
    minimum: float | None = None
    maximum: float | None = None
    above_minimum: bool = False  # the minimum itself is not allowed (a timeout of 0)
    choices: tuple[str, ...] = ()
    placeholder: str = ""

    @property
    def label(self) -> str:
        return self.name.replace("_", " ")

    def problem(self, value: Any) -> str | None:
        """Why `value` is not a valid setting, or None when it is."""
        if isinstance(value, bool):
            return f"expected {self._noun()}, found a boolean"
        if self.kind is str:
            if not isinstance(value, str):
                return f"expected {self._noun()}, found {type(value).__name__}"
            if self.choices and value not in self.choices:
                return f"'{value}' is not one of: {', '.join(self.choices)}"
            return None
        if self.kind is int and not isinstance(value, int):
            return f"expected {self._noun()}, found {type(value).__name__}"
        if not isinstance(value, (int, float)):
            return f"expected {self._noun()}, found {type(value).__name__}"
        if isinstance(value, float) and not math.isfinite(value):
            return "must be a finite number"
        if self.minimum is not None and (value <= self.minimum if self.above_minimum else value < self.minimum):
            return f"must be {'more than' if self.above_minimum else 'at least'} {_num(self.minimum)}"
        if self.maximum is not None and value > self.maximum:
            return f"must be at most {_num(self.maximum)}"
        return None

    def parse(self, text: str) -> Any:
        """A value typed by a person (the New Run dialog); SettingError says what is wrong."""
        text = text.strip()
        try:
            value: Any = self.kind(text)
        except ValueError:
            raise SettingError(f"{self.label}: '{text}' is not {self._noun()}") from None
        problem = self.problem(value)
        if problem:
            raise SettingError(f"{self.label}: {problem}")
        return value

    def _noun(self) -> str:
        return {int: "a whole number", float: "a number", str: "a string"}[self.kind]


def _num(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


SETTINGS: tuple[Setting, ...] = (
    Setting("temperature", float, "Sampling temperature (the seeds use 1.0).", 0.0, 2.0, placeholder="1.0"),
    Setting("max_tokens", int, "The output ceiling per reply, in tokens.", 1, 10_000_000, placeholder="24000"),
    Setting(
        "reasoning_effort",
        str,
        "Reasoning effort for models that reason (OpenRouter's `reasoning.effort`).",
        choices=("none", "minimal", "low", "medium", "high", "xhigh"),
        placeholder="low",
    ),
    Setting("seed", int, "Sampling seed, where the endpoint honours one.", -INT64 - 1, INT64, placeholder="none"),
    Setting(
        "timeout", float, "Seconds per request (the seeds: 240).", 0.0, 86_400.0, above_minimum=True, placeholder="240"
    ),
    Setting(
        "read_timeout",
        float,
        "Seconds of silence from the server that count as a stalled stream.",
        0.0,
        86_400.0,
        above_minimum=True,
        placeholder="90",
    ),
)
BY_NAME = {s.name: s for s in SETTINGS}
NAMES = tuple(BY_NAME)
