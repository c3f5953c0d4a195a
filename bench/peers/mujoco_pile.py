#!/usr/bin/env python3
"""The MuJoCo peer of smash_bench_pile (bench/bench_pile.cpp).

smash_bench_pile writes the scene as bench/peers/peer_scene.h prepares it for every peer (shapes in
their principal frames, bodies' start states in those frames, colliders as planes, boxes and
spheres, smash's per-step damping) and runs

    PYTHON bench/peers/mujoco_pile.py --scene peer.json --out DIR

This builds an MJCF model of it, steps it frames x substeps times with one mj_step per smash step
and writes to DIR:
  poses.bin     float64, frames x bodies x 7 (x y z qw qx qy qz, principal frame), after each frame
  summary.json  timing (stepping only), final kinetic energy, contacts, solver iterations, settings

    PYTHON bench/peers/mujoco_pile.py --check-restitution 0.3 --dt 0.008333

drops a sphere and a box on a plane with the contact parameters a body of that restitution gets and
prints the rebound speed over the impact speed (the check behind the solref choice below).

Exit status 2 with a message on stderr for anything that keeps the run from being complete.
"""

import argparse
import json
import math
import os
import sys
import time

try:
    import numpy as np
    import mujoco
except ImportError as e:  # smash_bench_pile checks this first; this is for direct use
    print(f"mujoco_pile.py: {e} (pip install -r bench/peers/requirements.txt)", file=sys.stderr)
    sys.exit(2)

FORMAT = "smash-peer-scene/1"


class PeerError(Exception):
    pass


def field(obj, key, where):
    if key not in obj:
        raise PeerError(f"{where}: missing field '{key}'")
    return obj[key]


def vec(value, n, where):
    if not isinstance(value, list) or len(value) != n or not all(isinstance(x, (int, float)) for x in value):
        raise PeerError(f"{where}: expected {n} numbers")
    return [float(x) for x in value]


def fmt(values):
    return " ".join(repr(float(v)) for v in values)


# Contact stiffness and damping (solref). MuJoCo has no restitution coefficient: a contact is a
# spring-damper in constraint space (acceleration units, so independent of the bodies' masses).
# We keep MuJoCo's default stiffness - solref's default timeconst 0.02 s at damping ratio 1 is a
# natural frequency w = 1/timeconst = 50 rad/s, raised to 1/(2h) as MuJoCo's refsafe does for
# steps longer than 10 ms (stiffer does not fit the step: on pile_100 at h = 1/120 s and z = 0.36,
# 100 rad/s left 70 J after 4 s where 50 rad/s left 0.2 J, and 150 rad/s blew the pile apart) -
# and choose the damping ratio z so that a drop bounces back with the scene's restitution e. For a linear oscillator that would be
# z = -ln e / sqrt(pi^2 + ln^2 e), but a contact that lasts a few steps of a semi-implicit
# integrator and starts up to v h deep bounces higher (z from that formula gives e = 0.37-0.42 for
# 0.3 at h = 1/120 s), so z is found by bisection: a sphere dropped on a plane at 2 m/s, the
# impact speeds of the piles being 1-5 m/s, rises to the apex a speed of e times the impact speed
# would reach (from where it touched). --check-restitution prints what the chosen z gives a sphere
# and a box at 1, 2 and 3 m/s. Given in the direct format (-stiffness, -damping) = (-w^2, -2 z w):
# the positive format (timeconst, dampratio) keeps the decay time fixed, so its stiffness grows as
# 1/z^2 and a bouncy contact becomes too stiff for the step (e = 0.7 rebounded at 2.3 times the
# impact speed at h = 1/120 s). MuJoCo has no restitution threshold: slow approaches bounce too
# (smash and Bullet stop those below the scene's restitution_threshold).
CALIBRATION_SPEED = 2.0
GRAVITY = 9.81


def contact_frequency(h):
    return 1.0 / max(0.02, 2.0 * h)


