"""A model judge's card written straight into the record, as `sieve judge` stores one: the draft a person finishes.

Every quote is real: the first words of the reply it scores (of a reply chosen in turn
for whole-run items), verified as the judge's quotes are. Items can be left out (the
judge left them unscored) or quoted with words the run never holds (absent).
"""

from __future__ import annotations

from sieve.store.record import suggestions as suggestion_record
from sieve.store.record.annotations import Quote
from sieve.store.scoring import evidence
from sieve.store.scoring.runview import RunView

JUDGE = "judge:m"
INVENTED = "The keykeeper hands the golden key over at once and bows."


def opening(text: str, words: int = 7) -> str:
    """The first words of a reply's first line, as they stand in it."""
    return " ".join(text.split("\n")[0].split(" ")[:words])


def reply_quote(view: RunView, step: str) -> Quote:
    reply = view.replies_to(step)[0]
    words = opening(reply["text"])
    return Quote(reply["id"], 0, len(words), words)


def store_judge_draft(
    db, run_id: str, judge: str = JUDGE, leave_out: tuple[str, ...] = (), absent: tuple[str, ...] = ()
) -> dict[str, float | str]:
    """The judge's scores of every item (0, 1, 2 in turn; bonuses 1), a verdict on every step L1 lists (played
    out), L2 answered yes, and two events it proposes for L3 and L7. Returns what it gave, by item id."""
    view = RunView.open(db, run_id)
    scenario = view.scenario
    played = [s.id for s in scenario.steps if s.kind != "setup" and view.replies_to(s.id)]
    gave: dict[str, float | str] = {}
    n = 0
    for rubric in scenario.rubrics:
        for item in rubric.all_items():
            if item.id in leave_out:
                continue
            step = item.steps[0] if item.steps else played[n % len(played)]
            quote = Quote(None, None, None, INVENTED) if item.id in absent else reply_quote(view, step)
            score = 1.0 if item.bonus else float(item.scale.values[n % len(item.scale.values)])
            n += 1
            evidence.annotate(
                db,
                run_id,
                quote=quote,
                view=view,
                reviewer=judge,
                item=item.id,
                rubric=rubric.id,
                kind="score",
                score=score,
                source="judge",
                confidence="low" if item.id in absent else None,
            )
            gave[item.id] = score
    for counter in scenario.counters:
        if counter.id in leave_out:
            continue
        if counter.kind == "verdict":
            for step in counter.steps:
                evidence.annotate(
                    db,
                    run_id,
                    quote=reply_quote(view, step),
                    view=view,
                    reviewer=judge,
                    item=counter.id,
                    kind="verdict",
                    value=counter.values[0],
                    step_id=step,
                    source="judge",
                )
            gave[counter.id] = counter.values[0]
        elif counter.kind == "yesno":
            evidence.annotate(
                db,
                run_id,
                quote=reply_quote(view, played[-1]),
                view=view,
                reviewer=judge,
                item=counter.id,
                kind="verdict",
                value="yes",
                source="judge",
            )
            gave[counter.id] = "yes"
    events = []
    for counter_id, step in (("L3", played[0]), ("L7", played[-1])):
        quote = reply_quote(view, step)
        turn = next(t for t in view.turns if t["id"] == quote.turn_id)
        span = {"turn_id": quote.turn_id, "turn": turn["idx"], "start": 0, "end": quote.end, "text": quote.text}
        events.append(
            {
                "item": counter_id,
                "kind": "count",
                "spans": [span],
                "reason": f"{judge} counts this as {counter_id}",
                "confidence": 1.0,
                "source": "judge",
                "source_name": judge,
                "source_version": "m",
            }
        )
    suggestion_record.add(db, run_id, events)
    return gave
