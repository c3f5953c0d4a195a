#include "world/world.h"

#include <cstdlib>

#include "core/files.h"

#include <unistd.h>

#include <algorithm>
#include <new>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/error.h"
#include "math/sdf.h"
#include "pipeline/backends.h"
#include "pipeline/step_kernels.h"
#include "reference/reference_world.h"

namespace smash {

const char* backendName(Backend b) {
  switch (b) {
    case Backend::Cpp:
      return "cpp";
    case Backend::Omp:
      return "omp";
    case Backend::Cuda:
      return "cuda";
    case Backend::Reference:
      return "reference";
  }
  return "?";
}

const char* strategyName(StepStrategy s) {
  switch (s) {
    case StepStrategy::Auto:
      return "auto";
    case StepStrategy::PerBody:
      return "per-body";
    case StepStrategy::PerParticle:
      return "per-particle";
  }
  return "?";
}

Backend parseBackend(const std::string& name) {
  if (name == "cpp") return Backend::Cpp;
  if (name == "omp") return Backend::Omp;
  if (name == "cuda") return Backend::Cuda;
  if (name == "reference") return Backend::Reference;
  throw InputError("backend: '" + name + "' is not one of 'cpp', 'omp', 'cuda', 'reference'");
}

bool backendAvailable(Backend b) {
  if (b != Backend::Cuda) return true;
#if defined(SMASH_HAVE_CUDA)
  return pipeline::cudaDeviceCount() > 0;
#else
  return false;
#endif
}

std::string backendDevice(Backend backend) {
#if defined(SMASH_HAVE_CUDA)
  if (backend == Backend::Cuda && backendAvailable(Backend::Cuda)) return pipeline::cudaDeviceName();
#endif
  std::string cpu = "unknown CPU";
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  const long threads = backend == Backend::Cpp || backend == Backend::Reference ? 1 : sysconf(_SC_NPROCESSORS_ONLN);
  return cpu + ", " + std::to_string(threads) + (threads == 1 ? " thread" : " threads");
}


namespace {


std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

std::unique_ptr<World> createUnchecked(Backend backend, const Scene& scene, StepStrategy strategy) {
  switch (backend) {
    case Backend::Cpp:
      return pipeline::makeCppWorld(scene, strategy);
    case Backend::Omp:
      return pipeline::makeOmpWorld(scene, strategy);
    case Backend::Cuda:
#if defined(SMASH_HAVE_CUDA)
      if (pipeline::cudaDeviceCount() == 0)
        throw InputError("backend cuda: no CUDA device is available on this machine");
      return pipeline::makeCudaWorld(scene, strategy);
#else
      throw InputError("backend cuda: this build has no CUDA support (nvcc was not found)");
#endif
    case Backend::Reference:
      break;  // World::create makes it
  }
  throw InputError("backend: unknown");
}

}  // namespace

MemoryPlan planMemory(Backend backend, const Scene& scene, StepStrategy strategy) {
  // The buffers are the allocator's own list (backendBytes: describeBuffers, what deviceBytes()
  // reads back). CPU backends build them from host staging vectors, so twice the buffers is the
  // peak; the host also holds, while observing for the checks, every particle's position and
  // velocity in float and widened to double (72 bytes per particle).
  MemoryPlan plan;
  if (backend == Backend::Reference) {
    plan.host = ReferenceWorld::plannedBytes(scene);
    return plan;
  }
  const std::size_t buffers = pipeline::backendBytes(
      scene, strategy == StepStrategy::Auto && backend == Backend::Cuda ? StepStrategy::PerParticle : strategy);
  std::size_t particles = 0;
  for (const Body& b : scene.bodies) particles += scene.shapes[b.shape].rest.size();
  plan.host = 72 * particles;
  if (backend == Backend::Cuda) {
    plan.device = buffers;
    plan.host += buffers;  // the host staging copy the buffers are uploaded from
  } else {
    plan.host += 2 * buffers;
  }
  return plan;
}

namespace {
/// SMASH_STEP_STRATEGY=per-particle | per-body: the layout World::create uses when asked for
/// Auto (a debugging knob: the CPU backends' per-particle layout is the one the GPU runs).
StepStrategy strategyFromEnvironment(StepStrategy strategy) {
  if (strategy != StepStrategy::Auto) return strategy;
  const char* v = std::getenv("SMASH_STEP_STRATEGY");
  if (!v || !*v) return strategy;
  const std::string name(v);
  if (name == "per-particle" || name == "per_particle") return StepStrategy::PerParticle;
  if (name == "per-body" || name == "per_body") return StepStrategy::PerBody;
  if (name == "auto") return StepStrategy::Auto;
  throw InputError("SMASH_STEP_STRATEGY: '" + quoteToken(name) + "' is not one of per-particle, per-body, auto");
}
}  // namespace

std::unique_ptr<World> World::create(Backend backend, const Scene& scene, StepStrategy requested) {
  // The reference checks its shapes and its memory plan itself, and has one layout.
  if (backend == Backend::Reference) return std::make_unique<ReferenceWorld>(scene);
  const StepStrategy strategy = strategyFromEnvironment(requested);
  // The pipeline backends hold particle masses in float: one that rounds to 0 or overflows there
  // would divide by zero in the step (or, in the SSE sums, differ from the scalar loop's NaN).
  for (const Shape& shape : scene.shapes)
    for (std::size_t i = 0; i < shape.mass.size(); ++i) {
      const float m = static_cast<float>(shape.mass[i]);
      if (!(m > 0.0f) || !std::isfinite(m)) {
        char value[32];
        std::snprintf(value, sizeof value, "%.3g", shape.mass[i]);
        throw InputError((scene.path.empty() ? std::string("scene") : scene.path) + ": shapes." + shape.name +
                         ": particle " + std::to_string(i) + "'s mass " + value +
                         " is outside float's range (the " + backendName(backend) + " backend steps in float)");
      }
    }
  // Rejected up front when the plan cannot fit: host memory against what this process can use
  // (MemAvailable, cgroup memory.max), device memory against the device's free memory.
  requireBakedShapes(scene);
  const MemoryPlan plan = planMemory(backend, scene, strategy);
  std::size_t particles = 0;
  for (const Body& b : scene.bodies) particles += scene.shapes[b.shape].rest.size();
  const std::string path = scene.path.empty() ? std::string("scene") : scene.path;
  requireMemory(path, plan.host, availableHostMemory(), std::string(backendName(backend)) + " host",
                scene.bodies.size(), particles);
#if defined(SMASH_HAVE_CUDA)
  if (backend == Backend::Cuda && backendAvailable(Backend::Cuda))
    if (const std::size_t free = pipeline::cudaFreeMemory(); free > 0)  // 0: the query failed
      requireMemory(path, plan.device, free, "CUDA device", scene.bodies.size(), particles);
#endif
  const std::size_t need = plan.device ? plan.device : plan.host;
  try {
    return createUnchecked(backend, scene, strategy);
  } catch (const std::bad_alloc&) {
    throw OutOfMemory((scene.path.empty() ? std::string("scene") : scene.path) + ": out of " +
                      backendName(backend) + " memory while allocating " + gib(double(need)) +
                      " for " + std::to_string(particles) + " particles");
  } catch (const Error&) {
    throw;
  } catch (...) {
    rethrowAsSmashError();
  }
}

[[noreturn]] void rethrowAsSmashError() {
#if defined(SMASH_HAVE_CUDA)
  pipeline::rethrowCudaError();
#else
  throw;
#endif
}

namespace {
constexpr char kStateTrailer[8] = {'S', 'M', 'A', 'S', 'H', 'S', 'U', 'M'};
}  // namespace

std::vector<std::uint8_t> withStateChecksum(std::vector<std::uint8_t> bytes) {
  const std::uint64_t sum = fnv1a(bytes.data(), bytes.size());
  bytes.insert(bytes.end(), kStateTrailer, kStateTrailer + sizeof kStateTrailer);
  const auto* p = reinterpret_cast<const std::uint8_t*>(&sum);
  bytes.insert(bytes.end(), p, p + sizeof sum);
  return bytes;
}

void saveStateFile(const World& world, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // Replacing a device, a folder or a FIFO by a rename would destroy it (as root even /dev/full).
  const fs::file_status st = fs::symlink_status(path, ec);
  if (!ec && fs::exists(st) && !fs::is_regular_file(st))
    throw OutputError(path + ": not a regular file; a state file is written only to a new or regular file");
  const std::vector<std::uint8_t> bytes = withStateChecksum(world.saveState());
  const std::string tmp = path + ".partial";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw OutputError(path + ": cannot write state file");
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush()) {
      out.close();
      std::remove(tmp.c_str());
      throw OutputError(path + ": write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw OutputError(path + ": cannot rename the finished state file into place");
  }
}

void loadStateFile(World& world, const std::string& path) {
  // A regular file only (not a folder or a device such as /dev/zero), every failure an InputError.
  const std::string text = readRegularFile(path, std::uint64_t(1) << 40, "state file");
  std::vector<std::uint8_t> bytes(text.begin(), text.end());
  // The trailer: 8 bytes of magic and an FNV-1a checksum of everything before it.
  constexpr std::size_t kTrailer = sizeof kStateTrailer + sizeof(std::uint64_t);
  if (bytes.size() < kTrailer ||
      std::memcmp(bytes.data() + bytes.size() - kTrailer, kStateTrailer, sizeof kStateTrailer) != 0)
    throw InputError(path + ": not a complete state file (no checksum trailer: truncated, or not written by "
                            "save_state)");
  std::uint64_t sum = 0;
  std::memcpy(&sum, bytes.data() + bytes.size() - sizeof sum, sizeof sum);
  bytes.resize(bytes.size() - kTrailer);
  if (fnv1a(bytes.data(), bytes.size()) != sum)
    throw InputError(path + ": state file is damaged (checksum mismatch)");
  world.loadState(bytes, path);
}

StepObservation observe(const World& world, const Scene& scene, std::int64_t step) {
  // Positions in double from the backend's relative floats: far from the origin the float world
  // coordinates would round penetration depths and bounds to millimetres.
  return observeParticles(step, world.particleStates(false), world.particleStates(true), scene.colliders);
}

double kineticEnergy(const World& world, const Scene& scene) {
  const std::vector<glm::dvec3> v = world.particleStates(true);
  double e = 0;
  std::size_t k = 0;
  for (const Body& b : scene.bodies)
    for (double m : scene.shapes[b.shape].mass) {
      e += 0.5 * m * glm::dot(v[k], v[k]);
      ++k;
    }
  return e;
}

double maxParticleSpeed(const World& world) {
  double s = 0;
  for (const glm::dvec3& v : world.particleStates(true)) s = std::max(s, glm::length(v));
  return s;
}

BodyPenetration deepestBodyPenetration(const Scene& scene, const World& world) {
  std::vector<glm::dvec3> centres;
  for (const BodyPose& p : world.poses()) centres.push_back(p.centre);
  return deepestBodyPenetration(scene, centres, world.orientations());
}

BodyPenetration deepestBodyPenetration(const Scene& scene, const std::vector<BodyPose>& poses) {
  std::vector<glm::dvec3> centres;
  std::vector<glm::dquat> rotations;
  for (const BodyPose& p : poses) {
    centres.push_back(p.centre);
    rotations.push_back(glm::dquat(p.rotation));
  }
  return deepestBodyPenetration(scene, centres, rotations);
}

}  // namespace smash
