"""Repetition: a passage repeated in reply after reply, replies that open the same way, a reply looping inside itself.

Passages are found by shingling: every run of `min_words` words of every reply,
indexed, so a passage shared by replies is found without comparing replies in
pairs. A chain is the longest run of consecutive replies that hold the passage;
a reply in the middle or at an end whose wording drifted joins the chain when
rapidfuzz finds the passage in it at `similarity` or more. Words the player
wrote are left out: echoing a prompt is not looping.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from rapidfuzz import fuzz

from sieve.store.scoring.detectors.base import (
    Finding,
    RunText,
    clamp,
    content_count,
    folded,
    sentences,
    span,
    words,
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


def detect(run: RunText, params: dict[str, Any]) -> list[Finding]:
    replies = [t for t in run.replies if t["text"].strip()]
    tokens = [words(t["text"]) for t in replies]
    found = _chains(run, replies, tokens, params)
    found += _openings(replies, tokens, params)
    if params["loops"]:
        found += _loops(replies, tokens, params)
    return _without_overlaps(found)


# -- passages repeated across replies ------------------------------------------------


def _chains(run: RunText, replies: list[dict], tokens: list[list], params: dict[str, Any]) -> list[Finding]:
    n = params["min_words"]
    vocab: dict[str, int] = {}
    player: set[tuple[int, ...]] = set()
    for turn in run.player_turns:
        seq = [vocab.setdefault(w, len(vocab)) for _, _, w in words(turn["text"])]
        player.update(zip(*(seq[i:] for i in range(n))))
    shingles: list[dict[tuple[int, ...], list[int]]] = []
    for toks in tokens:
        seq = [vocab.setdefault(w, len(vocab)) for _, _, w in toks]
        at: dict[tuple[int, ...], list[int]] = defaultdict(list)
        for p, key in enumerate(zip(*(seq[i:] for i in range(n)))):
            at[key].append(p)
        shingles.append(at)
    # Links: a passage of reply r shared with reply r+1 (token ranges in each).
    ranges: list[list[tuple[int, int]]] = [[] for _ in replies]
    links: list[tuple[int, tuple[int, int], tuple[int, int]]] = []
    for r in range(len(replies) - 1):
        common = (shingles[r].keys() & shingles[r + 1].keys()) - player
        for left, right in _linked(common, shingles[r], shingles[r + 1], n):
            shorter = left if left[1] - left[0] <= right[1] - right[0] else right
            owner = r if shorter is left else r + 1
            if content_count([w for _, _, w in tokens[owner][shorter[0] : shorter[1]]]) < MIN_CONTENT_WORDS:
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
    used: set[tuple[int, int]] = set()
    while True:
        path = _longest_path(nodes, edges, used)
        if len(path) < 2:
            break
        used.update(path)
        finding = _chain_finding(replies, tokens, [(r, *nodes[r][k]) for r, k in path], params)
        if finding is not None:
            chains[tuple(sorted({s.turn_idx for s in finding.spans}))].append(finding)
    # Several passages repeated in the same replies are one looping stretch: one suggestion.
    return [_together(found) for found in chains.values()]


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


def _linked(common: set, left: dict, right: dict, n: int) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Passages two replies share: touching shared shingles in each, paired through the shingles they share."""
    left_ranges = _merged([(p, p + n) for key in common for p in left[key]])
    right_ranges = _merged([(p, p + n) for key in common for p in right[key]])
    pairs: set[tuple[int, int]] = set()
    for key in common:
        for p in left[key]:
            for q in right[key]:
                pairs.add((_node_of(left_ranges, (p, p + n)), _node_of(right_ranges, (q, q + n))))
    return [(left_ranges[i], right_ranges[j]) for i, j in sorted(pairs)]


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


def _longest_path(nodes: list, edges: dict, used: set) -> list[tuple[int, int]]:
    """The longest run of linked passages through consecutive replies, avoiding passages already reported."""
    best: dict[tuple[int, int], list[tuple[int, int]]] = {}
    longest: list[tuple[int, int]] = []
    for r in range(len(nodes) - 1, -1, -1):
        for k in range(len(nodes[r])):
            if (r, k) in used:
                continue
            tail = max((best[(r + 1, j)] for j in edges.get((r, k), ()) if (r + 1, j) in best), key=len, default=[])
            best[(r, k)] = [(r, k), *tail]
            if len(best[(r, k)]) > len(longest):
                longest = best[(r, k)]
    return longest


def _chain_finding(replies: list[dict], tokens: list[list], chain: list, params: dict[str, Any]) -> Finding | None:
    spans = {r: (tokens[r][s][0], tokens[r][e - 1][1]) for r, s, e in chain}
    # Near-same replies around the chain join it: rapidfuzz finds the passage of the end reply in them.
    first, last = chain[0][0], chain[-1][0]
    r = first - 1
    while r >= 0 and _near(replies, r, replies[first]["text"][slice(*spans[first])], params, spans):
        first, r = r, r - 1
    r = last + 1
    while r < len(replies) and _near(replies, r, replies[last]["text"][slice(*spans[last])], params, spans):
        last, r = r, r + 1
    run = sorted(spans)
    if len(run) < params["min_chain"]:
        return None
    evidence = tuple(span(replies[r], *spans[r]) for r in run)
    quote = evidence[0].text
    shown = quote if len(quote) <= 80 else quote[:77] + "..."
    confidence = 0.55 + 0.08 * len(run) + 0.01 * len(words(quote))
    return Finding(
        NAME,
        VERSION,
        "chain",
        evidence,
        f"the same passage in {len(run)} replies in a row: “{shown}”",
        clamp(confidence),
        len(run),
    )


