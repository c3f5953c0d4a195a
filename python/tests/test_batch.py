"""Batches on Ray: a 16-scene sweep on a local cluster started on 127.0.0.1 with 2 CPUs."""
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.ray

ray = pytest.importorskip("ray")

from smash.batch import param_grid, run_many, run_one  # noqa: E402


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """`ray start --head` on loopback with 2 CPUs, as a user starts a cluster's head node."""
    ray_cmd = shutil.which("ray", path=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    assert ray_cmd, "the ray command is installed with the ray package"
    port = _free_port()
    tmp = tmp_path_factory.mktemp("ray")
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="disabled")
    start = subprocess.run([ray_cmd, "start", "--head", "--node-ip-address=127.0.0.1", f"--port={port}",
                            "--num-cpus=2", "--num-gpus=0", "--include-dashboard=false",
                            f"--temp-dir={tmp}", "--disable-usage-stats"],
                           capture_output=True, text=True, env=env, timeout=180)
    assert start.returncode == 0, start.stdout + start.stderr
    try:
        yield f"127.0.0.1:{port}"
    finally:
        if ray.is_initialized():
            ray.shutdown()
        subprocess.run([ray_cmd, "stop", "--force"], capture_output=True, env=env, timeout=120)


def test_sweep_of_16_scenes_on_a_local_cluster(cluster, lab_path):
    jobs = param_grid(lab_path, {"materials.default.restitution": [0.0, 0.3, 0.6, 0.9],
                                 "materials.default.friction": [0.05, 0.2, 0.5, 1.0]})
    assert len(jobs) == 16
    # One broken scene in the batch: reported, and the others go on.
    broken = json.loads(lab_path.read_text())
    broken["dt"] = -1
    jobs.append({"scene": broken, "params": {"broken": True}, "base_dir": str(lab_path.parent)})
    results = run_many(jobs, backend="omp", address=cluster, frames=120, progress=True)
    assert [r["index"] for r in results] == list(range(17))
    assert all(r["ok"] for r in results[:16]), [r["error"] for r in results if not r["ok"]]
    assert not results[16]["ok"] and "dt" in results[16]["error"]
    # Each result is the one a run of that scene alone gives, bit for bit.
    for k in (0, 5, 15):
        alone = run_one(jobs[k], backend="omp", frames=120)
        assert alone["summary"]["positions"] == results[k]["summary"]["positions"]
    # The sweep changes the outcome: the rest position depends on restitution and friction.
    ends = {json.dumps(r["params"]): np.array(r["summary"]["positions"][0]) for r in results[:16]}
    assert len({tuple(np.round(v, 6)) for v in ends.values()}) > 4
