"""The Python module against the C++ library: arrays, parity, errors, the GIL, state."""
import json
import struct
import subprocess
import threading
import time

import numpy as np
import pytest

import smash


def test_scene_and_world_basics(lab_path):
    scene = smash.load_scene(lab_path)
    assert scene.name == "lab_bunny" and scene.body_count == 1 and scene.frames == 600
    world = smash.World(scene, backend="omp")
    assert world.backend == "omp" and world.body_count == 1
    world.step(10)
    assert world.steps == 10 and world.frame == 10
    assert world.time == pytest.approx(10 * scene.dt / scene.substeps)
    for name, cols in (("positions", 3), ("rotations", 4), ("linear_velocities", 3), ("angular_velocities", 3)):
        a = getattr(world, name)()
        assert a.shape == (1, cols) and a.dtype == np.float64 and a.flags["C_CONTIGUOUS"], name
    p = world.particle_positions()
    assert p.shape == (world.particle_count, 3) and p.dtype == np.float64 and p.flags["C_CONTIGUOUS"]
    assert world.particle_velocities().shape == p.shape
    q = world.rotations()
    assert np.allclose(np.linalg.norm(q, axis=1), 1.0)
    # Scalar last by default (SciPy), scalar first on request.
    assert np.array_equal(world.rotations(scalar_first=True), q[:, [3, 0, 1, 2]])
    # The particles' centre of mass is the body's centre.
    assert np.allclose(p.mean(axis=0), world.positions()[0], atol=1e-5)


def test_same_bits_as_the_command(lab_path, tmp_path):
    """Same scene, same backend: the Python path's state equals the C++ command's, byte for byte."""
    exe = smash._executable()
    for backend in ("cpp", "omp"):
        cli_state = tmp_path / f"cli_{backend}.bin"
        r = subprocess.run([exe, "run", str(lab_path), "--backend", backend, "--frames", "40", "--quiet",
                            "--progress", "never", "--save-state", str(cli_state)], capture_output=True, text=True)
        assert r.returncode in (0, 1), r.stderr  # 1: the lab's rest check fails after 40 frames
        world = smash.World(lab_path, backend=backend)
        world.step(40)
        py_state = tmp_path / f"py_{backend}.bin"
        world.save_state(py_state)
        # The command's file wraps the world's state (src/io/run_state.cpp): header, state, checksum.
        run = cli_state.read_bytes()
        magic, _, header_bytes, _, frame, _, _, world_bytes = struct.unpack_from("<8sIIQqIIQ", run)
        assert magic == b"SMASHRN1" and frame == 40
        ours = py_state.read_bytes()  # the state, then its checksum trailer (src/world/world.h)
        assert ours[-16:-8] == b"SMASHSUM"
        assert ours[:-16] == run[header_bytes:header_bytes + world_bytes], backend


def test_arrays_are_copies_that_outlive_the_world(lab_path):
    world = smash.World(lab_path, backend="omp")
    world.step(5)
    p, x = world.positions(), world.particle_positions()
    kept_p, kept_x = p.copy(), x.copy()
    world.step(50)
    assert np.array_equal(p, kept_p) and np.array_equal(x, kept_x)  # not views of the live state
    assert not np.array_equal(world.positions(), kept_p)
    del world
    assert np.isfinite(p).all() and float(x.sum()) == float(kept_x.sum())  # still valid memory


@pytest.mark.parametrize("mutate, field", [
    (lambda s: s.update(dt=-1.0), "dt"),
    (lambda s: s.update(frames="many"), "frames"),
    (lambda s: s["bodies"][0].update(shape="teapot"), "teapot"),
    (lambda s: s["materials"]["default"].update(friction=-0.5), "friction"),
    (lambda s: s.update(unknown_key=1), "unknown_key"),
])
def test_bad_dicts_raise_input_error_naming_the_field(lab_path, mutate, field):
    scene = json.loads(lab_path.read_text())
    mutate(scene)
    with pytest.raises(smash.InputError) as e:
        smash.load_scene(scene, base_dir=lab_path.parent, name="sweep.json")
    assert isinstance(e.value, ValueError)
    assert field in str(e.value) and "sweep.json" in str(e.value)


