"""The transcript's keys (Review's cursor and selection; in Play they scroll): by character, line, word and
sentence, with shift to select. `.`, `>` and ctrl+shift+←/→ work in a picker over Review too (pickers.py).
"""

from __future__ import annotations

from textual.binding import Binding, BindingType

KEYS: list[BindingType] = [
    Binding("left", "move(-1, 0)", "Left", show=False, id="transcript.left"),
    Binding("right", "move(1, 0)", "Right", show=False, id="transcript.right"),
    Binding("up", "move(0, -1)", "Up", show=False, id="transcript.up"),
    Binding("down", "move(0, 1)", "Down", show=False, id="transcript.down"),
    Binding("home", "line_edge(-1)", "Line start", show=False, id="transcript.home"),
    Binding("end", "line_edge(1)", "Line end", show=False, id="transcript.end"),
    Binding("shift+left", "move(-1, 0, True)", "Select left", show=False, id="transcript.select_left"),
    Binding("shift+right", "move(1, 0, True)", "Select right", show=False, id="transcript.select_right"),
    Binding("shift+up", "move(0, -1, True)", "Select up", show=False, id="transcript.select_up"),
    Binding("shift+down", "move(0, 1, True)", "Select down", show=False, id="transcript.select_down"),
    Binding("shift+home", "line_edge(-1, True)", "Select to line start", show=False, id="transcript.select_home"),
    Binding("shift+end", "line_edge(1, True)", "Select to line end", show=False, id="transcript.select_end"),
    Binding("ctrl+left", "word(-1)", "Word left", show=False, id="transcript.word_left"),
    Binding("ctrl+right", "word(1)", "Word right", show=False, id="transcript.word_right"),
    Binding(
        "ctrl+shift+left",
        "word(-1, True)",
        "Select a word left",
        show=False,
        id="transcript.select_word_left",
        tooltip="The selection a word shorter (or longer, leftwards)",
    ),
    Binding(
        "ctrl+shift+right",
        "word(1, True)",
        "Select a word right",
        show=False,
        id="transcript.select_word_right",
        tooltip="The selection a word longer, to the end of the next word (in a picker too)",
    ),
    Binding(
        "full_stop",
        "sentence",
        "Select the sentence",
        show=False,
        id="transcript.sentence",
        tooltip="Select the sentence under the cursor as the quote (in a picker too)",
    ),
    Binding(
        "greater_than_sign",
        "next_sentence",
        "Select the next sentence too",
        show=False,
        id="transcript.next_sentence",
        tooltip="The selection grows to the end of the next sentence (in a picker too)",
    ),
    Binding("pageup", "page(-1)", "Page up", show=False, id="transcript.page_up"),
    Binding("pagedown", "page(1)", "Page down", show=False, id="transcript.page_down"),
]
