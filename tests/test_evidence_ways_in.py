"""One evidence rule, whoever makes the annotation (issue 24; issue 25 §5): a person in Review, a judge, an
imported card, an adopted draft and a bundle all pass store.scoring.evidence.

What the scenario cannot hold is refused with a message (for a judge: set aside, named in the judging's
record, never stored); a quote off its item's steps is kept and marked; a quote standing in several places
and claiming none is ambiguous; a disqualifying verdict disqualifies only on a verified quote on its step;
a judge's answer that its quote does not back is unsupported, shown, and left out of its totals.
"""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from sieve import scenarios
from sieve.cli import main
from sieve.store.record import annotations as notes
from sieve.store.record import bundles, judgings
from sieve.store.record.annotations import Quote
from sieve.store.scoring import draft, evidence, markdown, results
from sieve.store.scoring.evidence import EvidenceRefused
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.standing import has_evidence, unsupported
from sieve.tui.screens.dialogs import Confirm
from sieve.tui.screens.review import ReviewScreen
from tests.support import fakejudge
from tests.support.review_runs import review_app, scripted_run
from tests.support.tui_helpers import on_screen, overlay_is, screen_is, screen_text, wait_until
from tests.test_judge import JUDGE, annotations, judge, play

KEYKEEPER = scenarios.load("keykeeper")
EVERY_REPLY = "The rain keeps on over the yard; the letter waits on the shelf."  # in each reply of scripted_run


@pytest.fixture(scope="module", autouse=True)
def judge_on_the_server():
    fakejudge.install()


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def path_of(db) -> str:
    return db.conn.execute("PRAGMA database_list").fetchone()[2]


def reply(db, run_id: str, step: str) -> dict:
    return RunView.open(db, run_id).replies_to(step)[0]


def span(turn: dict, words: str) -> Quote:
    start = turn["text"].index(words)
    return Quote(turn["id"], start, start + len(words), words)


def at(step: str) -> str:
    """The line of scripted_run's reply to `step` that names it (a quote of that reply alone)."""
    return f"He counts the coins again at {step}, writes a line in the ledger"


# -- the rule ------------------------------------------------------------------------------


def test_what_the_scenario_cannot_hold_is_refused_with_a_message_and_nothing_stored(db):
    run_id = scripted_run(db, "keykeeper")  # 14 replies
    cases = [
        ({"item": "T1", "rubric": "T", "kind": "score", "score": 7}, "T1: 7 is not on its scale (0/1/2)"),
        ({"item": "T99", "rubric": "T", "kind": "score", "score": 1}, "'T99' is no item of keykeeper"),
        ({"item": "T1", "rubric": "R", "kind": "score", "score": 1}, "T1 is an item of rubric T, not R"),
        (
            {"item": "L5", "kind": "count", "score": 49},
            "L5: a chain of 49 replies in a run of 14: a chain cannot be longer than the replies it runs across",
        ),
        ({"item": "L3", "kind": "count", "score": 5}, "5 events cannot be claimed by one annotation"),
        ({"item": "L1", "kind": "count"}, "L1 takes a verdict (it is a verdict counter), not a count"),
        ({"item": "L3", "kind": "verdict", "value": "yes"}, "L3 counts events (a count): it takes no verdict"),
        ({"item": "L1", "kind": "verdict", "value": "maybe", "step_id": "m1"}, "'maybe' is not one of its values"),
        ({"item": "L1", "kind": "verdict", "value": "annulled", "step_id": "m0"}, "judged only on the steps it lists"),
        ({"item": "P-x", "kind": "probe", "value": "correct"}, "'P-x' is no probe of keykeeper"),
    ]
    for fields, message in cases:
        with pytest.raises(EvidenceRefused, match=re.escape(message)):
            evidence.annotate(db, run_id, reviewer="ada", **fields)
    assert notes.active(db, run_id) == []
    # What it can hold: a chain as long as the run, one event, a verdict on a listed step.
    evidence.annotate(db, run_id, reviewer="ada", item="L5", kind="count", score=14)
    evidence.annotate(db, run_id, reviewer="ada", item="L3", kind="count")
    evidence.annotate(db, run_id, reviewer="ada", item="L1", kind="verdict", value="annulled", step_id="m1")
    counters = {c.counter.id: c for c in RunView.open(db, run_id).card("ada").counters}
    assert (counters["L5"].value, counters["L3"].value, counters["L1"].value["annulled"]) == (14, 1, 1)