def test_bad_files_and_options(tmp_path, lab_path):
    with pytest.raises(smash.InputError, match="nope.json"):
        smash.load_scene(tmp_path / "nope.json")
    with pytest.raises(smash.InputError, match="backend"):
        smash.World(lab_path, backend="gpu9000")
    with pytest.raises(smash.InputError, match="method"):
        smash.World(lab_path, method="verlet")
    world = smash.World(lab_path, backend="cpp")
    with pytest.raises(smash.InputError):
        world.step(-1)
    with pytest.raises(smash.InputError, match="lab state"):
        bad = tmp_path / "lab state"
        bad.write_bytes(b"not a state")
        world.load_state(bad)


def test_step_releases_the_gil(source):
    scene = smash.load_scene(source / "scenes" / "bunny_grid.json")
    world = smash.World(scene, backend="omp")
    ticks = 0
    stepping = threading.Thread(target=world.step, args=(400,))
    start = time.perf_counter()
    stepping.start()
    while stepping.is_alive():
        ticks += 1
        time.sleep(0.001)
    elapsed = time.perf_counter() - start
    stepping.join()
    assert world.steps == 400
    # Holding the GIL, step() would have let the loop run once or twice in all.
    assert elapsed > 0.05 and ticks > 10, (elapsed, ticks)


def test_state_round_trip(lab_path, tmp_path):
    a = smash.World(lab_path, backend="omp")
    a.step(100)
    path = tmp_path / "lab.state"
    a.save_state(path)
    b = smash.World(lab_path, backend="omp")
    b.load_state(path)
    assert b.steps == 100
    a.step(50)
    b.step(50)
    assert np.array_equal(a.particle_positions(), b.particle_positions())
    assert np.array_equal(a.rotations(), b.rotations())
    # set_state with the arrays the getters return.
    c = smash.World(lab_path, backend="omp")
    c.set_state(a.positions(), a.rotations(), a.linear_velocities(), a.angular_velocities())
    assert np.allclose(c.positions(), a.positions(), atol=1e-6)
    assert np.allclose(np.abs(np.sum(c.rotations() * a.rotations(), axis=1)), 1.0, atol=1e-6)
    assert np.allclose(c.linear_velocities(), a.linear_velocities(), atol=1e-6)


def test_set_state_is_validated(lab_path):
    w = smash.World(lab_path, backend="omp")
    before = w.positions()
    good = (w.positions(), w.rotations(), w.linear_velocities(), w.angular_velocities())
    cases = [
        ((np.zeros((2, 3)),) + good[1:], "positions"),
        ((good[0], np.zeros((1, 4))) + good[2:], "unit quaternion"),
        ((good[0], good[1], np.full((1, 3), np.nan), good[3]), "linear_velocities"),
        ((good[0], good[1], good[2], np.zeros(3)), "angular_velocities"),
        ((good[0], good[1], good[2], [["a", "b", "c"]]), "angular_velocities"),
    ]
    for args, what in cases:
        with pytest.raises(smash.InputError, match=what):
            w.set_state(*args)
    assert np.array_equal(w.positions(), before)  # nothing changed


def test_reference_backend_and_counters(lab_path):
    ref = smash.World(lab_path, backend="reference", method="impulse")
    assert ref.backend == "reference" and ref.scene.method == "impulse"
    ref.step(20)
    assert ref.positions().shape == (1, 3) and ref.particle_positions().shape[1] == 3
    with pytest.raises(smash.InputError, match="reference"):
        ref.save_state("x.bin")
    w = smash.World(lab_path, backend="omp", profile=True)
    w.step(20)
    times = w.stage_times()
    assert times and all(v >= 0 for v in times.values()) and sum(times.values()) > 0
    assert w.overflow == {"contacts": 0, "pairs": 0}
    assert w.incidents == []
    assert tuple(w.origin) == (0.0, 0.0, 0.0)  # the lab lies near the origin (docs/physics.md §10)


def test_run_writes_the_outputs_and_returns_the_summary(lab_path, tmp_path):
    summary = smash.run(lab_path, out=tmp_path / "out", backend="omp", frames=20)
    assert summary["frames_completed"] == 20 and summary["interrupted"] is False
    assert (tmp_path / "out" / "poses.csv").is_file() and (tmp_path / "out" / "summary.json").is_file()
    scene = json.loads(lab_path.read_text())
    scene["materials"]["default"]["restitution"] = 0.1
    s2 = smash.run(scene, out=tmp_path / "out2", backend="cpp", frames=10, base_dir=lab_path.parent)
    assert isinstance(s2, dict)
    scene["dt"] = 0
    with pytest.raises(smash.InputError, match="dt"):
        smash.run(scene, out=tmp_path / "out3", base_dir=lab_path.parent)


