"""How often `suite regress` would catch the 900 ns cost, and how often its A/A
would raise a false alarm, at other thresholds, round counts and tie bands:
per-round CPU-per-record ratios drawn with replacement from the records
beside this file (the 5 release checks' 25 rounds; the 5 A/A checks' 25
rounds, each also read the other way round), judged by the gate's rule
(src/commands/regress.rs: median past the threshold, the median's interval
clear of 1, sign-test p <= 0.05 with ties left out). Its output is power.txt."""
import json, random, math, os
from collections import defaultdict
recs=[json.loads(l) for l in open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "stateless.jsonl"))]
val=lambda r: r["metrics"]["us_cpu_per_record"]["value"]
batches=defaultdict(lambda: defaultdict(dict))
versions={}
for r in recs:
    batches[r["batch_id"]][r["round"]][r["entry"]]=val(r)
    versions.setdefault(r["batch_id"],set()).add(r["version"])
det,aa=[],[]
for b,rounds in batches.items():
    rs=[rd[2]/rd[1] for rd in rounds.values() if 1 in rd and 2 in rd]
    (aa if len(versions[b])==1 else det).extend(rs)
def sign_p(k,n):
    if n==0: return 1.0
    return sum(math.comb(n,i) for i in range(k,n+1))/2**n
def lower_rank(n):
    rank=None; below=0
    for k in range(1,n//2+1):
        below+=math.comb(n,k-1)
        if below/2**n>0.025: break
        rank=k
    return rank
def regression(rs,thr=0.05,tie=0.01):
    s=sorted(rs); n=len(s)
    med=s[n//2] if n%2 else (s[n//2-1]+s[n//2])/2
    k=lower_rank(n)
    lo,hi=(s[k-1],s[n-k]) if k else (s[0],s[-1])
    if lo<=1<=hi: return False
    w=sum(1 for r in rs if abs(r-1)>tie and r>1); b=sum(1 for r in rs if abs(r-1)>tie and r<1)
    if sign_p(max(b,w),b+w)>0.05: return False
    return med>1 and w>b and med-1>thr
def rate(pool,n,tie,it=20000,shift=1.0,thr=0.05):
    rnd=random.Random(7)
    return sum(regression([rnd.choice(pool)*shift for _ in range(n)],thr=thr,tie=tie) for _ in range(it))/it
print(f"detection ratios ({len(det)}):", " ".join(f"{r:.3f}" for r in det))
print(f"A/A ratios ({len(aa)}):", " ".join(f"{r:.3f}" for r in aa))
aas=aa+[1/r for r in aa]
sd=lambda xs: (sum((x-sum(xs)/len(xs))**2 for x in xs)/(len(xs)-1))**.5
print(f"sd of A/A ratios {sd(aa):.4f}, of detection ratios {sd(det):.4f}, mean detection {sum(det)/len(det):.4f}")
for thr in (0.05,0.03,0.02):
  for n in (5,7,8,10):
    for tie in (0.01,0.0):
        c=rate(det,n,tie,thr=thr)
        print(f"thr {thr:.2f} rounds {n:2} tie {tie:.2f}: caught {c:.3f} (5 of 5: {c**5:.3f})  A/A alarm {rate(aas,n,tie,thr=thr):.4f}  "
              + " ".join(f"+{d}%:{rate(aas,n,tie,shift=1+d/100,thr=thr):.2f}" for d in (5,7,10)))
# How many rounds a 5 % regression needs on this host's noise.
for thr in (0.05,0.03,0.02):
    for n in (15,20):
        c=rate(det,n,0.01,thr=thr)
        print(f"thr {thr:.2f} rounds {n:2} tie 0.01: caught {c:.3f} (5 of 5: {c**5:.3f})  A/A alarm {rate(aas,n,0.01,thr=thr):.4f}")
