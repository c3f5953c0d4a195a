// CPP backend: Thrust's serial host system. Deterministic (built with -ffp-contract=off), the
// backend the sanitizers and the bitwise-repeatability test run on.
#include <thrust/system/cpp/execution_policy.h>
#include <thrust/system/cpp/vector.h>

#include <cstdlib>

#include "pipeline/backends.h"
#include "pipeline/device_world.inl"

namespace smash::pipeline {
namespace {
struct CppSystem {
  template <class T>
  using Vector = thrust::cpp::vector<T>;
  static constexpr Backend kBackend = Backend::Cpp;
  static constexpr StepStrategy kDefaultStrategy = StepStrategy::PerBody;
  // Runs the segmented reduce_by_key of the per-particle layout: the CPU twin of the CUDA path.
  static constexpr bool kReduceByKey = true;
  static constexpr bool kHostMemory = true;  // sorts go through the standard library (see device_world.inl)
  static auto policy() { return thrust::cpp::par; }
  static char* allocateBytes(std::size_t n) { return static_cast<char*>(std::malloc(n)); }
  static void freeBytes(char* p) { std::free(p); }
  static void synchronize() {}
};
}  // namespace

std::unique_ptr<World> makeCppWorld(const Scene& scene, StepStrategy strategy) {
  return std::make_unique<DeviceWorld<CppSystem>>(scene, strategy);
}

}  // namespace smash::pipeline
