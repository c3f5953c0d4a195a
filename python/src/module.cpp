// smash._smash: the Python face of the library (nanobind). The Python package (python/smash)
// re-exports these names and adds the pure-Python parts (run, batch). docs/python.md.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.h"
#include "math/rotation.h"
#include "scene/scene.h"
#include "world/world.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using smash::InputError;

/// A C-contiguous float64 NumPy array of shape (rows, cols) that owns `data`.
nb::ndarray<nb::numpy, double, nb::ndim<2>> owned(std::vector<double>&& data, std::size_t rows, std::size_t cols) {
  auto* heap = new std::vector<double>(std::move(data));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
  return nb::ndarray<nb::numpy, double, nb::ndim<2>>(heap->data(), {rows, cols}, owner);
}

using Rows = nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

std::vector<glm::dvec3> vectors(const Rows& a, std::size_t n, const char* name) {
  if (a.shape(0) != n || a.shape(1) != 3)
    throw InputError(std::string("set_state: ") + name + " must have shape (" + std::to_string(n) + ", 3), got (" +
                     std::to_string(a.shape(0)) + ", " + std::to_string(a.shape(1)) + ")");
  std::vector<glm::dvec3> out(n);
  const double* d = a.data();
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = glm::dvec3(d[3 * i], d[3 * i + 1], d[3 * i + 2]);
    if (!std::isfinite(out[i].x) || !std::isfinite(out[i].y) || !std::isfinite(out[i].z))
      throw InputError(std::string("set_state: ") + name + "[" + std::to_string(i) + "] is not finite");
  }
  return out;
}

/// A world on one of the backends, or the double-precision reference, behind one interface.
class PyWorld {
 public:
  PyWorld(const smash::Scene& scene, const std::string& backend, const std::string& method, bool profile)
      : scene_(scene) {
    if (method == "shape_matching") scene_.solver.method = smash::Method::ShapeMatching;
    else if (method == "impulse") scene_.solver.method = smash::Method::Impulse;
    else if (!method.empty()) throw InputError("method: expected \"shape_matching\" or \"impulse\", got \"" + method + "\"");
    smash::Backend b = smash::Backend::Omp;
    if (backend == "auto") b = smash::backendAvailable(smash::Backend::Cuda) ? smash::Backend::Cuda : smash::Backend::Omp;
    else b = smash::parseBackend(backend);  // InputError names the value
    world_ = smash::World::create(b, scene_);
    world_->setProfiling(profile);
    backendName_ = smash::backendName(b);
  }

  void step(std::int64_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (n < 0) throw InputError("step: n must be ≥ 0, got " + std::to_string(n));
    for (std::int64_t k = 0; k < n; ++k) world_->step();
    world_->synchronize();
  }

