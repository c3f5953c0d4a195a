"""Batches of independent worlds on Ray: parameter sweeps, seeds, many scenes.

    from smash.batch import param_grid, run_many
    jobs = param_grid("scenes/lab_bunny.json", {"materials.default.restitution": [0.1, 0.5, 0.9],
                                               "materials.default.friction": [0.1, 0.5]})
    for r in run_many(jobs, backend="omp"):           # local Ray, one task per scene
        print(r["params"], r["summary"]["positions"][0])

``address=None`` starts (or reuses) Ray on this machine; ``address="HOST:PORT"`` joins an existing
cluster (``ray start --head`` on one node, ``ray start --address=HOST:PORT`` on the others; every
node needs smash installed). A task that fails (bad scene, watchdog) is reported in its result
with ``ok=False`` and the error, and the batch goes on. Each task builds its world from the scene
alone, so its result is the one a run of that scene alone gives, bit for bit on the CPU backends.
docs/python.md.
"""
from __future__ import annotations

import copy
import itertools
import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Union

import numpy as np

__all__ = ["param_grid", "run_one", "run_many", "imap_many"]

Job = Dict[str, Any]


def _set_path(scene: dict, dotted: str, value: Any) -> None:
    node: Any = scene
    parts = dotted.split(".")
    for i, p in enumerate(parts[:-1]):
        key: Any = int(p) if isinstance(node, list) else p
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            raise KeyError(f"param_grid: '{dotted}': no '{'.'.join(parts[:i + 1])}' in the scene") from None
    last = parts[-1]
    if isinstance(node, list):
        try:
            node[int(last)] = value
        except (ValueError, IndexError):
            raise KeyError(f"param_grid: '{dotted}': no element '{last}' in the scene") from None
    elif isinstance(node, dict) and last in node:
        node[last] = value
    else:
        raise KeyError(f"param_grid: '{dotted}': no '{dotted}' in the scene (only existing keys can be swept)")


def param_grid(base: Union[str, os.PathLike, Mapping[str, Any]], axes: Mapping[str, Sequence[Any]]) -> List[Job]:
    """One job per point of the product of ``axes`` over a base scene (a path or a dict).

    Keys are dotted paths to existing values of the scene's JSON (``"materials.default.restitution"``,
    ``"bodies.0.position"``; a path that is not there raises KeyError at once); the jobs carry the point as ``params`` and the scene as a dict, with
    its meshes resolved against the base file's folder.
    """
    if isinstance(base, Mapping):
        scene, base_dir = copy.deepcopy(dict(base)), os.getcwd()
    else:
        path = Path(base)
        scene, base_dir = json.loads(path.read_text()), str(path.resolve().parent)
    names = list(axes)
    jobs = []
    for values in itertools.product(*(axes[n] for n in names)):
        s = copy.deepcopy(scene)
        for n, v in zip(names, values):
            _set_path(s, n, v)
        jobs.append({"scene": s, "params": dict(zip(names, values)), "base_dir": base_dir})
    return jobs


def _job(item: Union[Job, str, os.PathLike, Mapping[str, Any]]) -> Job:
    if isinstance(item, Mapping) and "scene" in item:
        return dict(item)
    if isinstance(item, Mapping):
        return {"scene": dict(item), "params": {}, "base_dir": os.getcwd()}
    return {"scene": os.fspath(item), "params": {}, "base_dir": None}


def run_one(job: Job, backend: str = "omp", frames: Optional[int] = None, poses: bool = False) -> Dict[str, Any]:
    """Runs one job in this process: the scene's frames (or ``frames``) on ``backend``; returns
    ``{"ok", "error", "params", "summary"}`` — never raises for a bad scene or an incident."""
    import smash  # in a Ray worker: imported there

    out: Dict[str, Any] = {"ok": False, "error": None, "params": job.get("params", {}), "summary": None}
    try:
        scene = smash.load_scene(job["scene"], base_dir=job.get("base_dir"), name=job.get("name", "scene"))
        world = smash.World(scene, backend=backend)
        n = (frames if frames is not None else scene.frames) * scene.substeps
        world.step(n)
        positions = world.positions()
        summary: Dict[str, Any] = {
            "scene": scene.name,
            "backend": world.backend,
            "steps": world.steps,
            "time": world.time,
            "bodies": world.body_count,
            "positions": positions.tolist(),
            "max_speed": float(np.max(np.linalg.norm(world.linear_velocities(), axis=1))) if world.body_count else 0.0,
            "sleeping_bodies": world.sleeping_bodies,
            "overflow": world.overflow,
            "incidents": world.incidents,
        }
        if poses:
            summary["rotations"] = world.rotations().tolist()
        out["summary"] = summary
        if world.incidents:
            out["error"] = f"watchdog: {len(world.incidents)} bodies with incidents (first: {world.incidents[0]})"
        else:
            out["ok"] = True
    except Exception as e:  # reported per job; the batch goes on
        out["error"] = f"{type(e).__name__}: {e}"
    return out


def _progress(total: int, enabled: bool):
    if not enabled:
        return None
    try:
        from tqdm import tqdm
        return tqdm(total=total, desc="smash batch", unit="scene")
    except ImportError:
        class Line:
            def __init__(self):
                self.n = 0

            def update(self, k=1):
                self.n += k
                print(f"\rsmash batch: {self.n}/{total} scenes", end="", file=sys.stderr, flush=True)

            def close(self):
                print(file=sys.stderr)
        return Line()


def imap_many(items: Iterable[Union[Job, str, os.PathLike, Mapping[str, Any]]], backend: str = "omp",
              address: Optional[str] = None, frames: Optional[int] = None, poses: bool = False,
              num_cpus: float = 1, num_gpus: float = 0, progress: bool = True) -> Iterator[Dict[str, Any]]:
    """Runs every job as a Ray task and yields each result as it arrives (completion order), with
    ``"index"`` its position in ``items``. ``num_cpus``/``num_gpus`` are each task's Ray resources
    (``num_gpus=1`` with ``backend="cuda"``: one GPU per task, Ray sets CUDA_VISIBLE_DEVICES)."""
    import ray

    jobs = [_job(i) for i in items]
    if not ray.is_initialized():
        if address is None:
            ray.init(include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    task = ray.remote(num_cpus=num_cpus, num_gpus=num_gpus)(run_one)
    pending = {task.remote(j, backend, frames, poses): k for k, j in enumerate(jobs)}
    bar = _progress(len(jobs), progress)
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                k = pending.pop(ref)
                try:
                    result = ray.get(ref)
                except Exception as e:  # the worker died: reported for this job only
                    result = {"ok": False, "error": f"{type(e).__name__}: {e}", "params": jobs[k].get("params", {}),
                              "summary": None}
                result["index"] = k
                if bar:
                    bar.update(1)
                yield result
    finally:
        if bar:
            bar.close()


def run_many(items: Iterable[Union[Job, str, os.PathLike, Mapping[str, Any]]], backend: str = "omp",
             address: Optional[str] = None, frames: Optional[int] = None, poses: bool = False,
             num_cpus: float = 1, num_gpus: float = 0, progress: bool = True) -> List[Dict[str, Any]]:
    """imap_many, collected in the order of ``items``."""
    results = list(imap_many(items, backend=backend, address=address, frames=frames, poses=poses,
                             num_cpus=num_cpus, num_gpus=num_gpus, progress=progress))
    return sorted(results, key=lambda r: r["index"])
