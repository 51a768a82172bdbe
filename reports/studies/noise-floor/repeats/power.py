"""How often `suite regress` would catch the 900 ns cost, and how often its A/A
would raise a false alarm, at other thresholds, round counts and tie bands:
per-round CPU-per-record ratios drawn with replacement from the records
beside this file (the 5 release checks' 25 rounds; the 5 A/A checks' 25
rounds, each also read the other way round), judged by the gate's rule
(src/commands/regress.rs: median past the threshold, the median's interval
clear of 1, sign-test p <= 0.05 with ties left out). The rule is restated
here; before resampling, it is checked against the verdict the suite itself
recorded for each of the ten batches. Its output is power.txt."""
import json
import math
import os
import random
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
FIGURE = "us_cpu_per_record"


def batch_ratios():
    """Each batch's per-round ratios (entry 2 / entry 1), in round order."""
    rounds = defaultdict(lambda: defaultdict(dict))
    for line in open(os.path.join(HERE, "stateless.jsonl")):
        record = json.loads(line)
        rounds[record["batch_id"]][record["round"]][record["entry"]] = record["metrics"][FIGURE]["value"]
    return {
        batch: [pair[2] / pair[1] for _, pair in sorted(by_round.items()) if 1 in pair and 2 in pair]
        for batch, by_round in rounds.items()
    }


def sign_p(k, n):
    """P(X >= k), X ~ Binomial(n, 1/2); 1 for n = 0 (src/stats/sign_test.rs)."""
    return sum(math.comb(n, i) for i in range(k, n + 1)) / 2**n if n else 1.0


def lower_rank(n):
    """The rank of the 95 % interval of the median, None under 6 (src/stats/interval.rs)."""
    rank, below = None, 0
    for k in range(1, n // 2 + 1):
        below += math.comb(n, k - 1)
        if below / 2**n > 0.025:
            break
        rank = k
    return rank


def regression(ratios, threshold=0.05, tie_band=0.01):
    """The gate's verdict on a figure where lower is better."""
    s = sorted(ratios)
    n = len(s)
    median = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
    k = lower_rank(n)
    low, high = (s[k - 1], s[n - k]) if k else (s[0], s[-1])
    if low <= 1 <= high:
        return False
    worse = sum(1 for r in ratios if r - 1 > tie_band)
    better = sum(1 for r in ratios if 1 - r > tie_band)
    if sign_p(max(better, worse), better + worse) > 0.05:
        return False
    return median > 1 and worse > better and median - 1 > threshold


def check_against_the_suite(ratios_of):
    """The restated rule gives each batch the verdict the suite recorded."""
    for name in sorted(os.listdir(HERE)):
        if not (name.startswith(("regress-", "noise-")) and name.endswith(".json")):
            continue
        report = json.load(open(os.path.join(HERE, name)))
        figure = next(f for f in report["figures"] if f["figure"] == FIGURE)
        recorded = figure["regression"] if name.startswith("regress-") else figure["false_alarm"]
        restated = regression(ratios_of[report["batch_id"]])
        assert restated == recorded, f"{name}: the suite says {recorded}, this rule {restated}"


def rate(pool, rounds, tie_band, threshold=0.05, shift=1.0, draws=20000):
    """The share of `draws` checks of `rounds` ratios from `pool` (times `shift`) the gate flags."""
    rnd = random.Random(7)
    flagged = sum(
        regression([rnd.choice(pool) * shift for _ in range(rounds)], threshold, tie_band)
        for _ in range(draws)
    )
    return flagged / draws


def sd(xs):
    mean = sum(xs) / len(xs)
    return (sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) ** 0.5


ratios_of = batch_ratios()
check_against_the_suite(ratios_of)
versions = defaultdict(set)
for line in open(os.path.join(HERE, "stateless.jsonl")):
    record = json.loads(line)
    versions[record["batch_id"]].add(record["version"])
det = [r for batch, rs in ratios_of.items() if len(versions[batch]) == 2 for r in rs]
aa = [r for batch, rs in ratios_of.items() if len(versions[batch]) == 1 for r in rs]
aas = aa + [1 / r for r in aa]

print(f"detection ratios ({len(det)}):", " ".join(f"{r:.3f}" for r in det))
print(f"A/A ratios ({len(aa)}):", " ".join(f"{r:.3f}" for r in aa))
print(f"sd of A/A ratios {sd(aa):.4f}, of detection ratios {sd(det):.4f}, mean detection {sum(det) / len(det):.4f}")
for thr in (0.05, 0.03, 0.02):
    for n in (5, 7, 8, 10):
        for tie in (0.01, 0.0):
            caught = rate(det, n, tie, thr)
            moved = " ".join(f"+{d}%:{rate(aas, n, tie, thr, shift=1 + d / 100):.2f}" for d in (5, 7, 10))
            print(f"thr {thr:.2f} rounds {n:2} tie {tie:.2f}: caught {caught:.3f} (5 of 5: {caught**5:.3f})  "
                  f"A/A alarm {rate(aas, n, tie, thr):.4f}  {moved}")
# How many rounds a 5 % regression needs on this host's noise.
for thr in (0.05, 0.03, 0.02):
    for n in (15, 20):
        caught = rate(det, n, 0.01, thr)
        print(f"thr {thr:.2f} rounds {n:2} tie 0.01: caught {caught:.3f} (5 of 5: {caught**5:.3f})  "
              f"A/A alarm {rate(aas, n, 0.01, thr):.4f}")
