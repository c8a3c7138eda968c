"""Fixed states of the app, the same every time: for the snapshot tests and the README's screenshots.

`build(path)` writes a database whose ids, times, texts and scores are fixed: two keykeeper runs and a
train run the embedded SmolLM2-135M played (tests/data/transcripts.json, detector_transcripts.json), a
branch, a run whose reply is half there, a blind pair queue, and story-5 runs judged head to head for the
ratings. The `open_*` functions make the first screen of each state; `SCENES` names them all.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlite_utils import Database
from textual.screen import Screen

from sieve import scenarios, store
from sieve.engine.endpoints import Endpoints
from sieve.engine.gateway import Endpoint, Gateway
from sieve.engine.session import Session
from sieve.store.record import pairs as pairing
from sieve.store.record import turns as record
from sieve.store.record.annotations import Quote
from sieve.store.record.runs import owner_tag
from sieve.store.scoring import evidence
from sieve.store.scoring.runview import RunView
from sieve.tui.app import SieveApp

DATA = Path(__file__).resolve().parent.parent / "data"
REVIEWER = "ada"
START = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def fixed_id(minutes: int, n: int) -> str:
    """A ULID made from a time `minutes` after START and a fixed 'random' part: the same every build."""
    millis = int((START + timedelta(minutes=minutes)).timestamp() * 1000)
    value = (millis << 80) | ((n * 0x9E3779B97F4A7C15 + 0x5DEECE66D) & ((1 << 80) - 1))
    return "".join(_ALPHABET[(value >> shift) & 31] for shift in range(125, -1, -5))


def at(minutes: float) -> str:
    return (START + timedelta(minutes=minutes)).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class Runs:
    keykeeper: str  # complete, partly scored by ada
    second: str  # another keykeeper run, complete, not scored
    train: str
    branch: str  # of `keykeeper`, left idle
    streaming: str  # a reply half there (this process owns it)
    queue: str  # a blind pair queue: keykeeper against second


def transcripts(name: str) -> list[dict]:
    return json.loads((DATA / name).read_text(encoding="utf-8"))["runs"]


def _run(db: Database, scenario, run_id: str, minutes: int, model: str, endpoint: str, turns: list[dict]) -> str:
    """A run with these turns (role, text), script steps in order, usage made up but fixed."""
    made = store.create_run(
        db,
        scenario,
        model=model,
        endpoint=endpoint,
        settings={"model": model, "temperature": 1.0, "max_tokens": 300, "seed": 11},
    )
    db.execute("UPDATE runs SET id = ?, started = ? WHERE id = ?", [run_id, at(minutes), made])
    script = iter(scenario.script())
    for turn in turns:
        if turn["role"] == "user":
            step, repeat = next(script)
            origin = "setup" if step.kind == "setup" else "script"
            record.add_turn(
                db,
                run_id,
                idx=turn["idx"],
                role="user",
                origin=origin,
                text=turn["text"],
                step_id=step.id,
                step_repeat=repeat,
            )
            continue
        reply = record.add_turn(db, run_id, idx=turn["idx"], role="assistant", origin="reply", status="streaming")
        if turn.get("streaming"):
            record.save_partial(db, reply, turn["text"])
            continue
        usage = {
            "finish_reason": "stop",
            "prompt_tokens": 400 + 60 * turn["idx"],
            "completion_tokens": len(turn["text"]) // 4,
            "token_source": "tokenize",
            "ttft": 0.4,
            "duration": 0.4 + len(turn["text"]) / 800,
        }
        record.finish_turn(db, reply, "complete", turn["text"], usage)
    return run_id


def _close(db: Database, run_id: str, status: str, minutes: float) -> None:
    record.set_run_status(db, run_id, status)
    db.execute("UPDATE runs SET ended = ? WHERE id = ?", [at(minutes), run_id])


def _quote(db: Database, run_id: str, idx: int, words: str) -> Quote:
    """A quote of `words` where they stand in the reply at `idx`."""
    turn = next(t for t in record.chosen_turns(db, run_id) if t["idx"] == idx)
    start = turn["text"].index(words)
    return Quote(turn["id"], start, start + len(words), words)


def _score(db: Database, run_id: str) -> None:
    """Three items and two L events, each on a quote, as a reviewer would leave them halfway through."""
    replies = {t["idx"]: t for t in record.chosen_turns(db, run_id) if t["role"] == "assistant"}

    def first_words(idx: int, count: int) -> str:
        return " ".join(replies[idx]["text"].split(" ")[:count])

    given = [
        dict(item="T1", rubric="T", kind="score", score=1, quote=_quote(db, run_id, 3, first_words(3, 9))),
        dict(item="T2", rubric="T", kind="score", score=0, quote=_quote(db, run_id, 5, first_words(5, 7))),
        dict(item="R4", rubric="R", kind="score", score=1, note="rules forgotten by the third reply"),
        dict(item="L3", kind="count", quote=_quote(db, run_id, 1, first_words(1, 8))),
        dict(item="L5", kind="count", score=2, quote=_quote(db, run_id, 7, first_words(7, 6))),
    ]
    for fields in given:
        evidence.annotate(db, run_id, reviewer=REVIEWER, **fields)


def more_evidence(db: Database, run_id: str) -> None:
    """What Review's scenes add to the scored run: a quote inside another (R2 within T1's), an item scored
    from the whole run on a second passage (R2 again), and an event whose quote was found only nearly (L6)."""
    inner = "one of the men from the island"
    given = [
        dict(item="R2", rubric="R", kind="score", score=1, quote=_quote(db, run_id, 3, inner)),
        dict(item="R2", rubric="R", kind="score", score=1, quote=_quote(db, run_id, 9, '"No sir, no sir," I said')),
        dict(
            item="L6",
            kind="count",
            note="the narrator steps out of the scene",
            # Not word for word: the verifier finds it near "I smiled back, "I've been looking after you," he said".
            quote=Quote(None, None, None, 'I smiled back, "I have been looking after you," he said'),
        ),
    ]
    for fields in given:
        evidence.annotate(db, run_id, reviewer=REVIEWER, **fields)


def _story_turns(engine: int, run: int, scenario) -> list[dict]:
    """Short made-up story replies (the ratings view shows none of them)."""
    turns, idx = [], 0
    for step, _ in scenario.script():
        turns.append({"idx": idx, "role": "user", "text": step.text})
        text = f"Engine {engine}, run {run}: the road bends at step {step.id}, and the ferryman waits."
        turns.append({"idx": idx + 1, "role": "assistant", "text": text})
        idx += 2
    return turns


def build(path: Path) -> tuple[Database, Runs]:
    """The database of every scene, at `path`, the same on every build."""
    db = store.open_db(path)
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('blind_salt', ?)", ["5eed" * 8])
    keykeeper, train, story = (scenarios.load(n) for n in ("keykeeper", "train", "story-5"))
    played = transcripts("transcripts.json")
    more = transcripts("detector_transcripts.json")
    local = "SmolLM2-135M-Instruct"

    first = _run(db, keykeeper, fixed_id(0, 1), 0, local, "local", played[0]["turns"])
    _close(db, first, "complete", 6)
    _score(db, first)
    second = _run(db, keykeeper, fixed_id(30, 2), 30, "vendor/keykeeper-model", "lab", more[0]["turns"])
    db.execute("UPDATE turns SET provider = 'Lab', cost = 0.0003 WHERE run_id = ? AND role = 'assistant'", [second])
    _close(db, second, "complete", 34)  # the totals with the cost
    trained = _run(db, train, fixed_id(60, 3), 60, local, "local", played[1]["turns"])
    _close(db, trained, "complete", 64)

    branch = _run(db, keykeeper, fixed_id(90, 4), 90, local, "local", played[0]["turns"][:5])
    # Left by a process that is gone without letting go of it (killed): past any pid this system gives out.
    gone = f"{socket.gethostname()}:{2**22 + 1}"
    db.execute("UPDATE runs SET parent_run = ?, parent_turn = 4, owner = ? WHERE id = ?", [first, gone, branch])

    # A reply half there: this process plays the run (a Play screen opens it without taking it over).
    half = [dict(t) for t in more[1]["turns"][:8]]
    half[7] = dict(half[7], text=half[7]["text"][: len(half[7]["text"]) // 2], streaming=True)
    streaming = _run(db, keykeeper, fixed_id(120, 5), 120, local, "local", half)
    db.execute("UPDATE runs SET owner = ? WHERE id = ?", [owner_tag(), streaming])

    made = pairing.create_queue(db, [(first, second)], seed=1)
    queue = fixed_id(150, 6)
    db.execute("UPDATE pairs SET queue = ? WHERE queue = ?", [queue, made])

    # story-5: three engines, two runs each, judged head to head by ada and a judge.
    engines: dict[str, list[str]] = {}
    for n, name in enumerate(("engine/a", "engine/b", "engine/c")):
        for r in range(2):
            minutes = -300 + 10 * (2 * n + r)  # before the keykeeper runs, which Home lists first
            run_id = _run(db, story, fixed_id(minutes, 10 + 2 * n + r), minutes, name, "lab", _story_turns(n, r, story))
            _close(db, run_id, "complete", minutes + 5)
            engines.setdefault(name, []).append(run_id)
    a, b, c = engines.values()
    flip = {"A": "B", "B": "A", "tie": "tie"}
    # Each pair's verdicts in turn, as the first set saw it: a is mostly better than b and c, b and c are close.
    verdicts = ((a, b, "A A tie B", "A tie A A"), (a, c, "A tie A A", "tie A B A"), (b, c, "tie B A tie", "B tie A B"))
    for x, y, people, judge in verdicts:
        judged = pairing.create_queue(db, pairing.every_pair(x, y), seed=3)
        for pair, ours, theirs in zip(pairing.queue_pairs(db, judged), people.split(), judge.split()):
            forward = pair["run_a"] in x
            pairing.judge(db, pair, "overall", ours if forward else flip[ours], REVIEWER)
            pairing.judge(db, pair, "overall", theirs if forward else flip[theirs], "judge:m")
    db.conn.commit()
    db.conn.close()
    # Opened again as the app opens a file: a run whose process is gone (the branch) is marked interrupted.
    return store.open_db(path), Runs(first, second, trained, branch, streaming, queue)


# -- the scenes: an app and what to press ---------------------------------------------------------


def offline_gateway() -> Gateway:
    """A gateway nothing is sent through: the scenes show what is recorded."""
    return Gateway(Endpoint("http://127.0.0.1:9/v1", name="local"))


def app(db: Database, first: Callable[[], Screen] | None = None, *, blind: bool = False) -> SieveApp:
    return SieveApp(db, Endpoints(), REVIEWER, first=first, blind=blind)


def play(db: Database, runs: Runs) -> SieveApp:
    from sieve.tui.screens.play import PlayScreen

    return app(db, lambda: PlayScreen(Session.open(db, runs.streaming, offline_gateway())))


def results(db: Database, runs: Runs) -> SieveApp:
    from sieve.tui.screens.results import ResultsScreen

    return app(db, lambda: ResultsScreen("keykeeper"))


def pairs(db: Database, runs: Runs) -> SieveApp:
    from sieve.tui.screens.pairs import PairScreen

    return app(db, lambda: PairScreen(runs.queue), blind=True)


def ratings(db: Database, runs: Runs) -> SieveApp:
    from sieve.tui.screens.ratings import RatingsScreen

    return app(db, lambda: RatingsScreen("story-5"))


def review(db: Database, runs: Runs) -> SieveApp:
    from sieve.tui.screens.review import ReviewScreen

    return app(db, lambda: ReviewScreen(RunView.open(db, runs.keykeeper, viewer=REVIEWER)))


def review_draft(db: Database, runs: Runs) -> SieveApp:
    """Review on the scored run once a judge has scored it too (its draft under each card item, T4 adopted
    from it) and the detectors' suggestions are stored, pending."""
    from sieve.store.scoring import draft, suggestions
    from tests.support.judge_drafts import JUDGE, store_judge_draft

    store_judge_draft(db, runs.keykeeper, leave_out=("T9",))
    view = RunView.open(db, runs.keykeeper, viewer=REVIEWER)
    suggestions.store(db, view)
    t4 = next(p for p in draft.proposals(view, REVIEWER, JUDGE) if p.task.id == "T4")
    draft.adopt(db, view, REVIEWER, t4)
    return review(db, runs)


