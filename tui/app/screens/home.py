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
from sieve.store.record.runs import list_runs
from sieve.store.scoring import blind as blinding
from sieve.store.scoring import field
from sieve.store.scoring.runview import RunView
from sieve.tui.app.screens.base import SieveScreen
from sieve.tui.app.screens.results import ResultsScreen
from sieve.tui.app.widgets.footer import SieveFooter

NO_RUNS = "No runs yet: press n to start one (the embedded model needs no API key)."
MODEL_WIDTH = 21  # so that a row's two lines keep the totals unclipped at 100 columns


def clipped(text: str, width: int) -> str:
    text = one_line(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def two_lines(first: str, second: str, style: str = "dim") -> Text:
    """A cell of two lines, the second dimmer: what a run is, then what goes with it."""
    cell = Text(first)
    cell.append("\n" + second, style=style)
    return cell


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
        self.run_ids: list[str] = []  # the run of each row of the table, in the order shown
        self.unfinished_only = False
        self.columns_blind: bool | None = None  # which set of columns the table has

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical():
            yield Static("Runs", classes="heading", id="runs-heading")
            yield Static(NO_RUNS, id="empty")
            yield DataTable(id="runs", cursor_type="row", zebra_stripes=True, header_height=2)
            yield Static("Scenarios   (enter: a new run of it)", classes="heading")
            yield DataTable(id="scenarios", cursor_type="row")
        yield SieveFooter()

    def on_mount(self) -> None:
        self.title = "sieve"
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
        self.query_one("#runs", DataTable).focus()

    def on_screen_resume(self) -> None:
        self.reload()

    def _columns(self, table: DataTable, blind: bool) -> None:
        """Each column holds two lines (the header says which): blind, only what cannot tell one run from another."""
        if self.columns_blind == blind:
            table.clear()
            return
        table.clear(columns=True)
        if blind:
            table.add_columns(two_lines("code", "scenario"), two_lines("status", "replies"))
        else:
            table.add_columns(
                two_lines("run", "scenario"),
                two_lines("model", "started · cost"),
                two_lines("status", "replies"),
            )
        table.add_column(two_lines("totals so far", "progress"))
        self.columns_blind = blind

    def reload(self) -> None:
        db = self.app.db
        blind = self.app.blind
        reviewer = self.app.reviewer
        self.sub_title = one_line(f"reviewer {reviewer}") + (
            " · BLIND (no model, time, tokens or cost)" if blind else ""
        )
        if self.app.blind_only:
            self.sub_title += " (blind only)"
        table = self.query_one("#runs", DataTable)
        self._columns(table, blind)
        runs = list_runs(db)
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
        shared: dict[tuple[str, str], Text] = {}  # cells many runs have alike (not scored, complete) made once

        def cell(first: str, second: str) -> Text:
            if (first, second) not in shared:
                shared[(first, second)] = two_lines(one_line(first), one_line(second))
            return shared[(first, second)]

        for view in shown:
            run, where = view.run, standing[view.id]
            scoring = cell(where.totals, where.progress)
            status = cell(run["status"], f"{run['replies']} replies")
            if blind:
                cells = [two_lines(names[view.id], one_line(run["scenario"])), status, scoring]
            else:
                cost = "" if run["cost"] is None else f" · ${run['cost']:.4f}"
                started = run["started"][5:16].replace("T", " ")
                cells = [
                    two_lines(view.id[-8:], one_line(run["scenario"])),
                    two_lines(clipped(run["model"], MODEL_WIDTH), started + cost),
                    status,
                    scoring,
                ]
            table.add_row(*cells, height=2)
        # Rows are keyed by position; the run ids are kept to find the highlighted one.
        self.run_ids = [view.id for view in shown]
        left = sum(1 for v in views if not standing[v.id].complete)
        heading = f"Runs: {len(views)}, {left} not finished by you"
        if self.unfinished_only:
            heading += "   (u: show every run)"
        else:
            heading += "   (u: only those)"
        self.query_one("#runs-heading", Static).update(Text(heading))
        empty = self.query_one("#empty", Static)
        empty.display = not shown
        if views and not shown:
            empty.update("You have finished every run: press u to see them all.")
        elif not views:
            empty.update(NO_RUNS)

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
