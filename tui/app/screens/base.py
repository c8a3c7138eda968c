"""What every screen of sieve shares: background work that fails visibly."""

from __future__ import annotations

from textual.screen import Screen

from sieve.tui.app.workers import ReportsWorkerErrors


class SieveScreen(ReportsWorkerErrors, Screen):
    """A screen whose workers' failures reach the user (see sieve.tui.app.workers)."""
