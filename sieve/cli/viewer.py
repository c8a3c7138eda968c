"""Who is looking at the command line, and how runs are named to them: by id, or, for a reviewer who reviews
blind only (`blind = true` under [reviewer] in the config), by their own codes, with every model, maker,
endpoint, provider and date masked, in what a command prints and in its errors.

A blind reviewer names runs by the codes `sieve runs` shows them (`run-3FA9C1`), and by nothing else: an
id, whole or in part, is refused (it would map an id to its code); an unknown or ambiguous code is
answered in codes, never with a list of runs. Ids are never shown to them: a ULID says when a run was
played.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any

from sieve.errors import NotFound, SieveUsageError

if TYPE_CHECKING:
    from sqlite_utils import Database

# A ULID (26 characters of Crockford base32, the first saying when it was made) or the short id Home shows.
_ULID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b")
_CODE = re.compile(r"^(?:run-)?([0-9A-Fa-f]{6})$")
MASK = "▒"


class Viewer:
    """How one person at the command line sees the runs of one database."""

    def __init__(self, db: Database, name: str, blind: bool, config_path: Any = None):
        self.db = db
        self.name = name
        self.blind = blind
        self.config_path = config_path

    # -- naming runs -------------------------------------------------------------------------

    @cached_property
    def codes(self) -> dict[str, str]:
        """Every run's code for this reviewer (blind.codes), run id -> code."""
        from sieve.store.scoring import blind as blinding

        ids = [row[0] for row in self.db.execute("SELECT id FROM runs").fetchall()]
        return blinding.codes(self.db, ids, self.name)

    def label(self, run_id: str) -> str:
        """How a run is named to this person in full: its id, or their code for it."""
        return self.codes.get(run_id, run_id) if self.blind else run_id

    def short(self, run_id: str) -> str:
        """How a run is named in a table: Home's short id, or the code."""
        return self.codes.get(run_id, run_id) if self.blind else run_id[-8:]

    def order(self, run_ids: list[str]) -> list[str]:
        """Runs in the order this person sees them: as given, or (blind) in their own shuffle, which says nothing
        of when a run was played."""
        if not self.blind:
            return run_ids
        from sieve.store.scoring import blind as blinding

        return blinding.shuffled(self.db, run_ids, self.name)

    def run_id(self, given: str) -> str:
        """The run `given` names: an id or a unique part of one; for a blind reviewer, their code for it too.
        Errors name no run but in codes."""
        from sieve.store.record.runs import find_run

        if not self.blind:
            return find_run(self.db, given)
        # Blind, a run is named by its code alone. An id (whole, or a part of one) is refused whether or not a run
        # has it, in the same words either way: taking one would tell the reviewer which code a known id has, and
        # the answer to one that is unknown whether it exists.
        wanted = _CODE.match(given.strip())
        if not wanted:
            # Not echoed: what is typed could be an id, and errors are scrubbed into codes (`scrub`).
            raise SieveUsageError(
                f"a run is named by a code such as run-3FA9C1: {self.name} reviews blind only, so name a run by "
                "your code for it (`sieve runs` lists them), never by its id"
            )
        code = "run-" + wanted.group(1).upper()
        found = [run for run, its in self.codes.items() if its == code]
        if len(found) > 1:
            raise SieveUsageError(f"{code} names more than one of your runs: open them from `sieve runs`")
        if not found:
            raise NotFound(f"none of your runs has the code {given.strip()} (`sieve runs` lists your codes)")
        return found[0]

    # -- what must not be seen ---------------------------------------------------------------

    @cached_property
    def mask(self) -> Callable[[str], str]:
        """Hides the model, endpoint and providers of every run (and the makers' names) in a text."""
        from sieve.store.scoring import blind as blinding

        names: list[str | None] = []
        for model, endpoint in self.db.execute("SELECT DISTINCT model, endpoint FROM runs").fetchall():
            names += [model, endpoint]
        names += [p for (p,) in self.db.execute("SELECT DISTINCT provider FROM turns WHERE provider IS NOT NULL")]
        return blinding.masker(names)

    def scrub(self, text: str) -> str:
        """A text as a blind reviewer may see it: run ids as codes, other ids and dates masked, names masked.
        The identity when the person is not blind."""
        if not self.blind or not text:
            return text
        for run_id, code in self.codes.items():
            if run_id in text:
                text = text.replace(run_id, code)
            if run_id[-8:] in text:
                text = text.replace(run_id[-8:], code)
        text = _ULID.sub(lambda m: MASK * len(m.group()), text)
        text = _DATE.sub(lambda m: MASK * len(m.group()), text)
        return self.mask(text)

    def refuse(self, what: str) -> None:
        """Stop a command this person may not run while they review blind only, saying why."""
        if self.blind:
            where = f" in {self.config_path}" if self.config_path else ""
            raise SieveUsageError(f"{self.name} reviews blind only (blind = true under [reviewer]{where}): {what}")