  std::int64_t steps() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stepsLocked();
  }
  std::int64_t stepsLocked() const { return world_->stepCount(); }
  double time() const { return static_cast<double>(steps()) * scene_.stepDt(); }
  std::int64_t frame() const { return steps() / scene_.substeps; }
  std::size_t bodyCount() const { return world_->bodyCount(); }
  std::size_t particleCount() const { return world_->particleCount(); }

  std::vector<smash::BodyPose> poses() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return world_->poses();
  }

  nb::ndarray<nb::numpy, double, nb::ndim<2>> positions() const {
    const auto p = poses();
    std::vector<double> out;
    out.reserve(3 * p.size());
    for (const auto& b : p) out.insert(out.end(), {b.centre.x, b.centre.y, b.centre.z});
    return owned(std::move(out), p.size(), 3);
  }
  nb::ndarray<nb::numpy, double, nb::ndim<2>> rotations(bool scalarFirst) const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<double> out;
    std::size_t n = 0;
    auto add = [&](const glm::dquat& q) {
      if (scalarFirst) out.insert(out.end(), {q.w, q.x, q.y, q.z});
      else out.insert(out.end(), {q.x, q.y, q.z, q.w});
      ++n;
    };
    for (const glm::dquat& q : world_->orientations()) add(q);
    return owned(std::move(out), n, 4);
  }
  nb::ndarray<nb::numpy, double, nb::ndim<2>> velocities(bool angular) const {
    const auto p = poses();
    std::vector<double> out;
    out.reserve(3 * p.size());
    for (const auto& b : p) {
      const glm::dvec3 v(angular ? b.angularVelocity : b.velocity);
      out.insert(out.end(), {v.x, v.y, v.z});
    }
    return owned(std::move(out), p.size(), 3);
  }
  nb::ndarray<nb::numpy, double, nb::ndim<2>> particles(bool velocity) const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<double> out;
    // World coordinates in double (the backends add their working origin to their relative floats).
    for (const glm::dvec3& x : world_->particleStates(velocity)) out.insert(out.end(), {x.x, x.y, x.z});
    const std::size_t n = out.size() / 3;
    return owned(std::move(out), n, 3);
  }

  /// A read-only (P, 3) float32 view of the backend's own particle positions (relative to the
  /// working origin) or velocities: CPU backends only.
  nb::ndarray<nb::numpy, const float, nb::ndim<2>> particleView(bool velocity) const {
    const float* data = world_->hostParticleState(velocity);
    if (!data && world_->backend() == smash::Backend::Reference)
      throw InputError("particle views: not available on the reference backend (it holds double; use the copies)");
    if (!data && world_->particleCount() > 0)
      throw InputError(std::string(velocity ? "particle_velocities_view" : "particle_positions_view") +
                       ": the " + backendName_ + " backend holds its state in device memory (use the copies)");
    const std::size_t n = world_->particleCount();
    return nb::ndarray<nb::numpy, const float, nb::ndim<2>>(data, {n, 3}, nb::handle(), {4, 1});
  }

  void setState(const Rows& positions, const Rows& rotations, const Rows& linear, const Rows& angular,
                bool scalarFirst) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::size_t n = world_->bodyCount();
    const std::vector<glm::dvec3> c = vectors(positions, n, "positions"), v = vectors(linear, n, "linear_velocities"),
                                  w = vectors(angular, n, "angular_velocities");
    if (rotations.shape(0) != n || rotations.shape(1) != 4)
      throw InputError("set_state: rotations must have shape (" + std::to_string(n) + ", 4), got (" +
                       std::to_string(rotations.shape(0)) + ", " + std::to_string(rotations.shape(1)) + ")");
    std::vector<smash::BodyPose> poses(n);
    const double* q = rotations.data();
    for (std::size_t i = 0; i < n; ++i) {
      const double* r = q + 4 * i;
      glm::dquat quat = scalarFirst ? glm::dquat(r[0], r[1], r[2], r[3]) : glm::dquat(r[3], r[0], r[1], r[2]);
      const double len = glm::length(quat);
      if (!std::isfinite(len) || std::abs(len - 1.0) > 1e-3)
        throw InputError("set_state: rotations[" + std::to_string(i) + "] is not a unit quaternion (|q| = " +
                         std::to_string(len) + ")");
      quat = glm::normalize(quat);
      // The backends hold positions in float relative to the working origin, and the watchdog
      // stops bodies beyond world_bound of it: a state outside that is refused, not rounded away.
      const glm::dvec3 rel = c[i] - world_->origin();
      const double bound = scene_.watchdog.worldBound;
      if (!(std::abs(rel.x) <= bound && std::abs(rel.y) <= bound && std::abs(rel.z) <= bound))
        throw InputError("set_state: positions[" + std::to_string(i) + "] is farther than world_bound (" +
                         std::to_string(bound) + " m) from the working origin");
      constexpr double kFloatMax = static_cast<double>(std::numeric_limits<float>::max());
      for (int k = 0; k < 3; ++k)
        if (!(std::abs(v[i][k]) < kFloatMax) || !(std::abs(w[i][k]) < kFloatMax))
          throw InputError("set_state: velocities of body " + std::to_string(i) + " overflow float");
      poses[i] = {c[i], glm::quat(quat), glm::vec3(v[i]), glm::vec3(w[i])};
    }
    world_->setPoses(poses);
  }

  void saveState(const std::filesystem::path& path) const {
    std::lock_guard<std::mutex> lock(mutex_);
    smash::saveStateFile(*world_, path.string());
  }
  void loadState(const std::filesystem::path& path) {
    std::lock_guard<std::mutex> lock(mutex_);
    smash::loadStateFile(*world_, path.string());
  }

  nb::dict overflow() const {
    std::lock_guard<std::mutex> lock(mutex_);
    nb::dict d;
    d["contacts"] = world_->contactOverflow();
    d["pairs"] = world_->pairOverflow();
    return d;
  }
  nb::list incidents() const {
    std::lock_guard<std::mutex> lock(mutex_);
    nb::list out;
    for (const smash::BodyIncident& i : world_->incidents()) {
      nb::dict d;
      d["body"] = i.body;
      d["step"] = i.step;
      d["what"] = std::string(smash::incidentName(i.what));
      out.append(d);
    }
    return out;
  }
  nb::dict stageTimes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    nb::dict d;
    const smash::StageTimes t = world_->stageTimes();
    for (std::size_t k = 0; k < t.names.size(); ++k) d[t.names[k].c_str()] = t.seconds[k];
    return d;
  }
  std::int64_t sleepingBodies() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return world_->sleepingBodies();
  }
  std::int64_t touchingPairs() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return world_->touchingPairs();
  }
  std::array<double, 3> origin() const {
    const glm::dvec3 o = world_->origin();
    return {o.x, o.y, o.z};
  }
  const std::string& backend() const { return backendName_; }
  const smash::Scene& scene() const { return scene_; }

 private:
  smash::Scene scene_;
  // One call at a time: step() runs without the GIL, and a world is not safe to step from two
  // threads at once (or to read while it steps). Calls from other threads wait.
  mutable std::mutex mutex_;
  std::unique_ptr<smash::World> world_;
  std::string backendName_;
};

}  // namespace

