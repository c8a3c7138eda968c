"""The Ratings view: the same table as `sieve results --ratings`, each rating's interval drawn as a bar."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Header, Static

from sieve.safe_text import one_line
from sieve.tui.screens.base import SieveScreen
from sieve.tui.widgets.footer import SieveFooter

BAR = 30  # cells of the interval bar


def interval_bar(low: float, rating: float, high: float, lowest: float, highest: float, width: int = BAR) -> Text:
    """`──●───` placed on a scale shared by every row: the 95% interval as a line, the rating as a dot."""
    span = (highest - lowest) or 1.0

    def at(value: float) -> int:
        return max(0, min(width - 1, round((value - lowest) / span * (width - 1))))

    cells = [" "] * width
    for x in range(at(low), at(high) + 1):
        cells[x] = "─"
    cells[at(rating)] = "●"
    return Text("".join(cells))


class RatingsScreen(SieveScreen):
    """Bradley–Terry ratings with ties, people and judges side by side, from the scenario's pair judgments."""

    BINDINGS = [
        Binding("v", "voters", "Voters", id="ratings.voters", tooltip="People and judges, people only, judges only"),
        Binding("escape", "app.pop_screen", "Back", id="ratings.back"),
    ]
    VOTERS = ("all", "humans", "judges")

    def __init__(self, scenario: str, criterion: str = "overall"):
        super().__init__()
        self.scenario = scenario
        self.criterion = criterion
        self.voters = "all"
        self.board: dict[str, Any] | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Fitting the ratings…", id="legend")
        yield DataTable(id="ratings", cursor_type="row", zebra_stripes=True)
        yield SieveFooter()

    def on_mount(self) -> None:
        self.title = one_line(f"sieve · ratings · {self.scenario} · {self.criterion}")
        self.fit()

    @work(thread=True, exclusive=True, group="ratings", exit_on_error=False, description="Fitting the ratings")
    def fit(self) -> None:
        # In a thread: the bootstrap and the stability checks refit the model many times.
        from sieve.store.scoring import leaderboard

        board = leaderboard.leaderboard(self.app.db, self.scenario, self.criterion, "model", self.voters)
        self.app.call_from_thread(self.show, board)

    def show(self, board: dict[str, Any]) -> None:
        self.board = board
        table = self.query_one(DataTable)
        table.clear(columns=True)
        rubrics = board["rubrics"]
        rows = [r for group in board["groups"].values() for r in group]
        lowest = min((r["low"] for r in rows), default=1000.0)
        highest = max((r["high"] for r in rows), default=1000.0)
        blind = self.app.blind
        cells = [
            (
                group,
                str(n),
                Text("hidden" if blind else one_line(r["side"])),
                f"{r['rating']:.0f}",
                interval_bar(r["low"], r["rating"], r["high"], lowest, highest),
                str(r["votes"]),
                f"{r['wins']}/{r['ties']}/{r['losses']}",
                Text(one_line(r["stability"])),
                *(Text(one_line(r.get(c) or "")) for c in rubrics),
            )
            for group, group_rows in board["groups"].items()
            for n, r in enumerate(group_rows, start=1)
        ]
        labels = ("voters", "#", "side", "rating", "95% interval", "votes", "W/T/L", "stability", *rubrics)
        # Widths given, not measured: DataTable measures its cells when it is next idle, and a
        # table filled from a worker may be drawn before that, its names cut to the label's width.
        for i, label in enumerate(labels):
            width = max(
                [len(label), *(Text(c).cell_len if isinstance(c, str) else c.cell_len for c in (r[i] for r in cells))]
            )
            table.add_column(label, width=width)
        table.add_rows(cells)
        votes = {g: sum(r["votes"] for r in rs) // 2 for g, rs in board["groups"].items()}
        self.query_one("#legend", Static).update(
            Text(
                one_line(f"{self.criterion}: ")
                + ", ".join(f"{g} {n} votes" for g, n in votes.items())
                + f"; intervals on one scale from {lowest:.0f} to {highest:.0f} (Elo points, 95%, by pair); "
                "people and judges fitted apart; card totals per rubric beside"
            )
        )

    def action_voters(self) -> None:
        self.voters = self.VOTERS[(self.VOTERS.index(self.voters) + 1) % len(self.VOTERS)]
        self.query_one("#legend", Static).update("Fitting the ratings…")
        self.fit()
