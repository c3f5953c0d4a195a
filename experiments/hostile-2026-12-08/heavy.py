import json, subprocess, os, sys, csv, math
def stack(method):
    masses=[10.0**i for i in range(10)]; size=0.2; gap=0.01; stagger=0.01
    shapes={f"b{i}":{"mesh":"meshes/box.obj","scale":size,"particle_mass":m,"sampling":{"mode":"surface","count":400,"seed":3+i}} for i,m in enumerate(masses)}
    bodies=[{"shape":f"b{i}","position":[stagger if i%2 else -stagger, size/2+0.001+i*(size+gap),0]} for i in range(10)]
    return {"dt":1/60,"frames":int(sys.argv[2]),"solver":{"method":method},"materials":{"default":{"restitution":0.2,"friction":0.5}},
            "colliders":[{"type":"plane","point":[0,0,0],"normal":[0,1,0]}],"shapes":shapes,"bodies":bodies}
b=sys.argv[1]
for be in ('reference','omp'):
  for m in ('shape_matching','impulse'):
    json.dump(stack(m),open('./heavy.json','w'))
    subprocess.run([b,'run','./heavy.json','--backend',be,'--no-gltf','--out','./o_heavy','--quiet'],capture_output=True)
    mt=0
    for r in csv.DictReader(open('./o_heavy/poses.csv')):
        qx,qz=float(r['qx']),float(r['qz']); mt=max(mt, math.acos(max(-1,min(1,1-2*(qx*qx+qz*qz)))))
    print(os.path.basename(os.path.dirname(os.path.dirname(b))), be, m, 'max tilt rad', round(mt,4), flush=True)
