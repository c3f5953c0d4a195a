#include "world/world.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "core/error.h"
#include "math/sdf.h"
#include "pipeline/backends.h"

namespace smash {

const char* backendName(Backend b) {
  switch (b) {
    case Backend::Cpp:
      return "cpp";
    case Backend::Omp:
      return "omp";
    case Backend::Cuda:
      return "cuda";
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
  throw InputError("backend: '" + name + "' is not one of 'cpp', 'omp', 'cuda'");
}

bool backendAvailable(Backend b) {
  if (b != Backend::Cuda) return true;
#if defined(SMASH_HAVE_CUDA)
  return pipeline::cudaDeviceCount() > 0;
#else
  return false;
#endif
}

std::unique_ptr<World> World::create(Backend backend, const Scene& scene, StepStrategy strategy) {
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
  }
  throw InputError("backend: unknown");
}

void saveStateFile(const World& world, const std::string& path) {
  const std::vector<std::uint8_t> bytes = world.saveState();
  const std::string tmp = path + ".partial";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path + ": cannot write state file");
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush()) throw InputError(path + ": write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw InputError(path + ": cannot rename the finished state file into place");
  }
}

void loadStateFile(World& world, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open state file");
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  world.loadState(bytes, path);
}

StepObservation observe(const World& world, const Scene& scene, std::int64_t step) {
  StepObservation o;
  o.step = step;
  o.particleMin = glm::dvec3(1e300);
  o.particleMax = glm::dvec3(-1e300);
  for (const glm::vec3& xf : world.particlePositions()) {
    const glm::dvec3 x(xf);
    if (!std::isfinite(x.x) || !std::isfinite(x.y) || !std::isfinite(x.z)) o.finite = false;
    o.particleMin = glm::min(o.particleMin, x);
    o.particleMax = glm::max(o.particleMax, x);
    for (const auto& collider : scene.colliders)
      o.deepestPenetration = std::max(o.deepestPenetration, -sdfCollider(collider, x).phi);
  }
  for (const glm::vec3& v : world.particleVelocities())
    if (!std::isfinite(v.x) || !std::isfinite(v.y) || !std::isfinite(v.z)) o.finite = false;
  return o;
}

double kineticEnergy(const World& world, const Scene& scene) {
  std::vector<glm::vec3> v = world.particleVelocities();
  double e = 0;
  std::size_t k = 0;
  for (const Body& b : scene.bodies)
    for (double m : scene.shapes[b.shape].mass) {
      e += 0.5 * m * glm::dot(glm::dvec3(v[k]), glm::dvec3(v[k]));
      ++k;
    }
  return e;
}

}  // namespace smash
