"""Repetition: a passage repeated in reply after reply, replies that open the same way, a reply looping inside itself.

Passages are found by shingling: every run of `min_words` words of a reply is a
key, so what two consecutive replies share is a set intersection, not a
comparison of every sentence with every other. Shared shingles that touch make
a passage; a passage linked to the next reply's, and that one to the next's,
makes a chain, and the longest chains are reported first, each passage in one
chain only. A reply at either end whose wording drifted joins the chain when
rapidfuzz finds the passage in it at `similarity` or more. Words the player
wrote are left out: echoing a prompt is not looping. Several passages repeated
in the same replies are one looping stretch, one finding.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from rapidfuzz import fuzz

from sieve.store.record.rows import Turn
from sieve.store.scoring.detectors.base import (
    Finding,
    Reading,
    RunText,
    clamp,
    content_count,
    folded,
    span,
    tokens,
)

NAME = "repetition"
VERSION = 1

# A passage needs this many content words to be "the same thing" rather than a stock phrase.
MIN_CONTENT_WORDS = 3
OPENING_WORDS = 12  # an opening is the first sentence, at most this many words
SAME_PREFIX_WORDS = 5  # openings that share this many first words open the same way
OPENING_SIMILARITY = 80.0
LOOP_SIMILARITY = 80.0
# A unit of words said again and again back to back: short units need more repeats to count.
_STUTTER = re.compile(r"(.{1,2}?)\1{4,}|(.{3,8}?)\1{2,}", re.S)
_ANY_STUTTER = re.compile(r"(.{1,8})\1\1", re.S)


# A shingle is known by the hash of its words: tuples do not cache their hash, an int is hashed for free.
Shingle = int


@dataclass
class _Reply:
    """A reply read once: its turn, words with offsets, the words alone, and where each shingle of `n` words stands."""

    turn: Turn
    reading: Reading
    toks: list[tuple[int, int, str]]
    words: list[str]
    keys: list[Shingle]  # the shingle starting at each position
    first: dict[Shingle, int]  # shingle -> where it first stands
    # A shingle said more than once -> where it stands first and last, and how many times.
    again: dict[Shingle, tuple[int, int, int]]

    @cached_property
    def folded(self) -> str:
        return folded(self.turn["text"])

    @cached_property
    def sentence_ends(self) -> list[int]:
        return [e for _, e in self.reading.sentences]

    def sentence_of(self, p: int) -> int:
        """The sentence that token position p stands in."""
        return min(bisect_right(self.sentence_ends, self.toks[p][0]), len(self.sentence_ends) - 1)


def _shingles(
    toks: list[tuple[int, int, str]], n: int
) -> tuple[
    list[tuple[int, int, str]], list[str], list[Shingle], dict[Shingle, int], dict[Shingle, tuple[int, int, int]]
]:
    """A reply's words, and where each of its shingles stands (built in C where it can be)."""
    words = [w for _, _, w in toks]
    keys = list(map(hash, zip(*(words[i:] for i in range(n)))))
    first = dict(zip(reversed(keys), range(len(keys) - 1, -1, -1)))
    again: dict[Shingle, tuple[int, int, int]] = {}
    if len(first) < len(keys):
        last = dict(zip(keys, range(len(keys))))
        again = {k: (first[k], last[k], c) for k, c in Counter(keys).items() if c > 1}
    return toks, words, keys, first, again


def detect(run: RunText, params: dict[str, Any]) -> list[Finding]:
    n = params["min_words"]
    replies = [_Reply(t, run.read(t), *_shingles(run.read(t).words, n)) for t in run.replies if t["text"].strip()]
    player: set[Shingle] = set()
    for turn in run.player_turns:
        player.update(_shingles(run.read(turn).words, n)[3].keys())
    found = _chains(replies, player, params)
    found += _openings(replies, params)
    if params["loops"]:
        found += _loops(replies, params)
    return _without_overlaps(found)