def test_views_of_host_memory_follow_the_world_and_keep_it_alive(lab_path):
    """The CPU backends' particle arrays in place: no copy, live, and never dangling."""
    import gc
    import weakref

    world = smash.World(lab_path, backend="omp")
    view = world.particle_positions_view()
    assert view.shape == (world.particle_count, 3) and view.dtype == np.float32
    assert not view.flags["WRITEABLE"] and not view.flags["OWNDATA"]
    assert view.strides == (16, 4)
    origin = np.array(world.origin)
    assert np.allclose(view + origin, world.particle_positions(), atol=1e-6)
    before = view.copy()
    world.step(30)  # the view shows the new state
    assert not np.array_equal(view, before)
    assert np.allclose(view + origin, world.particle_positions(), atol=1e-6)
    velocities = world.particle_velocities_view()
    assert np.allclose(velocities, world.particle_velocities(), atol=1e-6)
    # The view keeps the world alive: dropping every other reference frees nothing it points into.
    probe = weakref.ref(world)
    expected = world.particle_positions() - origin
    del world
    gc.collect()
    assert probe() is not None
    assert np.allclose(view, expected, atol=1e-6)
    del view, velocities
    gc.collect()
    assert probe() is None  # and goes once the views go
    with pytest.raises(smash.InputError, match="reference"):
        smash.World(lab_path, backend="reference").particle_positions_view()


def test_two_threads_stepping_one_world_are_serialised(lab_path):
    serial = smash.World(lab_path, backend="cpp")
    serial.step(200)
    shared = smash.World(lab_path, backend="cpp")
    threads = [threading.Thread(target=lambda: [shared.step(5) for _ in range(20)]) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert shared.steps == 200
    assert np.array_equal(shared.particle_positions(), serial.particle_positions())


def test_state_files_are_checked(lab_path, tmp_path):
    w = smash.World(lab_path, backend="cpp")
    w.step(3)
    with pytest.raises(smash.OutputError, match="not a regular file"):
        w.save_state(tmp_path)  # a folder: never replaced
    assert tmp_path.is_dir()
    with pytest.raises(smash.OutputError):
        w.save_state(tmp_path / "no" / "such" / "folder.state")
    with pytest.raises(smash.InputError, match="is a folder"):
        w.load_state(tmp_path)
    good = tmp_path / "good.state"
    w.save_state(good)
    data = bytearray(good.read_bytes())
    data[len(data) // 2] ^= 0x01
    bad = tmp_path / "flipped.state"
    bad.write_bytes(bytes(data))
    with pytest.raises(smash.InputError, match="checksum"):
        w.load_state(bad)
    assert w.steps == 3


def test_arguments_are_checked(lab_path, tmp_path):
    w = smash.World(lab_path, backend="cpp")
    for n in (True, 2.5, "3", 2 ** 63):
        with pytest.raises(smash.InputError, match="step"):
            w.step(n)
    with pytest.raises(smash.InputError, match="'reference'"):
        smash.World(lab_path, backend="bogus")
    with pytest.raises(smash.InputError, match="'auto'"):
        smash.backend_available("xx")
    assert smash.backend_available("omp") and smash.backend_available("reference")
    far = w.positions() + 1e6
    with pytest.raises(smash.InputError, match="world_bound"):
        w.set_state(far, w.rotations(), w.linear_velocities(), w.angular_velocities())
    with pytest.raises(smash.InputError, match="float"):
        w.set_state(w.positions(), w.rotations(), w.linear_velocities() * 1e300, w.angular_velocities())
    with pytest.raises(smash.InputError, match="frames"):
        smash.run(lab_path, out=tmp_path / "o", frames=-1)
    assert not (tmp_path / "o").exists()
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(smash.OutputError, match="not a folder"):
        smash.run(lab_path, out=afile, frames=2)
    from smash.batch import param_grid
    with pytest.raises(KeyError, match="nope"):
        param_grid(lab_path, {"materials.default.nope": [1, 2]})
