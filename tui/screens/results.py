"""The Results screen: one row per run of a scenario, sortable by any column, and the step-aligned view.

The rows are the very rows `sieve results` prints (store.results.table), so the
screen and the CSV agree by construction, which a test checks all the same.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

import scenarios
from store import annotations as notes
from store import results
from store import turns as record
from store.blind import code as blind_code
from store.blind import run_masker

from store.scorecard import build_card

from ..safe_text import visible
from ..widgets import charts
from ..widgets.transcript import turn_title

HIDDEN_WHEN_BLIND = ("model", "provider", "cost")


class ResultsScreen(Screen):
    BINDINGS = [
        Binding("s", "sort", "Sort", id="results.sort", tooltip="Sort by the column under the cursor; again to reverse"),
        Binding("a", "aligned", "Step view", id="results.aligned", tooltip="Read every run's reply to one step, one after another"),
        Binding("c", "chart", "Charts", id="results.chart", tooltip="Rubric against rubric per run, and a heat map of items by runs"),
        Binding("enter", "review", "Review", id="results.review", tooltip="Score the highlighted run"),
        Binding("escape", "app.pop_screen", "Back", id="results.back"),
    ]

    DEFAULT_CSS = """
    ResultsScreen #table { height: 1fr; }
    ResultsScreen #legend { height: auto; color: $text-muted; padding: 0 1; }
    """

    def __init__(self, scenario_name: str, reviewer: str | None = None):
        super().__init__()
        self.scenario_name = scenario_name
        self.reviewer = reviewer
        self.headers: list[str] = []
        self.rows: list[dict[str, Any]] = []
        self.sorted_by: tuple[str, bool] | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield DataTable(id="table", cursor_type="cell", zebra_stripes=True)
        yield Static("", id="legend")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"sieve · results · {self.scenario_name}"
        self.load()
        self.query_one(DataTable).focus()

    def load(self) -> None:
        self.headers, self.rows = results.table(self.app.db, self.scenario_name, self.reviewer)
        if self.app.blind:
            self.headers = [h for h in self.headers if h not in HIDDEN_WHEN_BLIND]
        self.draw()
        documented = sum(1 for r in self.rows if r["status"] != "complete" or r["filtered"])
        agreed = results.agreement(self.app.db, self.scenario_name)
        legend = (
            f"{len(self.rows)} runs; {documented} stopped, failed or filtered (documented, not scored where nobody scored them). "
            "Totals are each reviewer's own, then their mean."
        )
        if agreed:
            legend += "\nagreement: " + "  ".join(f"{a['item']} {a['measure']} {a['value'] if a['value'] is not None else '-'}" for a in agreed)
        self.query_one("#legend", Static).update(legend)

    def cell(self, row: dict[str, Any], header: str) -> str:
        value = row.get(header)
        if header == "run":
            return blind_code(self.app.db, value) if self.app.blind else value
        if value is None:
            return "not scored" if header not in ("provider", "cost") and row["reviewers"] == 0 and header not in ("disqualified by",) else ""
        return str(value)

    def draw(self) -> None:
        table = self.query_one(DataTable)
        table.clear(columns=True)
        for header in self.headers:
            arrow = ""
            if self.sorted_by and self.sorted_by[0] == header:
                arrow = " ▼" if self.sorted_by[1] else " ▲"
            table.add_column(header + arrow, key=header)
        for row in self.rows:
            cells = []
            for header in self.headers:
                text = Text(visible(self.cell(row, header)))
                if header == "status" and row["status"] != "complete":
                    text.stylize("yellow")
                if header == "disqualified by" and row.get(header):
                    text.stylize("bold red")
                cells.append(text)
            table.add_row(*cells, key=row["run"])

    def action_sort(self) -> None:
        table = self.query_one(DataTable)
        header = self.headers[table.cursor_column]
        reverse = bool(self.sorted_by and self.sorted_by == (header, False))
        self.rows.sort(key=lambda r: results.sort_key(r.get(header)), reverse=reverse)
        self.sorted_by = (header, reverse)
        column = table.cursor_column
        self.draw()
        table.move_cursor(row=0, column=column)

    def highlighted_run(self) -> str | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    def action_review(self) -> None:
        run_id = self.highlighted_run()
        if run_id:
            self.app.open_review(run_id)

    def action_aligned(self) -> None:
        if not self.rows:
            return
        self.app.push_screen(StepAlignedScreen(self.scenario_name, [r["run"] for r in self.rows]))


    def action_chart(self) -> None:
        if self.rows:
            self.app.push_screen(ChartScreen(self.scenario_name, self.rows))


class ChartScreen(Screen):
    """Rubric against rubric (never summed into one number), and items by runs."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="chart.back")]
    DEFAULT_CSS = """
    ChartScreen VerticalScroll { padding: 0 1; }
    """

    def __init__(self, scenario_name: str, rows: list[dict[str, Any]]):
        super().__init__()
        self.scenario_name = scenario_name
        self.rows = rows

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll():
            yield Static("", id="scatter")
            yield Static("", id="heat")
        yield Footer()

    def on_mount(self) -> None:
        db = self.app.db
        self.title = f"sieve · charts · {self.scenario_name}"
        first = record.get_run(db, self.rows[0]["run"])
        scenario = scenarios.load_text(record.scenario_text(db, first["scenario_sha256"]), f"<snapshot>/{self.scenario_name}.toml")
        names = {r["run"]: (blind_code(db, r["run"]) if self.app.blind else r["model"]) for r in self.rows}
        if len(scenario.rubrics) >= 2:
            x, y = scenario.rubrics[0], scenario.rubrics[1]
            points = [
                (names[r["run"]], results.sort_key(r.get(x.id))[1], results.sort_key(r.get(y.id))[1])
                for r in self.rows
                if r.get(x.id) is not None and r.get(y.id) is not None
            ]
            title = Text(f"{x.id} {x.title} against {y.id} {y.title}, per run (each reviewer's mean)\n\n", style="bold")
            self.query_one("#scatter", Static).update(title + charts.scatter(points, x.item_maximum, y.item_maximum, x.id, y.id))
        else:
            self.query_one("#scatter", Static).display = False
        cards = {}
        for row in self.rows:
            active = notes.active(db, row["run"], self.app.reviewer)
            cards[row["run"]] = build_card(scenario, active) if active else None
        heading = Text(f"\nitems by runs: the scores of {self.app.reviewer}\n\n", style="bold")
        self.query_one("#heat", Static).update(heading + charts.heat_map(scenario, [(names[r["run"]], cards[r["run"]]) for r in self.rows]))


