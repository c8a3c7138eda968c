"""Review: reading a run and scoring it, every quote verified as it is saved."""

from sieve.tui.screens.review.screen import ReviewScreen

__all__ = ["ReviewScreen"]
