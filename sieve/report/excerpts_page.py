"""The excerpts page (excerpts.html): the passages reviewers marked as excerpts, run by run, each quote in its
context (its paragraph, cut to a few sentences' length) and linked to its mark on the run's page."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sieve.report.markup import esc
from sieve.store.record.annotations import VERDICT_WORDS
from sieve.store.record.rows import Annotation, Turn
from sieve.tables import counted

AROUND = 240  # characters of context either side of a quote, at most (the paragraph's edge comes first)
# The verdicts that place a quote in its turn: an excerpt is shown there, in its context, with the verdict's words.
PLACED = ("exact", "fuzzy", "player")


@dataclass(frozen=True)
class RunExcerpts:
    """One run's excerpts, as the page lists them."""

    name: str  # the run's name or code (outside text: escaped here)
    href: str  # its page, made by the report
    turns: dict[str, Turn]  # the run's turns by id, every alternative included
    steps: dict[str, str]  # turn id -> the step it answers (RunView.steps)
    excerpts: list[Annotation]
    link: Callable[[str], str]  # an excerpt's id -> the address of its mark, made by the report


def context_span(text: str, start: int, end: int, around: int = AROUND) -> tuple[int, int]:
    """The span shown around [start, end): its paragraph, at most `around` characters either side, cut at a space."""
    top = text.rfind("\n\n", 0, start)
    top = 0 if top < 0 else top + 2
    bottom = text.find("\n\n", end)
    bottom = len(text) if bottom < 0 else bottom
    left, right = max(top, start - around), min(bottom, end + around)
    if left > top:
        space = text.find(" ", left, start)
        left = space + 1 if space >= 0 else left
    if right < bottom:
        space = text.rfind(" ", end, right)
        right = space if space >= 0 else right
    return left, right


def in_context(text: str, start: int, end: int) -> str:
    """The quote marked inside its context, escaped; an ellipsis where the turn's text goes on."""
    left, right = context_span(text, start, end)
    return (
        ("…" if left > 0 else "")
        + esc(text[left:start])
        + f'<mark class="k-excerpt">{esc(text[start:end])}</mark>'
        + esc(text[end:right])
        + ("…" if right < len(text) else "")
    )


def _place(excerpt: Annotation, turns: dict[str, Turn]) -> tuple[int, int, int, str]:
    turn = turns.get(excerpt.get("quote_turn_id") or "")
    if turn is None or excerpt.get("quote_start") is None:
        return (1, 0, 0, excerpt["id"])
    return (0, turn["idx"], excerpt["quote_start"] or 0, excerpt["id"])


def figure(excerpt: Annotation, run: RunExcerpts, mask: Callable[[str], str]) -> str:
    """One excerpt: the quote in its context, its caption, where it stands (a link to its mark) and who marked it."""
    turn = run.turns.get(excerpt.get("quote_turn_id") or "")
    start, end = excerpt.get("quote_start"), excerpt.get("quote_end")
    verdict = excerpt.get("verification") or ""
    caption = esc(mask(excerpt.get("note") or ""))
    who = esc(mask(excerpt["reviewer"]))
    if turn is None or start is None or end is None or end <= start or verdict not in PLACED:
        quote = f'<blockquote class="text">{esc(mask(excerpt.get("quote") or ""))}</blockquote>'
        where = "not found in the transcript"
    else:
        quote = f'<blockquote class="text">{in_context(mask(turn["text"]), start, end)}</blockquote>'
        step = run.steps.get(turn["id"])
        place = f"turn {turn['idx']}" + (f", step {step}" if step else "")
        where = f'<a href="{run.link(excerpt["id"])}">{esc(place)}</a> · {esc(VERDICT_WORDS[verdict])}'
    return (
        f'<figure class="excerpt">{quote}<figcaption><strong>{caption}</strong>'
        f'<span class="muted"> · {where} · marked by {who}</span></figcaption></figure>'
    )


def body(runs: Sequence[RunExcerpts], mask: Callable[[str], str], title: str) -> str:
    """The page's body: a section per run that has excerpts, in the field's order."""
    out = [f'<h1 id="excerpts">{esc(title)}</h1>']
    shown = [r for r in runs if r.excerpts]
    if not shown:
        out.append("<p>No passage is marked as an excerpt yet (Review: select it, then m).</p>")
        return "\n".join(out)
    total = sum(len(r.excerpts) for r in shown)
    out.append(
        f"<p>{counted(total, 'passage')} marked as excerpts in {counted(len(shown), 'run')}: each in its context, its caption below it, "
        "and a link to its place in the run's transcript.</p>"
    )
    for run in shown:
        out.append(f'<section class="excerpts"><h2><a href="{run.href}">{esc(run.name)}</a></h2>')
        for excerpt in sorted(run.excerpts, key=lambda e: _place(e, run.turns)):
            out.append(figure(excerpt, run, mask))
        out.append("</section>")
    return "\n".join(out)
