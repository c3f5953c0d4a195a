import sys, csv, math, json; sys.path.insert(0,'.'); from sweep import *
n=int(sys.argv[1]); ratio=float(sys.argv[2]); gap=float(sys.argv[3]); osd=int(sys.argv[4]); be=sys.argv[5]; m=sys.argv[6]; ss=int(sys.argv[7]) if len(sys.argv)>7 else 1
extra = json.loads(sys.argv[8]) if len(sys.argv)>8 else {}
sc = scene(n=n, ratio=ratio, gap=gap, offseed=osd, substeps=ss, frames=400)
sc.update(extra)
print(run(sc, be, m, 'tr'))
rows = list(csv.DictReader(open('./o_tr/poses.csv')))
prev = {}
for r in rows:
    f=int(r['frame']); b=int(r['body'])
    qw,qx,qy,qz=(float(r[k]) for k in ('qw','qx','qy','qz'))
    t=math.degrees(math.acos(max(-1,min(1,1-2*(qx*qx+qz*qz)))))
    prev.setdefault(f, {})[b]=(t, float(r['y']))
for f in sorted(prev):
    if f % int(__import__("os").environ.get("EVERY","5")) == 0 and f < int(__import__("os").environ.get("UPTO","200")):
        print(f, ' '.join(f"{prev[f][b][0]:5.1f}" for b in range(n)), ' | y ', ' '.join(f"{prev[f][b][1]:.3f}" for b in range(n)))