def review_evidence(db: Database, runs: Runs) -> SieveApp:
    """Review on the scored run with more_evidence added: highlights of every kind it has, overlapping."""
    more_evidence(db, runs.keykeeper)
    return review(db, runs)


@dataclass(frozen=True)
class Scene:
    make: Callable[[Database, Runs], SieveApp]
    press: tuple[str, ...] = ()  # keys pressed once the first screen is up


SCENES = {
    "home": Scene(lambda db, runs: app(db)),
    "play": Scene(play, ("end",)),  # where the reply streams in
    "results": Scene(results),
    "step-view": Scene(results, ("a",)),
    "pairs": Scene(pairs),
    "ratings": Scene(ratings),
    "new-run": Scene(lambda db, runs: app(db), ("n",)),
    "player": Scene(play, ("end", "m")),
    # A judge's draft beside the card, A walking it: its first item left to score, the judge's quote selected.
    "review-draft": Scene(review_draft, ("A",)),
    # Review on the reply T1's quote comes from (n moves a turn): its highlights, the line under the cursor.
    "review": Scene(review_evidence, ("n", "n")),
    # The whole transcript, the card focused and enter on its second item, T2: its quote selected.
    "review-card": Scene(review_evidence, ("w", "tab", "down", "enter")),
    # The value picker: a line selected, s, the item T3 typed and chosen, its values offered.
    "value-picker": Scene(review_evidence, ("n", "n", "shift+end", "s", "T", "3", "enter")),
    # i: the next thing left to score, the picker open on it; `.` selected the sentence under the cursor.
    "item-picker": Scene(review_evidence, ("i", "full_stop")),
}


async def settled(pilot) -> None:
    """Wait until the screen shows what it will: no worker running, no cursor blinking."""
    from textual.widgets import Input

    app = pilot.app
    for _ in range(200):
        await app.workers.wait_for_complete()
        await pilot.pause()
        if all(w.is_finished for w in app.workers):
            break
    for widget in app.screen.query(Input):
        widget.cursor_blink = False
    await pilot.pause()


def prepare(scene: Scene) -> Callable:
    """What happens before the picture is taken: the first screen settles, the scene's keys, settled again."""

    async def run_before(pilot) -> None:
        await settled(pilot)
        await pilot.press(*scene.press)
        await settled(pilot)

    return run_before


def screenshot(scene: Scene, db: Database, runs: Runs, size: tuple[int, int], theme: str = "textual-dark") -> str:
    """The scene as an SVG, taken the way the snapshot tests take it."""
    from textual._doc import take_svg_screenshot

    app = scene.make(db, runs)
    app.theme = theme
    return take_svg_screenshot(app=app, terminal_size=size, run_before=prepare(scene))