def test_a_quote_off_its_step_is_kept_marked_and_a_persons_score_still_counts_with_low_confidence(db):
    run_id = scripted_run(db, "keykeeper")
    m1, m2 = reply(db, run_id, "m1"), reply(db, run_id, "m2")
    evidence.annotate(
        db, run_id, reviewer="ada", item="T1", rubric="T", kind="score", score=2, quote=span(m2, at("m2"))
    )
    (t1,) = notes.active(db, run_id)
    assert (t1["verification"], t1["off_step"]) == ("exact", 1) and not has_evidence(t1)
    view = RunView.open(db, run_id)
    card = view.card("ada")
    item = card.item("T1")
    assert item.off_step and item.low_confidence and item.counted and card.rubrics[0].low == 2
    assert "1 without evidence (1 off its step)" in card.progress.text()
    # Shown wherever the card is: the Markdown export, the results' progress, verify --json.
    assert "| T1 | 2 | exact, off its step | 5 |" in markdown.run_document(view)
    assert "(1 off its step)" in results.run_row(view)["progress"]
    out = cli("verify", "--run", run_id, "--json", "--db", path_of(db))
    assert json.loads(out.output)["summary"] == {"exact": 1, "off its step": 1}
    # From its own step it is evidence.
    evidence.annotate(
        db, run_id, reviewer="ada", item="T1", rubric="T", kind="score", score=1, quote=span(m1, at("m1"))
    )
    assert has_evidence(notes.active(db, run_id)[-1]) and not RunView.open(db, run_id).card("ada").item("T1").off_step


def test_an_item_the_scenario_says_takes_evidence_from_the_whole_run_is_not_off_its_step(db):
    story = scenarios.load("story-12")
    c6 = story.item("C6")[1]
    assert c6.steps == ("c1-leap",) and c6.whole_run
    run_id = scripted_run(db, "story-12")
    later = reply(db, run_id, "c2-river")
    quote = span(later, at("c2-river"))
    evidence.annotate(db, run_id, reviewer="ada", item="C6", rubric="C", kind="score", score=3, quote=quote)
    evidence.annotate(db, run_id, reviewer="ada", item="C2", rubric="C", kind="score", score=3, quote=quote)
    given = {a["item"]: a for a in notes.active(db, run_id)}
    assert (given["C6"]["off_step"], given["C2"]["off_step"]) == (0, 1)
    assert has_evidence(given["C6"]) and not has_evidence(given["C2"])


def test_a_quote_in_several_places_is_placed_by_its_turn_or_span_and_else_is_ambiguous(db):
    run_id = scripted_run(db, "keykeeper")
    m1 = reply(db, run_id, "m1")
    fields = {"reviewer": "ada", "item": "T1", "rubric": "T", "kind": "score", "score": 2}
    evidence.annotate(db, run_id, quote=Quote(None, None, None, EVERY_REPLY), **fields)
    ambiguous = notes.active(db, run_id)[-1]
    assert ambiguous["verification"] == "ambiguous" and ambiguous["quote_turn_id"] is None
    assert not has_evidence(ambiguous)
    # The turn it claims places it (a judge's turn number, a card's turn); a selection places it too.
    evidence.annotate(db, run_id, quote=Quote(m1["id"], None, None, EVERY_REPLY), **fields)
    placed = notes.active(db, run_id)[-1]
    assert (placed["verification"], placed["quote_turn_id"], placed["off_step"]) == ("exact", m1["id"], 0)
    evidence.annotate(db, run_id, quote=span(m1, EVERY_REPLY), **fields)
    assert has_evidence(notes.active(db, run_id)[-1])
    # A repetition chain's quotes repeat by nature: they stand.
    evidence.annotate(
        db, run_id, reviewer="ada", item="L5", kind="count", score=3, quote=Quote(None, None, None, EVERY_REPLY)
    )
    assert notes.active(db, run_id)[-1]["verification"] == "exact"


