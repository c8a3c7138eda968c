"""Czech for the detectors: the out-of-game cues, the player's character's name in its cases, and the verbs that
make her act or speak, in the third person and in the narrator's second person.

The seeds' tests were played in Czech. Czech drops the subject ("Povzdechne si a řekne: …" is she, after a
sentence naming her), declines names (Jarla, Jarly, Jarle, Jarlu, Jarlou, Jarlo: only the first is the one
who acts), and marks the person on the verb (položí she puts, položíš you put), so the English rules do not
carry over: these do. Everything is matched on lower-cased text, whose offsets are the original's.
"""

from __future__ import annotations

import re

from sieve.store.scoring.detectors.base import Cues

# -- out-of-game ------------------------------------------------------------------------------

# Heard even inside quotes: no character of a scene says these.
ALWAYS = Cues(
    [
        (r"\bmimo (?:hru|postavu|roli|příběh)\b", 1.0, "OOC", ("mimo",)),
        (
            r"\bjako (?:ai|umělá inteligence|jazykový model|asistent|chatbot)\b",
            1.0,
            "being an AI",
            ("jako",),
        ),
        (
            r"\bjazykov\w* model\w*|\bjsem (?:jen |pouze )?(?:ai|umělá inteligence|asistent|chatbot|bot)\b",
            1.0,
            "an AI",
            ("jazykov", "jsem"),
        ),
    ]
)
NARRATION = Cues(
    [
        (r"\bhr\w* (?:na hrdiny|rolí)\b|\broleplay\w*", 1.0, "the roleplay", ("na hrdiny", "rolí", "roleplay")),
        (r"\bvítej\w* ve hře\b|\bpravid\w* hry\b|\bv naší hře\b", 1.0, "the roleplay", ("ve hře", "hry", "hře")),
        (r"\buživatel\w*", 1.0, "the user", ("uživatel",)),
        (r"\bhráč\w*", 0.5, "the user", ("hráč",)),
        (
            r"\b(?:tv[áéoůu]\w*|tvoj\w*|vaš\w*|moj\w*|m[áéoůu]) postav(?:a|y|ě|u|ou|ami|ám|ách)\b",
            1.0,
            "the player's side",
            ("postav",),
        ),
        (r"\bvypravěč\w*", 1.0, "the narrator", ("vypravěč",)),
        (r"\bpoznámk\w*", 0.5, "a note", ("poznámk",)),
        (r"\bpravid\w*|\binstrukc\w*|\bzadání\b|\bprompt\w*", 0.5, "rules", ("pravid", "instrukc", "zadání", "prompt")),
        (
            r"\bpříběh\w*|\bscén\w*|\bkapitol\w*|\bvyprávění\b|\bpostav(?:a|y|ě|u|ou|ami|ám|ách)\b",
            0.5,
            "the story",
            ("příběh", "scén", "kapitol", "vyprávění", "postav"),
        ),
        (
            r"\b(?:tato|tahle|této|téhle|tuto|tuhle|tomto|tomhle) (?:scén\w*|kapitol\w*|hr\w*|část\w*)",
            0.5,
            "the story",
            ("tato", "tahle", "této", "téhle", "tuto", "tuhle", "tomto", "tomhle"),
        ),
        (r"\bpokračování\b|\bodstav\w*|\btext\w*", 0.5, "the text", ("pokračování", "odstav", "text")),
        (
            r"\b(?:tady|zde) (?:je|máš|máte) (?:\w+ )?(?:pokračování|scén\w*|verz\w*|odpověď|příběh\w*|text\w*)",
            1.0,
            "assistant",
            ("tady", "zde"),
        ),
        (r"\bdej(?:te)? mi vědět\b|\bdoufám, že se (?:ti|vám)\b", 1.0, "the user", ("vědět", "doufám")),
        (
            r"\b(?:můžu|mohu|můžeme|mám|chceš|chcete)\b[^.!?\n]{0,30}?\b(?:pokračovat|rozehrát|rozvést|napsat"
            r"|upravit|přidat|popsat)\b",
            0.5,
            "what the model can do",
            ("můžu", "mohu", "můžeme", "mám", "chceš", "chcete"),
        ),
        (r"\b(?:pokud|jestli|jestliže) (?:chceš|chcete)\b", 0.5, "the user", ("chceš", "chcete")),
        (r"\bpodle (?:tvých|vašich|tvého|vašeho)\b", 0.5, "the user", ("podle",)),
        (
            r"^(?:jistě|samozřejmě|dobře|rozumím)[,!.]? (?:tady|zde|pokračuj\w*|začn\w*)",
            1.0,
            "assistant",
            ("jistě", "samozřejmě", "dobře", "rozumím"),
        ),
    ]
)
REFUSALS = Cues(
    [
        (
            r"\b(?:nemohu|nemůžu|nedokážu|nebudu|odmítám)\b[^.!?\n]{0,40}?\b(?:pokračovat|pomoc\w*|napsat|vytvořit"
            r"|hrát|popsat|splnit|účastnit|generovat)",
            1.0,
            "a refusal",
            ("nemohu", "nemůžu", "nedokážu", "nebudu", "odmítám"),
        ),
        (r"\bomlouvám se, ale\b", 0.5, "a refusal", ("omlouvám",)),
        (r"\bzásad\w* (?:obsahu|použí\w*|komunit\w*|bezpečnost\w*)", 1.0, "safety boilerplate", ("zásad",)),
        (r"\bporušuj\w* zásad\w*|\bzásad\w*", 0.5, "safety boilerplate", ("zásad",)),
        (r"\bnevhodn\w*|\bškodliv\w*|\bexplicitní\w*", 0.5, "safety boilerplate", ("nevhodn", "škodliv", "explicit")),
    ]
)

