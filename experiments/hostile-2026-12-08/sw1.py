import sys; sys.path.insert(0,'.'); from sweep import *
import itertools
ss = int(sys.argv[1])
bad = 0; tot = 0; worst = 0
for gap in (0.002, 0.005, 0.01, 0.03):
  for os_ in (1, 2, 3):
    for be in ('reference', 'omp'):
      for m in ('shape_matching', 'impulse'):
        t, f, s = run(scene(gap=gap, offseed=os_, substeps=ss, frames=900), be, m, f'{be}_{m}_{ss}')
        tot += 1; worst = max(worst, t)
        if t > 10 or f: bad += 1; print(gap, os_, be, m, round(t,1), f, round(s,4), flush=True)
print("substeps", ss, "bad", bad, "of", tot, "worst tilt", round(worst,1))