def test_a_disqualifying_verdict_disqualifies_only_on_a_verified_quote_on_its_step(db):
    run_id = scripted_run(db, "keykeeper")
    verdict = {"reviewer": "ada", "item": "L1", "kind": "verdict", "value": "annulled"}
    invented = Quote(None, None, None, "Havel declares that the coin was never given to him at all")
    evidence.annotate(db, run_id, quote=invented, step_id="m4", **verdict)  # absent
    evidence.annotate(db, run_id, quote=span(reply(db, run_id, "m7"), at("m7")), step_id="m6", **verdict)  # off
    view = RunView.open(db, run_id)
    card = view.card("ada")
    assert card.counters[0].value["annulled"] == 2  # the verdicts stand on the card
    assert card.disqualified_by == [] and card.disqualification_claimed == ["L1 at m4", "L1 at m6"]
    document = markdown.run_document(view)
    assert "disqualification claimed without evidence: L1 at m4, L1 at m6" in document
    assert "disqualified by" not in document
    row = results.run_row(view)
    assert "disqualified by" not in row and row[results.CLAIMED] == "L1 at m4, L1 at m6"
    # On its own step, found: it disqualifies.
    evidence.annotate(db, run_id, quote=span(reply(db, run_id, "m5"), at("m5")), **verdict)
    card = RunView.open(db, run_id).card("ada")
    assert card.disqualified_by == ["L1"] and card.disqualification_claimed == ["L1 at m4", "L1 at m6"]


# -- a person in Review ----------------------------------------------------------------------


@pytest.mark.slow
async def test_review_marks_a_quote_off_its_step_and_says_a_disqualification_has_no_evidence(db):
    run_id = scripted_run(db, "keykeeper")
    app = review_app(db, run_id)
    async with app.run_test(size=(170, 50), notifications=True) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        await pilot.press("g", "2", "enter")  # the reply to m2
        await wait_until(pilot, on_screen(app, "step 2 of "))
        await pilot.press("shift+end", *"T1", "enter", "2", "enter")  # T1 is judged on m1
        await wait_until(pilot, overlay_is(app, Confirm))  # asked before it is saved
        assert "T1 is judged on m1: this quote is off its step" in screen_text(app)
        await pilot.press("y")
        await wait_until(pilot, lambda: len(notes.active(db, run_id)) == 1)
        (t1,) = notes.active(db, run_id)
        assert (t1["item"], t1["verification"], t1["off_step"]) == ("T1", "exact", 1)
        await wait_until(pilot, on_screen(app, "✗ off its step"))
        assert re.search(r"T1 +2 +✗ off its step low confidence", screen_text(app))
        # An L1 verdict of annulled at m3, given without a quote: claimed, not disqualifying.
        await pilot.press("g", "3", "enter")
        await wait_until(pilot, on_screen(app, "step 3 of "))
        await pilot.press("l", *"L1", "enter", "2", "enter")  # annulled, by its key
        await wait_until(pilot, overlay_is(app, Confirm))  # it disqualifies the run: asked first
        await pilot.press("y")
        await wait_until(pilot, lambda: len(notes.active(db, run_id)) == 2)
        await wait_until(pilot, on_screen(app, "disqualification claimed without evidence: L1 at m3"))
        assert "DISQUALIFIED" not in screen_text(app)


# -- a judge ---------------------------------------------------------------------------------