# -- the player's character ---------------------------------------------------------------

# Verbs that make a character act or speak, as narration writes them: the third person of the present
# (mostly perfective: what happens next) and the feminine past. The present's second person is the third's
# with -š (položí, položíš), the masculine past the feminine's without its -a (usmála, usmál).
SPEECH = """řekne:řekla odpoví:odpověděla zašeptá:zašeptala šeptá:šeptala zakřičí:zakřičela křičí:křičela
vykřikne:vykřikla zamumlá:zamumlala zabručí:zabručela odsekne:odsekla dodá:dodala zeptá:zeptala
poprosí:poprosila prosí:prosila vysvětlí:vysvětlila zopakuje:zopakovala přizná:přiznala slíbí:slíbila
poděkuje:poděkovala zavolá:zavolala namítne:namítla zaprosí:zaprosila odfrkne:odfrkla pípne:pípla
zavrčí:zavrčela vyhrkne:vyhrkla zakoktá:zakoktala promluví:promluvila""".split()
ACTIONS = """usměje:usmála přikývne:přikývla kývne:kývla zavrtí:zavrtěla pokrčí:pokrčila vstane:vstala
sedne:sedla posadí:posadila lehne:lehla odejde:odešla vejde:vešla vyjde:vyšla vrátí:vrátila otočí:otočila
podívá:podívala zadívá:zadívala pohlédne:pohlédla sklopí:sklopila zvedne:zvedla vezme:vzala podá:podala
položí:položila natáhne:natáhla chytí:chytila sevře:sevřela pustí:pustila otevře:otevřela zavře:zavřela
schová:schovala vytáhne:vytáhla udělá:udělala zkusí:zkusila rozhodne:rozhodla zamračí:zamračila
zrudne:zrudla zbledne:zbledla rozpláče:rozplakala pláče:plakala otře:otřela mlčí:mlčela ustoupí:ustoupila
přistoupí:přistoupila udeří:udeřila kopne:kopla utíká:utíkala uteče:utekla běží:běžela skočí:skočila
skloní:sklonila nakloní:naklonila opře:opřela obejme:objala políbí:políbila zaváhá:zaváhala váhá:váhala
přemýšlí:přemýšlela vzdá:vzdala mávne:mávla ukáže:ukázala zašklebí:zašklebila zamrká:zamrkala
polkne:polkla nadechne:nadechla vydechne:vydechla zatřese:zatřásla zachvěje:zachvěla povzdechne:povzdechla
vzdychne:vzdychla zasměje:zasmála směje:smála zasténá:zasténala usedne:usedla dojde:došla přejde:přešla
zamíří:zamířila sáhne:sáhla zaťukne:zaťukala zabouchá:zabouchala zatáhne:zatáhla strčí:strčila
hodí:hodila shodí:shodila oloupe:oloupala napije:napila sní:snědla vypije:vypila zamkne:zamkla
odemkne:odemkla zaklepe:zaklepala čeká:čekala počká:počkala souhlasí:souhlasila odmítne:odmítla
ustoupí:ustoupila lže:lhala zalže:zalhala přiznává:přiznávala couvne:couvla""".split()


