#include "world/world.h"

#include "core/error.h"
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

std::unique_ptr<World> World::create(Backend backend, const Scene& scene) {
  switch (backend) {
    case Backend::Cpp:
      return pipeline::makeCppWorld(scene);
    case Backend::Omp:
      return pipeline::makeOmpWorld(scene);
    case Backend::Cuda:
#if defined(SMASH_HAVE_CUDA)
      if (pipeline::cudaDeviceCount() == 0)
        throw InputError("backend cuda: no CUDA device is available on this machine");
      return pipeline::makeCudaWorld(scene);
#else
      throw InputError("backend cuda: this build has no CUDA support (nvcc was not found)");
#endif
  }
  throw InputError("backend: unknown");
}

}  // namespace smash
