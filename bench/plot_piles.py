#!/usr/bin/env python3
"""Plot the pile benchmark: ms per step against body count, one line per solver and thread count.

    python3 bench/plot_piles.py bench/results/<machine>/pile_*.json [-o piles.png]

Each file is one `smash_bench_pile --out` result (one scene); every row of every file becomes a
point at the scene's body count, on the line of its solver and OpenMP thread count (a peer runs on
one thread). A row that ran fewer frames than the scene (`--peer-frames`) is drawn hollow and
labelled with its frames: its time covers the falling part of the run only. Needs matplotlib.
"""
import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", type=Path, help="JSON files written by smash_bench_pile --out")
    parser.add_argument("-o", "--output", type=Path, help="PNG to write (default: piles.png next to the first file)")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("error: matplotlib is not installed (pip install matplotlib)", file=sys.stderr)
        return 2

    lines = defaultdict(dict)  # label -> bodies -> (ms per step, partial frames or None)
    machines = set()
    for path in args.results:
        try:
            data = json.loads(path.read_text())
            context, rows = data["context"], data["results"]
            bodies, frames = int(context["bodies"]), int(context["frames"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"error: {path}: not a smash_bench_pile result file ({e})", file=sys.stderr)
            return 2
        machines.add(context.get("machine", "?"))
        for row in rows:
            solver = row["solver"]
            threads = context.get("omp_threads", 1) if solver.startswith("smash") else 1
            label = f"{solver} ({threads} thread{'s' if threads != 1 else ''})"
            row_frames = int(row.get("frames", frames))
            partial = row_frames if row_frames < frames else None
            previous = lines[label].get(bodies)
            # Prefer a full-length run of the same solver at the same size over a partial one.
            if previous is None or (previous[1] is not None and partial is None):
                lines[label][bodies] = (float(row["ms_per_step"]), partial)

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    for label in sorted(lines):
        points = sorted(lines[label].items())
        line, = ax.plot([b for b, _ in points], [p[0] for _, p in points], marker="o", label=label)
        for b, (ms, partial) in points:
            if partial is not None:
                ax.plot([b], [ms], marker="o", markerfacecolor="white", color=line.get_color())
                ax.annotate(f"first {partial} frames", (b, ms), textcoords="offset points", xytext=(6, -4),
                            fontsize=7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("bodies in the pile")
    ax.set_ylabel("ms per step (lower is better)")
    ax.set_title(f"Piles: smash, Bullet and MuJoCo ({', '.join(sorted(machines))})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    output = args.output or args.results[0].parent / "piles.png"
    fig.tight_layout()
    fig.savefig(output)
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
