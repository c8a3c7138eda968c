"""Blind review: runs under neutral codes, and model and maker names masked in what is shown.

The key (which code is which run) stays in the database: a code is a hash of the
run id with a salt kept in this database's `meta` table. Masking keeps every
character's position (a name becomes a bar of the same length), so quotes
selected from masked text still point into the original.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import sqlite3
from collections.abc import Callable, Iterable

from sqlite_utils import Database

# Makers and model families a reply may name itself by (the seeds' field and the usual others).
# These are masked in any case:
NAMES = """
openai chatgpt gpt anthropic claude google gemini deepmind mistral mixtral qwen alibaba deepseek grok xai
cohere minimax reka upstage microsoft smollm huggingface kimi moonshot zhipu hunyuan tencent baidu mythomax
openrouter nvidia nemotron perplexity ai21 jamba xiaomi llama
""".split()
# These are ordinary words too ("in command", "a sonnet"): masked only when written
# with a capital, as a name is, or followed by a version number.
PROPER_NAMES = """
command solar phi nova titan liquid lfm meta opus sonnet haiku fable astra inkling weaver hermes nous sonar
bard yi glm ernie gemma mimo longcat pareto bedrock azure vertex amazon inflection
""".split()
MASK = "▒"
_STOP = {
    "the",
    "and",
    "chat",
    "instruct",
    "model",
    "latest",
    "preview",
    "free",
    "beta",
    "base",
    "turbo",
    "mini",
    "large",
    "small",
    "medium",
    "pro",
    "max",
    "plus",
    "lite",
    "fast",
    "her",
}


def code(db: Database, run_id: str) -> str:
    """The run's neutral code, the same every time in this database."""
    row = db.execute("SELECT value FROM meta WHERE key = 'blind_salt'").fetchone()
    if row is None:
        try:
            with db.atomic():
                db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('blind_salt', ?)", [secrets.token_hex(16)])
        except sqlite3.OperationalError:  # a read-only database: codes from the run's id alone
            row = ("",)
        row = row or db.execute("SELECT value FROM meta WHERE key = 'blind_salt'").fetchone()
    digest = hashlib.sha256((row[0] + run_id).encode()).hexdigest()
    return "run-" + digest[:6].upper()


def masker(identifiers: Iterable[str | None]) -> Callable[[str], str]:
    """A function that hides maker and model names, and the given identifiers' parts, keeping lengths."""
    words = set(NAMES)
    for identifier in identifiers:
        for part in re.split(r"[/:\s_.@-]+", (identifier or "").lower()):
            if len(part) >= 3 and not part.isdigit() and part not in _STOP:
                words.add(part)
        whole = (identifier or "").lower().split("/")[-1]
        if len(whole) >= 3:
            words.add(whole)
    version = r"(?:[-\s]?v?\d[\w.]*)"
    strong = "|".join(sorted((re.escape(w) for w in words), key=len, reverse=True))
    proper = "|".join(
        sorted(
            (re.escape(w.capitalize()) + "|" + re.escape(w.upper()) for w in PROPER_NAMES if w not in words),
            key=len,
            reverse=True,
        )
    )
    versioned = "|".join(re.escape(w) for w in PROPER_NAMES if w not in words)
    pattern = re.compile(
        rf"(?<![\w])(?:(?i:{strong}){version}?|(?:{proper}){version}?|(?i:{versioned}){version})(?![\w])"
    )

    def mask(text: str) -> str:
        return pattern.sub(lambda m: MASK * len(m.group()), text)

    return mask


def run_masker(db: Database, run_id: str) -> Callable[[str], str]:
    run = db.execute("SELECT model, endpoint FROM runs WHERE id = ?", [run_id]).fetchone()
    providers = [
        r[0]
        for r in db.execute("SELECT DISTINCT provider FROM turns WHERE run_id = ? AND provider IS NOT NULL", [run_id])
    ]
    return masker([run[0], run[1], *providers])
