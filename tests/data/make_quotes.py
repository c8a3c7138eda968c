"""Build tests/data/quotes.json, the labelled quotes over tests/data/transcripts.json.

    python tests/data/make_quotes.py

The English transcripts were written by the embedded model; the Czech one
(transcripts_cs.json, run 2 here) by hand. The mechanical labels are cut
from them here with a fixed seed: exact spans; variants in case, quotes, dashes
and spacing; one or two typos; quotes cut short or joined by an ellipsis; the
player's own words. Paraphrases and invented quotes were written by hand after
reading the transcripts, and are listed below. The Czech quotes add the forms
Czech text comes in: decomposed (NFD) against composed (NFC) text and back, no-break
spaces typed as plain ones, and diacritics left out.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
PER_LABEL = 24

PARAPHRASES = {
    0: [
        "The sun was hot over the castle and the air smelled of incense and sandalwood.",
        "A man from the island touched Jarla's hand while the others worried about the coin.",
        "The castle was close to falling down and my people already knew about the plague.",
        "He had bright eyes and a little scarf over his shoulders, and the news shocked him.",
        "I told him this is not the way it used to be, but I am doing what is best for all of us.",
        "I gave him the benefit of the doubt and told Jake his boat work was great.",
        "When night fell I asked him to keep his cell quiet till the morning.",
        "He backed away while I told him to be careful about what he says.",
        "She said her mother passed away only a week ago.",
        "I was hungry so I stepped away from the window to get some food.",
        "I told my old man he was the only one who ever helped me in my whole life.",
        "They will never forgive you, the ones who stayed stuck with your family.",
    ],
    1: [
        "A villain with bright hair takes my coat as I get out of the car.",
        "She bends toward me, softly apologizing for everything that happened.",
        "He claims my sister is the person who murdered your mother.",
        "He says Viktor and his family are hiding somewhere in Austria.",
        "He hands over the silver ring and tells you to search for it on a powerful computer.",
        "He was crying in his cell in Vienna when he first looked at you.",
        "The man got up and said in a quiet voice that he couldn't believe it.",
        "He talked about a cruel king named Karl who was kind to a few of them.",
    ],
}

INVENTED = {
    0: [
        "Havel drops the letter into the brazier and watches it burn.",
        "The keykeeper counts three silver coins into his leather purse.",
        "You may not leave this cell until the surgeon has seen you.",
        "Jarla pries at the grate until the iron bends and a bar comes loose.",
        "The old man in the next cell coughs all through the night.",
        "I found a rusty key hidden under the plank bed.",
        "Your knife was taken from you on the first day, remember?",
        "The ferryman waits at the ford for the debt your sister owes.",
        "Rain hammers the yard and the gate creaks in the wind.",
        "Havel writes the third violation in his ledger without a word.",
        "The surgeon declares her healthy and opens the heavy door.",
        "No such agreement was ever made between us, traveller.",
    ],
    1: [
        "The briefcase stays locked to my wrist no matter how hard you pull.",
        "Helvetia? I have never heard that name in my life.",
        "The train brakes and the carriage goes dark for a moment.",
        "You said you boarded in Brno, not in Vienna.",
        "Viktor grips the handle and yanks her back toward the seat.",
        "Samples of Tokaji, madam, nothing more.",
        "The cuff is steel and the key never leaves my pocket.",
        "Who sent you, and what do you want with this case?",
    ],
}


CZECH_PARAPHRASES = [
    "Havel ani nepohlédne na peníze a vrátí je dívce, protože klíč se koupit nedá.",
    "Strážce tvrdí, že v den svatého Martina byl nemocný a u brány stál jeho synovec.",
    "Podá jí šátek, ale bránu neotevře, dokud nebude ráno, a pak ji pustí mezi prvními.",
    "Bez dopisu s pečetí od purkrabího mu nic neotevře, slov už slyšel dost.",
    "Pravidla sepsal dávno starý pán a Havel se jich drží celé dvě desítky let.",
    "Venku leje a na dvoře je slyšet jen voda, co kape ze střechy do louží.",
]
CZECH_INVENTED = [
    "Havel se rozesměje, schová minci do kapsy a bez řečí odemkne malou branku.",
    "„Vaše matka tu byla včera a nechala pro vás vzkaz,“ řekne strážce.",
    "Na hradbách troubí hlásný a na nádvoří se sbíhají vojáci s pochodněmi.",
    "Strážce vytáhne z truhly starou mapu podzemních chodeb pod hradem.",
    "Jarla mu podá dopis s pečetí a Havel ho dlouho čte u svíčky.",
    "„Klíč jsem ztratil už před týdnem,“ přizná Havel a zčervená.",
]
CZECH_PER_LABEL = 10


def spans(rng: random.Random, text: str, words: tuple[int, int]) -> str:
    tokens = list(re.finditer(r"\S+", text))
    n = rng.randint(*words)
    if len(tokens) <= n:
        return text.strip()
    start = rng.randrange(0, len(tokens) - n)
    return text[tokens[start].start() : tokens[start + n - 1].end()]


def variant(rng: random.Random, quote: str) -> str:
    out = quote.replace('"', "\u201c", 1).replace('"', "\u201d", 1).replace("'", "\u2019")
    out = out.replace(" - ", " \u2014 ")
    out = re.sub(r" ", lambda m: rng.choice([" ", "  ", "\n", " "]), out)
    return out.upper() if rng.random() < 0.5 else out.lower()


def typo(rng: random.Random, quote: str, count: int) -> str:
    chars = list(quote)
    letters = [i for i, c in enumerate(chars) if c.isalpha() and 0 < i < len(chars) - 1]
    for i in sorted(rng.sample(letters, count), reverse=True):
        kind = rng.choice(["swap", "drop", "replace"])
        if kind == "swap" and chars[i + 1].isalpha():
            chars[i], chars[i + 1] = chars[i + 1], chars[i]
        elif kind == "drop":
            del chars[i]
        else:
            chars[i] = rng.choice([c for c in "aeioustrnl" if c != chars[i].lower()])
    return "".join(chars)


def main() -> None:
    data = json.loads((HERE / "transcripts.json").read_text(encoding="utf-8"))
    rng = random.Random(2026)
    quotes = []
    for run_index, run in enumerate(data["runs"]):
        model = [t for t in run["turns"] if t["role"] == "assistant" and len(t["text"].split()) > 30]
        player = [t for t in run["turns"] if t["role"] == "user" and len(t["text"].split()) > 12]
        per_run = PER_LABEL // len(data["runs"])

        def add(label: str, quote: str, turn: dict | None, source: str | None) -> None:
            quotes.append({"run": run_index, "label": label, "quote": quote, "turn": turn["idx"] if turn else None, "source": source})

        for _ in range(per_run):
            turn = rng.choice(model)
            add("exact", spans(rng, turn["text"], (4, 18)), turn, None)
        for _ in range(per_run):
            turn = rng.choice(model)
            source = spans(rng, turn["text"], (6, 16))
            add("variant", variant(rng, source), turn, source)
        for n in range(per_run):
            turn = rng.choice(model)
            source = spans(rng, turn["text"], (9, 20))
            add("typo", typo(rng, source, 1 + n % 2), turn, source)
        for n in range(per_run):
            turn = rng.choice(model)
            source = spans(rng, turn["text"], (14, 30))
            words = source.split(" ")
            if n % 2:  # joined by an ellipsis: the middle left out
                cut = len(words) // 3
                quote = " ".join(words[:cut]) + rng.choice([" … ", " ... ", "… "]) + " ".join(words[-cut:])
            else:  # cut short at both ends
                quote = "..." + " ".join(words[2:-2]) + "…"
            add("cut", quote, turn, source)
        for _ in range(per_run):
            turn = rng.choice(player)
            add("player", spans(rng, turn["text"], (5, 12)), turn, None)
        for text in PARAPHRASES[run_index]:
            add("paraphrase", text, None, None)
        for text in INVENTED[run_index]:
            add("invented", text, None, None)
    quotes += czech(len(data["runs"]))
    quotes += negated(data["runs"])
    (HERE / "quotes.json").write_text(json.dumps(quotes, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{len(quotes)} quotes written")


def czech(run_index: int) -> list[dict]:
    """The Czech run's quotes, with a seed of their own (the English ones stay as they were)."""
    import unicodedata

    run = json.loads((HERE / "transcripts_cs.json").read_text(encoding="utf-8"))["runs"][0]
    rng = random.Random(420)
    model = [t for t in run["turns"] if t["role"] == "assistant"]
    player = [t for t in run["turns"] if t["role"] == "user" and len(t["text"].split()) > 12]
    quotes = []

    def add(label: str, quote: str, turn: dict | None, source: str | None) -> None:
        quotes.append({"run": run_index, "label": label, "quote": quote, "turn": turn["idx"] if turn else None, "source": source})

    def accented(words: tuple[int, int]) -> tuple[dict, str]:
        while True:
            turn = rng.choice(model)
            source = spans(rng, turn["text"], words)
            if not unicodedata.is_normalized("NFC", source) or not source.isascii():
                return turn, source

    for _ in range(CZECH_PER_LABEL):
        turn = rng.choice(model)
        add("exact", spans(rng, turn["text"], (4, 18)), turn, None)
    for _ in range(CZECH_PER_LABEL):  # plain spaces for no-break ones, straight quotes, case
        turn = rng.choice(model)
        source = spans(rng, turn["text"], (6, 16))
        add("variant", variant(rng, source.replace("\u00a0", " ").replace("\u202f", " ").replace("\u00ad", "")), turn, source)
    for _ in range(CZECH_PER_LABEL):  # the other Unicode form: NFD of a composed turn, NFC of the decomposed one
        turn, source = accented((4, 18))
        form = "NFC" if unicodedata.is_normalized("NFD", source) else "NFD"
        add("decomposed", unicodedata.normalize(form, source), turn, source)
    for _ in range(CZECH_PER_LABEL):  # typed without diacritics
        turn, source = accented((5, 18))
        bare = "".join(c for c in unicodedata.normalize("NFD", source) if not unicodedata.combining(c))
        add("diacritics", bare, turn, source)
    for n in range(CZECH_PER_LABEL):
        turn = rng.choice(model)
        source = spans(rng, turn["text"], (9, 20))
        add("typo", unicodedata.normalize("NFC", typo(rng, unicodedata.normalize("NFC", source), 1 + n % 2)), turn, source)
    for n in range(CZECH_PER_LABEL):
        turn = rng.choice(model)
        words = spans(rng, turn["text"], (14, 30)).split(" ")
        if n % 2:
            cut = len(words) // 3
            quote = " ".join(words[:cut]) + rng.choice([" … ", " ... ", "… "]) + " ".join(words[-cut:])
        else:
            quote = "..." + " ".join(words[2:-2]) + "…"
        add("cut", quote, turn, " ".join(words))
    for _ in range(CZECH_PER_LABEL):
        turn = rng.choice(player)
        add("player", spans(rng, turn["text"], (5, 12)), turn, None)
    for text in CZECH_PARAPHRASES:
        add("paraphrase", text, None, None)
    for text in CZECH_INVENTED:
        add("invented", text, None, None)
    return quotes


