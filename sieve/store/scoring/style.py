"""What a run's replies look like apart from what they say: their length and their markdown, as LMArena's style
control counts them (characters here, where LMArena counts tokens: every run has its text, not every run its usage).

A vote's covariate is the normalised difference of a feature between the runs shown as A and B,
(a - b) / (a + b), 0 when both are 0: from -1 (only B has it) to 1 (only A has it); a reply twice
as long as the other's is 1/3.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from sqlite_utils import Database

CONTROLS: dict[str, tuple[str, ...]] = {"length": ("length",), "markdown": ("headers", "lists", "bold")}
_HEADER = re.compile(r"^\s{0,3}#{1,6}\s", re.M)
_LIST = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S", re.M)
_BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")


def features(texts: Iterable[str]) -> dict[str, float]:
    """A run's replies, counted: characters, markdown headers, list items, bold spans."""
    out = {"length": 0.0, "headers": 0.0, "lists": 0.0, "bold": 0.0}
    for text in texts:
        out["length"] += len(text)
        out["headers"] += len(_HEADER.findall(text))
        out["lists"] += len(_LIST.findall(text))
        out["bold"] += len(_BOLD.findall(text))
    return out


def of_runs(db: Database, run_ids: Iterable[str]) -> dict[str, dict[str, float]]:
    """run -> its features, over its chosen replies."""
    wanted = sorted(set(run_ids))
    texts: dict[str, list[str]] = {r: [] for r in wanted}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for run_id, text in db.execute(
            f"SELECT run_id, text FROM turns WHERE role = 'assistant' AND chosen = 1 AND run_id IN ({marks})", chunk
        ):
            texts[run_id].append(text or "")
    return {r: features(t) for r, t in texts.items()}


def covariate_names(controls: Sequence[str]) -> list[str]:
    """The features a list of controls (length, markdown) adds, in order, each once."""
    return list(dict.fromkeys(name for control in controls for name in CONTROLS[control]))


def difference(a: dict[str, float], b: dict[str, float], names: Sequence[str]) -> tuple[float, ...]:
    """A's features against B's, each as (a - b) / (a + b)."""
    return tuple((a[n] - b[n]) / (a[n] + b[n]) if a[n] + b[n] else 0.0 for n in names)