def drop_restitution(solref, h, speed, geom='type="sphere" size="0.05"'):
    """The effective restitution of a body 0.1 m across dropped at `speed` onto a plane: the speed
    that lifts its centre from where it touched to the apex of the rebound, over `speed`."""
    xml = (f'<mujoco><option timestep="{h!r}" gravity="0 0 {-GRAVITY!r}"/><worldbody>'
           f'<geom type="plane" size="0 0 1"/><body pos="0 0 0.05"><freejoint/>'
           f'<inertial pos="0 0 0" mass="1" diaginertia="0.001 0.001 0.001"/>'
           f'<geom {geom} priority="1" solref="{fmt(solref)}"/></body></worldbody></mujoco>')
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    data.qvel[2] = -speed  # touching the plane, falling at `speed`
    apex, left = 0.05, False
    for _ in range(int(2.0 / h)):
        mujoco.mj_step(model, data)
        left = left or (data.ncon == 0 and data.qvel[2] > 0)
        if left:
            apex = max(apex, data.qpos[2])
            if data.qvel[2] < 0:
                break
    return math.sqrt(2 * GRAVITY * (apex - 0.05)) / speed


_solref_cache = {}


def contact_solref(restitution, h):
    key = (restitution, h)
    if key not in _solref_cache:
        w = contact_frequency(h)
        if restitution <= 0:
            z = 1.0  # MuJoCo's default: critical damping, no bounce
        else:
            lo, hi = 0.0, 1.0  # e falls as z grows: e(lo) >= restitution >= e(hi)
            for _ in range(30):
                z = 0.5 * (lo + hi)
                if drop_restitution((-w * w, -2 * z * w), h, CALIBRATION_SPEED) > restitution:
                    lo = z
                else:
                    hi = z
            z = 0.5 * (lo + hi)
        _solref_cache[key] = (-w * w, -2.0 * z * w)
    return _solref_cache[key]


def quat_to_matrix(q):
    m = np.zeros(9)
    mujoco.mju_quat2Mat(m, np.asarray(q, dtype=float))
    return m.reshape(3, 3)


def plane_quat(normal):
    """The rotation that takes MuJoCo's plane normal (local z) to `normal`."""
    q = np.zeros(4)
    n = np.asarray(normal, dtype=float)
    mujoco.mju_quatZ2Vec(q, n / np.linalg.norm(n))
    return q


def read_scene(path):
    try:
        with open(path) as f:
            s = json.load(f)
    except (OSError, ValueError) as e:
        raise PeerError(f"{path}: {e}")
    if s.get("format") != FORMAT:
        raise PeerError(f"{path}: format is {s.get('format')!r}, expected {FORMAT!r}")
    scene = {
        "dt": float(field(s, "dt", path)),
        "frames": int(field(s, "frames", path)),
        "substeps": int(field(s, "substeps", path)),
        "gravity": vec(field(s, "gravity", path), 3, f"{path}: gravity"),
    }
    damping = field(s, "damping_per_step", path)
    scene["damping"] = (float(field(damping, "linear", f"{path}: damping_per_step")),
                        float(field(damping, "angular", f"{path}: damping_per_step")))
    if not (scene["dt"] > 0 and scene["frames"] > 0 and scene["substeps"] > 0):
        raise PeerError(f"{path}: dt, frames and substeps must be positive")
    scene["shapes"] = []
    for k, sh in enumerate(field(s, "shapes", path)):
        where = f"{path}: shapes[{k}]"
        vertices = field(sh, "vertices", where)
        if not isinstance(vertices, list) or len(vertices) < 4:
            raise PeerError(f"{where}: vertices: at least 4 needed for a hull")
        scene["shapes"].append({
            "name": str(sh.get("name", f"shape{k}")),
            "mass": float(field(sh, "mass", where)),
            "moments": vec(field(sh, "principal_moments", where), 3, f"{where}: principal_moments"),
            "vertices": np.array([vec(v, 3, f"{where}: vertices") for v in vertices]),
        })
    scene["bodies"] = []
    for k, b in enumerate(field(s, "bodies", path)):
        where = f"{path}: bodies[{k}]"
        shape = int(field(b, "shape", where))
        if not 0 <= shape < len(scene["shapes"]):
            raise PeerError(f"{where}: shape {shape} out of range")
        scene["bodies"].append({
            "shape": shape,
            "position": vec(field(b, "position", where), 3, f"{where}: position"),
            "rotation": vec(field(b, "rotation", where), 4, f"{where}: rotation"),
            "velocity": vec(field(b, "velocity", where), 3, f"{where}: velocity"),
            "angular_velocity": vec(field(b, "angular_velocity", where), 3, f"{where}: angular_velocity"),
            "friction": float(field(b, "friction", where)),
            "restitution": float(field(b, "restitution", where)),
        })
    if not scene["bodies"]:
        raise PeerError(f"{path}: no bodies")
    scene["colliders"] = []
    for k, c in enumerate(field(s, "colliders", path)):
        where = f"{path}: colliders[{k}]"
        kind = field(c, "type", where)
        if kind == "plane":
            scene["colliders"].append({"type": kind, "point": vec(field(c, "point", where), 3, where),
                                       "normal": vec(field(c, "normal", where), 3, where)})
        elif kind == "box":
            scene["colliders"].append({"type": kind, "center": vec(field(c, "center", where), 3, where),
                                       "half_extents": vec(field(c, "half_extents", where), 3, where),
                                       "rotation": vec(field(c, "rotation", where), 4, where)})
        elif kind == "sphere":
            scene["colliders"].append({"type": kind, "center": vec(field(c, "center", where), 3, where),
                                       "radius": float(field(c, "radius", where))})
        else:
            raise PeerError(f"{where}: type {kind!r} has no MuJoCo equivalent here (plane, box, sphere)")
    return scene


