"""Sortable ids (ULIDs): 48 bits of milliseconds, then 80 random bits, Crockford base32.

Sorting ids sorts records by creation time, which is what a list of runs wants.
"""

from __future__ import annotations

import os
import threading
import time

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_lock = threading.Lock()
_last = (0, 0)


def new_id() -> str:
    """A new ULID; ids made in the same millisecond still sort in creation order."""
    global _last
    with _lock:
        millis = time.time_ns() // 1_000_000
        last_millis, last_random = _last
        if millis <= last_millis:
            millis, randomness = last_millis, last_random + 1
        else:
            randomness = int.from_bytes(os.urandom(10), "big")
        _last = (millis, randomness)
    value = (millis << 80) | (randomness & ((1 << 80) - 1))
    return "".join(_ALPHABET[(value >> shift) & 31] for shift in range(125, -1, -5))
