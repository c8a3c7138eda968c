"""The Textual app: screens, widgets and their styles. The only part of sieve that imports Textual."""

from sieve.tui.app.sieve_app import SieveApp

__all__ = ["SieveApp"]