# -- passages repeated across replies ------------------------------------------------


def _chains(replies: list[_Reply], player: set[Shingle], params: dict[str, Any]) -> list[Finding]:
    n = params["min_words"]
    # Links: a passage of reply r shared with reply r+1 (token ranges in each).
    ranges: list[list[tuple[int, int]]] = [[] for _ in replies]
    links: list[tuple[int, tuple[int, int], tuple[int, int]]] = []
    for r in range(len(replies) - 1):
        left_reply, right_reply = replies[r], replies[r + 1]
        common = (left_reply.first.keys() & right_reply.first.keys()) - player
        for left, right in _linked(common, left_reply, right_reply, n):
            shorter, owner = (left, left_reply) if left[1] - left[0] <= right[1] - right[0] else (right, right_reply)
            if content_count([w for _, _, w in owner.toks[shorter[0] : shorter[1]]]) < MIN_CONTENT_WORDS:
                continue
            links.append((r, left, right))
            ranges[r].append(left)
            ranges[r + 1].append(right)
    # Nodes: a reply's linked ranges, merged where they overlap (the same passage linked both ways).
    nodes = [_merged(rs) for rs in ranges]
    edges: dict[tuple[int, int], set[int]] = defaultdict(set)  # (reply, node) -> nodes of reply+1
    for r, left, right in links:
        edges[(r, _node_of(nodes[r], left))].add(_node_of(nodes[r + 1], right))
    chains: dict[tuple[int, ...], list[Finding]] = defaultdict(list)
    for path in _paths(nodes, edges):
        finding = _chain_finding(replies, [(r, *nodes[r][k]) for r, k in path], params)
        if finding is not None:
            chains[tuple(sorted({s.turn_idx for s in finding.spans}))].append(finding)
    # Several passages repeated in the same replies are one looping stretch: one suggestion.
    return [_together(found) for found in chains.values()]


def _paths(nodes: list[list[tuple[int, int]]], edges: dict[tuple[int, int], set[int]]) -> list[list[tuple[int, int]]]:
    """Runs of linked passages through consecutive replies, longest first, each passage in one run only."""
    length: dict[tuple[int, int], int] = {}
    following: dict[tuple[int, int], tuple[int, int] | None] = {}
    for r in range(len(nodes) - 1, -1, -1):
        for k in range(len(nodes[r])):
            nexts = [(r + 1, j) for j in edges.get((r, k), ())]
            best = max(nexts, key=lambda node: length[node], default=None)
            following[(r, k)] = best
            length[(r, k)] = 1 + (length[best] if best else 0)
    used: set[tuple[int, int]] = set()
    out = []
    for start in sorted(length, key=lambda node: (-length[node], node)):
        path: list[tuple[int, int]] = []
        node: tuple[int, int] | None = start
        while node is not None and node not in used:
            path.append(node)
            node = following[node]
        if len(path) >= 2:
            used.update(path)
            out.append(path)
    return out


def _together(found: list[Finding]) -> Finding:
    if len(found) == 1:
        return found[0]
    found = sorted(found, key=lambda f: (f.spans[0].turn_idx, f.spans[0].start))
    spans = tuple(sorted((s for f in found for s in f.spans), key=lambda s: (s.turn_idx, s.start)))
    first = found[0].spans[0].text
    shown = first if len(first) <= 60 else first[:57] + "..."
    return Finding(
        NAME,
        VERSION,
        "chain",
        spans,
        f"{len(found)} passages repeated in the same {found[0].length} replies in a row: “{shown}” and more",
        max(f.confidence for f in found),
        found[0].length,
    )


