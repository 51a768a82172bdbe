"""The retry sweep's table: per line and backoff, medians over rounds, and
each backoff against the line's 2 ms in the same round (median, range,
rounds better)."""
import json, statistics, sys
from collections import defaultdict

path = sys.argv[1]
runs = [json.loads(l) for l in open(path)]
by = defaultdict(dict)  # (line, backoff) -> round -> record
for r in runs:
    b = r['config']['client'].get('transaction_retry_backoff_ms')
    by[(r['line'], b)][r['round']] = r

def fig(r, name):
    m = r['metrics'].get(name)
    return m['value'] if m and isinstance(m.get('value'), (int, float)) else None

names = [('added_p50_ms', 'p50'), ('added_p99_ms', 'p99'), ('us_cpu_per_record', 'cpu')]
lines = sorted({l for l, _ in by}, key=lambda l: ['rustpipe-eos','quix-eos','kafka-streams-eos','flink-eos','hazelcast-eos'].index(l))
print('| line | backoff ms | n | added p50 ms | added p99 ms | µs CPU/record | regimes | flags | p50 / 2 ms | p99 / 2 ms | CPU / 2 ms |')
print('|---|---|---|---|---|---|---|---|---|---|---|')
for line in lines:
    for b in sorted(b for l, b in by if l == line):
        rounds = by[(line, b)]
        base = by[(line, 2)]
        cells = []
        for name, _ in names:
            vals = [fig(r, name) for r in rounds.values() if fig(r, name) is not None]
            cells.append(f"{statistics.median(vals):.1f}" if vals else 'n/a')
        regimes = defaultdict(int)
        flags = defaultdict(int)
        for r in rounds.values():
            regimes[r.get('regime')] += 1
            for f in r.get('flags', []):
                flags[f] += 1
        ratio_cells = []
        for name, _ in names:
            ratios = []
            for rnd, r in rounds.items():
                if rnd in base and fig(r, name) and fig(base[rnd], name):
                    ratios.append(fig(r, name) / fig(base[rnd], name))
            if b == 2 or not ratios:
                ratio_cells.append('—')
            else:
                lower = sum(1 for x in ratios if x < 1)
                ratio_cells.append(f"{statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f}), lower in {lower} of {len(ratios)}")
        ver = [r.get('verification', {}).get('verdict') for r in rounds.values()]
        reg = ', '.join(f"{k} {v}" for k, v in regimes.items())
        fl = ', '.join(f"{k} {v}" for k, v in sorted(flags.items())) or '—'
        print(f"| {line} | {b} | {len(rounds)} | {' | '.join(cells)} | {reg} | {fl} | {' | '.join(ratio_cells)} |")
