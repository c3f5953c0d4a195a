import sys; sys.path.insert(0,'.'); from sweep import *
ss = int(sys.argv[1]); n = int(sys.argv[2]); ratio = float(sys.argv[3]); gaps = [float(g) for g in sys.argv[4].split(',')]
size = float(sys.argv[5]) if len(sys.argv) > 5 else 0.1
bad = 0; tot = 0; worst = 0
for gap in gaps:
  for os_ in (1, 2, 3):
    for be in ('reference', 'omp'):
      for m in ('shape_matching', 'impulse'):
        t, f, s = run(scene(n=n, ratio=ratio, gap=gap, size=size, offseed=os_, off=size*0.05, substeps=ss, frames=900), be, m, f'{be}_{m}_{ss}')
        tot += 1; worst = max(worst, t)
        if t > 10 or f: bad += 1; print(gap, os_, be, m, round(t,1), f, round(s,4), flush=True)
print("n", n, "ratio", ratio, "substeps", ss, "gaps", gaps, "bad", bad, "of", tot, "worst tilt", round(worst,1))
