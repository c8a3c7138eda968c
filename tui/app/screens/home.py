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
from sieve.store.record.annotations import annotations_by_run
from sieve.store.record.runs import list_runs
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import totals_line
from sieve.tui.app.screens.base import SieveScreen
from sieve.tui.app.screens.results import ResultsScreen
from sieve.tui.app.widgets.footer import SieveFooter


def run_totals(view: RunView, reviewer: str, given: list[dict] | None = None) -> str:
    """Each rubric's total so far by this reviewer, as `T 12+1 / 24+4  R 6 / 12`."""
    given = view.annotations(reviewer) if given is None else given
    if not given:
        return "not scored"
    return totals_line(view.card(reviewer, given))


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
            "b",
            "toggle_blind",
            "Blind",
            id="home.blind",
            tooltip="Blind review: runs under neutral codes, no model, endpoint or cost",
        ),
        Binding("f5", "reload", "Reload", id="home.reload", tooltip="Read the runs again"),
        Binding("q", "app.quit", "Quit", id="home.quit", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.run_ids: list[str] = []  # the run of each row of the table, newest first

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical():
            yield Static("Runs   (enter: review the run, p: play on, r: the scenario's results)", classes="heading")
            yield Static("No runs yet: press n to start one (the embedded model needs no API key).", id="empty")
            yield DataTable(id="runs", cursor_type="row", zebra_stripes=True)
            yield Static("Scenarios   (enter: a new run of it)", classes="heading")
            yield DataTable(id="scenarios", cursor_type="row")
        yield SieveFooter()

    def on_mount(self) -> None:
        self.title = "sieve"
        runs = self.query_one("#runs", DataTable)
        runs.add_columns("run", "scenario", "model", "started", "status", "replies", "cost", "totals so far")
        table = self.query_one("#scenarios", DataTable)
        table.add_columns("name", "title", "messages", "rubrics", "counters", "probes")
        for name in scenarios.builtin_names():
            s = scenarios.load(name)
            table.add_row(
                Text(one_line(s.name)),
                Text(one_line(s.title)),
                len(s.script()),
                " ".join(r.id for r in s.rubrics) or "-",
                len(s.counters) or "-",
                len(s.probes) or "-",
                key=name,
            )
        self.reload()
        runs.focus()

    def on_screen_resume(self) -> None:
        self.reload()

    def reload(self) -> None:
        db = self.app.db
        blind = self.app.blind
        self.sub_title = one_line(f"reviewer {self.app.reviewer}") + (
            " · BLIND: models, endpoints and costs hidden" if blind else ""
        )
        table = self.query_one("#runs", DataTable)
        table.clear()
        views = [RunView(db, run, blind=blind) for run in reversed(list_runs(db))]
        # One query for this reviewer's annotations on every run: a card is built only where there are some.
        given = annotations_by_run(db, self.app.reviewer)
        table.add_rows(
            [
                (
                    Text(one_line(view.code if blind else view.id[-8:])),
                    Text(one_line(view.run["scenario"])),
                    Text("hidden" if blind else one_line(view.run["model"])),
                    view.run["started"][:16].replace("T", " "),
                    Text(one_line(view.run["status"])),
                    view.run["replies"],
                    "hidden" if blind else ("" if view.run["cost"] is None else f"${view.run['cost']:.4f}"),
                    Text(one_line(run_totals(view, self.app.reviewer, given.get(view.id, [])))),
                )
                for view in views
            ]
        )
        # add_rows keys rows by position; the run ids are kept to find the highlighted one.
        self.run_ids = [view.id for view in views]
        self.query_one("#empty", Static).display = not views

    def action_reload(self) -> None:
        self.reload()

    def _highlighted_run(self) -> str | None:
        table = self.query_one("#runs", DataTable)
        if not table.row_count:
            self.notify("No run yet: press n to start one.")
            return None
        return self.run_ids[table.cursor_row]

    def action_review(self) -> None:
        if self.query_one("#scenarios", DataTable).has_focus:
            self.action_new_run()
            return
        run_id = self._highlighted_run()
        if run_id:
            self.app.open_review(run_id)

    @on(DataTable.RowSelected, "#runs")
    def run_selected(self, event: DataTable.RowSelected) -> None:
        self.app.open_review(self.run_ids[event.cursor_row])

    @on(DataTable.RowSelected, "#scenarios")
    def scenario_selected(self, event: DataTable.RowSelected) -> None:
        self.app.open_new_run(event.row_key.value)

    def action_results(self) -> None:
        scenarios_table = self.query_one("#scenarios", DataTable)
        if scenarios_table.has_focus:
            name = scenarios_table.coordinate_to_cell_key(scenarios_table.cursor_coordinate).row_key.value
        else:
            run_id = self._highlighted_run()
            if run_id is None:
                return
            name = self.app.run_view(run_id).run["scenario"]
        self.app.push_screen(ResultsScreen(name))

    def action_toggle_blind(self) -> None:
        self.app.blind = not self.app.blind
        self.reload()

    def action_play(self) -> None:
        if self.app.blind:
            self.notify("Playing shows the model: leave blind mode (b) first.", severity="warning")
            return
        run_id = self._highlighted_run()
        if run_id:
            self.app.continue_run(run_id)

    def action_new_run(self) -> None:
        table = self.query_one("#scenarios", DataTable)
        name = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value if table.has_focus else None
        self.app.open_new_run(name)
