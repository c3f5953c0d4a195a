// Lanes: how the work of one body's contact solve is spread over threads (issue 10).
//
// A body alone against the colliders (contact_solver.h resolveAgainstStatic) solves its contacts
// by Gauss–Seidel sweeps: each contact's impulse changes the body's velocity, which the next
// contact reads, so the sweep is a chain. On a GPU one thread per body walked that chain alone
// (a resting bunny: ~95 contacts × ~17 sweeps; 1,024 bunnies 0.78 ms a step on an H200, 62% of the
// step). But ~97% of the updates in a resting body's sweeps change nothing (a point hovering
// within the margin: no normal impulse before or after, no friction — contact_solver.h
// updateContact), and whether a contact changes anything depends only on the body's velocity now.
// So 32 lanes of a warp test 32 consecutive contacts at once against the same velocity; the first
// that changes something is applied (every lane holds the body and applies it alike), and the test
// resumes after it. Every contact before it changed nothing — exactly what the chain would have
// done — so the result is the chain's, to the bit. The passes over contacts that are independent
// (targets, responses, the warm start's matches) run one contact to a lane; the sums over
// contacts are taken in contact order.
//
// SerialLanes is one thread doing the lanes' work in order: every CPU caller and the reference,
// the same arithmetic in the same order as the chain. (kernels/math/contact_lanes.h is another
// thing: the CPU's SSE sweep of four pairs at once.) WarpLanes (CUDA only) is a warp; the CUDA
// system launches a body's solve, or a colour's pair's sweeps (SweepPairColor), on one
// (CudaSystem::forEachLanes).
#pragma once

#include "math/hd.h"

namespace smash {

/// One thread, the lanes in order, a sweep's scan looking at `Width` contacts at a time (1: the
/// chain written plainly; tests/test_contact.cpp checks that every width sweeps alike).
/// SerialLanes (below) scans 32 on a CPU — the warp's windows, so the CPU tests run the scan a warp
/// runs and the census counts its chain exactly (as fast as the chain written plainly: 256 resting
/// bunnies, OpenMP 2 threads, within the noise over seven alternating runs) — and one on a GPU
/// thread (ptxas gave the one-thread kernels, ShockVelocities, a stack in the scan's form).
/// `steps` (the GPU model's census on a CPU system; else null) counts the chain a warp would run
/// for the same work: a pass over n contacts ⌈n/32⌉ steps, a scan 1 (2 when it applies a contact:
/// with a width of 32 its windows are a warp's), an ordered sum ⌈n/32⌉ + n, a reduction over the
/// lanes 5.
template <int Width>
struct InOrderLanes {
  static constexpr int kWidth = Width;    ///< contacts a scan looks at together
  static constexpr int kWarp = 32;        ///< the warp the census counts for
  static constexpr int kReduceSteps = 5;  ///< log2(kWarp): a reduction over a warp's lanes
  int* steps = nullptr;
  SMASH_HD bool leader() const { return true; }
  /// Stores of one lane visible to the others.
  SMASH_HD void sync() const {}
  /// f(k) for every k < count, by some lane.
  template <class F>
  SMASH_HD void forEach(int count, const F& f) const {
    count_((count + kWarp - 1) / kWarp);
    for (int k = 0; k < count; ++k) f(k);
  }
  /// value = f(k) for every k < count by some lane, then take(k, value) for every k in order, on
  /// every lane (an ordered sum).
  template <class V, class F, class Take>
  SMASH_HD void forEachInOrder(int count, const F& f, const Take& take) const {
    count_((count + kWarp - 1) / kWarp + count);
    for (int k = 0; k < count; ++k) take(k, static_cast<V>(f(k)));
  }
  /// The first i < n (n ≤ kWidth) for which f(i, value) is true, with the value that call wrote,
  /// on every lane; −1 when none is.
  template <class V, class F>
  SMASH_HD int firstWhere(int n, V& value, const F& f) const {
    for (int i = 0; i < n; ++i)
      if (f(i, value)) {
        count_(2);
        return i;
      }
    count_(1);
    return -1;
  }
  /// The least of every lane's x (one lane: x itself).
  template <class T>
  SMASH_HD T least(T x) const {
    count_(kReduceSteps);
    return x;
  }
  /// Of every lane's candidate (`any`, `value`, `index`), the largest value, the smallest index on
  /// ties: its index, and its value in `value`, on every lane (−1 and `value` as it was when no
  /// lane has one). (With a NaN value a warp may choose otherwise than the chain, and its lanes
  /// may disagree: only a non-finite body has one, and the watchdog takes it.)
  template <class T>
  SMASH_HD int firstLargest(bool any, T& /*value*/, int index) const {
    count_(kReduceSteps);
    return any ? index : -1;
  }
  /// Where contact k's search of last step's list starts, `cursor` being where the search of the
  /// contact before it (in this lane) left off: the lanes in order carry the cursor.
  SMASH_HD int searchStart(int /*k*/, int cursor, int /*previousCount*/) const { return cursor; }
  /// total[j] += row_k[j] for k = 0, 1, …, n − 1 in that order, each column j < N a chain of its
  /// own; row(k, out) writes row k (N floats) by some lane; `total` is on every lane before and
  /// after. The bits are those of the plain loop (the same adds in the same order), whatever the
  /// lanes. Counted: a tile of kWarp rows 2 steps — the rows, then the columns' chains, kWarp adds
  /// from shared memory at ~30 cycles each (~0.5 µs, under the model's 0.8 µs step; an ordered
  /// sum through shuffles, forEachInOrder, counts a step per element) — and 1 more for the result
  /// on every lane.
  template <int N, class Row>
  SMASH_HD void sumRowsInOrder(int n, const Row& row, float (&total)[N]) const {
    count_(2 * ((n + kWarp - 1) / kWarp) + 1);
    for (int k = 0; k < n; ++k) {
      float r[N];
      row(k, r);
      for (int j = 0; j < N; ++j) total[j] += r[j];
    }
  }
  /// For every k < n in order: test(k, payload) by some lane; where it is true, write(k, rank,
  /// payload) with rank the number of trues before k (a stream compaction, the plain loop's
  /// `if (test) write(slot++)`). Returns the number of trues, on every lane. Counted: a pass over
  /// the n elements (⌈n/kWarp⌉ steps; a warp's rank is a ballot).
  template <class P, class Test, class Write>
  SMASH_HD int compactInOrder(int n, const Test& test, const Write& write) const {
    count_((n + kWarp - 1) / kWarp);
    int rank = 0;
    for (int k = 0; k < n; ++k) {
      P payload{};
      if (test(k, payload)) write(k, rank++, payload);
    }
    return rank;
  }
  /// The first k < n whose value(k, payload) is larger than `best` and than every value before it
  /// (the plain loop's `if (v > best) best = v`), with its value in `best` and its payload in
  /// `payload`, on every lane; −1 (both left as they were) when none is. value(k, payload) returns
  /// the value and writes the payload (a float, an int or a 3-vector) by some lane, each call
  /// given the payload as it came in. Counted: a pass over the n elements (⌈n/kWarp⌉ steps) and
  /// one reduction.
  template <class P, class Value>
  SMASH_HD int firstLargestOf(int n, float& best, P& payload, const Value& value) const {
    count_((n + kWarp - 1) / kWarp + kReduceSteps);
    const P initial = payload;
    int winner = -1;
    for (int k = 0; k < n; ++k) {
      P mine = initial;
      const float v = value(k, mine);
      if (v > best) {
        best = v;
        payload = mine;
        winner = k;
      }
    }
    return winner;
  }
  /// What firstWhere counts for a scan of one window, for a caller that tested the window itself
  /// (contact_solver.h's SSE collider sweep): `found` whether a contact in it changes something.
  SMASH_HD void countScan(bool found) const { count_(found ? 2 : 1); }

