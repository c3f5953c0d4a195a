import json, subprocess, csv, os, sys
BIN=os.environ.get("BIN", "smash")
def scene(H, e, m1=1, m2=1, off=0.0):
    return {"dt": 1/60, "frames": 90, "solver": {"sleep": False},
      "materials": {"default": {"restitution": e, "friction": 0.5}},
      "colliders": [{"type": "plane", "point": [0, 0, 0]}],
      "shapes": {"base": {"mesh": "meshes/box.obj", "scale": 0.1, "particle_mass": m1, "sampling": {"mode": "surface", "count": 400, "seed": 3}},
                 "top": {"mesh": "meshes/box.obj", "scale": 0.1, "particle_mass": m2, "sampling": {"mode": "surface", "count": 400, "seed": 4}}},
      "bodies": [{"shape": "base", "position": [0, 0.05, 0]}, {"shape": "top", "position": [off, 0.15 + H, off]}]}
for gate in ('off','on'):
  worst = 0
  for H in (0.05, 0.15, 0.3, 0.45, 0.6, 0.9):
    for e in (0.2, 0.5, 1.0):
      for be in ('reference','omp'):
        for m in ('shape_matching','impulse'):
          fn='./turn.json'; json.dump(scene(H,e), open(fn,'w'))
          env=dict(os.environ)
          if gate=='off': env['SMASH_NO_GATE']='1'
          subprocess.run([BIN,'run',fn,'--backend',be,'--method',m,'--no-gltf','--out','./o_turn','--quiet'],env=env,capture_output=True)
          ys={0:[],1:[]}
          for r in csv.DictReader(open('./o_turn/poses.csv')): ys[int(r['body'])].append(float(r['y']))
          y=ys[1]; b=ys[0]
          # first frame where the top box moves up after moving down fast
          for n in range(2,len(y)):
            if y[n]-y[n-1] > 0 and y[n-1]-y[n-2] < -0.005:
              gap=(y[n-1]-0.05)-(b[n-1]+0.05); break
          else: gap=float('nan')
          worst=max(worst,gap)
          if gap>0.005: print(gate,H,e,be,m,'turned back',round(gap,4),'above')
  print('gate',gate,'worst gap at turn-back',worst)
