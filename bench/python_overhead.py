"""The Python module's costs, measured side by side in one run (docs/python.md):

1. a `World.step()` call from Python against the same steps inside one call (the C++ loop), on a
   small scene (one body of a few particles: the per-call overhead shows) and on the lab bunny;
2. a Ray sweep of 16 lab scenes (4 restitutions × 4 frictions) with 1 and with 2 workers:
   scenes per minute.

    PYTHONPATH=build/ci/python build/venv/bin/python bench/python_overhead.py [--out FILE.json]
"""
import argparse
import json
import os
import platform
import time
from pathlib import Path

import smash

ROOT = Path(__file__).resolve().parents[1]


def small_scene():
    return {
        "name": "one_box", "dt": 0.01, "frames": 100, "gravity": [0, -9.8, 0],
        "solver": {"body_contacts": False},
        "materials": {"default": {"restitution": 0.5, "friction": 0.2}},
        "colliders": [],
        "shapes": {"box": {"mesh": str(ROOT / "scenes" / "meshes" / "box.obj"), "scale": 0.2,
                           "sampling": {"mode": "surface", "count": 8, "seed": 1}}},
        "bodies": [{"shape": "box", "position": [0, 10, 0], "angular_velocity": [0.3, 1, 0]}],
    }


def per_call(scene, backend, n, repeats=5):
    best_loop = best_one = float("inf")
    for _ in range(repeats):
        a = smash.World(scene, backend=backend)
        t = time.perf_counter()
        for _ in range(n):
            a.step()
        best_loop = min(best_loop, time.perf_counter() - t)
        b = smash.World(scene, backend=backend)
        t = time.perf_counter()
        b.step(n)
        best_one = min(best_one, time.perf_counter() - t)
    return {"steps": n, "python_loop_us_per_step": 1e6 * best_loop / n, "one_call_us_per_step": 1e6 * best_one / n,
            "overhead_us_per_call": 1e6 * (best_loop - best_one) / n}


def sweep(workers, frames):
    import ray
    from smash.batch import param_grid, run_many
    jobs = param_grid(ROOT / "scenes" / "lab_bunny.json", {"materials.default.restitution": [0.0, 0.3, 0.6, 0.9],
                                                         "materials.default.friction": [0.05, 0.2, 0.5, 1.0]})
    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    try:
        run_many(jobs[:2], backend="omp", frames=5, progress=False)  # workers started and warm
        t = time.perf_counter()
        results = run_many(jobs, backend="omp", frames=frames, progress=False)
        elapsed = time.perf_counter() - t
    finally:
        ray.shutdown()
    assert all(r["ok"] for r in results)
    return {"workers": workers, "scenes": len(jobs), "frames": frames, "seconds": elapsed,
            "scenes_per_minute": 60 * len(jobs) / elapsed}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None)
    ap.add_argument("--frames", type=int, default=600, help="frames per sweep scene (the lab's 600)")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # one thread per Ray worker
    result = {"machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
              "omp_num_threads": os.environ["OMP_NUM_THREADS"]}
    result["step_call_small_cpp"] = per_call(small_scene(), "cpp", 20000)
    result["step_call_small_omp"] = per_call(small_scene(), "omp", 20000)
    result["step_call_lab_omp"] = per_call(str(ROOT / "scenes" / "lab_bunny.json"), "omp", 600, repeats=3)
    result["sweep"] = [sweep(1, args.frames), sweep(2, args.frames)]
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
