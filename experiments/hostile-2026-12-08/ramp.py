import json, subprocess, os, sys
from concurrent.futures import ThreadPoolExecutor
base=json.load(open(os.environ.get('RAMP', 'ramp.json')))
def one(a):
    binname, b, seed, m = a
    sc=json.loads(json.dumps(base)); sc['frames']=480
    sc['generators'][0]['jitter']['seed']=seed
    fn=f'./ramp_{seed}.json'; json.dump(sc,open(fn,'w'))
    out=f'./oramp_{binname}_{seed}_{m}'
    env=dict(os.environ); env['OMP_NUM_THREADS']='1'
    subprocess.run([b,'run',fn,'--backend','omp','--method',m,'--no-gltf','--no-csv','--out',out,'--quiet'],capture_output=True,env=env)
    d=json.load(open(out+'/summary.json'))
    return a, d['deepest_body_penetration']['relative'], d['final_kinetic_energy_J'], d['counters']['sleeping_bodies']
jobs=[(n,b,s,m) for n,b in (('old',os.environ.get('OLD','smash-old')),('new',os.environ.get('NEW','smash'))) for s in range(1,9) for m in ('shape_matching','impulse')]
with ThreadPoolExecutor(1) as ex: res=list(ex.map(one,jobs))
for n in ('old','new'):
  for m in ('shape_matching','impulse'):
    rr=[r for r in res if r[0][0]==n and r[0][3]==m]
    print(n, m, 'deepest', ' '.join(f'{r[1]:.4f}' for r in rr), ' KE', ' '.join(f'{r[2]:.2g}' for r in rr), ' asleep', ' '.join(str(r[3]) for r in rr))
