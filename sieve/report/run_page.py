"""One run's page: its cards, each entry linked to its quote's mark, and the transcript the marks stand in."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sieve.report.markup import esc, slug, table
from sieve.report.transcript import HIGHLIGHT_OF, Mark, marked
from sieve.store.record import turns as record
from sieve.store.record.rows import Annotation, Turn
from sieve.store.scoring import draft
from sieve.store.scoring.evidence import OFF_STEP
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import Card, value_text
from sieve.store.scoring.standing import unsupported

LEGEND = {
    "score": "score",
    "counter": "event",
    "probe": "probe",
    "deduction": "deduction",
    "judgment": "judgment",
    "excerpt": "excerpt",
}
VERDICT_TEXT = {
    "exact": "found exactly",
    "fuzzy": "found nearly",
    "absent": "not found",
    "player": "the player's words",
    "altered": "a negation flipped",
    "short": "too short",
    "ambiguous": "in several places",
}
ENTRY_HEADERS = ["item", "value", "quote", "provenance", "note"]


@dataclass(frozen=True)
class Shown:
    """How this page shows outside facts: masked names, anchors, what is left out."""

    mask: Callable[[str], str]
    anchor: Callable[[str], str]  # annotation id -> the id of its mark ("q-…")
    blind: bool
    private_notes: bool
    prefix: str = ""  # before a turn's id: a run's own, where several runs share one file


@dataclass(frozen=True)
class Entry:
    item: str
    value: str
    annotation: Annotation
    counts: bool = True  # the score that counts (an item given again keeps its earlier quotes, shown apart)


def span_of(a: Annotation) -> tuple[str, int, int] | None:
    """Where an annotation's quote stands (turn id, start, end), or None."""
    turn, start, end = a.get("quote_turn_id"), a.get("quote_start"), a.get("quote_end")
    if not a.get("quote") or turn is None or start is None or end is None or end <= start:
        return None
    return turn, start, end


def entries(card: Card, shown: Shown) -> list[Entry]:
    """Every annotation the card rests on, in the card's order: items and bonuses, deductions, written
    judgments, counter events, probes, then notes (none when notes are private)."""
    out: list[Entry] = []
    for rubric in card.rubrics:
        for item in rubric.items + rubric.bonuses:
            if item.annotation is None:
                continue
            label = item.item.id + (" (bonus)" if item.item.bonus else "")
            out.append(Entry(label, value_text(item.annotation, item.item.scale), item.annotation))
            for other in item.quoted:
                if other["id"] != item.annotation["id"]:
                    out.append(Entry(label, value_text(other, item.item.scale), other, counts=False))
        for a in rubric.deduction_annotations:
            out.append(Entry(f"{rubric.rubric.id} deduction", value_text(a), a))
        for written_id, a in rubric.written.items():
            out.append(Entry(f"{rubric.rubric.id} {written_id}", "written", a))
    for counter in card.counters:
        for event in counter.events:
            out.append(Entry(counter.counter.id, value_text(event), event))
    for probe in card.probes:
        if probe.annotation is not None:
            out.append(Entry(probe.probe.id, value_text(probe.annotation), probe.annotation))
    if not shown.private_notes:
        for a in card.notes:
            out.append(Entry("summary" if a.get("value") == "summary" else a["kind"], a["kind"], a))
    return out


def provenance(view: RunView, entry: Entry, shown: Shown) -> str:
    """Who gave it and how it stands: reviewer, when (not blind), blind or not, adopted, confidence, the quote."""
    a = entry.annotation
    parts = [shown.mask(a["reviewer"])]
    if not shown.blind:
        parts.append(a["created"][:16].replace("T", " "))
    if a["blind"]:
        parts.append("scored blind")
    if draft.is_adopted(a):
        parts.append(shown.mask(a["source"] or ""))
    if a.get("confidence") == "low":
        parts.append("low confidence")
    if not entry.counts:
        parts.append("given again later")
    verdict = a.get("verification")
    if a.get("quote"):
        text = VERDICT_TEXT.get(verdict or "", verdict or "not verified")
        if verdict == "fuzzy" and a.get("similarity") is not None:
            text += f" ({a['similarity']:.0f}%)" if (a["similarity"] or 0) > 1 else f" ({a['similarity']:.2f})"
        parts.append(text)
        if a.get("off_step"):  # marked by the evidence rule when it was made
            parts.append(OFF_STEP)
    elif a["kind"] in ("score", "count", "verdict", "probe", "deduction"):
        parts.append("no quote")
    if unsupported(a):
        parts.append("unsupported: not counted")
    return esc(" · ".join(p for p in parts if p))