@pytest.mark.slow
async def test_a_judges_impossible_chain_and_twice_counted_events_are_set_aside_and_named(db, fake_server):
    (run,) = await play(db, fake_server, "vendor/chain;tokens=40")
    replies = len(RunView.open(db, run).replies())
    (row,) = await judge(db, fake_server, [run], model=JUDGE + ";quotes=exact;chain=49;twice=1")
    given = annotations(db, run)
    assert "L5" not in given and "L3" not in given  # never stored
    assert row["set aside"]["L5"] == (
        f"L5: a chain of 49 replies in a run of {replies}: a chain cannot be longer than the replies it runs across"
    )
    assert "rest on a quote another event rests on" in row["set aside"]["L3"]
    # Every count was answered with two events on one quote: each set aside, none stored.
    assert {"L3", "L5"} <= set(row["set aside"]) <= set(row["failed"]) and row["status"] == "partial"
    assert not any(
        c.events for c in RunView.open(db, run).card("judge:test").counters if c.counter.kind in ("count", "chain")
    )
    (record,) = judgings.of_run(db, run)
    assert set(record["outcome"]["set_aside"]) == set(row["set aside"])  # the judging's record says why
    # It was asked again first, told why.
    assert "impossible: L5: a chain of 49" in record["repairs"][0]["request"]


@pytest.mark.slow
async def test_a_judge_quoting_the_for_everything_gets_an_unsupported_card_left_out_of_its_totals(db, fake_server):
    (run,) = await play(db, fake_server, "vendor/the;tokens=40")
    (row,) = await judge(db, fake_server, [run], model=JUDGE + ";the=1")
    card = RunView.open(db, run).card("judge:test")
    t, r = card.rubrics
    assert (t.low, t.bonus_low, r.low) == (0, 0, 0)  # a 24+4 / 12 card claimed, nothing of it counted
    assert t.state() == " (partial, 16 unsupported left out)" and r.state() == " (partial, 6 unsupported left out)"
    progress = card.progress.text()
    assert not card.complete and progress.startswith("scored 0/22") and "unsupported, left out" in progress
    assert "16 unsupported left out" in results.run_row(RunView.open(db, run), voters="judges")["T"]
    given = annotations(db, run)
    assert given["T1"][0]["verification"] == "short" and unsupported(given["T1"][0])
    assert row["unsupported"] >= 22 and row["short"] >= 22
    # Kept in the record, shown on the card and in the export.
    assert "| T1 | 0 | too short, unsupported (not counted) | 3 | the |" in markdown.run_document(RunView.open(db, run))


@pytest.mark.slow
async def test_a_judges_invented_quotes_after_the_repair_are_unsupported_and_its_good_ones_count(db, fake_server):
    (run,) = await play(db, fake_server, "vendor/mixed;tokens=60")
    await judge(db, fake_server, [run], model=JUDGE + ";fix=0")
    card = RunView.open(db, run).card("judge:test")
    t = card.rubrics[0]
    left = set(t.left_out)
    assert left and {"T3", "T4"} <= left  # the paraphrased and invented quotes, asked again and still wrong
    assert t.low == sum(i.annotation["score"] for i in t.items if i.counted and i.annotation)
    assert all(has_evidence(i.annotation) for i in t.items + t.bonuses if i.counted)


# -- an imported card ------------------------------------------------------------------------


def test_an_imported_card_passes_the_rule_off_step_marked_impossible_counts_refused(db, tmp_path):
    run_id = scripted_run(db, "keykeeper")
    card = tmp_path / "card.json"
    card.write_text(
        json.dumps(
            [
                {"id": "T1", "score": 2, "quote": at("m2")},  # T1 is judged on m1
                {"id": "T2", "score": 1, "quote": at("m2")},
                {"id": "T3", "score": 1, "quote": EVERY_REPLY},
                {"id": "L3", "score": 0},  # none seen: nothing stored
            ]
        ),
        encoding="utf-8",
    )
    out = cli("verify", card, "--run", run_id, "--json", "--import", "--reviewer", "opus", "--db", path_of(db))
    data = json.loads(out.output)
    items = {r["item"]: r for r in data["items"]}
    assert (items["T1"]["verdict"], items["T1"]["off_step"], items["T2"]["off_step"]) == ("exact", True, False)
    assert items["T3"]["verdict"] == "ambiguous" and data["summary"]["off its step"] == 1
    assert data["imported"] == 3
    stored = {a["item"]: a for a in notes.active(db, run_id, "opus")}
    assert (stored["T1"]["off_step"], stored["T1"]["confidence"], stored["T2"]["off_step"]) == (1, "low", 0)
    assert "L3" not in stored
    for line, message in [
        ({"id": "L5", "score": 99}, "L5: a chain of 99 replies in a run of 14"),
        ({"id": "L3", "score": 5}, "5 events cannot be claimed by one annotation"),
        ({"id": "L1", "score": 1}, "L1 is a verdict counter: a card carries scores, counts and chains"),
        ({"id": "T1", "score": 7}, "T1: 7 is not on its scale (0/1/2)"),
    ]:
        card.write_text(json.dumps([{"id": "T2", "score": 1, "quote": at("m2")}, line]), encoding="utf-8")
        before = len(notes.active(db, run_id))
        out = cli("verify", card, "--run", run_id, "--import", "--reviewer", "bob", "--db", path_of(db))
        assert out.exit_code == 2 and "items[1]" in out.output and message in out.output, out.output
        assert len(notes.active(db, run_id)) == before  # nothing of the card


