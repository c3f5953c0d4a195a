// The public API of the many-body pipeline: a World steps every body of a scene on one backend.
//
//   auto world = smash::World::create(smash::Backend::Omp, scene);
//   for (int s = 0; s < 100; ++s) world->step();
//   std::vector<smash::BodyPose> poses = world->poses();
//
// Backends share one kernel source (kernels/pipeline): CUDA (nvcc, sm_90), OMP and CPP (g++
// through Thrust's host systems). State lives in backend memory in structure-of-arrays layout.
// A step makes no host read and no host wait (on CUDA its kernels are queued without
// synchronising), with or without body–body contacts; a scene whose pair slots exceed
// solver.pair_memory_mb reads one value per frame (stepHostReads counts them). Steady-state steps
// allocate nothing.
// Reading state back is a copy.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

#include "math/watchdog.h"
#include "scene/run_checks.h"
#include "scene/scene.h"

namespace smash {

/// Cpp, Omp and Cuda run the pipeline (kernels/pipeline) in float; Reference is the serial
/// double-precision oracle (src/reference/reference_world.h) behind the same interface.
enum class Backend { Cpp, Omp, Cuda, Reference };

/// How a step is laid out on the backend. Both run the same per-particle functions.
enum class StepStrategy {
  Auto,         ///< per body on CPU backends, per particle on CUDA
  PerBody,      ///< one body per thread, whole step in one pass over its particles (cache)
  PerParticle,  ///< one particle per thread per stage, a segmented reduction for matching
};

const char* backendName(Backend b);
const char* strategyName(StepStrategy s);
/// Parses "cpp", "omp", "cuda" or "reference"; throws InputError otherwise.
Backend parseBackend(const std::string& name);
/// Compiled in, and (for CUDA) a device present; the reference always is.
bool backendAvailable(Backend b);

struct BodyPose {
  /// World coordinates in double: the backends keep positions in float relative to the scene's
  /// working origin (World::origin()), and the pose adds it back without rounding it away.
  glm::dvec3 centre;
  glm::quat rotation;
  glm::vec3 velocity;
  glm::vec3 angularVelocity;
};

/// Time spent per stage of the step, accumulated since the last reset (only measured when
/// profiling is on, because it synchronises the device after every stage).
struct StageTimes {
  std::vector<std::string> names;
  std::vector<double> seconds;
  /// With kernel timing on as well (setKernelTiming), the time per kernel or collective ("stage:
  /// kernel", in launch order): each one waited for before and after, so it holds its launch cost,
  /// and the stage times of such a pass hold those waits too (the pipeline backends; empty elsewhere).
  std::vector<std::string> kernels;
  std::vector<double> kernelSeconds;
};

/// One kernel (or one collective: scan, sort, search) of a step as the CUDA backend launches it,
/// counted on any backend for the GPU model (smash_bench --gpu-model, docs/profiling.md):
/// launches, elements, and the bytes it moves to and from memory under the model's assumptions.
struct LaunchRecord {
  std::string stage;
  std::string kernel;
  std::int64_t launches = 0;
  double elements = 0;
  double bytes = 0;
  /// Σ over launches of the longest loop one thread runs (iterations), for kernels whose threads
  /// loop over a body's or a pair's particles or contacts; 0 for the wide ones.
  double serialSteps = 0;
};

/// The launches of the steps since setCensus(true), in first-launch order, and the host reads.
struct Census {
  std::int64_t steps = 0;
  std::int64_t hostReads = 0;
  /// The CUDA backend replays these steps as a CUDA graph (their launch sequence is fixed; a
  /// host read, if any, comes after the step's launches).
  bool graphed = false;
  std::vector<LaunchRecord> launches;
};

/// The total normal impulse of one body pair in one step (b = SIZE_MAX: body a against the
/// colliders), from the contact points' accumulated impulses.
struct PairNormalImpulse {
  std::size_t a = 0, b = 0;
  double normal = 0;  ///< Σ λ_N over the pair's contact points (N·s)
  int contacts = 0;
};

class World {
 public:
  /// Throws InputError when the backend is not available (not compiled, or no device).
  /// Backend::Reference gives the double-precision reference (it ignores `strategy`).
  static std::unique_ptr<World> create(Backend backend, const Scene& scene,
                                       StepStrategy strategy = StepStrategy::Auto);
  virtual ~World() = default;