def _forms(pairs: list[str]) -> tuple[frozenset[str], frozenset[str]]:
    """(the third person: present, feminine and masculine past; the narrator's second person: present)."""
    third: set[str] = set()
    second: set[str] = set()
    for pair in pairs:
        present, past = pair.split(":")
        third |= {present, past, past[:-1] if past.endswith("la") else past}
        second.add(present + "š")
    return frozenset(third), frozenset(second)


SPEECH_THIRD, SPEECH_SECOND = _forms(SPEECH)
ACTION_THIRD, ACTION_SECOND = _forms(ACTIONS)
THIRD = SPEECH_THIRD | ACTION_THIRD
SECOND = SPEECH_SECOND | ACTION_SECOND
# Words that may stand between a subject and its verb: the reflexive, the short pronouns, a few adverbs.
BETWEEN = frozenset(
    """se si mu jí ho ji je to mi mě tě ti jen pak potom chvíli nakonec znovu ještě opět rychle pomalu tiše
    už taky také hned mlčky prudce zase opatrně váhavě náhle konečně ale jenom""".split()
)
# An adverb of manner made from an adjective (smutně, hlasitě, přátelsky, ironicky): how she does what follows, as
# skippable between her name and her verb as the listed ones (`Jarla se smutně usměje`).
ADVERB = re.compile(r"\w{2,}(?:ně|tě|dě|vě|mě|bě|pě|ře|sky|cky)")
# What may open a sentence that goes on with the last one's subject: "a", "pak" …, the reflexive after the verb.
OPENERS = frozenset("a pak potom nakonec chvíli znovu ještě tak načež".split())


def name_forms(name: str) -> tuple[str, ...]:
    """A name in the Czech cases (of its last word): Jarla -> Jarla, Jarly, Jarle, Jarlu, Jarlou, Jarlo;
    poutnice -> poutnice, poutnici, poutnicí; Havel-like names (a consonant) -> +a, +ovi, +e, +u, +em.
    The first is the nominative, the one that acts."""
    words = name.split()
    if not words:
        return ()
    last, head = words[-1], " ".join(words[:-1])
    low = last.lower()
    forms = [last]
    if low.endswith("a"):
        stem = last[:-1]
        forms += [stem + "y", _soft(stem), stem + "u", stem + "ou", stem + "o"]
    elif low.endswith("e"):
        stem = last[:-1]
        forms += [stem + "i", stem + "í", stem + "ím"]
    elif low[-1:].isalpha() and low[-1] not in "aeiouyáéíóúůý":
        forms += [last + "a", last + "ovi", last + "e", last + "u", last + "em"]
    out = [f"{head} {f}" if head else f for f in forms]
    return tuple(dict.fromkeys(out))


def _soft(stem: str) -> str:
    """The dative and locative of a feminine -a name: Jarle, Olze, Petře, Hance, Martě."""
    for hard, soft in (("ch", "š"), ("k", "c"), ("g", "z"), ("h", "z"), ("r", "ř")):
        if stem.endswith(hard):
            return stem[: -len(hard)] + soft + "e"
    if stem.endswith(("d", "t", "n", "b", "p", "m", "v", "f")):
        return stem + "ě"
    return stem + "e"


_WORD = re.compile(r"[^\W\d_]+")


def verb_after(low: str, at: int, verbs: frozenset[str], reach: int = 3) -> re.Match[str] | None:
    """The first of `verbs` among the next words after `at`, past at most `reach` short words of BETWEEN
    (a comma too: "Jarla, bledá, řekne" is not read; only clitics and adverbs are skipped)."""
    position = at
    for _ in range(reach + 1):
        m = _WORD.search(low, position)
        if m is None or low[position : m.start()].strip(" ") not in ("", ","):
            return None
        word = m.group()
        if word in verbs:
            return m
        if word not in BETWEEN and not ADVERB.fullmatch(word):
            return None
        position = m.end()
    return None


def opens_with_verb(low: str, start: int, end: int, verbs: frozenset[str]) -> re.Match[str] | None:
    """The verb a sentence opens with, no subject before it ("Povzdechne si a řekne"; "A pak odejde"), or None."""
    position = start
    for _ in range(3):
        m = _WORD.search(low, position, end)
        if m is None:
            return None
        if m.group() in verbs:
            return m
        if m.group() not in OPENERS:
            return None
        position = m.end()
    return None


def stems(text: str) -> set[str]:
    """The first four letters of each word: how a declared action is told from the same verb in another person
    (položím, položíš)."""
    return {w[:4] for w in _WORD.findall(text.lower()) if len(w) > 3}
