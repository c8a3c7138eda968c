"""How sure the figures are: each model as a distribution over its runs, and two models compared.

The rows are the very rows `sieve results --by model` and `sieve compare` print
(store.scoring.comparison), so the screens and the commands agree by construction.
Both name models, so neither opens in a blind review.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Header, Label, OptionList, Static
from textual.widgets.option_list import Option

from sieve.safe_text import one_line, visible
from sieve.store.scoring import comparison
from sieve.store.scoring.comparison import COMPARE_HEADERS, compare_cells
from sieve.tui.screens.base import SieveScreen
from sieve.tui.widgets.footer import SieveFooter

VOTERS = {"humans": "people's cards", "judges": "judges' cards"}
MODEL_HEADERS = ["model", "figure", "runs", "mean", "sd", "95% interval", "min–max", "note"]


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


class ModelsScreen(SieveScreen):
    """One row per model and rubric (and item): runs, mean, sd, a 95% interval, min–max."""

    BINDINGS = [
        Binding("i", "items", "Items", id="models.items", tooltip="Show every item too, or only the rubrics"),
        Binding("escape", "app.pop_screen", "Back", id="models.back"),
    ]

    def __init__(self, scenario: str, voters: str = "humans"):
        super().__init__()
        self.scenario = scenario
        self.voters = voters
        self.items = False
        self.rows: list[dict[str, Any]] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield DataTable(id="models", cursor_type="row", zebra_stripes=True)
        yield Static("", id="models-legend")
        yield SieveFooter()

    def on_mount(self) -> None:
        self.title = one_line(f"sieve · by model · {self.scenario} · {VOTERS[self.voters]}")
        self.load()
        self.query_one(DataTable).focus()

    def load(self) -> None:
        self.rows = comparison.by_model(self.app.db, self.scenario, self.voters, self.items)
        table = self.query_one(DataTable)
        table.clear(columns=True)
        for header in MODEL_HEADERS:
            table.add_column(header, key=header)
        for r in self.rows:
            cells = [
                r["model"],
                r["figure"],
                str(r["runs"]),
                _number(r["mean"]),
                _number(r["sd"]),
                f"{_number(r['low'])} to {_number(r['high'])}",
                f"{r['min']:g}–{r['max']:g}",
                r["note"],
            ]
            table.add_row(*(Text(visible(c)) for c in cells))
        self.query_one("#models-legend", Static).update(
            "Each model's complete runs: the mean (each evaluator's own first), the run-to-run sd, a 95% interval "
            "(bootstrap over runs, widened for few runs, never narrower than Student's t). One run is a snapshot."
            if self.rows
            else "No complete run is scored by these cards yet."
        )

    def action_items(self) -> None:
        self.items = not self.items
        self.load()


class SidePicker(ModalScreen[str | None]):
    """Pick a model for a side of the comparison."""

    BINDINGS = [Binding("escape", "dismiss_none", "Back", id="side.back")]

    def __init__(self, heading: str, models: list[str]):
        super().__init__()
        self.heading = heading
        self.models = models

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(visible(self.heading)))
            yield OptionList(*[Option(Text(one_line(m)), id=m) for m in self.models], id="sides")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    @on(OptionList.OptionSelected, "#sides")
    def chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class CompareScreen(SieveScreen):
    """Side a against side b: the rows of `sieve compare`, each with its interval, p and status."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="compare.back")]

    def __init__(self, scenario: str, a: str, b: str, voters: str = "humans"):
        super().__init__()
        self.scenario = scenario
        self.a, self.b = a, b
        self.voters = voters
        self.result: dict[str, Any] | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Comparing…", id="compare-legend")
        yield DataTable(id="compare", cursor_type="row", zebra_stripes=True)
        yield SieveFooter()

    def on_mount(self) -> None:
        self.title = one_line(f"sieve · compare · {self.scenario} · {VOTERS[self.voters]}")
        self.compare()

    @work(thread=True, exclusive=True, group="compare", exit_on_error=False, description="Comparing the sides")
    def compare(self) -> None:
        result = comparison.compare(self.app.db, self.scenario, self.a, self.b, self.voters)
        self.app.call_from_thread(self.show, result)

    def show(self, result: dict[str, Any]) -> None:
        self.result = result
        table = self.query_one(DataTable)
        table.clear(columns=True)
        for header in COMPARE_HEADERS:
            table.add_column(header, key=header)
        for row in result["rows"]:
            table.add_row(*(Text(visible(c)) for c in compare_cells(row)), key=row["figure"])
        legend = (
            f"a: {self.a} ({len(result['a_runs'])} runs)   b: {self.b} ({len(result['b_runs'])} runs)   "
            "difference a - b, 95% bootstrap interval over runs; within noise when it includes 0"
        )
        notes = "   ".join(result["notes"])
        self.query_one("#compare-legend", Static).update(Text(visible(legend + ("\n" + notes if notes else ""))))
        table.focus()
