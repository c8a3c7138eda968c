"""What every helper of Review asks of the screen it works for: to tell the reviewer something."""

from __future__ import annotations

from typing import Protocol

from textual.notifications import SeverityLevel


class Notifies(Protocol):
    def notify(
        self,
        message: str,
        *,
        title: str = ...,
        severity: SeverityLevel = ...,
        timeout: float | None = ...,
        markup: bool = ...,
    ) -> None: ...
