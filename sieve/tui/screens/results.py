"""The Results screen: one row per run of a scenario, sortable by any column, and the step-aligned view.

The rows are the very rows `sieve results` prints (store.results.table), so the
screen and the CSV agree by construction, which a test checks all the same.
"""

from __future__ import annotations

from typing import Any

from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Header, Static

from sieve.safe_text import one_line, visible
from sieve.store.record.rows import Annotation
from sieve.store.record.runs import activity
from sieve.store.scoring import blind as blinding
from sieve.store.scoring import extreme, results
from sieve.store.scoring.navigation import step_label
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import value_text
from sieve.tui.screens.base import SieveScreen
from sieve.tui.screens.comparisons import CompareScreen, ModelsScreen, SidePicker
from sieve.tui.screens.ratings import RatingsScreen
from sieve.tui.screens.result_views import AgreementScreen, ChartScreen
from sieve.tui.widgets.footer import SieveFooter
from sieve.tui.widgets.transcript import TranscriptView, turn_title


class ResultsScreen(SieveScreen):
    BINDINGS = [
        Binding(
            "s", "sort", "Sort", id="results.sort", tooltip="Sort by the column under the cursor; again to reverse"
        ),
        Binding(
            "P",
            "sort_progress",
            "By progress",
            id="results.sort_progress",
            tooltip="Sort by how much of each run is scored, least first; again for most first",
        ),
        Binding(
            "a",
            "aligned",
            "Step view",
            id="results.aligned",
            tooltip="Read every run's reply to one step, one after another",
        ),
        Binding(
            "c",
            "chart",
            "Charts",
            id="results.chart",
            tooltip="Rubric against rubric per run, and a heat map of items by runs",
        ),
        Binding(
            "g",
            "agreement",
            "Agreement",
            id="results.agreement",
            tooltip="Per item: each model judge against the people, beside the people among themselves",
        ),
        Binding(
            "R",
            "ratings",
            "Ratings",
            id="results.ratings",
            tooltip="Bradley–Terry ratings from the pair judgments, intervals drawn as bars, people and judges apart",
        ),
        Binding(
            "v",
            "voters",
            "Cards",
            id="results.voters",
            tooltip="People's cards or the model judges' (never pooled into one mean)",
        ),
        Binding(
            "m",
            "by_model",
            "By model",
            id="results.by_model",
            tooltip="Each model over its runs: mean, sd, a 95% interval, min–max; one run is a snapshot",
        ),
        Binding(
            "C",
            "compare",
            "Compare",
            id="results.compare",
            tooltip="Two models: the difference of their means with a 95% interval, p, and within noise or ahead",
        ),
        Binding("enter", "review", "Review", id="results.review", tooltip="Score the highlighted run"),
        Binding("escape", "app.pop_screen", "Back", id="results.back"),
    ]

    def __init__(self, scenario_name: str, reviewer: str | None = None):
        super().__init__()
        self.scenario_name = scenario_name
        self.reviewer = reviewer
        self.voters = "humans"  # people's cards; v shows the judges' (people and judges are never pooled)
        self.headers: list[str] = []
        self.rows: list[dict[str, Any]] = []
        self.views: dict[str, RunView] = {}
        self.sorted_by: tuple[str, bool] | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield DataTable(id="table", cursor_type="cell", zebra_stripes=True)
        yield Static("", id="legend")
        yield SieveFooter()

    def on_mount(self) -> None:
        self.title = one_line(f"sieve · results · {self.scenario_name}")
        self.load()
        self.query_one(DataTable).focus()
        # A signal, not a watch of the app's theme: a watch keeps the screen (and every run it
        # loaded) alive after it closes, until the theme next changes; a subscription ends here.
        self.app.theme_changed_signal.subscribe(self, lambda _: self._theme_changed())

    def on_unmount(self) -> None:
        self.app.theme_changed_signal.unsubscribe(self)

    def _theme_changed(self) -> None:
        table = self.query_one(DataTable)
        where = table.cursor_coordinate
        self.draw()
        table.cursor_coordinate = where

    def load(self) -> None:
        blind = self.app.blind
        views = RunView.of_scenario(self.app.db, self.scenario_name, blind=blind, viewer=self.app.reviewer)
        self.views = {v.id: v for v in views}
        # Blind, the reviewer's own cards only: another's scores are not theirs to see while they score.
        reviewer = self.app.reviewer if blind else self.reviewer
        self.headers, self.rows = results.table(self.app.db, self.scenario_name, reviewer, views, voters=self.voters)
        if blind:
            # Nothing that tells one run from another but the code (store.scoring.results.blind_rows). The rows keep
            # their run ids (the table's keys); the cells show the reviewer's codes.
            self.headers = results.blind_headers(self.headers)
            order = blinding.shuffled(self.app.db, self.views, self.app.reviewer)
            by_run = {r["run"]: r for r in self.rows}
            self.rows = [by_run[run_id] for run_id in order]
        self.draw()
        if blind:
            legend = (
                f"{len(self.rows)} runs under your codes, in your own order; your own cards only, and nothing else "
                "that tells one run from another (no model, status, replies or flags)."
            )
        else:
            documented = sum(1 for r in self.rows if r["status"] != "complete" or r["filtered"])
            legend = (
                f"{len(self.rows)} runs; {documented} stopped, failed or filtered (documented, not scored where nobody "
                "scored them). "
                + (
                    "People's cards only (v: the judges')"
                    if self.voters == "humans"
                    else "Model judges' cards only (v: people's)"
                )
                + ", each reviewer's own total, then their mean. g: agreement, model judges beside people."
            )
        self.query_one("#legend", Static).update(Text(visible(legend)))

    def cell(self, row: dict[str, Any], header: str) -> str:
        value = row.get(header)
        if header == "run":
            return self.views[row["run"]].name if self.app.blind else row["run"]
        if isinstance(value, list):  # the run's extreme flags
            return extreme.flag_text(value)
        if value is None:
            return (
                "not scored"
                if header not in ("provider", "cost") and row["reviewers"] == 0 and header not in ("disqualified by",)
                else ""
            )
        return str(value)

    def draw(self) -> None:
        table = self.query_one(DataTable)
        table.clear(columns=True)
        for header in self.headers:
            arrow = ""
            if self.sorted_by and self.sorted_by[0] == header:
                arrow = " ▼" if self.sorted_by[1] else " ▲"
            table.add_column(Text(one_line(header) + arrow), key=header)
        streaming = {r[0] for r in self.app.db.execute("SELECT DISTINCT run_id FROM turns WHERE status = 'streaming'")}
        # Colours from the theme's variables, so that they read in light themes too (the table is drawn again
        # when the theme changes). Rich Text, not Content: the table measures only Text to size its columns.
        colours = self.app.theme_variables
        warning, error = Style.parse(colours["text-warning"]), Style.parse(f"bold {colours['text-error']}")
        for row in self.rows:
            cells = []
            for header in self.headers:
                text = self.cell(row, header)
                if header == "status":  # what the run is doing: never `running` when nobody plays it
                    run = self.views[row["run"]].run
                    text = activity(run["status"], run.get("owner"), run["id"] in streaming)
                cell = Text(visible(text))
                if header == "status" and row["status"] != "complete":
                    cell.stylize(warning)
                if header == "disqualified by" and row.get(header):
                    cell.stylize(error)
                cells.append(cell)
            table.add_row(*cells, key=row["run"])

    def action_sort(self) -> None:
        self.sort_by(self.headers[self.query_one(DataTable).cursor_column])

    def action_sort_progress(self) -> None:
        self.sort_by("progress")

    def sort_by(self, header: str) -> None:
        """Sort by a column (progress: by how much is scored); the same column again reverses."""
        table = self.query_one(DataTable)
        reverse = bool(self.sorted_by and self.sorted_by == (header, False))
        self.rows = results.sort_rows(self.rows, header, reverse)
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

    @on(DataTable.CellSelected, "#table")
    def cell_selected(self) -> None:
        # The table takes enter for itself (to select the cell), so the screen's binding never sees it.
        self.action_review()

    def action_aligned(self) -> None:
        if not self.rows:
            return
        reviewer = self.app.reviewer if self.app.blind else None  # blind: their own scores, no run's status
        self.app.push_screen(StepAlignedScreen([self.views[r["run"]] for r in self.rows], reviewer=reviewer))

    def action_chart(self) -> None:
        if self.rows:
            self.app.push_screen(ChartScreen(self.scenario_name, self.rows, self.views))

    def action_agreement(self) -> None:
        self.app.push_screen(AgreementScreen(self.scenario_name))

    def action_ratings(self) -> None:
        self.app.push_screen(RatingsScreen(self.scenario_name))

    def action_voters(self) -> None:
        if self.app.blind:
            self.notify("blind: the table shows your own cards only", severity="warning")
            return
        self.voters = "judges" if self.voters == "humans" else "humans"
        self.load()
        self.notify(f"results: {'model judges' if self.voters == 'judges' else 'people'}'s cards", timeout=2)

    def _names_models(self) -> bool:
        if self.app.blind:
            self.notify("blind: these views name the models", severity="warning")
            return False
        return True

    def action_by_model(self) -> None:
        if self._names_models():
            self.app.push_screen(ModelsScreen(self.scenario_name, self.voters))

    def action_compare(self) -> None:
        if not self._names_models():
            return
        models = sorted({v.run["model"] for v in self.views.values() if v.run["status"] == "complete"})
        if len(models) < 2:
            self.notify("compare needs complete runs of two models", severity="warning")
            return

        def picked_b(a: str, b: str | None) -> None:
            if b is not None:
                self.app.push_screen(CompareScreen(self.scenario_name, a, b, self.voters))

        def picked_a(a: str | None) -> None:
            if a is not None:
                others = [m for m in models if m != a]
                self.app.push_screen(SidePicker(f"b: compare {a} against", others), lambda b: picked_b(a, b))

        self.app.push_screen(SidePicker("a: the first side", models), picked_a)


