// OMP backend: Thrust's OpenMP host system, the default CPU backend.
#include <thrust/system/omp/execution_policy.h>
#include <thrust/system/omp/vector.h>

#include <cstdlib>

#include "pipeline/backends.h"
#include "pipeline/device_world.inl"

namespace smash::pipeline {
namespace {
struct OmpSystem {
  template <class T>
  using Vector = thrust::omp::vector<T>;
  static constexpr Backend kBackend = Backend::Omp;
  static constexpr StepStrategy kDefaultStrategy = StepStrategy::PerBody;
  // CCCL's OpenMP reduce_by_key is slow here (52 of 87 ms per step at 1,024 bunnies) and trips
  // UBSan inside CCCL; the per-particle layout sums one body per thread instead.
  static constexpr bool kReduceByKey = false;
  static constexpr bool kHostMemory = true;  // sorts go through the standard library (see device_world.inl)
  static auto policy() { return thrust::omp::par; }
  static char* allocateBytes(std::size_t n) { return static_cast<char*>(std::malloc(n)); }
  static void freeBytes(char* p) { std::free(p); }
  static void synchronize() {}
};
}  // namespace

std::unique_ptr<World> makeOmpWorld(const Scene& scene, StepStrategy strategy) {
  return std::make_unique<DeviceWorld<OmpSystem>>(scene, strategy);
}

}  // namespace smash::pipeline