def _near(replies: list[dict], r: int, passage: str, params: dict[str, Any], spans: dict) -> bool:
    text = folded(replies[r]["text"])
    found = fuzz.partial_ratio_alignment(folded(passage[:300]), text, score_cutoff=params["similarity"])
    if found is None or found.dest_end <= found.dest_start:
        return False
    spans[r] = _snap(replies[r]["text"], found.dest_start, found.dest_end)
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


def _openings(replies: list[dict], tokens: list[list], params: dict[str, Any]) -> list[Finding]:
    openings = []
    for r, turn in enumerate(replies):
        first = sentences(turn["text"])[:1]
        if not first or not tokens[r]:
            continue
        start, end = first[0]
        inside = [t for t in tokens[r] if t[1] <= end][:OPENING_WORDS]
        if not inside:
            continue
        end = max(end if len(inside) < OPENING_WORDS else inside[-1][1], inside[-1][1])
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
        evidence = tuple(span(replies[r], s, e) for r, s, e, _ in ordered)
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


def _loops(replies: list[dict], tokens: list[list], params: dict[str, Any]) -> list[Finding]:
    """Per reply, everything it says again: a passage, a near-same sentence, a stutter. One finding a reply."""
    out = []
    for r, turn in enumerate(replies):
        pieces = _repeated_passages(turn, tokens[r], params["min_words"])
        pieces += _repeated_sentences(turn, tokens[r], params["min_words"])
        pieces += _stutters(turn, tokens[r])
        if not pieces:
            continue
        spans = _merged([(s, e) for s, e, _ in pieces])
        times = max(n for _, _, n in pieces)
        evidence = tuple(span(turn, s, e) for s, e in spans)
        first = min(pieces)
        shown = turn["text"][first[0] : first[1]]
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


def _repeated_passages(turn: dict, toks: list, n: int) -> list[tuple[int, int, int]]:
    """Passages of more than `n` words that the reply says again further on: (start, end, times) of each saying."""
    seq = [w for _, _, w in toks]
    first_at: dict[tuple[str, ...], int] = {}
    times: dict[tuple[str, ...], int] = defaultdict(int)
    again: list[tuple[int, int]] = []  # token range of a repeat, and where it was said first
    for p, key in enumerate(zip(*(seq[i:] for i in range(n)))):
        first = first_at.setdefault(key, p)
        times[key] += 1
        if p - first >= n:
            again.append((p, first))
    out = []
    ranges = _merged([(p, p + n) for p, _ in again])
    origin = dict(again)
    for s, e in ranges:
        if e - s <= n or content_count(seq[s:e]) < MIN_CONTENT_WORDS:
            continue
        f = origin[s]
        count = times[tuple(seq[s : s + n])]
        out.append((toks[f][0], toks[f + e - s - 1][1], count))
        out.append((toks[s][0], toks[e - 1][1], count))
    return out


def _repeated_sentences(turn: dict, toks: list, n: int) -> list[tuple[int, int, int]]:
    """Sentences the reply says twice or more, the same or near-same (found through a shared shingle)."""
    text = turn["text"]
    sents = sentences(text)
    ends = [e for _, e in sents]
    seq = [w for _, _, w in toks]
    seen: dict[tuple[str, ...], int] = {}
    pairs: set[tuple[int, int]] = set()
    for p, key in enumerate(zip(*(seq[i:] for i in range(n)))):
        first = seen.setdefault(key, p)
        if first != p:
            a, b = _sentence_of(toks[first][0], ends), _sentence_of(toks[p][0], ends)
            if a != b:
                pairs.add((a, b))
    groups: list[set[int]] = []
    for a, b in sorted(pairs):
        sa, sb = text[slice(*sents[a])], text[slice(*sents[b])]
        tokens_a = [w for _, _, w in words(sa)]
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


def _sentence_of(pos: int, ends: list[int]) -> int:
    lo, hi = 0, len(ends)
    while lo < hi:
        mid = (lo + hi) // 2
        if ends[mid] <= pos:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _stutters(turn: dict, toks: list) -> list[tuple[int, int, int]]:
    """A few words said again and again back to back ("the the the the the", "I'm sorry. I'm sorry. I'm sorry.")."""
    if len(toks) < 5:
        return []
    vocab: dict[str, str] = {}
    coded = "".join(vocab.setdefault(w, chr(0x4E00 + len(vocab) % 0x5000)) for _, _, w in toks)
    out = []
    for m in _STUTTER.finditer(coded):
        unit = len(m.group(1) or m.group(2))
        repeats = (m.end() - m.start()) // unit
        out.append((toks[m.start()][0], toks[m.start() + repeats * unit - 1][1], repeats))
    return out


# -- one event, one finding --------------------------------------------------------


def _without_overlaps(found: list[Finding]) -> list[Finding]:
    """Where two findings cover the same text in the same replies, keep the one with the longer chain."""
    kept: list[Finding] = []
    for f in sorted(found, key=lambda f: (-(f.length or 0), -len(f.spans), f.category != "opening")):
        if any(_covered(f, k) for k in kept):
            continue
        kept.append(f)
    return sorted(kept, key=lambda f: (f.spans[0].turn_idx, f.spans[0].start))


def _covered(f: Finding, by: Finding) -> bool:
    theirs: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for s in by.spans:
        theirs[s.turn_id].append((s.start, s.end))
    return all(_overlaps((s.start, s.end), theirs.get(s.turn_id, [])) for s in f.spans)


def _overlaps(rng: tuple[int, int], ranges: list[tuple[int, int]]) -> bool:
    return any(rng[0] < e and s < rng[1] for s, e in ranges)