def build_mjcf(scene):
    """The MJCF text. Every body: a free joint, an explicit <inertial> with smash's mass and
    principal moments (so MuJoCo's mass properties are smash's, not the hull's), and a mesh geom
    from the shape's vertices (MuJoCo collides the convex hull of a mesh). Body geoms have
    priority 1 over the static colliders (priority 0), so a body against a collider uses the
    body's friction and solref, as smash uses the body's material there; two bodies of equal
    priority take the larger friction and the mean solref (smash: the geometric mean of the
    frictions and the larger restitution; equal for a scene of one material)."""
    h = scene["dt"]
    g = scene["gravity"]
    bodies = len(scene["bodies"])
    out = []
    out.append('<mujoco model="smash_peer">')
    # An arena that grows with the bodies, for the contacts of a pile (a full one drops contacts or
    # changes the solver, which fails the run: see warnings()).
    out.append(f'  <size memory="{64 + bodies // 4}M"/>')
    out.append(f'  <option timestep="{h!r}" gravity="{fmt(g)}"/>')
    out.append("  <asset>")
    for k, sh in enumerate(scene["shapes"]):
        # inertia="convex": the mesh's own mass properties (unused: bodies have <inertial>) from
        # its hull, so an open or non-manifold mesh still compiles.
        out.append(f'    <mesh name="shape{k}" inertia="convex" vertex="{fmt(sh["vertices"].ravel())}"/>')
    out.append("  </asset>")
    out.append("  <worldbody>")
    for k, c in enumerate(scene["colliders"]):
        if c["type"] == "plane":
            out.append(f'    <geom name="collider{k}" type="plane" size="0 0 1" pos="{fmt(c["point"])}" '
                       f'quat="{fmt(plane_quat(c["normal"]))}"/>')
        elif c["type"] == "box":
            out.append(f'    <geom name="collider{k}" type="box" size="{fmt(c["half_extents"])}" '
                       f'pos="{fmt(c["center"])}" quat="{fmt(c["rotation"])}"/>')
        else:
            out.append(f'    <geom name="collider{k}" type="sphere" size="{c["radius"]!r}" pos="{fmt(c["center"])}"/>')
    for k, b in enumerate(scene["bodies"]):
        sh = scene["shapes"][b["shape"]]
        solref = contact_solref(b["restitution"], h)
        out.append(f'    <body name="body{k}" pos="{fmt(b["position"])}" quat="{fmt(b["rotation"])}">')
        out.append("      <freejoint/>")
        out.append(f'      <inertial pos="0 0 0" mass="{sh["mass"]!r}" diaginertia="{fmt(sh["moments"])}"/>')
        out.append(f'      <geom type="mesh" mesh="shape{b["shape"]}" priority="1" '
                   f'friction="{b["friction"]!r} 0.005 0.0001" solref="{fmt(solref)}"/>')
        out.append("    </body>")
    out.append("  </worldbody>")
    out.append("</mujoco>")
    return "\n".join(out)


