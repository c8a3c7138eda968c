"""Keeping the collector out of the reviewer's way: what sieve does about Python's and Textual's memory.

A full collection walks every object the process holds. On a screen that loaded a
run of 500 turns, or a field of 300 runs, that is 60 ms and more, at moments no one
chooses (in the middle of a key press). Two things keep it short: what a screen
loaded is frozen once it is drawn (`settle_memory`), and nothing that is gone is
kept alive by a cache that forgets nothing (`forget_removed_widgets`).
"""

from __future__ import annotations

import gc


def settle_memory() -> None:
    """Collect everything (what was frozen before included), then freeze what is left so later full
    collections skip it. What was frozen and has become garbage since is freed here, at the latest."""
    forget_removed_widgets()
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def forget_removed_widgets() -> None:
    """Let widgets that were removed go, with all they drew.

    Textual memoises a pair of styles per widget's line cache, with the cache itself in the key
    (`StylesCache.get_inner_outer`, an lru_cache of 1,024), so a closed dialog's lines stay
    alive there until cleared; the pairs cost nothing to work out again (CHANGELOG: round 2).
    """
    try:  # a private part of Textual (textual>=8.2.8 is all pyproject asks): if it goes, so does the need
        from textual._styles_cache import StylesCache
    except ImportError:
        return
    clear = getattr(getattr(StylesCache, "get_inner_outer", None), "cache_clear", None)
    if clear is not None:
        clear()