def _entry_row(view: RunView, entry: Entry, shown: Shown, on_page: set[str]) -> str:
    a = entry.annotation
    span = span_of(a)
    value = esc(entry.value)
    if span is not None and span[0] in on_page:
        value = f'<a href="#{shown.anchor(a["id"])}">{value}</a>'
    quote = f'<span class="quote">{esc(shown.mask(a["quote"] or ""))}</span>' if a.get("quote") else ""
    verdict = a.get("verification") or ""
    note = "" if shown.private_notes else esc(shown.mask(a.get("note") or ""))
    if a["kind"] in ("note", "flag") and not shown.private_notes:
        note = esc(shown.mask(a.get("note") or a.get("value") or ""))
    cells = [
        f'<td class="table-first">{esc(entry.item)}</td>',
        f"<td>{value}</td>",
        f'<td class="verdict-{esc(verdict)}">{quote}</td>',
        f"<td>{provenance(view, entry, shown)}</td>",
        f"<td>{note}</td>",
    ]
    return "".join(cells)


def card_anchor(prefix: str, reviewer: str) -> str:
    """The id of a reviewer's card on a run's page (the name as the page shows it): where a figure of the field
    page that rests on the card's total links to."""
    return f"{prefix}card-{slug(reviewer)}"


def _card_section(view: RunView, reviewer: str, card: Card, shown: Shown, on_page: set[str]) -> str:
    totals = " · ".join(f"{r.rubric.id} {r.total()}{r.state()}" for r in card.rubrics)
    extra = []
    if card.disqualification_text():
        extra.append(card.disqualification_text())
    extra += [f"{c.counter.id} {c.display()}" for c in card.counters]
    extra += [f"{p.probe.id} {p.display()}" for p in card.probes]
    rows = [_entry_row(view, e, shown, on_page) for e in entries(card, shown)]
    summary = f'<p><strong class="total">{esc(totals)}</strong></p>' if totals else ""
    more = f'<p class="muted">{esc(" · ".join(extra))}</p>' if extra else ""
    return (
        f'<section class="card" id="{card_anchor(shown.prefix, shown.mask(reviewer))}">'
        f"<h3>{esc(shown.mask(reviewer))}</h3>{summary}{more}"
        + (table(ENTRY_HEADERS, rows, sortable=False) if rows else "<p>Nothing scored.</p>")
        + "</section>"
    )


def _marks(annotations: Iterable[Annotation], shown: Shown) -> dict[str, list[Mark]]:
    out: dict[str, list[Mark]] = {}
    for a in annotations:
        span = span_of(a)
        if span is None:
            continue
        verdict = a.get("verification") or ""
        title = f"{a['item']} {value_text(a)} · {shown.mask(a['reviewer'])}"
        out.setdefault(span[0], []).append(
            Mark(
                span[1],
                span[2],
                HIGHLIGHT_OF.get(a["kind"], "note"),
                verdict if verdict in VERDICT_TEXT else "",
                shown.anchor(a["id"]),
                title,
            )
        )
    return out


def _turn(view: RunView, turn: Turn, marks: dict[str, list[Mark]], shown: Shown, alt: bool = False) -> str:
    role = {"user": "player", "assistant": "reply", "system": "system"}.get(turn["role"], turn["role"])
    classes = ["turn", "user" if turn["role"] == "user" else "assistant"]
    head = [f"#{turn['idx']}", role]
    if turn.get("played_by"):
        classes.append("explored")
        head.append("played by a model")
    step = view.steps.get(turn["id"])
    if step:
        head.append(f"step {step}")
    head.append(turn["origin"])
    if turn["status"] != "complete":
        head.append(turn["status"])
    note = ""
    if turn["role"] == "user" and turn["step_id"]:
        try:
            hidden = view.scenario.step(turn["step_id"]).note
        except KeyError:
            hidden = ""
        if hidden:
            note = f"<details><summary>the step's note</summary><p>{esc(hidden)}</p></details>"
    ident = f"{shown.prefix}t-{turn['idx']}" + (f"-alt{turn['alt']}" if alt else "")
    text = marked(shown.mask(turn["text"]), marks.get(turn["id"], []))
    body = (
        f'<section class="{" ".join(classes)}" id="{ident}"><header>{esc(" · ".join(head))}</header>'
        f'{note}<div class="text">{text}</div></section>'
    )
    if alt:
        return f'<details class="alt"><summary>alternative {turn["alt"]} (not chosen)</summary>{body}</details>'
    return body


