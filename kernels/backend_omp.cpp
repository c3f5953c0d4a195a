// OMP backend: Thrust's OpenMP host system, the default CPU backend.
#include <omp.h>

#include <atomic>
#include <thread>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#include <thrust/system/omp/execution_policy.h>
#include <thrust/system/omp/vector.h>

#include "pipeline/backends.h"
#include "pipeline/host_algorithms.h"
#include "pipeline/device_world.inl"

namespace smash::pipeline {
namespace {
/// A barrier for the threads of one parallel region that waits by spinning (then yielding, so a
/// team with more threads than free cores still moves): libgomp's barrier, and a region's start
/// and end, wake the team through a futex system call each time, a few tenths of a µs apiece on
/// the development VM — a lone bunny's step is 16 µs.
class TurnBarrier {
 public:
  void wait(int team) {
    const unsigned generation = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) == team - 1) {
      arrived_.store(0, std::memory_order_relaxed);
      generation_.store(generation + 1, std::memory_order_release);
      return;
    }
    for (int spins = 0; generation_.load(std::memory_order_acquire) == generation; ++spins) {
      if (spins < 1 << 14) {
#if defined(__x86_64__) || defined(__i386__)
        _mm_pause();
#endif
      } else {
        std::this_thread::yield();
      }
    }
  }

 private:
  std::atomic<int> arrived_{0};
  std::atomic<unsigned> generation_{0};
};

/// f(i) for i in thread `t`'s share of [0, count): the contiguous range a static schedule gives it.
template <class F>
void forShare(int count, int t, int team, const F& f) {
  const long long first = static_cast<long long>(count) * t / team, end = static_cast<long long>(count) * (t + 1) / team;
  for (long long i = first; i < end; ++i) f(static_cast<int>(i));
}

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
  /// Three loops in turn in one parallel region, each split over the team in contiguous shares,
  /// the threads meeting at a spinning barrier between them (TurnBarrier). Measured on the
  /// development VM (a lone bunny's split step: its sums, its own part on one thread, its
  /// projection): two regions cost ~2.3 µs more than one with two spinning barriers.
  template <class Policy, class F1, class F2, class F3>
  static void forEachInTurn(Policy&&, Context&, int n1, const F1& f1, int n2, const F2& f2, int n3, const F3& f3) {
    TurnBarrier barrier;
#pragma omp parallel
    {
      const int t = omp_get_thread_num(), team = omp_get_num_threads();
      forShare(n1, t, team, f1);
      barrier.wait(team);
      forShare(n2, t, team, f2);
      barrier.wait(team);
      forShare(n3, t, team, f3);
    }
  }
};
}  // namespace

std::unique_ptr<World> makeOmpWorld(const Scene& scene, StepStrategy strategy) {
  return std::make_unique<DeviceWorld<OmpSystem>>(scene, strategy);
}

}  // namespace smash::pipeline
