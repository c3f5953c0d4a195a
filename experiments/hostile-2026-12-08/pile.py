import json, subprocess, sys, os
from concurrent.futures import ThreadPoolExecutor
BIN=os.environ.get("BIN", "smash")
base=json.load(open(os.environ.get('PILE', 'pile_100.json')))
def one(args):
    seed, method, frames, gate = args
    sc=json.loads(json.dumps(base)); sc['frames']=frames
    for g in sc['generators']: g['jitter']['seed'] = seed*10 + g['jitter']['seed']
    fn=f'./pile_{seed}_{method}_{frames}_{gate}.json'; json.dump(sc, open(fn,'w'))
    # scene refers to meshes/ relative path: copy meshes dir exists in .? use scenes dir
    out=fn[:-5]
    env=dict(os.environ); env['OMP_NUM_THREADS']='1'
    if gate=='off': pass
    if gate=='on': env['SMASH_PAIR_ENTRY']='0.5'
    r=subprocess.run([BIN,'run',fn,'--backend','omp','--method',method,'--no-gltf','--no-csv','--out',out,'--quiet'],capture_output=True,text=True,env=env)
    d=json.load(open(out+'/summary.json'))
    return args, d['final_kinetic_energy_J'], d['counters']['sleeping_bodies'], d['deepest_body_penetration']['relative']
jobs=[(s,m,f,g) for s in range(1,13) for m in ("shape_matching","impulse") for f in (240,) for g in ("off","on")]
with ThreadPoolExecutor(2) as ex:
    res=list(ex.map(one,jobs))
for g in ('off','on'):
  for f in (240,):
    for m in ('shape_matching','impulse'):
      rows=[r for r in res if r[0][1]==m and r[0][2]==f and r[0][3]==g]
      print(f'gate {g} {m:15s} {f/60:.0f}s  KE', ' '.join(f'{r[1]:.3g}' for r in rows), ' asleep', ' '.join(str(r[2]) for r in rows), ' deepest', ' '.join(f'{r[3]:.3f}' for r in rows))
