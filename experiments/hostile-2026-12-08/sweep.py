import json, subprocess, sys, math, os, random, itertools, csv
BIN = os.environ.get("BIN", "smash")
def scene(n=10, ratio=10.0, size=0.1, gap=0.005, off=0.005, offseed=None, count=200, shared=True, seed=7, frames=1200, substeps=1, fric=0.5, rest=0.2, dt=1/60):
    shapes = {}; bodies = []
    rnd = random.Random(offseed)
    pattern = [-1, 0, 1, -0.5, 0.5]
    y = 0
    for i in range(n):
        shapes[f"b{i}"] = {"mesh": "meshes/box.obj", "scale": size, "particle_mass": ratio ** i,
                           "sampling": {"mode": "surface", "count": count, "seed": seed if shared else seed + i}}
        if offseed is None: ox, oz = pattern[i % 5] * off, 0.0
        else: ox, oz = rnd.uniform(-off, off), rnd.uniform(-off, off)
        y = size / 2 + i * (size + gap)
        bodies.append({"shape": f"b{i}", "position": [ox, y, oz]})
    return {"name": "st", "dt": dt, "substeps": substeps, "frames": frames,
            "materials": {"default": {"restitution": rest, "friction": fric}},
            "colliders": [{"type": "plane", "point": [0, 0, 0]}], "shapes": shapes, "bodies": bodies}
def run(sc, backend, method, tag):
    fn = f"./s_{tag}.json"; out = f"./o_{tag}"
    json.dump(sc, open(fn, "w"))
    r = subprocess.run([BIN, "run", fn, "--backend", backend, "--method", method, "--no-gltf", "--out", out, "--quiet"], capture_output=True, text=True)
    n = len(sc["bodies"]); size = sc["shapes"]["b0"]["scale"]
    maxtilt = [0.0] * n; last = {}
    pen = 0
    if not os.path.exists(out + "/poses.csv"): return 999.0, n, 0.0
    for row in csv.DictReader(open(out + "/poses.csv")):
        b = int(row["body"]); qw, qx, qy, qz = (float(row[k]) for k in ("qw", "qx", "qy", "qz"))
        yy = 1 - 2 * (qx * qx + qz * qz)
        t = math.degrees(math.acos(max(-1, min(1, yy))))
        maxtilt[b] = max(maxtilt[b], t); last[b] = float(row["y"])
    fallen = sum(1 for i in range(n) if last[i] < size / 2 + i * size - size / 2)
    # final stack height deficit (sinking) of top box
    sink = (size / 2 + (n - 1) * size) - last[n - 1]
    return max(maxtilt), fallen, sink
if __name__ == "__main__":
    pass