def summaries(cards: dict[str, Card]) -> list[Annotation]:
    """Each card's one-sentence summary of the run (a judge writes one, on a quote), in the cards' order."""
    return [a for card in cards.values() for a in card.notes if a.get("value") == "summary" and a.get("note")]


def summary_line(a: Annotation, shown: Shown, link: str | None) -> str:
    """A summary as the seed's appendix prints it: the sentence, then the quote it rests on, linked to its mark."""
    sentence = f'<span class="sentence">{esc(shown.mask(a["note"] or ""))}</span>'
    quote = ""
    if a.get("quote"):
        quote = f'<span class="quote">“{esc(shown.mask(a["quote"] or ""))}”</span>'
        if link:
            quote = f'<a href="{link}">{quote}</a>'
        verdict = a.get("verification") or ""
        if verdict not in ("exact", "fuzzy"):
            said = VERDICT_TEXT.get(verdict, verdict or "not verified")
            quote += f' <span class="verdict-absent">({esc(said)})</span>'
    who = esc(shown.mask(a["reviewer"]))
    return f'{sentence} {quote} <span class="muted">· {who}</span>'


def _summary_section(cards: dict[str, Card], shown: Shown, on_page: set[str]) -> str:
    if shown.private_notes:
        return ""
    lines = []
    for a in summaries(cards):
        span = span_of(a)
        link = f"#{shown.anchor(a['id'])}" if span is not None and span[0] in on_page else None
        lines.append(f"<li>{summary_line(a, shown, link)}</li>")
    return f'<h2>In one sentence</h2><ul class="summaries">{"".join(lines)}</ul>' if lines else ""


def _excerpt_section(view: RunView, excerpts: list[Annotation], shown: Shown, on_page: set[str]) -> str:
    if not excerpts:
        return ""
    items = []
    for a in excerpts:
        span = span_of(a)
        caption = esc(shown.mask(a.get("note") or "")) or "(no caption)"
        if span is not None and span[0] in on_page and (a.get("verification") or "") in VERDICT_TEXT:
            caption = f'<a href="#{shown.anchor(a["id"])}">{caption}</a>'
        quote = esc(shown.mask(a.get("quote") or ""))
        about = provenance(view, Entry("excerpt", "", a), shown)
        items.append(f'<li>{caption}: <span class="quote">{quote}</span> <span class="muted">· {about}</span></li>')
    return f'<h2>Excerpts</h2><ul class="excerpt-list">{"".join(items)}</ul>'


def body(
    view: RunView,
    cards: dict[str, Card],
    shown: Shown,
    name: str,
    facts: list[tuple[str, str]],
    prefix: str = "",
    excerpts: list[Annotation] | None = None,
) -> str:
    """The page's body: what the run is, its one-sentence summaries, the legend, each reviewer's card, its
    excerpts, the transcript."""
    if prefix:
        shown = Shown(shown.mask, shown.anchor, shown.blind, shown.private_notes, prefix)
    excerpts = excerpts or []
    all_turns = record.all_turns(view.db, view.id)
    on_page = {t["id"] for t in all_turns}
    kept = [
        a
        for card in cards.values()
        for a in _card_annotations(card)
        if not (shown.private_notes and a["kind"] in ("note", "flag"))
    ]
    marks = _marks(kept + excerpts, shown)
    meta = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in facts)
    legend = "".join(f'<mark class="k-{k}">{esc(label)}</mark>' for k, label in LEGEND.items())
    legend += "".join(
        f'<mark class="k-score v-{v}">{esc(VERDICT_TEXT[v])}</mark>' for v in ("fuzzy", "absent", "player")
    )
    sections = [
        f"<h1>{esc(name)}</h1>",
        f'<dl class="meta">{meta}</dl>',
        _summary_section(cards, shown, on_page),
        "<h2>Cards</h2>",
        f'<p class="legend">{legend}</p>',
        *(_card_section(view, r, c, shown, on_page) for r, c in cards.items()),
        _excerpt_section(view, excerpts, shown, on_page),
        "<h2>Transcript</h2>",
    ]
    chosen = {t["id"] for t in view.turns}
    for turn in all_turns:
        sections.append(_turn(view, turn, marks, shown, alt=turn["id"] not in chosen))
    return "\n".join(s for s in sections if s)


def _card_annotations(card: Card) -> list[Annotation]:
    out: list[Annotation] = []
    for rubric in card.rubrics:
        for item in rubric.items + rubric.bonuses:
            out += item.given
        out += rubric.deduction_annotations + list(rubric.written.values())
    for counter in card.counters:
        out += counter.events
    out += [p.annotation for p in card.probes if p.annotation is not None]
    return out + card.notes