  virtual Backend backend() const = 0;
  virtual StepStrategy strategy() const = 0;
  virtual std::size_t bodyCount() const = 0;
  virtual std::size_t particleCount() const = 0;

  /// One solver step of length scene.stepDt().
  virtual void step() = 0;
  void stepFrame(int substeps) {
    for (int s = 0; s < substeps; ++s) step();
  }
  /// Blocks until queued device work is done (a no-op on CPU backends).
  virtual void synchronize() = 0;

  virtual std::vector<BodyPose> poses() const = 0;
  /// Replaces every body's pose and velocities (one entry per body) and puts the particles on
  /// the rigid pose with the rigid velocity field; every body is awake afterwards.
  virtual void setPoses(const std::vector<BodyPose>& poses) = 0;
  /// Particle positions, body after body (body b's particles in its shape's order), in world
  /// coordinates rounded to float (far from the origin that rounding is coarse: add origin() to
  /// particlePositionsRelative() in double for full resolution).
  virtual std::vector<glm::vec3> particlePositions() const = 0;
  /// The scene's working origin (workingOrigin(scene), docs/physics.md §10): every position the
  /// backend holds is relative to it.
  virtual glm::dvec3 origin() const = 0;
  /// Particle positions relative to origin(), as the backend holds them.
  virtual std::vector<glm::vec3> particlePositionsRelative() const = 0;
  /// The backend's own particle positions (relative to origin()) or velocities, in place: 4
  /// floats per particle (x, y, z and one unused), body after body. Host memory on the CPU
  /// backends — valid as long as the world exists (no buffer is ever reallocated; steps, setPoses
  /// and loadState write into it) — and null on CUDA (device memory).
  virtual const float* hostParticleState(bool velocity) const = 0;
  virtual std::vector<glm::vec3> particleVelocities() const = 0;
  /// Particle positions in world coordinates (origin() + the relative floats, added in double) or
  /// velocities, widened to double; the reference gives its own doubles unrounded. (Inline, as
  /// every virtual member here: the reference, in smash_core, derives from World without linking
  /// smash_world.)
  virtual std::vector<glm::dvec3> particleStates(bool velocity) const {
    const std::vector<glm::vec3> f = velocity ? particleVelocities() : particlePositionsRelative();
    std::vector<glm::dvec3> out(f.begin(), f.end());
    if (!velocity)
      for (glm::dvec3& x : out) x += origin();
    return out;
  }
  /// Every body's orientation in double: the poses' float quaternions widened; the reference
  /// gives its own unrounded.
  virtual std::vector<glm::dquat> orientations() const {
    std::vector<glm::dquat> out;
    for (const BodyPose& p : poses()) out.push_back(glm::dquat(p.rotation));
    return out;
  }

  /// Bodies the watchdog has flagged, each with its first incident (a copy from the backend).
  virtual std::vector<BodyIncident> incidents() const = 0;

  /// Steps taken (since creation, plus those of a loaded state).
  virtual std::int64_t stepCount() const = 0;

  /// The complete state — bodies, particles, counters, step count — as bytes in a versioned
  /// format. Loading it into a world created from the same scene and stepping on gives bit for
  /// bit the state an uninterrupted run reaches (the serial and OpenMP per-body layouts).
  virtual std::vector<std::uint8_t> saveState() const = 0;
  /// Throws InputError (naming `source`) when the bytes are not a state of this scene.
  virtual void loadState(const std::vector<std::uint8_t>& state,
                         const std::string& source = "state") = 0;