NB_MODULE(_smash, m) {
  m.doc() = "smash: a particle / shape-matching rigid-body solver (C++17, CUDA). See docs/python.md.";

  nb::exception<smash::InputError>(m, "InputError", PyExc_ValueError);
  nb::exception<smash::OutputError>(m, "OutputError", PyExc_OSError);
  nb::exception<smash::OutOfMemory>(m, "OutOfMemory", PyExc_MemoryError);
  nb::exception<smash::DeviceError>(m, "DeviceError", PyExc_RuntimeError);

  nb::class_<smash::Scene>(m, "Scene",
                           "A validated scene (docs/scene-format.md), from smash.load_scene. Read-only here.")
      .def_prop_ro("name", [](const smash::Scene& s) { return s.name; }, "The scene's name.")
      .def_prop_ro("path", [](const smash::Scene& s) { return s.path; }, "The file it came from ('' for a dict).")
      .def_prop_ro("dt", [](const smash::Scene& s) { return s.dt; }, "Frame time step (s).")
      .def_prop_ro("substeps", [](const smash::Scene& s) { return s.substeps; }, "Solver steps per frame.")
      .def_prop_ro("frames", [](const smash::Scene& s) { return s.frames; }, "Frames a run takes.")
      .def_prop_ro("body_count", [](const smash::Scene& s) { return s.bodies.size(); }, "Number of bodies.")
      .def_prop_ro("method", [](const smash::Scene& s) { return std::string(smash::methodName(s.solver.method)); },
                   "'shape_matching' or 'impulse'.")
      .def("__repr__", [](const smash::Scene& s) {
        return "<smash.Scene '" + s.name + "': " + std::to_string(s.bodies.size()) + " bodies, dt " +
               std::to_string(s.dt) + ", " + std::to_string(s.frames) + " frames>";
      });

  m.def("_load_scene_file", [](const std::filesystem::path& path) { return smash::loadScene(path.string()); }, "path"_a,
        "Reads, validates and builds a scene file (raises InputError naming the file and field).");
  m.def("_load_scene_text",
        [](const std::string& text, const std::string& name, const std::string& baseDir) {
          return smash::parseScene(text, name, baseDir);
        },
        "text"_a, "name"_a, "base_dir"_a, "A scene from JSON text (meshes resolved against base_dir).");
  m.def("backend_available",
        [](const std::string& name) {
          return smash::backendAvailable(smash::parseBackend(name));
        },
        "name"_a, "Whether a backend ('cpp', 'omp', 'cuda', 'reference') can run here.");

  nb::class_<PyWorld>(m, "World",
                      "Every body of a scene stepped on one backend. The getters return NumPy copies "
                      "(float64, C-contiguous) that stay valid and do not change when the world steps; "
                      "particle_positions_view() gives the CPU backends' live arrays in place.")
      .def(nb::init<const smash::Scene&, const std::string&, const std::string&, bool>(), "scene"_a,
           "backend"_a = "auto", "method"_a = "", "profile"_a = false,
           "backend: 'auto' (cuda when a GPU is present, else omp), 'cuda', 'omp', 'cpp' or 'reference' "
           "(double precision). method: '' (the scene's), 'shape_matching' or 'impulse'. profile: time the "
           "stages (stage_times; synchronises after every stage).")
      .def("step", &PyWorld::step, "n"_a = 1, nb::call_guard<nb::gil_scoped_release>(),
           "Takes n solver steps (the GIL is released meanwhile).")
      .def_prop_ro("steps", &PyWorld::steps, "Solver steps taken.")
      .def_prop_ro("time", &PyWorld::time, "Simulated time (s): steps × dt / substeps.")
      .def_prop_ro("frame", &PyWorld::frame, "Frames completed: steps // substeps.")
      .def_prop_ro("body_count", &PyWorld::bodyCount, "Number of bodies.")
      .def_prop_ro("particle_count", &PyWorld::particleCount, "Number of particles.")
      .def_prop_ro("backend", &PyWorld::backend, "The backend the world runs on.")
      .def_prop_ro("scene", &PyWorld::scene, "The scene (with the method override applied).")
      .def("positions", &PyWorld::positions, "Body centres of mass, world coordinates: (N, 3) float64.")
      .def("rotations", &PyWorld::rotations, "scalar_first"_a = false,
           "Body → world rotations as unit quaternions, (N, 4) float64: (x, y, z, w) — scalar last, "
           "as SciPy's Rotation.from_quat — or (w, x, y, z) with scalar_first=True.")
      .def("linear_velocities", [](const PyWorld& w) { return w.velocities(false); },
           "Centre-of-mass velocities (m/s): (N, 3) float64.")
      .def("angular_velocities", [](const PyWorld& w) { return w.velocities(true); },
           "Angular velocities, world frame (rad/s): (N, 3) float64.")
      .def("particle_positions", [](const PyWorld& w) { return w.particles(false); },
           "Particle positions, body after body, world coordinates: (P, 3) float64.")
      .def("particle_velocities", [](const PyWorld& w) { return w.particles(true); },
           "Particle velocities, body after body: (P, 3) float64.")
      .def("particle_positions_view", [](const PyWorld& w) { return w.particleView(false); },
           nb::rv_policy::reference_internal,
           "The CPU backends' own particle positions, in place: a read-only (P, 3) float32 NumPy view "
           "(row stride 16 bytes), relative to `origin`. No copy; it shows every later step, and keeps "
           "the world alive while it exists. InputError on cuda (device memory) and reference (double): "
           "use particle_positions().")
      .def("particle_velocities_view", [](const PyWorld& w) { return w.particleView(true); },
           nb::rv_policy::reference_internal,
           "As particle_positions_view, for the particle velocities.")
      .def("_set_state", &PyWorld::setState, "positions"_a, "rotations"_a, "linear_velocities"_a,
           "angular_velocities"_a, "scalar_first"_a = false)
      .def("save_state", &PyWorld::saveState, "path"_a,
           "Writes the complete state (bitwise snapshot, docs/reliability.md) to path, atomically.")
      .def("load_state", &PyWorld::loadState, "path"_a,
           "Loads a state written by save_state for this scene (not a smash run --save-state file, which wraps one with the run's settings); raises "
           "InputError and leaves the world as it was when it does not belong to it.")
      .def_prop_ro("overflow", &PyWorld::overflow,
                   "Contacts and pairs dropped because buffers were full, since creation: "
                   "{'contacts': int, 'pairs': int}.")
      .def_prop_ro("incidents", &PyWorld::incidents,
                   "Bodies the watchdog flagged: a list of {'body', 'step', 'what'}.")
      .def("stage_times", &PyWorld::stageTimes, "Seconds per stage since creation (profile=True), as a dict.")
      .def_prop_ro("sleeping_bodies", &PyWorld::sleepingBodies, "Bodies asleep now.")
      .def_prop_ro("touching_pairs", &PyWorld::touchingPairs, "Body pairs with contact points in the last step.")
      .def_prop_ro("origin", &PyWorld::origin,
                   "The working origin the backend holds positions relative to, [x, y, z] "
                   "(docs/physics.md §10).");
}