def check_geometry(model, scene):
    """MuJoCo recentres and realigns a mesh when it compiles it and moves the geom to compensate;
    check that each body's geom still holds the shape's vertices where the body frame has them."""
    for k in range(len(scene["shapes"])):
        mesh = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_MESH, f"shape{k}")
        geom = next(g for g in range(model.ngeom) if model.geom_dataid[g] == mesh)
        adr, n = model.mesh_vertadr[mesh], model.mesh_vertnum[mesh]
        local = model.mesh_vert[adr:adr + n].astype(float)
        placed = local @ quat_to_matrix(model.geom_quat[geom]).T + model.geom_pos[geom]
        want = scene["shapes"][k]["vertices"]
        err = max(np.abs(placed.min(0) - want.min(0)).max(), np.abs(placed.max(0) - want.max(0)).max())
        if err > 1e-5 * (1 + np.abs(want).max()):
            raise PeerError(f"shapes[{k}]: MuJoCo placed the mesh {err:g} m away from the given vertices")


def enum_name(value):
    """mjSOL_NEWTON -> Newton."""
    return value.name.split("_", 1)[1].capitalize()


def hull_vertices(model, mesh):
    adr = model.mesh_graphadr[mesh]
    return int(model.mesh_graph[adr]) if adr >= 0 else int(model.mesh_vertnum[mesh])


def warnings(data):
    """MuJoCo's warnings so far, by name, with their counts."""
    return {mujoco.mjtWarning(w).name: int(data.warning[w].number)
            for w in range(len(data.warning)) if data.warning[w].number > 0}


def kinetic_energy(model, data, scene):
    """1/2 m v^2 + 1/2 sum I_i w_i^2 from qvel: a free joint's linear velocity is the world velocity
    of the body origin (the centre of mass here), its angular velocity is in the body frame
    (the principal frame here, where the inertia is diagonal)."""
    qvel = data.qvel.reshape(-1, 6)
    e = 0.0
    for k, b in enumerate(scene["bodies"]):
        sh = scene["shapes"][b["shape"]]
        e += 0.5 * sh["mass"] * float(qvel[k, :3] @ qvel[k, :3])
        e += 0.5 * float(np.dot(sh["moments"], qvel[k, 3:] ** 2))
    return e


