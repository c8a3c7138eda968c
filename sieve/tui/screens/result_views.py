"""What the Results screen opens beside its table: agreement per item, and the charts (rubric against rubric)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Header, Static

from sieve.safe_text import one_line, visible
from sieve.store.scoring import results
from sieve.store.scoring.runview import RunView
from sieve.tui.screens.base import SieveScreen
from sieve.tui.widgets import charts
from sieve.tui.widgets.footer import SieveFooter


class AgreementScreen(SieveScreen):
    """Per item: each model judge against the people, and beside it the people among themselves (the rows of
    `sieve results --agreement`)."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="agreement.back")]

    def __init__(self, scenario_name: str):
        super().__init__()
        self.scenario_name = scenario_name

    def compose(self) -> ComposeResult:
        yield Header()
        yield DataTable(id="agreement", cursor_type="row", zebra_stripes=True)
        yield Static("", id="agreement-legend")
        yield SieveFooter()

    def on_mount(self) -> None:
        self.title = one_line(f"sieve · agreement · {self.scenario_name}")
        table = self.query_one(DataTable)
        rows = results.agreement_table(results.agreement(self.app.db, self.scenario_name))
        for header in results.AGREEMENT_HEADERS:
            table.add_column(header, key=header)
        for row in rows:
            table.add_row(*(Text(visible(row[h])) for h in results.AGREEMENT_HEADERS))
        self.query_one("#agreement-legend", Static).update(
            "κw: weighted kappa (linear weights on the item's scale), a judge's pairs pooled over the people; "
            "α: Krippendorff's interval alpha, for three people or more. 95%: bootstrap over runs."
            if rows
            else "No item is scored by two reviewers yet (a judge and a person, or two people)."
        )
        table.focus()


class ChartScreen(SieveScreen):
    """Rubric against rubric (never summed into one number), and items by runs."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="chart.back")]

    def __init__(self, scenario_name: str, rows: list[dict[str, Any]], views: dict[str, RunView]):
        super().__init__()
        self.scenario_name = scenario_name
        self.rows = rows
        self.views = views

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll():
            yield Static("", id="scatter")
            yield Static("", id="heat")
        yield SieveFooter()

    def on_mount(self) -> None:
        self.title = one_line(f"sieve · charts · {self.scenario_name}")
        views = [self.views[r["run"]] for r in self.rows]
        scenario = views[0].scenario
        names = {v.id: v.name for v in views}
        if len(scenario.rubrics) >= 2:
            x, y = scenario.rubrics[0], scenario.rubrics[1]
            points = [
                (names[r["run"]], results.sort_key(r.get(x.id))[1], results.sort_key(r.get(y.id))[1])
                for r in self.rows
                if r.get(x.id) is not None and r.get(y.id) is not None
            ]
            title = Text(
                visible(f"{x.id} {x.title} against {y.id} {y.title}, per run (each reviewer's mean)") + "\n\n",
                style="bold",
            )
            self.query_one("#scatter", Static).update(
                title + charts.scatter(points, x.item_maximum, y.item_maximum, x.id, y.id)
            )
        else:
            self.query_one("#scatter", Static).display = False
        reviewer = self.app.reviewer
        cards = [(names[v.id], v.card(reviewer) if v.annotations(reviewer) else None) for v in views]
        heading = Text(visible(f"\nitems by runs: the scores of {reviewer}") + "\n\n", style="bold")
        self.query_one("#heat", Static).update(heading + charts.heat_map(scenario, cards))
