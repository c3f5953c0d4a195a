import sys, os; sys.path.insert(0,'.'); from sweep import *
from concurrent.futures import ThreadPoolExecutor
tag = sys.argv[1]
jobs = []
for n in (3, 5, 10):
  for ratio in (1, 10):
    for gap in (0.005, 0.02, 0.05):
      for os_ in (1, 2, 3, 4):
        for be in ('reference', 'omp'):
          for m in ('shape_matching', 'impulse'):
            jobs.append((n, ratio, gap, os_, be, m))
def one(j):
    n, ratio, gap, os_, be, m = j
    t, f, s = run(scene(n=n, ratio=ratio, gap=gap, offseed=os_, frames=600), be, m, f'{tag}_{n}_{ratio}_{gap}_{os_}_{be}_{m}')
    return j, t, f
import collections
bad = collections.Counter(); tot = collections.Counter(); tilts = []
with ThreadPoolExecutor(2) as ex:
    for j, t, f in ex.map(one, jobs):
        key = (j[0], j[1], j[2]); tot[key] += 1; tilts.append(t)
        if t > 10 or f: bad[key] += 1
print(tag, 'bad', sum(bad.values()), 'of', sum(tot.values()), ' tilt<2deg:', sum(1 for t in tilts if t < 2), ' by (n,ratio,gap):', ' '.join(f'{k[0]}/{k[1]}/{k[2]}:{bad[k]}' for k in sorted(tot)))
