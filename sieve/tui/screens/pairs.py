"""The Pair screen: two blind transcripts as A and B, step by step side by side, judged head to head.

The story benchmark's order: each transcript is scored on its own first (1 and 2
open them in a blind review), then the two are judged per criterion and overall,
where a tie is a legitimate answer.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Header, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from sieve.safe_text import one_line, visible
from sieve.store.record import pairs as pairing
from sieve.store.record import queue_plans
from sieve.store.scoring import adaptive_queue, pair_summary
from sieve.store.scoring.runview import RunView
from sieve.tables import counted
from sieve.tui.screens.base import SieveScreen
from sieve.tui.screens.review import ReviewScreen
from sieve.tui.widgets.footer import SieveFooter
from sieve.tui.widgets.text_input import TextInput


def _criterion(criterion: str, title: str) -> Option:
    return Option(Text(one_line(f"{criterion:<8} {title}")), id=criterion)


class JudgePicker(ModalScreen[tuple[str, str] | None]):
    """A criterion (or overall), then A, B or tie."""

    BINDINGS = [Binding("escape", "dismiss_none", "Back", id="judge.back")]

    def __init__(self, criteria: list[tuple[str, str]]):
        super().__init__()
        self.criteria = criteria
        self.criterion: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Judge A against B: a criterion, then the winner (a tie is an answer)")
            yield TextInput(placeholder="filter: C3, memory, overall", id="filter")
            yield OptionList(*[_criterion(cid, title) for cid, title in self.criteria], id="criteria")
            yield OptionList(
                Option("A is better", id="A"), Option("B is better", id="B"), Option("tie", id="tie"), id="winner"
            )

    def on_mount(self) -> None:
        self.query_one("#filter", Input).focus()

    @on(Input.Changed, "#filter")
    def filtered(self, event: Input.Changed) -> None:
        words = event.value.lower().split()
        listing = self.query_one("#criteria", OptionList)
        listing.clear_options()
        listing.add_options([_criterion(c, t) for c, t in self.criteria if all(w in f"{c} {t}".lower() for w in words)])
        if listing.option_count:
            listing.highlighted = 0

    @on(Input.Submitted, "#filter")
    def submitted(self) -> None:
        listing = self.query_one("#criteria", OptionList)
        if listing.highlighted is not None:
            self._choose(listing.get_option_at_index(listing.highlighted).id)

    @on(OptionList.OptionSelected, "#criteria")
    def criterion_selected(self, event: OptionList.OptionSelected) -> None:
        self._choose(event.option.id)

    def _choose(self, criterion: str | None) -> None:
        if criterion is None:  # every criterion's option has its id
            return
        self.criterion = criterion
        winner = self.query_one("#winner", OptionList)
        winner.display = True
        winner.highlighted = 0
        winner.focus()

    @on(OptionList.OptionSelected, "#winner")
    def winner_selected(self, event: OptionList.OptionSelected) -> None:
        if self.criterion is not None and event.option.id is not None:  # the winner is asked for a criterion
            self.dismiss((self.criterion, event.option.id))

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class PairScreen(SieveScreen):
    BINDINGS = [
        Binding("1", "score('A')", "Score A", id="pair.score_a", tooltip="Score transcript A on its own (blind)"),
        Binding("2", "score('B')", "Score B", id="pair.score_b", tooltip="Score transcript B on its own (blind)"),
        Binding(
            "j", "judge", "Judge", id="pair.judge", tooltip="A against B on a criterion or overall; a tie is an answer"
        ),
        Binding(
            "S",
            "summary",
            "Summary",
            id="pair.summary",
            tooltip="The queue's head to head by side, once you have judged every pair (it names the sides)",
        ),
        Binding("n", "move(1)", "Next pair", id="pair.next"),
        Binding("p", "move(-1)", "Prev pair", id="pair.prev"),
        Binding("escape", "app.pop_screen", "Back", id="pair.back"),
    ]

    def __init__(self, queue: str, position: int = 0):
        super().__init__()
        self.queue = queue
        self.position = position
        self.message = ""
        self.pairs: list[dict] = []
        self.sides: dict[str, RunView] = {}
        self.adaptive = False

    @property
    def db(self):
        return self.app.db

    @property
    def reviewer(self) -> str:
        return self.app.reviewer

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="status")
        yield VerticalScroll(id="steps")
        yield SieveFooter()

    @property
    def pair(self) -> dict:
        return self.pairs[self.position]

    def side(self, run_id: str) -> RunView:
        """Each run of the queue, once, always blind (its scenario parsed once per version)."""
        if run_id not in self.sides:
            self.sides[run_id] = RunView.open(self.db, run_id, blind=True)
        return self.sides[run_id]

    def on_mount(self) -> None:
        self.title = "sieve · blind pairs"
        self.pairs = pairing.queue_pairs(self.db, self.queue)
        self.adaptive = queue_plans.get(self.db, self.queue) is not None
        if self.adaptive:  # served where this reviewer has work left: the first pair not judged overall
            self.position = next((n for n, p in enumerate(self.pairs) if not self.judged(p)), self.position)
            self.grow()
        self.show()

    def judged(self, pair: dict) -> bool:
        return (self.reviewer, pairing.OVERALL) in pairing.verdicts(self.db, pair["id"])

    def grow(self) -> None:
        """An adaptive queue: once this reviewer has judged every pair overall, the next round from the people's
        verdicts (store.scoring.adaptive_queue), or why the queue has ended."""
        if not all(self.judged(p) for p in self.pairs):
            return
        step = adaptive_queue.extend(self.db, self.queue, "humans")
        if step.added:
            before = len(self.pairs)
            self.pairs = pairing.queue_pairs(self.db, self.queue)
            self.message = f"round {step.number}: {len(self.pairs) - before} pairs added, the least certain so far (n)"
        elif step.reason:
            self.message = f"the queue is finished: {step.reason}"
        elif step.waiting:
            self.message = f"round {step.number}: {step.waiting} pairs wait for another reviewer's verdict"

    def on_screen_resume(self) -> None:
        self.show_status()

    def scored(self, run_id: str) -> bool:
        return self.side(run_id).card(self.reviewer).rubrics_scored

    def show_status(self) -> None:
        pair = self.pair
        # Colours from the theme's variables, so that they read in light themes too.
        parts: list[tuple[str, str] | str] = [(f"pair {self.position + 1} of {len(self.pairs)}", "bold")]
        for side in ("A", "B"):
            done = self.scored(pair[f"run_{side.lower()}"])
            key = "1" if side == "A" else "2"
            parts.append("   ")
            parts.append(
                (
                    f"{side}: {'scored' if done else f'not yet scored ({key})'}",
                    "$text-success" if done else "$text-warning",
                )
            )
        given = {c: w for (r, c), w in pairing.verdicts(self.db, pair["id"]).items() if r == self.reviewer}
        if given:
            shown = "  ".join(f"{c} {w}" for c, w in sorted(given.items()))
            parts.append(("\nyour verdicts: " + one_line(shown), "$text-accent"))
        if self.message:
            parts.append(("\n" + self.message, "$text-warning"))
        self.query_one("#status", Static).update(Content.assemble(*parts))
        self.sub_title = one_line(f"reviewer {self.reviewer}")

    def show(self) -> None:
        self.show_status()
        pair = self.pair
        a, b = self.side(pair["run_a"]), self.side(pair["run_b"])
        container = self.query_one("#steps", VerticalScroll)
        container.remove_children()
        rows = []
        for step in a.scenario.steps:
            texts = ["\n\n".join(v.mask(t["text"]) for t in v.replies_to(step.id)) or "(no reply)" for v in (a, b)]
            # Text.assemble: a sum of Texts takes its first part's style (bold) for the whole reply.
            rows.append(
                Horizontal(
                    Static(Text(one_line(step.id)), classes="step-id"),
                    Static(Text.assemble(("A  ", "bold"), visible(texts[0])), classes="side"),
                    Static(Text.assemble(("B  ", "bold"), visible(texts[1])), classes="side"),
                    classes="step-row",
                )
            )
        container.mount_all(rows)

    def action_move(self, delta: int) -> None:
        self.message = ""
        self.position = max(0, min(len(self.pairs) - 1, self.position + delta))
        self.show()

    def action_score(self, side: str) -> None:
        # A code of this showing alone: it matches neither Home's nor the same run's in another pair.
        view = RunView.open(
            self.db,
            self.pair[f"run_{side.lower()}"],
            blind=True,
            viewer=self.reviewer,
            context=f"pair {self.pair['id']}",
        )
        self.app.push_screen(ReviewScreen(view))

    def action_judge(self) -> None:
        pair = self.pair
        if not (self.scored(pair["run_a"]) and self.scored(pair["run_b"])):
            self.message = "Score each transcript on its own first (1 for A, 2 for B), then judge them head to head."
            self.show_status()
            return
        self.message = ""
        scenario = self.side(pair["run_a"]).scenario
        self.app.push_screen(JudgePicker(pairing.criteria(scenario)), self._judged)

    def action_summary(self) -> None:
        """The head to head as `sieve pair --queue Q --summary` prints it: withheld until this reviewer has
        judged every pair overall, since it names the sides and would unblind what is left."""
        judged = {p["id"] for p in self.pairs if self.judged(p)}
        left = len(self.pairs) - len(judged)
        if left and self.app.blind:
            self.message = f"The summary names the sides: judge the {counted(left, 'pair')} left (overall) first."
            self.show_status()
            return
        self.app.push_screen(PairSummary(pair_summary.head_to_head(self.db, self.queue)))

    def _judged(self, choice: tuple[str, str] | None) -> None:
        if choice is None:
            return
        criterion, winner = choice
        pairing.judge(self.db, self.pair, criterion, winner, self.reviewer)
        if self.adaptive and criterion == pairing.OVERALL:
            self.grow()
        self.show_status()


class PairSummary(ModalScreen[None]):
    """The queue's head to head per criterion: the side ahead, its share of pairs won with a 95% interval."""

    BINDINGS = [Binding("escape", "dismiss", "Back", id="summary.back")]
    HEADERS = ["criterion", "result", "share of pairs won (95%)", "pairs", "each evaluator", "split"]

    def __init__(self, criteria: dict):
        super().__init__()
        self.rows = pair_summary.criterion_rows(criteria)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Head to head, by side: within noise while the 95% interval (Wilson) includes even")
            yield DataTable(id="summary", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        keys = ["criterion", "result", "share", "pairs", "evaluators", "split"]
        for header in self.HEADERS:
            table.add_column(header)
        for row in self.rows:
            table.add_row(*(Text(visible(str(row[k]))) for k in keys), key=row["criterion"])
        table.focus()