def _linked(common: set[Shingle], left: _Reply, right: _Reply, n: int) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Passages two replies share: touching shared shingles in each, paired through the shingles at their ends."""
    left_ranges, right_ranges = _ranges(left, common, n), _ranges(right, common, n)
    right_starts = [s for s, _ in right_ranges]
    pairs: set[tuple[int, int]] = set()
    for i, (s, e) in enumerate(left_ranges):
        for key in {left.keys[s], left.keys[e - n]}:
            for q in _places(right, key):
                pairs.add((i, bisect_right(right_starts, q) - 1))
    return [(left_ranges[i], right_ranges[j]) for i, j in sorted(pairs)]


def _ranges(reply: _Reply, keys: set[Shingle], n: int) -> list[tuple[int, int]]:
    """The token ranges these shingles cover in a reply, touching ones merged."""
    first = reply.first
    at = [first[k] for k in keys]
    at += [reply.again[k][1] for k in keys & reply.again.keys()]
    at.sort()
    out: list[tuple[int, int]] = []
    start = end = -1
    for p in at:
        if p <= end:
            if p + n > end:
                end = p + n
        else:
            if end >= 0:
                out.append((start, end))
            start, end = p, p + n
    if end >= 0:
        out.append((start, end))
    return out


def _places(reply: _Reply, key: Shingle) -> tuple[int, ...]:
    """Where a shingle stands in a reply: once, or first and last."""
    found = reply.again.get(key)
    return found[:2] if found else (reply.first[key],)


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(ranges):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _node_of(nodes: list[tuple[int, int]], rng: tuple[int, int]) -> int:
    lo, hi = 0, len(nodes) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if nodes[mid][0] <= rng[0]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _chain_finding(replies: list[_Reply], chain: list[tuple[int, int, int]], params: dict[str, Any]) -> Finding | None:
    spans = {r: (replies[r].toks[s][0], replies[r].toks[e - 1][1]) for r, s, e in chain}
    # Near-same replies around the chain join it: rapidfuzz finds the passage of the end reply in them.
    first, last = chain[0][0], chain[-1][0]
    r = first - 1
    while r >= 0 and _near(replies[r], replies[first].turn["text"][slice(*spans[first])], params, spans, r):
        first, r = r, r - 1
    r = last + 1
    while r < len(replies) and _near(replies[r], replies[last].turn["text"][slice(*spans[last])], params, spans, r):
        last, r = r, r + 1
    run = sorted(spans)
    if len(run) < params["min_chain"]:
        return None
    evidence = tuple(span(replies[r].turn, *spans[r]) for r in run)
    quote = evidence[0].text
    shown = quote if len(quote) <= 80 else quote[:77] + "..."
    confidence = 0.55 + 0.08 * len(run) + 0.01 * len(quote.split())
    return Finding(
        NAME,
        VERSION,
        "chain",
        evidence,
        f"the same passage in {len(run)} replies in a row: “{shown}”",
        clamp(confidence),
        len(run),
    )


def _near(reply: _Reply, passage: str, params: dict[str, Any], spans: dict[int, tuple[int, int]], r: int) -> bool:
    # The first 64 characters say which passage it is: up to there rapidfuzz compares bit-parallel, fast.
    found = fuzz.partial_ratio_alignment(folded(passage[:64]), reply.folded, score_cutoff=params["similarity"])
    if found is None or found.dest_end <= found.dest_start:
        return False
    spans[r] = _snap(reply.turn["text"], found.dest_start, found.dest_end)
    return True


def _snap(text: str, start: int, end: int) -> tuple[int, int]:
    """An alignment widened to whole words (rapidfuzz may cut one) and trimmed of spaces and punctuation."""
    while start > 0 and text[start - 1].isalnum():
        start -= 1
    while end < len(text) and text[end].isalnum():
        end += 1
    while start < end and not text[start].isalnum():
        start += 1
    while end > start and not (text[end - 1].isalnum() or text[end - 1] in ".!?\"'”’"):
        end -= 1
    return start, end


def _longest_run(held: list[int]) -> list[int]:
    best: list[int] = []
    current: list[int] = []
    for r in held:
        current = current + [r] if current and r == current[-1] + 1 else [r]
        if len(current) > len(best):
            best = current
    return best


# -- replies that open the same way --------------------------------------------------


def _openings(replies: list[_Reply], params: dict[str, Any]) -> list[Finding]:
    openings = []
    for r, reply in enumerate(replies):
        first = reply.reading.sentences[:1]
        if not first or not reply.toks:
            continue
        start, end = first[0]
        inside = [t for t in reply.toks[:OPENING_WORDS] if t[1] <= end]
        if not inside:
            continue
        end = end if len(inside) < OPENING_WORDS else inside[-1][1]
        openings.append((r, start, end, [w for _, _, w in inside]))
    clusters: list[list[tuple[int, int, int, list[str]]]] = []
    for opening in openings:
        for cluster in clusters:
            if _same_opening(cluster[0][3], opening[3]):
                cluster.append(opening)
                break
        else:
            clusters.append([opening])
    out = []
    for cluster in clusters:
        if len(cluster) < params["min_openings"]:
            continue
        run = _longest_run([o[0] for o in cluster])
        if len(run) < params["min_chain"]:
            continue
        by_reply = {o[0]: o for o in cluster}
        ordered = [by_reply[r] for r in run] + [o for o in cluster if o[0] not in run]
        evidence = tuple(span(replies[r].turn, s, e) for r, s, e, _ in ordered)
        quote = evidence[0].text
        out.append(
            Finding(
                NAME,
                VERSION,
                "opening",
                evidence,
                f"{len(cluster)} of {len(replies)} replies open with “{quote[:60]}”, {len(run)} in a row",
                clamp(0.5 + 0.05 * len(cluster) + 0.05 * len(run)),
                len(run),
            )
        )
    return out


def _same_opening(a: list[str], b: list[str]) -> bool:
    prefix = 0
    for x, y in zip(a, b):
        if x != y:
            break
        prefix += 1
    if prefix >= SAME_PREFIX_WORDS or (prefix == len(a) == len(b)):
        return True
    if min(len(a), len(b)) < SAME_PREFIX_WORDS - 1:
        return False
    # Near-same first words ("The story is already finished" / "The story is still finished").
    head_a, head_b = " ".join(a[:SAME_PREFIX_WORDS]), " ".join(b[:SAME_PREFIX_WORDS])
    return fuzz.ratio(head_a, head_b) >= OPENING_SIMILARITY


# -- a reply looping inside itself ---------------------------------------------------


def _loops(replies: list[_Reply], params: dict[str, Any]) -> list[Finding]:
    """Per reply, everything it says again: a passage, a near-same sentence, a stutter. One finding a reply."""
    out = []
    n = params["min_words"]
    codes = _Codes()
    for reply in replies:
        repeats = _repeats(reply, n)
        pieces = (
            _repeated_passages(reply, repeats, n) + _repeated_sentences(reply, repeats, n) + _stutters(reply, codes)
        )
        if not pieces:
            continue
        spans = _merged([(s, e) for s, e, _ in pieces])
        times = max(k for _, _, k in pieces)
        evidence = tuple(span(reply.turn, s, e) for s, e in spans)
        first = min(pieces)
        shown = reply.turn["text"][first[0] : first[1]]
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        out.append(
            Finding(
                NAME,
                VERSION,
                "loop",
                evidence,
                f"one reply says the same thing {times} times: “{shown}”",
                clamp(0.6 + 0.1 * times + 0.02 * len(spans)),
                times,
            )
        )
    return out


def _repeats(reply: _Reply, n: int) -> list[tuple[int, int, int]]:
    """What a reply says again further on: token ranges of the later saying, with where the first one starts."""
    again = sorted((last, first) for first, last, _ in reply.again.values() if last - first >= n)
    out: list[list[int]] = []
    for p, first in again:
        if out and p <= out[-1][1]:
            out[-1][1] = max(out[-1][1], p + n)
        else:
            out.append([p, p + n, first])
    return [(s, e, f) for s, e, f in out]


def _repeated_passages(reply: _Reply, repeats: list[tuple[int, int, int]], n: int) -> list[tuple[int, int, int]]:
    """Passages of more than `n` words said again: (start, end, times) of the first saying and of the later one."""
    out = []
    for s, e, f in repeats:
        if e - s <= n or content_count(reply.words[s:e]) < MIN_CONTENT_WORDS:
            continue
        count = reply.again[reply.keys[s]][2]
        out.append((reply.toks[f][0], reply.toks[f + e - s - 1][1], count))
        out.append((reply.toks[s][0], reply.toks[e - 1][1], count))
    return out


def _repeated_sentences(reply: _Reply, repeats: list[tuple[int, int, int]], n: int) -> list[tuple[int, int, int]]:
    """Sentences the reply says twice or more, the same or near-same (found through a passage said again)."""
    text = reply.turn["text"]
    sents = reply.reading.sentences
    pairs = {(reply.sentence_of(f), reply.sentence_of(s)) for s, _, f in repeats}
    groups: list[set[int]] = []
    for a, b in sorted(pairs):
        if a == b:
            continue
        sa, sb = text[slice(*sents[a])], text[slice(*sents[b])]
        tokens_a = tokens(sa)
        similarity = fuzz.ratio(folded(sa), folded(sb))
        same = similarity >= 95 and len(tokens_a) > n
        if not same and (similarity < LOOP_SIMILARITY or content_count(tokens_a) < MIN_CONTENT_WORDS):
            continue
        group = next((g for g in groups if a in g or b in g), None)
        if group is None:
            groups.append({a, b})
        else:
            group.update((a, b))
    return [(*sents[i], len(group)) for group in groups for i in group]


class _Codes(dict[str, str]):
    """Word -> one character standing for it, so a regex can find words repeated back to back."""

    def __missing__(self, word: str) -> str:
        code = self[word] = chr(0x4E00 + len(self) % 0x5000)
        return code


def _stutters(reply: _Reply, codes: _Codes) -> list[tuple[int, int, int]]:
    """A few words said again and again back to back ("the the the the the", "I'm sorry. I'm sorry. I'm sorry.")."""
    if len(reply.words) < 5:
        return []
    coded = "".join(map(codes.__getitem__, reply.words))
    if _ANY_STUTTER.search(coded) is None:  # a quick look first: most replies have none
        return []
    out = []
    for m in _STUTTER.finditer(coded):
        unit = len(m.group(1) or m.group(2))
        repeats = (m.end() - m.start()) // unit
        out.append((reply.toks[m.start()][0], reply.toks[m.start() + repeats * unit - 1][1], repeats))
    return out


# -- one event, one finding --------------------------------------------------------


def _without_overlaps(found: list[Finding]) -> list[Finding]:
    """Where two findings cover the same text in the same replies, keep the one with the longer chain."""
    kept: list[Finding] = []
    # turn id -> the text ranges there of each finding kept so far
    by_turn: dict[str, list[dict[str, list[tuple[int, int]]]]] = defaultdict(list)
    # Longer chains first; of equal chains, the one holding more of the text (it says more of what repeats).
    for f in sorted(found, key=lambda f: (-(f.length or 0), -sum(s.end - s.start for s in f.spans))):
        rivals = by_turn[f.spans[0].turn_id]
        if any(all(_overlaps((s.start, s.end), theirs.get(s.turn_id, ())) for s in f.spans) for theirs in rivals):
            continue
        kept.append(f)
        mine: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for s in f.spans:
            mine[s.turn_id].append((s.start, s.end))
        for turn_id in mine:
            by_turn[turn_id].append(mine)
    return sorted(kept, key=lambda f: (f.spans[0].turn_idx, f.spans[0].start))


def _overlaps(rng: tuple[int, int], ranges: Sequence[tuple[int, int]]) -> bool:
    return any(rng[0] < e and s < rng[1] for s, e in ranges)
