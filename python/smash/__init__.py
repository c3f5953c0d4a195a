"""smash from Python: scenes, worlds stepped on the CPU or GPU backends, state as NumPy arrays.

    import smash
    scene = smash.load_scene("scenes/lab_bunny.json")
    world = smash.World(scene, backend="omp")
    world.step(600)
    print(world.positions(), world.rotations())   # (N, 3), (N, 4) x, y, z, w

docs/python.md has the whole story (views vs copies, errors, the GIL, batches on Ray).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Mapping, Optional, Union

import numpy as np

from . import _smash
from ._smash import DeviceError, InputError, OutOfMemory, OutputError, Scene

__all__ = [
    "DeviceError",
    "InputError",
    "OutOfMemory",
    "OutputError",
    "Scene",
    "World",
    "backend_available",
    "load_scene",
    "run",
]

SceneSource = Union[str, os.PathLike, Mapping[str, Any], Scene]

_BACKENDS = ("auto", "cuda", "omp", "cpp", "reference")


def backend_available(name: str) -> bool:
    """Whether a backend ("auto", "cuda", "omp", "cpp", "reference") can run here: cuda needs the
    CUDA build and a GPU. Raises InputError for another name."""
    if name not in _BACKENDS:
        raise InputError(f"backend: expected one of {', '.join(repr(b) for b in _BACKENDS)}, got {name!r}")
    return name == "auto" or _smash.backend_available(name)


def load_scene(source: SceneSource, base_dir: Optional[Union[str, os.PathLike]] = None,
               name: str = "scene") -> Scene:
    """A validated scene from a JSON file path, or from a dict with the file's keys.

    Mesh paths in a dict are resolved against ``base_dir`` (default: the current directory).
    Errors raise :class:`smash.InputError` (a ``ValueError``) whose message names the file (or
    ``name`` for a dict) and the field. A :class:`Scene` is returned as it is.
    """
    if isinstance(source, Scene):
        return source
    if isinstance(source, Mapping):
        try:
            text = json.dumps(source, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise InputError(f"{name}: not a JSON document: {e}") from None
        return _smash._load_scene_text(text, name, str(base_dir if base_dir is not None else os.getcwd()))
    return _smash._load_scene_file(os.fspath(source))


class World(_smash.World):
    """Every body of a scene stepped on one backend (see :class:`smash._smash.World`).

    ``World(scene, backend="auto", method="", profile=False)``: ``scene`` is a :class:`Scene`, a
    path or a dict; ``backend`` is ``"auto"`` (cuda when a GPU is present, else omp), ``"cuda"``,
    ``"omp"``, ``"cpp"`` or ``"reference"``; ``method`` overrides the scene's
    (``"shape_matching"`` or ``"impulse"``).

    The getters (positions(), rotations(), ...) return NumPy copies (float64, C-contiguous): they
    stay valid, and do not change, when the world steps or is destroyed. On the CPU backends
    particle_positions_view() / particle_velocities_view() give the live float32 arrays in place.
    """

    def __init__(self, scene: SceneSource, backend: str = "auto", method: str = "", profile: bool = False):
        if backend not in _BACKENDS:
            raise InputError(f"backend: expected one of {', '.join(repr(b) for b in _BACKENDS)}, got {backend!r}")
        super().__init__(load_scene(scene), backend, method, profile)

    def step(self, n: int = 1) -> None:
        """Takes ``n`` solver steps (an int ≥ 0); the GIL is released meanwhile, and calls on this
        world from other threads wait until it is done. Ctrl-C is seen when the call returns:
        step in chunks to stay interruptible."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise InputError(f"step: n must be an int, got {type(n).__name__}")
        if not 0 <= n < 2 ** 62:
            raise InputError(f"step: n must be between 0 and 2**62, got {n}")
        super().step(int(n))

    def set_state(self, positions, rotations, linear_velocities, angular_velocities, scalar_first: bool = False) -> None:
        """Replaces every body's pose and velocities; arrays as positions() etc. return them.

        Shapes (N, 3), (N, 4), (N, 3), (N, 3); rotations unit quaternions (x, y, z, w), or
        (w, x, y, z) with ``scalar_first=True``. Anything array-like converts to float64.
        Raises InputError (nothing changes) for a wrong shape, a non-finite value or a quaternion
        that is not of unit length (to 1e-3). Every body is awake afterwards.
        """
        def rows(a, what: str) -> np.ndarray:
            try:
                return np.ascontiguousarray(np.asarray(a, dtype=np.float64))
            except (TypeError, ValueError) as e:
                raise InputError(f"set_state: {what}: {e}") from None

        arrays = [rows(a, w) for a, w in ((positions, "positions"), (rotations, "rotations"),
                                          (linear_velocities, "linear_velocities"),
                                          (angular_velocities, "angular_velocities"))]
        for a, w in zip(arrays, ("positions", "rotations", "linear_velocities", "angular_velocities")):
            if a.ndim != 2:
                raise InputError(f"set_state: {w} must be a 2-D array, got {a.ndim} dimensions")
        self._set_state(*arrays, scalar_first=scalar_first)


