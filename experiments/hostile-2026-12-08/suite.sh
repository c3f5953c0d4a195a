cd .
python3 sw2.py 1 5 1 0.1,0.2 | tail -1
python3 sw1.py 1 | tail -1
python3 sw2.py 1 10 1 0.03,0.1 | tail -1
python3 -c "
import sys; sys.path.insert(0,'.'); from sweep import *
r=[]
for be in ('reference','omp'):
  for m in ('shape_matching','impulse'):
    r.append(round(run(scene(), be, m, 'x')[0],2))
    sc=json.load(open('st6_100.json')); sc['frames']=1200
    r.append(round(run(sc, be, m, 'y')[0],2))
print('st10_10/st6_100 tilts', r)
"