def run(scene, out_dir):
    model = mujoco.MjModel.from_xml_string(build_mjcf(scene))
    check_geometry(model, scene)
    data = mujoco.MjData(model)
    n = len(scene["bodies"])
    # Initial velocities: a free joint's angular velocity is in the body frame.
    qvel = data.qvel.reshape(n, 6)
    for k, b in enumerate(scene["bodies"]):
        qvel[k, :3] = b["velocity"]
        qvel[k, 3:] = quat_to_matrix(b["rotation"]).T @ np.asarray(b["angular_velocity"])
    mujoco.mj_forward(model, data)
    # smash's per-step damping, exactly: after every step, v times alpha_linear and w times
    # alpha_angular (a uniform factor, so the frame of w does not matter).
    alpha_linear, alpha_angular = scene["damping"]
    scale = np.tile(np.array([alpha_linear] * 3 + [alpha_angular] * 3), n)
    frames, substeps = scene["frames"], scene["substeps"]
    poses = np.empty((frames, n, 7))
    frame_seconds = []
    contacts, iterations = [], []
    step = mujoco.mj_step
    clock = time.perf_counter
    for f in range(frames):
        seconds = 0.0
        for _ in range(substeps):
            t0 = clock()  # timed: the step and smash's damping, not the statistics
            step(model, data)
            data.qvel *= scale
            seconds += clock() - t0
            contacts.append(data.ncon)
            iterations.append(int(data.solver_niter[:max(1, min(data.nisland, 20))].max()))
        frame_seconds.append(seconds)
        poses[f] = data.qpos.reshape(n, 7)
        warned = warnings(data)
        if warned:
            # A full contact or constraint buffer drops contacts or changes the solver, and a bad
            # acceleration resets the state: the run would not be the model described.
            raise PeerError(f"MuJoCo warned in frame {f + 1}: {warned}")
        if (f + 1) % 50 == 0:
            print(f"  mujoco: frame {f + 1}/{frames}, {1e3 * sum(frame_seconds) / ((f + 1) * substeps):.1f} ms/step",
                  file=sys.stderr, flush=True)
    steps = frames * substeps
    shapes = scene["shapes"]
    # MuJoCo's own timers (inside mj_step), the innermost ones: they add up to about the step.
    stages = {}
    for name in ("POS_KINEMATICS", "POS_INERTIA", "COL_BROAD", "COL_NARROW", "POS_MAKE", "POS_PROJECT",
                 "VELOCITY", "ACTUATION", "CONSTRAINT", "ADVANCE"):
        t = data.timer[getattr(mujoco.mjtTimer, "mjTIMER_" + name)]
        if t.number > 0:
            stages[name.lower()] = 1e3 * t.duration / steps
    summary = {
        "complete": True,
        "steps": steps,
        "frames": frames,
        "bodies": n,
        "seconds": sum(frame_seconds),
        "ms_per_step": 1e3 * sum(frame_seconds) / steps,
        "frame_seconds": frame_seconds,
        "final_kinetic_energy_J": kinetic_energy(model, data, scene),
        "stages_ms_per_step": stages,
        "contacts": {"mean": float(np.mean(contacts)), "max": int(np.max(contacts))},
        "solver_iterations": {"mean": float(np.mean(iterations)), "max": int(np.max(iterations))},
        "settings": {
            "mujoco_version": mujoco.__version__,
            "threads": 1,
            "solver": enum_name(mujoco.mjtSolver(model.opt.solver)),
            "iterations_limit": int(model.opt.iterations),
            "tolerance": float(model.opt.tolerance),
            "integrator": enum_name(mujoco.mjtIntegrator(model.opt.integrator)),
            "cone": enum_name(mujoco.mjtCone(model.opt.cone)),
            "timestep": float(model.opt.timestep),
            "hull_vertices": [hull_vertices(model, mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_MESH, f"shape{k}"))
                              for k in range(len(shapes))],
            "mesh_vertices": [int(len(s["vertices"])) for s in shapes],
            "solref": sorted({fmt(contact_solref(b["restitution"], scene["dt"])) for b in scene["bodies"]}),
            "damping_per_step": {"linear": alpha_linear, "angular": alpha_angular},
        },
    }
    os.makedirs(out_dir, exist_ok=True)
    poses.tofile(os.path.join(out_dir, "poses.bin"))
    with open(os.path.join(out_dir, "summary.json.partial"), "w") as f:
        json.dump(summary, f, indent=1)
    os.replace(os.path.join(out_dir, "summary.json.partial"), os.path.join(out_dir, "summary.json"))


def check_restitution(restitution, h):
    """Prints the solref a body of restitution `restitution` gets at step h, and the effective
    restitution it gives a sphere and a box (landing flat), both 0.1 m across, dropped at 1, 2 and
    3 m/s."""
    solref = contact_solref(restitution, h)
    w = contact_frequency(h)
    print(f"restitution {restitution}, h = {h:g} s: solref {fmt(solref)} (w = {w:g} rad/s, "
          f"damping ratio {-solref[1] / (2 * w):.3f})")
    for geom in ('type="sphere" size="0.05"', 'type="box" size="0.05 0.05 0.05"'):
        rows = [f"{v:g} m/s: e = {drop_restitution(solref, h, v, geom):.2f}" for v in (1.0, 2.0, 3.0)]
        print(f"  {geom.split(chr(34))[1]:6s} " + ", ".join(rows))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scene", help="the peer scene (JSON) smash_bench_pile wrote")
    parser.add_argument("--out", help="folder for poses.bin and summary.json")
    parser.add_argument("--check-restitution", type=float, metavar="E",
                        help="drop tests of the contact model for restitution E instead of a run")
    parser.add_argument("--dt", type=float, default=1 / 120, help="step for --check-restitution")
    args = parser.parse_args()
    try:
        if args.check_restitution is not None:
            check_restitution(args.check_restitution, args.dt)
            return 0
        if not args.scene or not args.out:
            parser.error("--scene and --out are required")
        run(read_scene(args.scene), args.out)
    except PeerError as e:
        print(f"mujoco_pile.py: {e}", file=sys.stderr)
        return 2
    except (ValueError, mujoco.FatalError) as e:  # MJCF compile errors, e.g. a degenerate hull
        print(f"mujoco_pile.py: MuJoCo: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
