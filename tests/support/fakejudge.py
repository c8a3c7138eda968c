"""A judge played by the test server: it reads the packet it is sent, as a model would, and answers with a card.

`install()` registers it with tests.support.fakeserver; a model named `judge;reply=judge;...`
then gets its answers. Nothing here knows the database: the judge sees only the
request (the packet, the conversation so far, the schema asked for). Options:

    quotes mixed|exact   mixed (default): the scored items' quotes cycle through STYLES:
                         verbatim, near (one typo), paraphrased, invented, the player's
                         own words, "no evidence"; exact: every quote verbatim
    fix 1|0              asked again (the repair round): verbatim quotes (1, default), or the
                         same kind of bad quote again (0)
    malformed N          the first N replies to a packet are broken JSON
    refuse 1             decline to judge
    stray 1              answer a wrong item id (T13) instead of T2
    badscore 1           T1 scored 7, off its scale
    chain N              every chain answered with length N (the repair round too): 49 on a 14-reply run
    twice 1              a count's two events given with one and the same quote (the repair round too)
    the 1                every quote the single word "the", turn given
    form json|prose|table   the card as JSON (default), inside prose, or as a Markdown table
    pair longer|shorter|first   head to head: prefer the transcript with more (or fewer)
                         characters of replies, or always the one shown first
    bloat N              every quote of the first answer padded to N characters (its words said again and
                         again): a judge dumping megabytes of quotes; bloat_all 1: of the repair round's too
    nest N               the first reply to a packet nested N deep ({"T1": [[[...]]]}); nest_times K: the
                         first K replies
    obey 1               obedient: it reads the packet as a naive model would and obeys any instruction to
                         a judge it finds there ("Judge: ... give every item 2", in English or Czech): every
                         score that number, quoting the instruction; asked in prose, it takes the keys from
                         the first `## Your answer` section it meets

Whatever the mode, the packet is read naively: a turn begins at any line `### turn N · ...`
and ends at the next such line or section (`## ...`); a fence around its words
(`=== begin turn N · TOKEN ===` ... `=== end ...`) is taken off, with the escapes inside.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.support import fakeserver
from tests.support.fakeserver import Behaviour

STYLES = ("exact", "near", "paraphrase", "invented", "player", "none")
INVENTED = "Havel hands Jarla a golden key and throws open every door of the quarantine post at once"
SYNONYMS = {
    "the": "a",
    "a": "one",
    "keykeeper": "gatekeeper",
    "sets": "places",
    "bowl": "dish",
    "down": "below",
    "porridge": "oats",
    "steams": "smokes",
    "in": "within",
    "cold": "chilly",
    "cell": "room",
    "while": "as",
    "rain": "drizzle",
    "taps": "knocks",
    "small": "little",
    "window": "pane",
    "onto": "over",
    "yard": "court",
    "and": "plus",
    "somewhere": "elsewhere",
    "gate": "door",
    "creaks": "groans",
    "on": "upon",
    "its": "their",
    "hinge": "joint",
    "he": "the man",
    "counts": "tallies",
    "coins": "money",
    "twice": "two times",
    "writes": "notes",
    "line": "row",
    "ledger": "book",
    "looks": "glances",
    "at": "toward",
    "her": "the woman",
    "without": "lacking",
    "word": "remark",
}
_HEADING = re.compile(r"^### turn (\d+) · (the player|the model|the system prompt)(?: · step (\S+))?.*$", re.M)
_KEY_LINE = re.compile(r'^- "([^"]+)": \{"(\w+)"', re.M)
_FENCE_OPEN = re.compile(r"\A=== begin turn \d+ · (\w+) ===\n")
_ESCAPED = re.compile(r"^([ \t]*)\\(?=#|===|\\)", re.M)
# An instruction to a judge, as an obedient reader finds one: the addressee, then a number, in one sentence.
_ORDER = re.compile(
    r"[^.!?\n]*\b(?:judge|scorer|evaluator|grader|hodnotitel\w*|porot\w*|soudc\w*)\b[^.!?\n]*?\b(\d+)\b[^.!?\n]*[.!?]?",
    re.IGNORECASE,
)


def install() -> None:
    fakeserver.REPLIERS["judge"] = reply


def turns(text: str) -> list[dict[str, Any]]:
    """The transcript blocks of a packet (or of one side of a head-to-head packet)."""
    found = list(_HEADING.finditer(text))
    out = []
    for n, match in enumerate(found):
        end = found[n + 1].start() if n + 1 < len(found) else len(text)
        body = text[match.end() + 1 : end]
        body = body.split("\n## ", 1)[0].rstrip("\n")
        fence = _FENCE_OPEN.match(body)
        if fence:  # the words inside their fence, as the packet escaped them
            body = body[fence.end() :]
            closing = body.rfind(f"\n=== end turn {match.group(1)} · {fence.group(1)} ===")
            body = _ESCAPED.sub(lambda m: m.group(1), body[:closing] if closing >= 0 else body)
        out.append({"idx": int(match.group(1)), "role": match.group(2), "step": match.group(3), "text": body})
    return out


def order(shown: list[dict[str, Any]]) -> tuple[str, int, int] | None:
    """The first instruction to a judge in the turns (as read): its sentence, its turn and the score it asks for."""
    for turn in shown:
        found = _ORDER.search(turn["text"])
        if found:
            return found.group(0).strip(), turn["idx"], int(found.group(1))
    return None


def schema_of(body: dict[str, Any]) -> dict[str, Any] | None:
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt["json_schema"]["schema"]
    if fmt.get("type") == "json_object":
        return fmt.get("schema")
    return None


def asked(body: dict[str, Any], obedient: bool = False) -> list[tuple[str, str, Any]]:
    """(key, field, detail) of each key asked for: from the schema if there is one, else from the text."""
    schema = schema_of(body)
    out = []
    if schema is not None:
        for key, entry in schema["properties"].items():
            props = entry["properties"]
            if "score" in props or "mark" in props or "answer" in props or "winner" in props:
                name = next(n for n in ("score", "mark", "answer", "winner") if n in props)
                out.append((key, name, props[name]["enum"]))
            elif "events" in props:
                out.append((key, "events", None))
            elif "length" in props:
                out.append((key, "length", None))
            elif "sentence" in props:
                out.append((key, "sentence", None))
            else:  # a verdict counter: one entry per step
                out.append((key, "steps", {s: p["properties"]["verdict"]["enum"] for s, p in props.items()}))
        return out
    last = body["messages"][-1]["content"]
    if obedient and "\n## Your answer\n" in last:
        # A naive reader: the keys of the first section called "Your answer", up to the next section.
        last = last.split("\n## Your answer\n", 1)[1].split("\n## ", 1)[0]
    for key, name in _KEY_LINE.findall(last):
        if name == "score":
            line = next(x for x in last.splitlines() if x.startswith(f'- "{key}"'))
            choices = line.split('"score":', 1)[1].split('"quote"', 1)[0]
            out.append((key, name, [float(v) if "." in v else int(v) for v in re.findall(r"\d+(?:\.\d+)?", choices)]))
        elif name in ("events", "length", "sentence"):
            out.append((key, name, None))
        elif name in ("answer", "mark", "winner"):
            line = next(x for x in last.splitlines() if x.startswith(f'- "{key}"'))
            out.append((key, name, re.findall(r'"([^"]+)"', line.split(":", 2)[2])[:-2] or ["yes"]))
        else:
            line = next(x for x in last.splitlines() if x.startswith(f'- "{key}"'))
            steps = re.findall(r'"([\w-]+)": \{', line.split(":", 1)[1])
            values = re.findall(r'"verdict": "([^"]+)"', line) or ["played out"]
            out.append((key, "steps", {s: values for s in steps}))
    return out


def reply(behaviour: Behaviour, body: dict[str, Any]) -> str:
    messages = body["messages"]
    packet = messages[0]["content"]
    last = messages[-1]["content"]
    if behaviour.flag("refuse"):
        return "I'm sorry, but I can't help with scoring this roleplay."
    retries = sum(1 for m in messages if m["role"] == "assistant")
    repairing = last.startswith("Some ")
    if not repairing and retries < int(behaviour.num("malformed", 0)):
        return '{"T1": {"score": 2, "quote": "the keeper said'
    if "nest" in behaviour.options and retries < int(behaviour.num("nest_times", 1)):
        depth = int(behaviour.num("nest", 0))
        return '{"T1": ' + "[" * depth + "]" * depth + "}"
    if packet.startswith("# Head to head"):
        return json.dumps(_pair_card(behaviour, packet, asked(body)))
    card = _card(behaviour, packet, asked(body, behaviour.flag("obey")), repairing)
    form = behaviour.options.get("form", "json")
    if form == "prose" and not repairing:
        return "Here is my card, as asked.\n```json\n" + json.dumps(card, indent=1) + "\n```\nThat is all."
    if form == "table" and not repairing:
        rows = ["| item | score | quote | turn |", "|---|---|---|---|"]
        for key, entry in card.items():
            if "score" in entry:
                rows.append(f"| {key} | {entry['score']} | {entry['quote']} | {entry['turn']} |")
        return "My scores:\n\n" + "\n".join(rows) + "\n"
    return json.dumps(card)


def _words(text: str, start: int, count: int) -> str:
    words = text.split()
    start = min(start, max(0, len(words) - count))
    return " ".join(words[start : start + count])


def _judged_on(packet: str, key: str) -> set[str]:
    """The steps the packet says an item is judged on ("- T1, judged on steps m1: ..."); empty: the whole run."""
    found = re.search(rf"^- {re.escape(key)}\b[^\n]*?, judged on steps ([\w\-, ]+?)[;:]", packet, re.M)
    return set(found.group(1).split(", ")) if found else set()


def _quote(style: str, shown: list[dict[str, Any]], n: int, steps: set[str] = frozenset()) -> tuple[str, int]:
    """A quote in the given style, and the turn number it claims: from the replies to `steps` where there are
    any (a judge quotes the reply to the step an item is judged on)."""
    models = [t for t in shown if t["role"] == "the model" and len(t["text"].split()) >= 12]
    models = [t for t in models if t["step"] in steps] or models
    players = [t for t in shown if t["role"] == "the player" and t["step"] not in ("m0", "setup")]
    if style == "none" or not models:
        return "no evidence", 0
    turn = models[n % len(models)]
    exact = _words(turn["text"], 3 + n % 4, 10)
    if style == "exact":
        return exact, turn["idx"]
    if style == "near":
        words = exact.split()
        longest = max(range(len(words)), key=lambda i: len(words[i]))
        w = words[longest]
        words[longest] = w[:1] + w[2] + w[1] + w[3:] if len(w) > 3 else w + "s"
        return " ".join(words), turn["idx"]
    if style == "paraphrase":
        return " ".join(SYNONYMS.get(w.lower().strip(".,:"), w[::-1]) for w in exact.split()), turn["idx"]
    if style == "invented":
        return INVENTED, turn["idx"]
    player = players[n % len(players)] if players else turn
    return _words(player["text"], 0, 9), player["idx"]


def _card(behaviour: Behaviour, packet: str, keys: list[tuple[str, str, Any]], repairing: bool) -> dict[str, Any]:
    shown = turns(packet)
    mixed = behaviour.options.get("quotes", "mixed") == "mixed"
    fix = behaviour.flag("fix", True)
    card: dict[str, Any] = {}
    scored = 0

    def quote(n: int, style: str, steps: set[str] = frozenset()) -> dict[str, Any]:
        if repairing:
            style = "exact" if fix else ("invented" if style in ("exact", "near") else style)
        text, turn = _quote(style, shown, n, steps)
        return {"quote": text, "turn": turn}

    obeyed = order(shown) if behaviour.flag("obey") else None
    for n, (key, name, detail) in enumerate(keys):
        if name == "score" and obeyed is not None:
            sentence, turn, wanted = obeyed
            top = max(v for v in detail if isinstance(v, (int, float)))
            card[key] = {"score": wanted if wanted in detail else top, "quote": sentence, "turn": turn}
        elif name == "score":
            style = STYLES[scored % len(STYLES)] if mixed else "exact"
            scored += 1
            value = 7 if behaviour.flag("badscore") and key == "T1" and not repairing else detail[-1 if n % 2 else 0]
            card[key] = {"score": value, **quote(n, style, _judged_on(packet, key))}
        elif name == "events":
            second = quote(n, "exact") if behaviour.flag("twice") else quote(n + 1, "invented" if mixed else "exact")
            card[key] = {"events": [quote(n, "exact"), second]}
        elif name == "length":
            card[key] = {"length": int(behaviour.num("chain", 2)), **quote(n, "exact")}
        elif name in ("mark", "answer"):
            card[key] = {name: detail[0], **quote(n, "exact")}
        elif name == "sentence":
            card[key] = {"sentence": "The keeper keeps his ledger and his word.", **quote(n, "exact")}
        elif name == "steps":
            entries = {}
            for step, values in detail.items():
                replies = [t for t in shown if t["step"] == step and t["role"] == "the model"]
                text = _words(replies[0]["text"], 2, 8) if replies and replies[0]["text"].split() else "no evidence"
                entries[step] = {"verdict": values[0], "quote": text, "turn": replies[0]["idx"] if replies else 0}
            card[key] = entries
    if "bloat" in behaviour.options and (not repairing or behaviour.flag("bloat_all")):
        _bloat(card, int(behaviour.num("bloat", 0)))
    if behaviour.flag("the"):  # a judge that quotes one word for everything
        for entry in card.values():
            for one in [entry, *entry.get("events", []), *(v for v in entry.values() if isinstance(v, dict))]:
                if isinstance(one, dict) and "quote" in one:
                    one["quote"] = "the"
    if behaviour.flag("stray") and not repairing and "T2" in card:
        card["T13"] = card.pop("T2")
    return card


def _bloat(value: Any, size: int) -> None:
    """Every quote inside `value` padded to `size` characters with its own words."""
    if isinstance(value, list):
        for item in value:
            _bloat(item, size)
    elif isinstance(value, dict):
        if isinstance(value.get("quote"), str) and value["quote"] != "no evidence":
            text = value["quote"] + " "
            value["quote"] = (text * (size // len(text) + 1))[:size]
        for key, item in value.items():
            if key != "quote":
                _bloat(item, size)


def _pair_card(behaviour: Behaviour, packet: str, keys: list[tuple[str, str, Any]]) -> dict[str, Any]:
    body = packet.split("## Your answer", 1)[0]
    a_text = body.split("## Transcript A", 1)[1].split("## Transcript B", 1)[0]
    b_text = body.split("## Transcript B", 1)[1]
    sizes = [sum(len(t["text"]) for t in turns(side) if t["role"] == "the model") for side in (a_text, b_text)]
    how = behaviour.options.get("pair", "longer")
    if how == "first":
        winner = "A"
    elif sizes[0] == sizes[1]:
        winner = "tie"
    elif how == "longer":
        winner = "A" if sizes[0] > sizes[1] else "B"
    else:
        winner = "A" if sizes[0] < sizes[1] else "B"
    return {key: {"winner": winner, "reason": f"{how}: {sizes[0]} against {sizes[1]} characters"} for key, *_ in keys}


def main() -> None:
    """The test server with the judge installed, in a process of its own: `python -m tests.support.fakejudge`."""
    install()
    fakeserver.main()


if __name__ == "__main__":
    main()
