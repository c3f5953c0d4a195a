// CPP backend: Thrust's serial host system. Deterministic (built with -ffp-contract=off), the
// backend the sanitizers and the bitwise-repeatability test run on.
#include <thrust/system/cpp/execution_policy.h>
#include <thrust/system/cpp/vector.h>

#include "pipeline/backends.h"
#include "pipeline/host_algorithms.h"
#include "pipeline/device_world.inl"

namespace smash::pipeline {
namespace {
struct CppSystem : HostAlgorithms {
  template <class T>
  using Vector = thrust::cpp::vector<T>;
  static constexpr Backend kBackend = Backend::Cpp;
  static constexpr StepStrategy kDefaultStrategy = StepStrategy::PerBody;
  static auto policy() { return thrust::cpp::par; }
};
}  // namespace

std::size_t backendBytes(const Scene& scene, StepStrategy strategy) {
  return DeviceWorld<CppSystem>::plannedBytes(scene, strategy, true);
}

std::unique_ptr<World> makeCppWorld(const Scene& scene, StepStrategy strategy) {
  return std::make_unique<DeviceWorld<CppSystem>>(scene, strategy);
}

}  // namespace smash::pipeline