# -- an adopted draft ----------------------------------------------------------------------


def test_adopting_a_judges_quote_off_its_step_is_refused(db):
    run_id = scripted_run(db, "keykeeper")
    m1, m2 = reply(db, run_id, "m1"), reply(db, run_id, "m2")
    judged = {"reviewer": "judge:x", "rubric": "T", "kind": "score", "score": 2, "source": "judging 1"}
    evidence.annotate(db, run_id, item="T1", quote=span(m2, at("m2")), **judged)
    evidence.annotate(db, run_id, item="T2", quote=span(m2, at("m2")), **judged)
    view = RunView.open(db, run_id)
    assert view.card("judge:x").item("T1").unsupported and view.card("judge:x").item("T2").counted
    by_task = {p.task.id: p for p in draft.proposals(view, "ada", "judge:x")}
    with pytest.raises(draft.AdoptRefused, match=r"stands at m2, off its step \(T1 is judged on m1\)"):
        draft.adopt(db, view, "ada", by_task["T1"])
    assert notes.active(db, run_id, "ada") == []
    draft.adopt(db, view, "ada", by_task["T1"], quote=span(m1, at("m1")))  # a quote of its own step: adopted
    draft.adopt(db, view, "ada", by_task["T2"])
    assert [a["off_step"] for a in notes.active(db, run_id, "ada")] == [0, 0]


# -- a bundle --------------------------------------------------------------------------------


@pytest.fixture
def exported(db, tmp_path):
    """A scored keykeeper run as a bundle, and a fresh database to import it into."""
    run_id = scripted_run(db, "keykeeper")
    evidence.annotate(
        db,
        run_id,
        reviewer="ada",
        item="T1",
        rubric="T",
        kind="score",
        score=2,
        quote=span(reply(db, run_id, "m1"), at("m1")),
    )
    evidence.annotate(
        db,
        run_id,
        reviewer="ada",
        item="L1",
        kind="verdict",
        value="annulled",
        quote=span(reply(db, run_id, "m2"), at("m2")),
    )
    data = bundles.export_bundle(db, [run_id])
    return data, tmp_path / "other.db", run_id


def write(tmp_path, data) -> str:
    path = tmp_path / "bundle.json"
    path.write_text(bundles.dumps(data), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    "change,message",
    [
        ({"score": 7}, "annotations[0]: T1: 7 is not on its scale (0/1/2)"),
        ({"item": "T99"}, "annotations[0]: 'T99' is no item of keykeeper"),
    ],
)
def test_a_bundle_the_scenario_cannot_hold_is_refused_whole(exported, tmp_path, change, message):
    data, other, _ = exported
    data["annotations"][0].update(change)
    out = cli("import", write(tmp_path, data), "--db", other)
    assert out.exit_code == 2 and message in out.output, out.output
    assert cli("runs", "--json", "--db", other).output.strip() == "[]"  # nothing of it