 private:
  SMASH_HD void count_(int n) const {
    if (steps) *steps += n;
  }
};

#if defined(__CUDA_ARCH__)
using SerialLanes = InOrderLanes<1>;
#else
using SerialLanes = InOrderLanes<32>;
#endif

#if defined(__CUDACC__)
/// A warp, the 32 lanes of one body's solve: every lane calls each operation (converged).
struct WarpLanes {
  static constexpr int kWidth = 32;
  static constexpr unsigned kAll = 0xffffffffu;
  int lane;
  __device__ bool leader() const { return lane == 0; }
  __device__ void sync() const { __syncwarp(kAll); }
  template <class F>
  __device__ void forEach(int count, const F& f) const {
    for (int k = lane; k < count; k += kWidth) f(k);
    __syncwarp(kAll);
  }
  template <class V, class F, class Take>
  __device__ void forEachInOrder(int count, const F& f, const Take& take) const {
    for (int base = 0; base < count; base += kWidth) {
      const int k = base + lane, n = count - base < kWidth ? count - base : kWidth;
      V mine{};
      if (k < count) mine = f(k);
      for (int i = 0; i < n; ++i) take(base + i, shuffle(mine, i));
    }
    __syncwarp(kAll);
  }
  template <class V, class F>
  __device__ int firstWhere(int n, V& value, const F& f) const {
    V mine{};
    const bool hit = lane < n && f(lane, mine);
    const unsigned hits = __ballot_sync(kAll, hit);
    if (hits == 0) return -1;
    const int first = __ffs(hits) - 1;
    value = shuffle(mine, first);
    return first;
  }
  template <class T>
  __device__ T least(T x) const {
    for (int offset = kWidth / 2; offset > 0; offset /= 2) {
      const T other = __shfl_xor_sync(kAll, x, offset);
      x = other < x ? other : x;
    }
    return x;
  }
  template <class T>
  __device__ int firstLargest(bool any, T& value, int index) const {
    for (int offset = kWidth / 2; offset > 0; offset /= 2) {
      const bool otherAny = __shfl_xor_sync(kAll, int(any), offset) != 0;
      const T otherValue = __shfl_xor_sync(kAll, value, offset);
      const int otherIndex = __shfl_xor_sync(kAll, index, offset);
      if (otherAny && (!any || otherValue > value || (otherValue == value && otherIndex < index))) {
        any = true;
        value = otherValue;
        index = otherIndex;
      }
    }
    return any ? index : -1;
  }
  /// The warp's rows of N columns in shared memory: one array per N in a kernel, whatever the call
  /// sites. Blocks are one-dimensional and of at most kWarpsPerBlock warps (for_each_lanes_kernel's
  /// __launch_bounds__(256)); a launcher with larger blocks would give two warps the same rows.
  static constexpr int kWarpsPerBlock = 8;
  template <int N>
  __device__ static float (*warpRows())[N + 1] {
    __shared__ float stage[kWarpsPerBlock][kWidth][N + 1];
    return stage[(threadIdx.x / kWidth) % kWarpsPerBlock];
  }
  /// The rows of a tile of 32 staged in shared memory (a warp's own block of it, rows padded to
  /// N + 1 floats so that, N even, neither the row stores nor the column loads conflict); lane
  /// j < N then adds column j in row order — the plain loop's adds, one column to a lane.
  template <int N, class Row>
  __device__ void sumRowsInOrder(int n, const Row& row, float (&total)[N]) const {
    static_assert(N <= kWidth, "a column to a lane");
    float (*rows)[N + 1] = warpRows<N>();
    float column = 0.0f;
#pragma unroll
    for (int j = 0; j < N; ++j)
      if (lane == j) column = total[j];
    for (int base = 0; base < n; base += kWidth) {
      const int tile = n - base < kWidth ? n - base : kWidth;
      if (lane < tile) {
        float r[N];
        row(base + lane, r);
#pragma unroll
        for (int j = 0; j < N; ++j) rows[lane][j] = r[j];
      }
      __syncwarp(kAll);
      if (lane < N)
        for (int k = 0; k < tile; ++k) column += rows[k][lane];
      __syncwarp(kAll);
    }
#pragma unroll
    for (int j = 0; j < N; ++j) total[j] = __shfl_sync(kAll, column, j);
  }
  template <class P, class Test, class Write>
  __device__ int compactInOrder(int n, const Test& test, const Write& write) const {
    int total = 0;
    for (int base = 0; base < n; base += kWidth) {
      const int k = base + lane;
      P payload{};
      const bool hit = k < n && test(k, payload);
      const unsigned hits = __ballot_sync(kAll, hit);
      if (hit) write(k, total + __popc(hits & ((1u << lane) - 1u)), payload);
      total += __popc(hits);
    }
    return total;
  }
  /// Each lane keeps the first largest of its elements (lane, lane + 32, …, in order), then one
  /// reduction takes the largest of the lanes' and the smallest index on ties: the first largest
  /// of all, as the plain loop finds it; its payload comes from the lane that holds it.
  template <class P, class Value>
  __device__ int firstLargestOf(int n, float& best, P& payload, const Value& value) const {
    float mineBest = best;
    P mine = payload;
    int index = -1;
    for (int k = lane; k < n; k += kWidth) {
      P candidate = payload;
      const float v = value(k, candidate);
      if (v > mineBest) {
        mineBest = v;
        mine = candidate;
        index = k;
      }
    }
    const int winner = firstLargest(index >= 0, mineBest, index);
    if (winner >= 0) {
      best = mineBest;
      payload = shuffle(mine, winner % kWidth);
    }
    return winner;
  }
  /// Successive steps gather the contacts in the same order, so contact k's match is near k.
  __device__ int searchStart(int k, int /*cursor*/, int previousCount) const {
    return k < previousCount ? k : 0;
  }
  template <class T>
  __device__ static T shuffle(const T& x, int from) {
    return __shfl_sync(kAll, x, from);
  }
  template <class T>
  __device__ static glm::vec<3, T, glm::defaultp> shuffle(const glm::vec<3, T, glm::defaultp>& x, int from) {
    return {__shfl_sync(kAll, x.x, from), __shfl_sync(kAll, x.y, from), __shfl_sync(kAll, x.z, from)};
  }
};
#endif

}  // namespace smash

namespace smash::pipeline {
/// f(i, lanes) as f(i), the lanes one thread in order (the CPU systems' forEachLanes; CUDA's
/// with SMASH_CUDA_LANES=0). `steps` (may be null): element i's warp chain counted in steps[i].
template <class F>
struct WithSerialLanes {
  F f;
  int* steps = nullptr;
  SMASH_HD void operator()(int i) const { f(i, SerialLanes{steps ? steps + i : nullptr}); }
};
}  // namespace smash::pipeline