ENGLISH_FLIPS = [
    (r"\b(is|was|are|were|can|will|would|could|did|do|does|has|had|should)\b", r"\1 not"),
]
ENGLISH_UNDO = [(r"\b(not|never) ", ""), (r"n't\b", ""), (r"\bno\b", "some")]
# Czech verbs of the hand-written run and their other polarity (ne- on or off), and negating words to drop.
CZECH_FLIPS = {
    "otevřu": "neotevřu", "pustím": "nepustím", "prší": "neprší", "vstane": "nevstane", "řekne": "neřekne",
    "svírá": "nesvírá", "nepodívá": "podívá", "neprodává": "prodává", "nezačnu": "začnu", "neotvírá": "otvírá",
    "nenechávají": "nechávají", "otevřel": "neotevřel", "mlčí": "nemlčí", "Nikdy jsem": "Jsem",
    "žádný ": "", "Žádná výjimka neplatí": "Výjimka platí", "není": "je", "nic neříká": "něco říká",
}


def negated(english: list[dict]) -> list[dict]:
    """Quotes with a negation added or removed (the meaning reversed), in both languages: altered."""
    import unicodedata

    rng = random.Random(77)
    quotes = []
    for run_index, run in enumerate(english):
        model = [t for t in run["turns"] if t["role"] == "assistant" and len(t["text"].split()) > 30]
        while sum(q["run"] == run_index for q in quotes) < 8:
            turn = rng.choice(model)
            source = spans(rng, turn["text"], (8, 18))
            for pattern, repl in ENGLISH_UNDO + ENGLISH_FLIPS:
                flipped = re.sub(pattern, repl, source, count=1)
                if flipped != source:
                    quotes.append({"run": run_index, "label": "negated", "quote": flipped, "turn": turn["idx"], "source": source})
                    break
    czech_run = json.loads((HERE / "transcripts_cs.json").read_text(encoding="utf-8"))["runs"][0]
    model = [t for t in czech_run["turns"] if t["role"] == "assistant"]
    while sum(q["run"] == len(english) for q in quotes) < 10:
        turn = rng.choice(model)
        source = unicodedata.normalize("NFC", spans(rng, turn["text"], (6, 16)))
        for word, other in CZECH_FLIPS.items():
            if word in source:
                quote = source.replace(word, other, 1)
                quotes.append({"run": len(english), "label": "negated", "quote": quote, "turn": turn["idx"], "source": source})
                break
    return quotes


if __name__ == "__main__":
    main()