class StepAlignedScreen(SieveScreen):
    """One scripted step, and every run's reply to it, one after another, with the scores given there.

    Blind (`reviewer` given: the one who is looking), each reply is titled with its run's code and that
    reviewer's own scores only: no status, and no one else's scores, which would tell the runs apart.
    """

    BINDINGS = [
        Binding("n", "step(1)", "Next step", id="aligned.next"),
        Binding("p", "step(-1)", "Prev step", id="aligned.prev"),
        Binding("escape", "app.pop_screen", "Back", id="aligned.back"),
    ]

    def __init__(self, views: list[RunView], step_index: int = 1, *, reviewer: str | None = None):
        super().__init__()
        self.views = views
        self.blind_reviewer = reviewer
        self.scenario = views[0].scenario
        self.steps = [s.id for s in self.scenario.steps]
        self.index = step_index
        self.given: dict[str, list[Annotation]] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="step")
        yield TranscriptView(exact=False, id="replies")
        yield SieveFooter()

    def on_mount(self) -> None:
        self.title = one_line(f"sieve · step view · {self.scenario.title}")
        # What every run holds is read once; walking the steps only picks from it.
        self.given = {view.id: view.annotations(self.blind_reviewer) for view in self.views}
        self.show()

    def action_step(self, delta: int) -> None:
        self.index = max(0, min(len(self.steps) - 1, self.index + delta))
        self.show()

    def blocks(self, step_id: str, items: list[str]) -> list[dict[str, Any]]:
        """Every run's replies to the step, as the transcript's blocks, titled with the run and its scores."""
        out: list[dict[str, Any]] = []
        for view in self.views:
            replies = view.replies_to(step_id)
            ids = {t["id"] for t in replies}
            given = [a for a in self.given[view.id] if a["item"] in items or a["quote_turn_id"] in ids]
            if self.blind_reviewer is not None:  # their own scores: no name after each; no status
                scores = "  ".join(f"{a['item']} {value_text(a) or '+1'}" for a in given)
                head = view.name + (f"   your scores: {scores}" if scores else "")
            else:
                scores = "  ".join(f"{a['item']} {value_text(a) or '+1'} ({a['reviewer']})" for a in given)
                run = view.run
                doing = activity(run["status"], run.get("owner"), any(t["status"] == "streaming" for t in view.turns))
                head = f"{view.name} · {doing}" + (f"   {scores}" if scores else "")
            if not replies:
                out.append(
                    {
                        "id": f"{view.id}:none",
                        "idx": len(out),
                        "role": "system",
                        "status": "complete",
                        "text": "(no reply to this step)",
                        "title": head,
                    }
                )
            for reply in replies:
                title = f"{head} · {turn_title(reply)}"
                out.append(dict(reply, idx=len(out), text=view.mask(reply["text"]), title=title))
        return out

    def show(self) -> None:
        step = self.scenario.step(self.steps[self.index])
        head = Text()
        head.append(step_label(self.scenario, step.id), style="bold")  # as Play and Review number it
        items = [i.id for r in self.scenario.rubrics for i in r.all_items() if step.id in i.steps]
        if items:
            head.append(f"   scored here: {' '.join(items)}", style="dim")
        head.append("\n" + visible(step.text[:600]))
        if step.note:
            head.append("\nnote: " + visible(step.note), style="italic")
        self.query_one("#step", Static).update(head, layout=False)  # a fixed height: no layout
        replies = self.query_one("#replies", TranscriptView)
        replies.set_turns(self.blocks(step.id, items))
        replies.scroll_home(animate=False)
