"""The Home screen: the runs in the database with their totals so far, the scenarios, a new run."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Header, Static

from sieve import scenarios
from sieve.safe_text import one_line
from sieve.scenarios import Scenario
from sieve.store.record.db import is_read_only
from sieve.store.record.runs import list_runs
from sieve.store.record.turns import release_runs
from sieve.store.scoring import blind as blinding
from sieve.store.scoring import extreme, field
from sieve.store.scoring.labels import money
from sieve.store.scoring.runview import RunView
from sieve.tui.screens.base import SieveScreen
from sieve.tui.screens.play import PlayScreen
from sieve.tui.screens.results import ResultsScreen
from sieve.tui.widgets.footer import SieveFooter
from sieve.tui.widgets.line_table import Column, LineTable, Row

NO_RUNS = "No runs yet: press n to start one (the embedded model needs no API key)."
NO_RUNS_BLIND = "No runs yet: playing shows the model; leave blind mode (b), then n starts one."
NO_RUNS_BLIND_ONLY = "No runs yet: playing shows the model, so someone who is not blind plays them."
MODEL_WIDTH = 21  # so that a row's two lines keep the totals unclipped at 100 columns

# What a run is doing (store.record.runs.activity), coloured by what it asks of the reviewer.
ACTIVITY_STYLES = {
    "complete": "good",
    "playing": "busy",
    "open": "busy",
    "idle": "warn",
    "interrupted": "warn",
    "failed": "bad",
}


def columns(blind: bool) -> list[Column]:
    """Each column holds two lines (the heading says which): blind, only what cannot tell one run from another
    (the code, and the reviewer's own progress): no status, no reply count, no branch, no extreme flag."""
    if blind:
        first = [Column(("code", "scenario"))]
    else:
        first = [
            Column(("run", "scenario")),
            Column(("model", "started · cost"), max_width=MODEL_WIDTH),
            Column(("status", "replies")),
        ]
    return [*first, Column(("totals so far", "progress"))]


class HomeScreen(SieveScreen):
    BINDINGS = [
        Binding("enter", "review", "Review", id="home.review", tooltip="Score the highlighted run"),
        Binding("p", "play", "Play", id="home.play", tooltip="Go on playing the highlighted run"),
        Binding("n", "new_run", "New run", id="home.new", tooltip="Start a new run"),
        Binding(
            "r",
            "results",
            "Results",
            id="home.results",
            tooltip="The results table of the highlighted run's (or scenario's) scenario",
        ),
        Binding(
            "u",
            "toggle_unfinished",
            "Unfinished",
            id="home.unfinished",
            tooltip="Only the runs you have not finished scoring, or every run again",
        ),
        Binding(
            "b",
            "toggle_blind",
            "Blind",
            id="home.blind",
            tooltip="Blind review: runs under your own codes in your own order; no model, time, tokens or cost",
        ),
        Binding("f5", "reload", "Reload", id="home.reload", tooltip="Read the runs again"),
        Binding("q", "app.quit", "Quit", id="home.quit", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.run_ids: list[str] = []  # the run of each row of the list, in the order shown
        self.scenarios: dict[str, Scenario] = {}  # the scenarios listed, by name
        self.unfinished_only = False

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical():
            yield Static("Runs", classes="heading", id="runs-heading")
            yield Static(NO_RUNS, id="empty")
            yield LineTable(id="runs")
            yield Static("Scenarios   (enter: a new run of it)", classes="heading")
            yield DataTable(id="scenarios", cursor_type="row")
            yield Static("", id="briefs")
        yield SieveFooter()

    def on_mount(self) -> None:
        self.title = "sieve"
        table = self.query_one("#scenarios", DataTable)
        table.add_columns("name", "title", "messages", "rubrics", "counters", "probes", "player briefs")
        for name in scenarios.builtin_names():
            s = self.scenarios[name] = scenarios.load(name)
            table.add_row(
                Text(one_line(s.name)),
                Text(one_line(s.title)),
                len(s.script()),
                " ".join(r.id for r in s.rubrics) or "-",
                len(s.counters) or "-",
                len(s.probes) or "-",
                Text(one_line(" ".join(p.id for p in s.players)) or "-"),
                key=name,
            )
        self.query_one("#runs", LineTable).focus()
        # The runs are read when the screen is shown (on_screen_resume), now and each time it comes back.

    def on_screen_resume(self) -> None:
        # Runs that no Play screen of this app still has open are free for anyone to go on with.
        if not is_read_only(self.app.db):  # a read-only file holds no run of this process
            playing = [s.run_id for s in self.app.screen_stack if isinstance(s, PlayScreen)]
            release_runs(self.app.db, keep=playing)
        self.reload()

    def reload(self) -> None:
        db = self.app.db
        blind = self.app.blind
        reviewer = self.app.reviewer
        self.sub_title = one_line(f"reviewer {reviewer}") + (
            " · BLIND (no model, time, tokens or cost)" if blind else ""
        )
        if self.app.blind_only:
            self.sub_title += " (blind only)"
        runs = list_runs(db)
        listed = {run["id"]: run for run in runs}  # with what each run is doing and how many replies it holds
        views = [RunView(db, run, blind=blind, viewer=reviewer) for run in runs]
        if blind:  # the reviewer's own shuffle: the order tells nothing of when a run was played
            by_id = {v.id: v for v in views}
            views = [by_id[run_id] for run_id in field.ordered(db, by_id, reviewer, True)]
            names = blinding.codes(db, by_id, reviewer)
        else:
            views.reverse()  # newest first
        # One query for this reviewer's annotations on every run: a card is built only where there are some.
        standing = field.standings(db, reviewer, views)
        shown = [v for v in views if not (self.unfinished_only and standing[v.id].complete)]
        rows = []
        any_extreme = False
        for view in shown:
            run, where = listed[view.id], standing[view.id]
            activity = run["activity"]
            replies = f"{run['replies']} " + ("reply" if run["replies"] == 1 else "replies")
            # A refusal, a filter, an empty reply...: one such run is not enough (the keykeeper seed).
            flagged = not blind and bool(extreme.flags(view))
            any_extreme = any_extreme or flagged
            status = (one_line(activity) + (" ⚑" if flagged else ""), replies)
            scoring = (one_line(where.totals), one_line(where.progress))
            out = "bad" if where.disqualified else None  # the totals in red: the run is out of the field
            cells: tuple[tuple[str, str], ...]
            styles: tuple[str | None, ...]
            if blind:
                # What differs between runs (replies, interrupted, a branch, a refusal) singles one out.
                cells = ((names[view.id], one_line(run["scenario"])), scoring)
                styles = (None, out)
            else:
                cost = "" if run["cost"] is None else f" · {money(run['cost'])}"  # none: left out
                started = run["started"][5:16].replace("T", " ")
                # A branch shows the run it grew from where its scenario (the same as its parent's) would be.
                second = one_line(f"↳ {run['parent_run'][-8:]}" if run["parent_run"] else run["scenario"])
                cells = ((view.id[-8:], second), (one_line(run["model"]), started + cost), status, scoring)
                styles = (None, None, ACTIVITY_STYLES.get(activity), out)
            rows.append(Row(view.id, cells, styles))
        self.query_one("#runs", LineTable).set_rows(columns(blind), rows)
        self.run_ids = [view.id for view in shown]
        left = sum(1 for v in views if not standing[v.id].complete)
        heading = f"Runs: {len(views)}, {left} not finished by you"
        if self.unfinished_only:
            heading += "   (u: show every run)"
        else:
            heading += "   (u: only those)"
        if any_extreme:
            heading += "   ⚑ extreme: play it again"
        self.query_one("#runs-heading", Static).update(Text(heading))
        empty = self.query_one("#empty", Static)
        empty.display = not shown
        if views and not shown:
            empty.update("You have finished every run: press u to see them all.")
        elif not views:
            empty.update(self._no_runs())

    def action_reload(self) -> None:
        self.reload()

    def _no_runs(self) -> str:
        if self.app.blind:
            return NO_RUNS_BLIND_ONLY if self.app.blind_only else NO_RUNS_BLIND
        return NO_RUNS

    def _highlighted_run(self) -> str | None:
        table = self.query_one("#runs", LineTable)
        if not table.row_count:
            self.notify(self._no_runs())
            return None
        return table.cursor_key

    def action_review(self) -> None:
        if self.query_one("#scenarios", DataTable).has_focus:
            self.action_new_run()
            return
        run_id = self._highlighted_run()
        if run_id:
            self.app.open_review(run_id)

    @on(LineTable.Chosen, "#runs")
    def run_chosen(self, event: LineTable.Chosen) -> None:
        # A click opens the run as enter does.
        if event.key is not None:
            self.app.open_review(event.key)

    @on(DataTable.RowHighlighted, "#scenarios")
    def scenario_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Under the table, the highlighted scenario's player briefs: what `m` in Play (or `--player`) can hand
        the player's seat to, by id and title."""
        name = event.row_key.value
        if name is None:
            return
        players = self.scenarios[name].players
        text = Text(one_line(f"player briefs of {name}"), style="bold")
        if players:
            text.append(" (m in Play, sieve run --player ID): ", style="dim")
            for n, p in enumerate(players):
                text.append(("   " if n else "") + one_line(p.id), style="bold")
                text.append(" " + one_line(p.title))
        else:
            text.append(": none", style="dim")
        self.query_one("#briefs", Static).update(text)

    @on(DataTable.RowSelected, "#scenarios")
    def scenario_selected(self, event: DataTable.RowSelected) -> None:
        if not self._refused_blind("A new run"):
            self.app.open_new_run(event.row_key.value)

    def action_results(self) -> None:
        scenarios_table = self.query_one("#scenarios", DataTable)
        if scenarios_table.has_focus:
            name = scenarios_table.coordinate_to_cell_key(scenarios_table.cursor_coordinate).row_key.value
            if name is None:
                return
        else:
            run_id = self._highlighted_run()
            if run_id is None:
                return
            name = self.app.run_view(run_id).run["scenario"]
        self.app.push_screen(ResultsScreen(name))

    def action_toggle_blind(self) -> None:
        if self.app.blind and self.app.blind_only:
            self.notify(
                "You review blind only (blind = true under [reviewer] in the config): "
                "R in a blind review shows the model once every item is scored.",
                severity="warning",
            )
            return
        self.app.blind = not self.app.blind
        self.reload()

    def action_toggle_unfinished(self) -> None:
        self.unfinished_only = not self.unfinished_only
        self.reload()

    def _refused_blind(self, what: str) -> bool:
        """Playing (going on with a run, or a new one) shows the model: refused while blind, saying what would
        help. A reviewer who reviews blind only is not sent to `b`, which cannot help them."""
        if not self.app.blind:
            return False
        if self.app.blind_only:
            self.notify(
                f"{what} shows the model, and you review blind only (blind = true under [reviewer] in the config): "
                "someone who is not blind plays the runs.",
                severity="warning",
            )
        else:
            self.notify(f"{what} shows the model: leave blind mode (b) first.", severity="warning")
        return True

    def action_play(self) -> None:
        if self._refused_blind("Playing"):
            return
        run_id = self._highlighted_run()
        if run_id:
            self.app.continue_run(run_id)

    def action_new_run(self) -> None:
        if self._refused_blind("A new run"):
            return
        table = self.query_one("#scenarios", DataTable)
        name = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value if table.has_focus else None
        self.app.open_new_run(name)
