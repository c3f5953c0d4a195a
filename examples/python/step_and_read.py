"""Stepping a world while reading poses into NumPy: the height of every body of a pile over time.

    python examples/python/step_and_read.py [--scene scenes/pile_100.json] [--frames N] [--backend omp]
"""
import argparse
from pathlib import Path

import numpy as np

import smash

ROOT = Path(__file__).resolve().parents[2]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scene", default=str(ROOT / "scenes" / "pile_100.json"))
    ap.add_argument("--frames", type=int, default=120)
    ap.add_argument("--backend", default="auto")
    args = ap.parse_args(argv)
    scene = smash.load_scene(args.scene)
    world = smash.World(scene, backend=args.backend)
    heights = np.empty((args.frames, scene.body_count))
    for f in range(args.frames):
        world.step(scene.substeps)                  # one frame
        heights[f] = world.positions()[:, 1]        # (N, 3) copy → the y column
    speeds = np.linalg.norm(world.linear_velocities(), axis=1)
    print(f"{scene.name} on {world.backend}: {world.frame} frames, t = {world.time:.3f} s")
    print(f"mean height {heights[0].mean():.3f} m → {heights[-1].mean():.3f} m; "
          f"fastest body now {speeds.max():.3f} m/s; asleep {world.sleeping_bodies}/{scene.body_count}")
    return heights


if __name__ == "__main__":
    main()
