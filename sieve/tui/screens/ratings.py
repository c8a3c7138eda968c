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
        Binding(
            "c",
            "control",
            "Control",
            id="ratings.control",
            tooltip="Ratings controlled for reply length, then for length and markdown, then raw only",
        ),
        Binding("escape", "app.pop_screen", "Back", id="ratings.back"),
    ]
    VOTERS = ("all", "humans", "judges")
    # What `c` steps through: the covariates of `sieve results --ratings --control …`, as LMArena controls for style.
    CONTROLS: tuple[tuple[str, ...], ...] = ((), ("length",), ("length", "markdown"))

    def __init__(self, scenario: str, criterion: str = "overall"):
        super().__init__()
        self.scenario = scenario
        self.criterion = criterion
        self.voters = "all"
        self.controls: tuple[str, ...] = ()
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

        board = leaderboard.leaderboard(
            self.app.db, self.scenario, self.criterion, "model", self.voters, controls=self.controls
        )
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
                *(_controlled(r) if self.controls else ()),
                str(r["votes"]),
                f"{r['wins']}/{r['ties']}/{r['losses']}",
                Text(one_line(r["stability"])),
                *(Text(one_line(r.get(c) or "")) for c in rubrics),
            )
            for group, group_rows in board["groups"].items()
            for n, r in enumerate(group_rows, start=1)
        ]
        controlled = ("controlled", "c. 95%") if self.controls else ()
        labels = ("voters", "#", "side", "rating", "95% interval", *controlled, "votes", "W/T/L", "stability", *rubrics)
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
                one_line(
                    f"{self.criterion}: "
                    + ", ".join(f"{g} {n} votes" for g, n in votes.items())
                    + f"; intervals on one scale from {lowest:.0f} to {highest:.0f} (Elo points, 95%, by pair); "
                    "people and judges fitted apart; card totals per rubric beside"
                    + _control_legend(board, self.controls)
                )
            )
        )

    def action_control(self) -> None:
        self.controls = self.CONTROLS[(self.CONTROLS.index(self.controls) + 1) % len(self.CONTROLS)]
        self.query_one("#legend", Static).update("Fitting the ratings…")
        self.fit()

    def action_voters(self) -> None:
        self.voters = self.VOTERS[(self.VOTERS.index(self.voters) + 1) % len(self.VOTERS)]
        self.query_one("#legend", Static).update("Fitting the ratings…")
        self.fit()


def _controlled(row: dict[str, Any]) -> tuple[str, str]:
    """The controlled rating and its interval; blank where the controlled fit has no place for the side."""
    if row.get("controlled") is None:
        return "", ""
    return f"{row['controlled']:.0f}", f"{row['controlled_low']:.0f} to {row['controlled_high']:.0f}"


def _control_legend(board: dict[str, Any], controls: tuple[str, ...]) -> str:
    """What the controlled columns hold, and each voter's length bias (Elo points for the longer reply) with its
    interval: the figure that says whether the control changed anything."""
    if not controls:
        return "; c: control for style"
    said = f"; controlled for {', '.join(board.get('covariates') or controls)} (c: next)"
    biases = []
    for bias in board.get("length_bias", []):
        if bias.get("length_bias_elo") is None:
            biases.append(f"{bias['voter']} n/a ({bias['decisive']} decisive)")
        else:
            noise = " (within noise)" if bias["low"] <= 0 <= bias["high"] else ""
            biases.append(
                f"{bias['voter']} {bias['length_bias_elo']:+.0f} ({bias['low']:+.0f} to {bias['high']:+.0f}){noise}"
            )
    return said + ("; length bias, Elo for the longer reply: " + ", ".join(biases) if biases else "")
