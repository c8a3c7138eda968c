"""Adaptive pairs against the full round robin at equal cost, on simulated fields of 38 models with known strengths.

    python -m tests.perf.bench_adaptive [--fields 10] [--seed 0] [--quick]   (about a minute a field on two cores)

A field (tests/support/simulated_field.py) is 38 models on a ladder of known strengths
(evenly spaced, 64 Elo apart, shuffled among the names), three runs each, and a noisy
judge: Davidson's ties (v = 0.4) and a position bias (+0.35 log odds for the transcript
shown first). Every pair is judged twice with the sides swapped and settled as
`sieve judge --pairs` settles it, so a pair costs two judgments; the round robin is 703
pairs, 1,406 judgments. The adaptive queue (store.scoring.adaptive) plays its anchors,
then rounds of the pairs least certain under the fit; the round robin plays its pairs in
a random order. At each share of the round robin's cost the table gives, as a mean over
the fields: Kendall's tau of the fitted order with the true one, the mean 95% interval
width (Elo, the posterior's normal approximation that ratings.table widens by a
bootstrap), and how often the top 3 are right (the true first three, in order). Then
the judgments each needed to reach tau >= 0.9 (the median over fields), the target
(tau >= 0.9 with at most 30% of the round robin's judgments), and where the stopping
rule ended the adaptive queue. Everything is drawn from seeded generators: the same
--seed prints the same table. No timing is taken (the figures are counts).
"""

from __future__ import annotations

import argparse
import statistics

from tests.perf.timing import machine_line
from tests.support import simulated_field as sim

SIDES = 38
SHARES = (0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)
TARGET_TAU, TARGET_SHARE = 0.9, 0.3


def curves(seed: int, largest: float) -> tuple[dict[float, dict], dict[float, dict], int | None, int | None, tuple]:
    """One field: the adaptive and round robin measures at each share, the judgments each took to reach the target
    tau, and (judgments, tau, reason) where the stopping rule ended the adaptive queue."""
    robin = SIDES * (SIDES - 1) // 2
    field = sim.make_field(SIDES, seed)
    rounds: list[tuple[int, dict]] = []
    sim.play_adaptive(
        field, int(largest * robin), seed, at=lambda pairs, votes: rounds.append((pairs, sim.measures(field, votes)))
    )
    adaptive_at = {}
    for share in SHARES:
        within = [m for pairs, m in rounds if pairs <= share * robin]
        if within:
            adaptive_at[share] = within[-1]  # the last round that costs no more than the round robin's share
    adaptive_reach = next((2 * pairs for pairs, m in rounds if m["tau"] >= TARGET_TAU), None)

    field = sim.make_field(SIDES, seed)
    order = sim.play_round_robin(field, robin, seed)
    robin_at = {share: sim.measures(field, order[: int(share * robin)]) for share in SHARES}
    robin_reach = None
    for pairs in range(19, robin + 1, 19):
        if sim.measures(field, order[:pairs])["tau"] >= TARGET_TAU:
            robin_reach = 2 * pairs
            break

    field = sim.make_field(SIDES, seed)
    votes, reason = sim.play_adaptive(field, robin, seed, stop=True)
    stopped = (2 * len(votes), sim.measures(field, votes)["tau"], reason)
    return adaptive_at, robin_at, adaptive_reach, robin_reach, stopped


def mean_of(found: list[dict[float, dict]], share: float, what: str, digits: int) -> str:
    values = [f[share][what] for f in found if share in f]
    return f"{statistics.fmean(values):.{digits}f}" if values else "-"


def reach_text(reached: list[int | None], robin_judgments: int) -> str:
    got = [r for r in reached if r is not None]
    if not got:
        return f"not reached in {len(reached)} fields"
    median = statistics.median(got)
    return f"{median:.0f} ({median / robin_judgments:.0%}), reached in {len(got)} of {len(reached)} fields"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fields", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="3 fields")
    args = parser.parse_args()
    print(machine_line())
    fields = 3 if args.quick else args.fields
    robin = SIDES * (SIDES - 1) // 2
    results = [curves(args.seed + k, max(SHARES)) for k in range(fields)]
    adaptive = [r[0] for r in results]
    robins = [r[1] for r in results]
    print(
        f"{fields} fields of {SIDES} models (seeds {args.seed}..{args.seed + fields - 1}); the round robin: {robin} pairs, "
        f"{2 * robin} judgments (each pair twice, sides swapped)"
    )
    print("  (top 3: the true first three in order; as a set: the first three in any order)")
    print(f"{'judgments':>10} {'share':>6} | {'adaptive: tau':>13} {'width':>7} {'top 3':>6} {'as set':>6} |", end="")
    print(f" {'round robin: tau':>16} {'width':>7} {'top 3':>6} {'as set':>6}")
    for share in SHARES:
        print(
            f"{2 * int(share * robin):>10} {share:>6.0%} | {mean_of(adaptive, share, 'tau', 3):>13} "
            f"{mean_of(adaptive, share, 'width', 0):>7} {mean_of(adaptive, share, 'top3', 2):>6}"
            f" {mean_of(adaptive, share, 'top3set', 2):>6} |"
            f" {mean_of(robins, share, 'tau', 3):>16} {mean_of(robins, share, 'width', 0):>7}"
            f" {mean_of(robins, share, 'top3', 2):>6} {mean_of(robins, share, 'top3set', 2):>6}"
        )
    print()
    adaptive_reach = [r[2] for r in results]
    print(f"judgments to reach tau >= {TARGET_TAU} (median): adaptive {reach_text(adaptive_reach, 2 * robin)}")
    print(f"{'':>47}round robin {reach_text([r[3] for r in results], 2 * robin)}")
    got = [r for r in adaptive_reach if r is not None]
    met = len(got) == len(adaptive_reach) and statistics.median(got) <= TARGET_SHARE * 2 * robin
    print(
        f"target (tau >= {TARGET_TAU} with at most {TARGET_SHARE:.0%} of the round robin's judgments): "
        f"{'met' if met else 'NOT met'}"
    )
    print()
    print("where the stopping rule ended the adaptive queue (no budget but the round robin's):")
    for k, (_, _, _, _, (judgments, tau, reason)) in enumerate(results):
        print(f"  field {args.seed + k}: {judgments} judgments, tau {tau:.3f}: {reason}")


if __name__ == "__main__":
    main()
