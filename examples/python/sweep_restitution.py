"""Rest position of the lab bunny against restitution: a parameter sweep on Ray, plotted.

    python examples/python/sweep_restitution.py [--address HOST:PORT] [--frames N] [--out sweep.png]

Without --address Ray starts on this machine. docs/python.md.
"""
import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from smash.batch import param_grid, run_many  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--address", default=None, help="an existing Ray cluster (HOST:PORT); default: local")
    ap.add_argument("--frames", type=int, default=None, help="frames per scene (default: the scene's)")
    ap.add_argument("--points", type=int, default=8, help="restitution values in [0, 0.9]")
    ap.add_argument("--out", default="sweep_restitution.png")
    ap.add_argument("--backend", default="omp")
    args = ap.parse_args(argv)
    values = list(np.linspace(0.0, 0.9, args.points))
    jobs = param_grid(ROOT / "scenes" / "lab_bunny.json", {"materials.default.restitution": values})
    results = run_many(jobs, backend=args.backend, address=args.address, frames=args.frames)
    ok = [r for r in results if r["ok"]]
    for r in results:
        if not r["ok"]:
            print("failed:", r["params"], r["error"])
    e = [r["params"]["materials.default.restitution"] for r in ok]
    x = [r["summary"]["positions"][0][0] for r in ok]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(e, x, "o-")
    ax.set_xlabel("restitution")
    ax.set_ylabel("rest position x of the bunny (m)")
    ax.set_title("lab bunny: where it comes to rest")
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)
    print(f"{len(ok)}/{len(results)} scenes; plot: {args.out}")
    return 0 if len(ok) == len(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