def test_a_bundles_verdict_on_a_step_its_counter_does_not_judge_is_refused_never_14_of_13(exported, tmp_path):
    data, other, run_id = exported
    verdict = data["annotations"][1]
    assert verdict["item"] == "L1"
    m0 = next(t for t in data["turns"] if t["idx"] == 1)  # the reply to the setup, m0
    text = m0["text"]
    words = text.split("\n")[0]
    verdict.update(step_id="m0", turn_id=m0["id"], quote_turn_id=m0["id"], quote_start=0, quote_end=len(words))
    verdict["quote"] = words
    out = cli("import", write(tmp_path, data), "--db", other)
    assert out.exit_code == 2 and "annotations[1]: L1 is judged only on the steps it lists" in out.output


def test_a_bundles_own_verdicts_on_its_quotes_are_not_taken_on_trust(exported, tmp_path):
    data, other, run_id = exported
    t1, l1 = data["annotations"]
    t1["quote"] = "Havel hands Jarla a golden key and throws the gate open"  # invented, "exact" as the bundle says
    t1["quote_start"] = t1["quote_end"] = t1["quote_turn_id"] = None
    l1["off_step"] = 0
    l1["step_id"] = "m4"  # the quote stands in the reply to m2: off the step it judges
    out = cli("import", write(tmp_path, data), "--db", other)
    assert out.exit_code == 0, out.output
    assert "2 annotations' quotes verified otherwise than the bundle said" in out.output
    assert (
        "annotations[0] T1: exact -> absent" in out.output
        and "annotations[1] L1: exact -> exact (off its step)" in out.output
    )
    from sieve import store

    db = store.open_db(other)
    given = {a["item"]: a for a in notes.active(db, run_id)}
    assert given["T1"]["verification"] == "absent" and given["L1"]["off_step"] == 1
    card = RunView.open(db, run_id).card("ada")
    assert card.disqualified_by == [] and card.disqualification_claimed == ["L1 at m4"]


def test_a_bundle_that_holds_nothing_the_rule_changes_round_trips_byte_for_byte(exported, tmp_path):
    data, other, run_id = exported
    path = write(tmp_path, data)
    out = cli("import", path, "--db", other)
    assert out.exit_code == 0 and "verified otherwise" not in out.output
    from sieve import store

    again = bundles.dumps(bundles.export_bundle(store.open_db(other), [run_id]))
    assert again == open(path, encoding="utf-8").read()


# -- an accepted suggestion ------------------------------------------------------------------


def test_accepting_a_suggestion_passes_the_rule_and_a_loop_in_one_reply_is_no_chain(db):
    from sieve.store.record import suggestions as suggested
    from sieve.store.scoring import detectors, suggestions

    run_id = scripted_run(db, "keykeeper")  # 14 replies
    m1 = reply(db, run_id, "m1")
    where = span(m1, at("m1"))
    spans = [{"turn_id": m1["id"], "turn": m1["idx"], "start": where.start, "end": where.end, "text": where.text}]
    entry = {"item": "L5", "kind": "count", "score": 20.0, "spans": spans, "reason": "a long chain"}
    entry |= {"confidence": 0.9, "source": "judge", "source_name": "judge:x", "source_version": "1"}
    (suggestion,) = suggested.add(db, run_id, [entry])
    with pytest.raises(EvidenceRefused, match="a chain of 20 replies in a run of 14"):
        suggestions.accept(db, suggestion, "ada")
    assert notes.active(db, run_id) == [] and RunView.open(db, run_id).pending_suggestions("ada")
    # The repetition detector's loop (one reply saying the same thing 30 times) is a note on L5, not a chain of 30.
    view = RunView.open(db, run_id)
    looping = dict(view.turns[3], text="The gate is shut. " * 30)
    turns = [looping if t["id"] == looping["id"] else t for t in view.turns]
    found = detectors.suggest(detectors.run_text(turns, view.scenario), view.scenario, {"repetition"})
    loops = [s for s in found if s.finding.category == "loop"]
    assert loops and all((s.item, s.kind, s.score) == ("L5", "note", None) for s in loops)
