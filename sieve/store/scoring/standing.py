"""What an annotation's evidence comes to: whether its quote backs it, and whether a judge's answer is unsupported.

store.scoring.evidence verifies and marks an annotation when it is made (its quote's verdict, off its
step); this is the one test every reader of those marks asks, the card, the results, the exports, the
judge's precedents and a person adopting a draft alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sieve.store.record.annotations import by_judge, is_evidence


def has_evidence(annotation: Mapping[str, Any] | None) -> bool:
    """Whether a quote backs the annotation: found in the model's own words (exact or fuzzy), in one place,
    on the steps its item is judged on. The one test of an annotation's evidence (store.scoring.evidence
    marks what it is tested on)."""
    return bool(
        annotation
        and annotation.get("quote")
        and is_evidence(annotation.get("verification"))
        and not annotation.get("off_step")
    )


# The kinds of annotation that are a judgment of the run (what an unsupported answer leaves out).
SCORED_KINDS = ("score", "count", "verdict", "probe")


def unsupported(annotation: Mapping[str, Any] | None) -> bool:
    """A judge's answer its quote does not back (not verified after the repair round, off its step, or none
    given): shown and kept, never counted. A person's own score without evidence still counts."""
    return bool(
        annotation and annotation.get("kind") in SCORED_KINDS and by_judge(annotation) and not has_evidence(annotation)
    )
