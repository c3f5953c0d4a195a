// OMP backend: Thrust's OpenMP host system, the default CPU backend.
#include <omp.h>
#include <thrust/system/omp/execution_policy.h>
#include <thrust/system/omp/vector.h>

#include "pipeline/backends.h"
#include "pipeline/host_algorithms.h"
#include "pipeline/device_world.inl"

namespace smash::pipeline {
namespace {
struct OmpSystem : HostAlgorithms {
  template <class T>
  using Vector = thrust::omp::vector<T>;
  static constexpr Backend kBackend = Backend::Omp;
  static constexpr StepStrategy kDefaultStrategy = StepStrategy::PerBody;
  static auto policy() { return thrust::omp::par; }
  /// The count is in host memory and every launch before it has finished: the pair passes and
  /// their sorts run over the pairs found, not the slots (the same results to the bit as the
  /// serial system's slot-wide passes; test_determinism.cpp).
  static int passWidth(const long long* count, int provisioned) {
    return static_cast<int>(*count < provisioned ? *count : provisioned);
  }
  static int workers() { return omp_get_max_threads(); }
  /// A world at rest is skipped (DeviceWorld::restStep).
  static constexpr bool kSkipsRest = true;
  /// One element runs on the calling thread: waking the team for it costs more than it does
  /// (a step's AdvanceStep; a lone body's own part between its split loops).
  template <class Policy, class F>
  static void forEach(Policy&& policy, Context& context, int count, const F& f) {
    if (count == 1)
      f(0);
    else
      HostAlgorithms::forEach(policy, context, count, f);
  }
  template <class Policy, class F>
  static void forEachLanes(Policy&& policy, Context& context, int count, const F& f, int* steps = nullptr) {
    forEach(policy, context, count, WithSerialLanes<F>{f, steps});
  }
};
}  // namespace

std::unique_ptr<World> makeOmpWorld(const Scene& scene, StepStrategy strategy) {
  return std::make_unique<DeviceWorld<OmpSystem>>(scene, strategy);
}

}  // namespace smash::pipeline
