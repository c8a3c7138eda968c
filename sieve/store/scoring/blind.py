"""Blind review: runs under neutral codes, and model and maker names masked in what is shown.

The key (which code is which run) stays in the database: a code is a hash of the
run id with a salt kept in this database's `meta` table. A code also depends on
who is looking (the reviewer) and where (a pair queue, a catch trial), so a code
seen on another reviewer's screen, in a queue, or in an earlier showing of the
same run cannot be matched to this one. The order in which a reviewer is shown
the runs is drawn the same way, from the salt and the reviewer. Masking keeps
every character's position (a name becomes a bar of the same length), so quotes
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
    # An endpoint's URL and name: its scheme, host words and the embedded model's name are not an identity, and
    # masking them would hide ordinary words of the story ("the local inn") from a blind reviewer.
    "http",
    "https",
    "www",
    "api",
    "com",
    "org",
    "net",
    "localhost",
    "local",
    "fake",
}


def salt(db: Database) -> str:
    """This database's secret for codes and orders, made the first time it is needed ("" if it cannot be written)."""
    row = db.execute("SELECT value FROM meta WHERE key = 'blind_salt'").fetchone()
    if row is None:
        try:
            with db.atomic():
                db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('blind_salt', ?)", [secrets.token_hex(16)])
        except sqlite3.OperationalError:  # a read-only database: codes from the run's id alone
            return ""
        row = db.execute("SELECT value FROM meta WHERE key = 'blind_salt'").fetchone()
    return str(row[0])


def _digest(secret: str, run_id: str, reviewer: str, context: str) -> str:
    if not reviewer and not context:
        return hashlib.sha256((secret + run_id).encode()).hexdigest()  # the codes sieve has always given
    return hashlib.sha256("\x00".join((secret, reviewer, context, run_id)).encode()).hexdigest()


def code(db: Database, run_id: str, reviewer: str = "", context: str = "") -> str:
    """The run's neutral code for this reviewer in this context (a pair queue, a catch trial), the same every time."""
    return "run-" + _digest(salt(db), run_id, reviewer, context)[:6].upper()


def codes(db: Database, run_ids: Iterable[str], reviewer: str = "", context: str = "") -> dict[str, str]:
    """Many runs' codes at once (the salt read once): run id -> code."""
    secret = salt(db)
    return {run_id: "run-" + _digest(secret, run_id, reviewer, context)[:6].upper() for run_id in run_ids}


def shuffled(db: Database, run_ids: Iterable[str], reviewer: str) -> list[str]:
    """The runs in this reviewer's own random order: fixed for them, unrelated to when a run was played or to
    another reviewer's order; a run added later takes its place without moving the others."""
    secret = salt(db)
    return sorted(run_ids, key=lambda run_id: _digest(secret, run_id, reviewer, "order"))


def masker(identifiers: Iterable[str | None]) -> Callable[[str], str]:
    """A function that hides maker and model names, and the given identifiers' parts, keeping lengths."""
    words = set(NAMES)
    for identifier in identifiers:
        for part in re.split(r"[/:\s_.@-]+", (identifier or "").lower()):
            if len(part) >= 3 and not part.isdigit() and part not in _STOP:
                words.add(part)
        # Each segment whole as well (a maker or model spelt with a hyphen: "vendor-x", "keeper-7b"); a host name's
        # parts are taken above, and a URL's scheme and path are no identity.
        for whole in re.split(r"/+", (identifier or "").lower()):
            whole = whole.strip(":")
            if len(whole) >= 3 and not re.search(r"[.:]", whole) and not whole.isdigit() and whole not in _STOP:
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
