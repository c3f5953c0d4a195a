// The collective algorithms of a step on the CPU systems (serial and OpenMP): memory is host
// memory, and the scan, sorts and searches of the body-contact phase go through the standard
// library. CCCL's OpenMP and serial algorithms bind thrust::reference through a null execution
// policy when their temporaries come from a custom allocator (UBSan reports it,
// docs/reliability.md); the arrays they work on are small (bodies, pairs).
//
// Each backend's System (backend_cpp.cpp, backend_omp.cpp, backend_cuda.cu) offers the same
// static functions, so the stages in device_world.inl read the same on every backend:
//   forEach(policy, context, count, f)           f(i) for i < count: one kernel (CUDA: blocks sized
//                                                 so that the launch spreads over every SM)
//   forEachLanes(policy, context, count, f, steps)  f(i, lanes) for i < count: element i's work
//                                                 spread over lanes (math/lanes.h; CUDA: a warp an
//                                                 element, CPU: one thread in order, counting each
//                                                 element's warp chain into host `steps` if given)
//   exclusiveScan(policy, in, n, out)            out[i] = Σ_{k<i} in[k]
//   stableSortByKey(policy, keys, values, n, scratch)
//   sortKeys(policy, keys, n)
//   lowerBounds(policy, sorted, n, queries, out) out[b] = first index with sorted[i] ≥ b, b < queries
//   copyToHost(dst, src, n)                       a device→host read (the caller counts them)
//   stridingWidth(context, elements)              elements a lanes launch whose elements stride over
//                                                 its work is given (CUDA: at most 16 warps an SM;
//                                                 CPU: all)
//   passWidth(count, provisioned)                 threads of a pass over a device-counted range:
//                                                 the provisioned slots (CUDA's shape: nothing
//                                                 read), or where the count lies in host memory
//                                                 and the system opts in, the count itself
//   workers()                                     threads a launch spreads over (the per-body
//                                                 step splits a body's loops below as many bodies)
//   kSkipsRest                                    whether a world at rest is skipped (restStep; the
//                                                 serial system steps it: the tests' stepped world)
//   startRead(context, at), finishedRead(context, value)  a device→host read of one flag without a
//                                                 wait (CUDA: an asynchronous copy, ready later)
//   synchronize()                                 waits for queued device work
//   Context, onStream(policy, context)            per-world state (CUDA: a stream), the policy on it
//   runStep(context, launches, fixedSequence, variant)  one step's launches (CUDA: a CUDA graph
//                                                 per variant when the sequence is fixed); resetStep(context)
#pragma once

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>

#include "math/lanes.h"

namespace smash::pipeline {

struct HostAlgorithms {
  /// Per-world state of the system: on the CPU the value of startRead (CUDA: its stream and step
  /// graph, and the read's pinned slot and event).
  struct Context {
    long long read = 0;
    /// SMASH_REST_READ_DELAY=k: startRead's value "arrives" only at the k-th finishedRead after it,
    /// as CUDA's may while the device is behind (the tests run that path on the CPU).
    int readDelay = 0, readPolls = 0;
    Context() {
      const char* delay = std::getenv("SMASH_REST_READ_DELAY");
      readDelay = delay ? std::max(0, std::atoi(delay)) : 0;
    }
  };
  template <class Policy>
  static Policy onStream(Policy policy, Context&) {
    return policy;
  }
  /// Runs one step's launches (CUDA may capture and replay them as a graph).
  template <class Body>
  static void runStep(Context&, Body&& body, bool /*fixedSequence*/, int /*variant*/) {
    body();
  }
  static void resetStep(Context&) {}
  /// f(i) for every i < count, through Thrust's for_each on the system's policy (the OpenMP
  /// system splits it over its threads).
  template <class Policy, class F>
  static void forEach(Policy&& policy, Context&, int count, const F& f) {
    if (count <= 0) return;
    thrust::counting_iterator<int> first(0);
    thrust::for_each(policy, first, first + count, f);
  }
  /// f(i, lanes) for i < count, the lanes one thread in order (math/lanes.h SerialLanes);
  /// `steps` (host memory, may be null): each element's warp chain, counted (the GPU model).
  template <class Policy, class F>
  static void forEachLanes(Policy&& policy, Context& context, int count, const F& f, int* steps = nullptr) {
    forEach(policy, context, count, WithSerialLanes<F>{f, steps});
  }
  /// The CUDA shape: as many threads as slots, those past the count doing nothing. The serial
  /// system keeps it, so the tests run the path CUDA takes (and compare it with OpenMP's).
  static int passWidth(const long long* /*count*/, int provisioned) { return provisioned; }
  /// The elements a lanes launch whose elements stride over its work (SweepPairColor) is given,
  /// of `elements` that would each take one: all of them on a CPU.
  static int stridingWidth(const Context&, int elements) { return elements; }
  /// Threads a launch spreads over: one on the serial system.
  static int workers() { return 1; }
  /// The serial system steps a world at rest (the tests compare it with OpenMP and CUDA, which
  /// skip such steps: DeviceWorld::restStep).
  static constexpr bool kSkipsRest = false;
  /// A flag read without a wait: host memory, every launch before it finished — at once (or
  /// after SMASH_REST_READ_DELAY looks, for the tests).
  static void startRead(Context& context, const long long* at) {
    context.read = *at;
    context.readPolls = context.readDelay;
  }
  static bool finishedRead(Context& context, long long& value) {
    if (context.readPolls > 0) {
      --context.readPolls;
      return false;
    }
    value = context.read;
    return true;
  }


  template <class Policy, class T>
  static void exclusiveScan(Policy&&, const T* in, int n, T* out) {
    std::exclusive_scan(in, in + n, out, T(0));
  }

  /// The scratch buffer is the caller's and is kept, so steady-state steps allocate nothing.
  template <class Policy, class K, class V>
  static void stableSortByKey(Policy&&, K* keys, V* values, int n, std::vector<std::pair<K, V>>& scratch) {
    if (n <= 1) return;
    scratch.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) scratch[static_cast<std::size_t>(i)] = {keys[i], values[i]};
    std::stable_sort(scratch.begin(), scratch.end(),
                     [](const std::pair<K, V>& a, const std::pair<K, V>& b) { return a.first < b.first; });
    for (int i = 0; i < n; ++i) {
      keys[i] = scratch[static_cast<std::size_t>(i)].first;
      values[i] = scratch[static_cast<std::size_t>(i)].second;
    }
  }

  template <class Policy, class K>
  static void sortKeys(Policy&&, K* keys, int n) {
    std::sort(keys, keys + n);
  }

  template <class Policy>
  static void lowerBounds(Policy&&, const int* sorted, int n, int queries, int* out) {
    for (int b = 0; b < queries; ++b)
      out[b] = static_cast<int>(std::lower_bound(sorted, sorted + n, b) - sorted);
  }

  template <class T>
  static void copyToHost(T* dst, const T* src, std::size_t n) {
    if (n) std::memcpy(dst, src, n * sizeof(T));
  }

  static char* allocateBytes(std::size_t n) { return static_cast<char*>(std::malloc(n)); }
  static void freeBytes(char* p) { std::free(p); }
  static void synchronize() {}
};

}  // namespace smash::pipeline
