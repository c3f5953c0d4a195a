#!/usr/bin/env python3
"""Plot the many-body benchmark: particle-steps/s against body count, one line per backend.

    python3 bench/plot_scaling.py bench/results/<machine>/many_bodies.json [-o scaling.png]

Needs matplotlib (pip install matplotlib). Several result files may be given: each backend of
each file becomes a line labelled "<machine>: <backend>", so CPU and GPU runs can share a plot.
"""
import argparse
import json
import sys
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", type=Path, help="JSON files written by smash_bench --out")
    parser.add_argument("-o", "--output", type=Path, help="PNG to write (default: next to the first file)")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("error: matplotlib is not installed (pip install matplotlib)", file=sys.stderr)
        return 2

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    for path in args.results:
        try:
            data = json.loads(path.read_text())
            context, entries = data["context"], data["benchmarks"]
        except (OSError, ValueError, KeyError) as e:
            print(f"error: {path}: not a smash_bench result file ({e})", file=sys.stderr)
            return 2
        backends = sorted({e["backend"] for e in entries})
        for backend in backends:
            rows = sorted((e["bodies"], e["particle_steps_per_second"]) for e in entries if e["backend"] == backend)
            scene = f" {context['scene']}" if "scene" in context else ""
            ax.plot([r[0] for r in rows], [r[1] for r in rows], marker="o",
                    linestyle="-" if scene != " resting" else "--",
                    label=f"{context['machine']}{scene}: {backend}")
        if "stream_triad_GBps" in context:
            bound = context["stream_triad_GBps"] * 1e9 / context["model_bytes_per_particle_step"]
            ax.axhline(bound, linestyle=":", linewidth=0.8, color="grey")
            ax.annotate(f"{context['machine']} bandwidth bound ({context['stream_triad_GBps']:.0f} GB/s / "
                        f"{context['model_bytes_per_particle_step']:.0f} B)", (1, bound), fontsize=7,
                        va="bottom", color="grey")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("bodies (bunnies, %s particles each)" % context.get("particles_per_body", "?"))
    ax.set_ylabel("particle-steps / s")
    ax.set_title("smash: shape matching, many bodies without body contact")
    ax.grid(True, which="both", linewidth=0.3)
    ax.legend(fontsize=8)
    out = args.output or args.results[0].with_name("scaling.png")
    fig.tight_layout()
    fig.savefig(out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
