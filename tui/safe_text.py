"""Making text safe to print: model and user text is data, never terminal control."""

from __future__ import annotations

import re

# C0 controls except tab and newline, DEL, and the C1 range (which includes
# the 8-bit CSI, 0x9b). ESC is among them, so no escape sequence survives.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """`text` with every control character shown as an escape (\\x1b), harmless to print."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