  /// Contacts that did not fit the per-body contact buffer since creation (they were solved
  /// without: the deepest are kept). Non-zero means the buffer should grow.
  virtual std::int64_t contactOverflow() const = 0;
  /// Broad-phase candidate pairs dropped by solver.max_pairs_per_body since the start.
  virtual std::int64_t pairOverflow() const = 0;
  /// Body pairs that had contact points in the last step.
  virtual std::int64_t touchingPairs() const = 0;
  /// Bodies asleep now (math/sleep.h: islands at rest are not stepped until touched); a copy
  /// from the backend.
  virtual std::int64_t sleepingBodies() const = 0;
  /// The last step's contact impulses summed per touching pair, in pair order, then per body
  /// against the colliders — every body in a scene whose bodies do not touch, the bodies in pairs
  /// where they do (a copy; for tests against the resting-contact oracle,
  /// src/reference/resting_lcp.h).
  virtual std::vector<PairNormalImpulse> lastPairImpulses() const = 0;

  /// Blocks of temporary storage allocated for Thrust so far; flat after the first step.
  virtual long temporaryAllocations() const = 0;
  /// Device→host reads step() has made since creation (each one is a host wait on CUDA): none,
  /// except one per frame (the last step of each `substeps`) when the pair slots are provisioned
  /// as the pairs grow (solver.pair_memory_mb). Profiling's per-stage
  /// synchronisation is not a read and is not counted.
  virtual std::int64_t stepHostReads() const = 0;
  /// Bytes of backend memory the world's buffers hold now.
  virtual std::size_t deviceBytes() const = 0;

  /// Starts (or stops) counting launches for the GPU model; starting clears the count. With the
  /// census on, a step also reads contact counts back for the model (not counted as its reads).
  virtual void setCensus(bool on) = 0;
  virtual Census census() const = 0;

  virtual void setProfiling(bool on) = 0;
  virtual StageTimes stageTimes() const = 0;
  /// While profiling: also time every kernel, waiting for the device before and after each
  /// (StageTimes::kernels). Off by default: the waits inflate the stage times of the same pass.
  virtual void setKernelTiming(bool /*on*/) {}
  virtual void resetStageTimes() = 0;
};

/// State files: saveState's bytes and a trailer ("SMASHSUM" and an FNV-1a checksum of the bytes),
/// written under a temporary name and renamed when complete, so a failed write never leaves a
/// file that looks finished, and only to a new or regular file (OutputError otherwise, or when the
/// write fails). Loading refuses anything but a regular file with an intact trailer (InputError).
/// Errors name the file.
void saveStateFile(const World& world, const std::string& path);
void loadStateFile(World& world, const std::string& path);
/// `bytes` followed by the state file's checksum trailer (the file format, for tests and tools).
std::vector<std::uint8_t> withStateChecksum(std::vector<std::uint8_t> bytes);

/// What RunChecks needs, computed on the host from particleStates (a copy: for runners and
/// tests, not for benchmarks). `step` is the caller's step count.
StepObservation observe(const World& world, const Scene& scene, std::int64_t step);

/// Σ ½ m ‖v‖² of all particles, on the host, from particleStates.
double kineticEnergy(const World& world, const Scene& scene);
/// The fastest particle's speed, from particleStates.
double maxParticleSpeed(const World& world);

/// The deepest body–body penetration of the world's poses now (run_checks.h
/// deepestBodyPenetration, from the centres and orientations()).
BodyPenetration deepestBodyPenetration(const Scene& scene, const World& world);
/// The same from recorded poses (their float rotations).
BodyPenetration deepestBodyPenetration(const Scene& scene, const std::vector<BodyPose>& poses);

/// What a backend runs on, for reports: the GPU's name, or the CPU model and thread count.
std::string backendDevice(Backend backend);

/// The memory a world will need at its peak: host bytes, and device bytes on the CUDA backend
/// (0 elsewhere). World::create refuses a scene whose plan does not fit.
struct MemoryPlan {
  std::size_t host = 0;
  std::size_t device = 0;
};
MemoryPlan planMemory(Backend backend, const Scene& scene, StepStrategy strategy = StepStrategy::Auto);

/// Inside a catch block: rethrows a CUDA / Thrust failure as DeviceError, anything else as it is.
[[noreturn]] void rethrowAsSmashError();

}  // namespace smash