class StepAlignedScreen(Screen):
    """One scripted step, and every run's reply to it, one after another, with the scores given there."""

    BINDINGS = [
        Binding("n", "step(1)", "Next step", id="aligned.next"),
        Binding("p", "step(-1)", "Prev step", id="aligned.prev"),
        Binding("escape", "app.pop_screen", "Back", id="aligned.back"),
    ]

    DEFAULT_CSS = """
    StepAlignedScreen #step { height: auto; padding: 0 1; border-bottom: solid $secondary; }
    StepAlignedScreen #replies { height: 1fr; padding: 0 1; }
    StepAlignedScreen .reply-title { text-style: bold; color: $accent; margin-top: 1; }
    """

    def __init__(self, scenario_name: str, run_ids: list[str], step_index: int = 1):
        super().__init__()
        self.scenario_name = scenario_name
        self.run_ids = run_ids
        self.scenario: scenarios.Scenario | None = None
        self.steps: list[str] = []
        self.index = step_index

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="step")
        yield VerticalScroll(id="replies")
        yield Footer()

    def on_mount(self) -> None:
        db = self.app.db
        first = record.get_run(db, self.run_ids[0])
        self.scenario = scenarios.load_text(record.scenario_text(db, first["scenario_sha256"]), f"<snapshot>/{self.scenario_name}.toml")
        self.steps = [s.id for s in self.scenario.steps]
        self.title = f"sieve · step view · {self.scenario.title}"
        self.show()

    def action_step(self, delta: int) -> None:
        self.index = max(0, min(len(self.steps) - 1, self.index + delta))
        self.show()

    def replies_to(self, run_id: str, step_id: str) -> list[dict[str, Any]]:
        """The run's replies to every sending of the step (a filler is sent more than once)."""
        turns = record.chosen_turns(self.app.db, run_id)
        out = []
        for before, after in zip(turns, turns[1:]):
            if before["role"] == "user" and before["step_id"] == step_id and after["role"] == "assistant":
                out.append(after)
        return out

    def show(self) -> None:
        db = self.app.db
        step = self.scenario.step(self.steps[self.index])
        head = Text()
        head.append(f"step {self.index + 1} of {len(self.steps)}: {step.id}", style="bold")
        items = [i.id for r in self.scenario.rubrics for i in r.all_items() if step.id in i.steps]
        if items:
            head.append(f"   scored here: {' '.join(items)}", style="dim")
        head.append("\n" + visible(step.text[:600]))
        if step.note:
            head.append("\nnote: " + visible(step.note), style="italic")
        self.query_one("#step", Static).update(head)
        container = self.query_one("#replies", VerticalScroll)
        container.remove_children()
        widgets = []
        for run_id in self.run_ids:
            run = record.get_run(db, run_id)
            mask = run_masker(db, run_id) if self.app.blind else (lambda text: text)
            name = blind_code(db, run_id) if self.app.blind else run["model"]
            replies = self.replies_to(run_id, step.id)
            ids = {t["id"] for t in replies}
            given = [a for a in notes.active(db, run_id) if a["item"] in items or a["quote_turn_id"] in ids]
            scores = "  ".join(f"{a['item']} {a['score'] if a['score'] is not None else a['value'] or '+1'} ({a['reviewer']})" for a in given)
            title = Text(visible(f"{name} · {run['status']}"), style="bold")
            if scores:
                title.append("   " + visible(scores), style="cyan")
            widgets.append(Static(title, classes="reply-title"))
            if not replies:
                widgets.append(Static(Text("(no reply to this step)", style="dim")))
            for reply in replies:
                widgets.append(Static(Text(visible(turn_title(reply)), style="dim")))
                widgets.append(Static(Text(visible(mask(reply["text"])))))
        container.mount_all(widgets)
        container.scroll_home(animate=False)
