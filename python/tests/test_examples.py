"""The examples in examples/python, in reduced form."""
import importlib.util
import sys

import pytest


def _load(source, name):
    spec = importlib.util.spec_from_file_location(name, source / "examples" / "python" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_step_and_read(source):
    heights = _load(source, "step_and_read").main(["--frames", "20", "--backend", "omp"])
    assert heights.shape == (20, 96) and heights[-1].mean() < heights[0].mean()  # the pile falls


@pytest.mark.ray
def test_sweep_restitution(source, tmp_path):
    pytest.importorskip("ray")
    pytest.importorskip("matplotlib")
    import ray
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        out = tmp_path / "sweep.png"
        code = _load(source, "sweep_restitution").main(["--points", "3", "--frames", "30", "--out", str(out)])
        assert code == 0 and out.stat().st_size > 1000
    finally:
        ray.shutdown()
