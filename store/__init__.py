"""The record: the SQLite schema, runs and turns, annotations, judgments.

This package never imports Textual.
"""

from . import bundles, turns
from .db import DatabaseError, default_path, open_db, resolve_path
from .runs import create_run, list_runs, snapshot_scenario

__all__ = [
    "DatabaseError",
    "bundles",
    "turns",
    "create_run",
    "default_path",
    "list_runs",
    "open_db",
    "resolve_path",
    "snapshot_scenario",
]