def _executable() -> str:
    """The `smash` command that run() drives: the one shipped with the package, else $SMASH_EXE,
    else `smash` on PATH."""
    # Next to the package's sources (a wheel, the build tree) or next to the compiled module (an
    # editable install keeps the sources in the checkout and the module in site-packages).
    for folder in (Path(__file__).resolve().parent, Path(_smash.__file__).resolve().parent):
        shipped = folder / "bin" / "smash"
        if shipped.is_file() and os.access(shipped, os.X_OK):
            return str(shipped)
    env = os.environ.get("SMASH_EXE")
    if env:
        return env
    found = shutil.which("smash")
    if found:
        return found
    raise RuntimeError("smash.run: the smash command was not found (not in the package, $SMASH_EXE or PATH)")


def run(scene: Union[str, os.PathLike, Mapping[str, Any]], out: Union[str, os.PathLike], render: bool = False,
        backend: str = "auto", method: Optional[str] = None, frames: Optional[int] = None,
        base_dir: Optional[Union[str, os.PathLike]] = None, extra_args: Optional[list] = None) -> dict:
    """Does what ``smash run SCENE --out OUT`` does and returns its summary.json as a dict.

    ``scene`` is a file path or a dict (written next to the outputs as ``scene.json``, meshes
    resolved against ``base_dir``, default the current directory). The outputs (animation.glb,
    poses.csv, summary.json, with ``render=True`` pictures) land in ``out`` as the command
    publishes them: complete or not at all. A scene the checks reject still returns its summary
    (``summary["verdict"]["pass"]`` is False); bad input raises InputError with the command's
    message, an unwritable ``out`` OutputError; a run stopped by the watchdog raises RuntimeError.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out}: not a folder")
    if frames is not None and (isinstance(frames, bool) or not isinstance(frames, (int, np.integer)) or frames < 1):
        raise InputError(f"run: frames must be an int ≥ 1, got {frames!r}")
    with tempfile.TemporaryDirectory(prefix="smash-run-") as tmp:
        if isinstance(scene, Mapping):
            # Validate first (a clear InputError), then hand the command the same text.
            load_scene(scene, base_dir=base_dir)
            text = json.dumps(_absolute_meshes(dict(scene), Path(base_dir or os.getcwd())))
            path = Path(tmp) / "scene.json"
            path.write_text(text)
        else:
            path = Path(scene)
        cmd = [_executable(), "run", str(path), "--out", str(out), "--quiet", "--progress", "never",
               "--backend", backend]
        if method:
            cmd += ["--method", method]
        if frames is not None:
            cmd += ["--frames", str(int(frames))]
        if render:
            cmd += ["--render"]
        cmd += list(extra_args or [])
        proc = subprocess.run(cmd, capture_output=True, text=True)
    summary_path = out / "summary.json"
    message = "\n".join(t for t in (proc.stderr.strip(), proc.stdout.strip()) if t)
    if proc.returncode == 2:
        raise InputError(message)
    if proc.returncode == 4:
        raise OutputError(message)
    if proc.returncode == 5:
        raise OutOfMemory(message)
    if proc.returncode == 3:
        raise RuntimeError(f"smash run stopped by the watchdog (exit 3): {message}")
    if proc.returncode not in (0, 1) or not summary_path.is_file():
        raise RuntimeError(f"smash run exited with {proc.returncode}: {message}")
    with open(summary_path) as f:
        return json.load(f)


def _absolute_meshes(scene: dict, base: Path) -> dict:
    """The scene dict with every relative "mesh" path made absolute against ``base`` (the dict is
    written to a temporary folder, where relative paths would no longer resolve)."""
    def fix(node):
        if isinstance(node, dict):
            return {k: (str((base / v).resolve()) if k == "mesh" and isinstance(v, str) and not os.path.isabs(v)
                        else fix(v)) for k, v in node.items()}
        if isinstance(node, list):
            return [fix(v) for v in node]
        return node
    return fix(scene)
