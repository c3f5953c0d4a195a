// CUDA backend: Thrust's CUDA system, compiled by nvcc for sm_90.
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/system/cuda/vector.h>
#include <thrust/system_error.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <string>

#include "core/error.h"
#include "pipeline/backends.h"
#include "pipeline/device_world.inl"

namespace smash::pipeline {
namespace {

void check(cudaError_t err, const char* what, const char* file, int line) {
  if (err != cudaSuccess)
    throw DeviceError(std::string(file) + ":" + std::to_string(line) + ": " + what + ": " +
                      cudaGetErrorString(err));
}
#define SMASH_CUDA_CHECK(call) check((call), #call, __FILE__, __LINE__)

/// One thread per element: f(i) for i < count (CudaSystem::forEach).
template <class F>
__global__ void __launch_bounds__(256) for_each_kernel(int count, F f) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count) {
    const F op = f;  // a local copy, as Thrust's for_each makes (FinishPairBodies: 32 B of stack with it, 48 B without)
    op(i);
  }
}

/// A warp per element: f(i, lanes) for i < count, the warp's 32 threads its lanes (math/lanes.h;
/// CudaSystem::forEachLanes). A warp's threads share i, so each warp runs f whole or not at all.
template <class F>
__global__ void __launch_bounds__(256) for_each_lanes_kernel(int count, F f) {
  const int i = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / WarpLanes::kWidth);
  if (i < count) {
    const F op = f;
    op(i, WarpLanes{static_cast<int>(threadIdx.x % WarpLanes::kWidth)});
  }
}

/// The CUDA system: the same collective algorithms as HostAlgorithms (host_algorithms.h), here
/// through Thrust on the device. Every call uses `par_nosync` on the world's stream: Thrust does
/// not wait for the device after an algorithm that returns nothing, so a step queues its kernels
/// without a host wait; the only waits are the explicit reads (copyToHost) the world makes and
/// counts. Temporary storage comes from the world's caching allocator; blocks it hands
/// back are reused by later calls on the same stream, which is stream-ordered and safe.
struct CudaSystem {
  template <class T>
  using Vector = thrust::cuda::vector<T>;
  static constexpr Backend kBackend = Backend::Cuda;
  static constexpr StepStrategy kDefaultStrategy = StepStrategy::PerParticle;
  static auto policy() { return thrust::cuda::par_nosync; }

  /// A world's stream, and the CUDA graphs of its step. A step whose launch sequence is fixed (no
  /// host read inside it, no per-stage timing) is captured once — after two plain steps — and
  /// replayed: one launch per step instead of ~20 to ~150 (docs/pipeline.md, "Host reads and
  /// waits"). Two variants: a step with body contacts swaps this step's pair buffers with last
  /// step's, so its launches alternate between two sets of pointers (even and odd steps). SMASH_CUDA_GRAPH=0 turns it off
  /// (Nsight then shows each stage's NVTX range with its kernels). A capture that fails — an
  /// operation the driver cannot capture — falls back to plain launches for the world's lifetime.
  /// The stream is a blocking one: work on the legacy default stream (vector copies and resizes,
  /// the reads to the host) is ordered with it.
  struct Context {
    cudaStream_t stream = nullptr;
    cudaGraphExec_t step[2] = {nullptr, nullptr};
    bool graphs = true;
    int plainSteps = 0;  // since the last (re)start: capture only once temporaries are cached
    int multiprocessors = 1;
    bool spread = true;  // forEach's blocks sized to cover every SM (SMASH_CUDA_SPREAD=0: 256 threads)
    bool lanes = true;   // forEachLanes on a warp an element (SMASH_CUDA_LANES=0: one thread, in order)
    int stridingWarps = 0;  // stridingWidth's limit, warps an SM (SMASH_CUDA_STRIDING_WARPS; 0: none)
    long long* readSlot = nullptr;  // startRead's pinned host slot, and its copy's event
    cudaEvent_t readDone = nullptr;
    Context() {
      SMASH_CUDA_CHECK(cudaStreamCreate(&stream));
      SMASH_CUDA_CHECK(cudaMallocHost(&readSlot, sizeof(long long)));
      SMASH_CUDA_CHECK(cudaEventCreateWithFlags(&readDone, cudaEventDisableTiming));
      const char* setting = std::getenv("SMASH_CUDA_GRAPH");
      graphs = !(setting && std::string(setting) == "0");
      const char* spreading = std::getenv("SMASH_CUDA_SPREAD");
      spread = !(spreading && std::string(spreading) == "0");
      const char* laning = std::getenv("SMASH_CUDA_LANES");
      lanes = !(laning && std::string(laning) == "0");
      const char* striding = std::getenv("SMASH_CUDA_STRIDING_WARPS");
      stridingWarps = striding ? std::max(0, std::atoi(striding)) : 16;
      int device = 0;
      SMASH_CUDA_CHECK(cudaGetDevice(&device));
      SMASH_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
    }
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;
    ~Context() {
      if (stream) cudaStreamSynchronize(stream);  // (a read may still be on its way to readSlot)
      for (cudaGraphExec_t g : step)
        if (g) cudaGraphExecDestroy(g);
      if (readDone) cudaEventDestroy(readDone);
      if (readSlot) cudaFreeHost(readSlot);
      if (stream) cudaStreamDestroy(stream);
    }
  };
  template <class Policy>
  static auto onStream(Policy policy, Context& context) {
    return policy.on(context.stream);
  }
  /// f(i) for i < count, one thread each, in blocks of 1 to 256 threads sized so that the launch
  /// has a block on every SM where it can: a pass over bodies or pairs is small and its threads
  /// run long, latency-bound loops (a body's contacts, a pair's points). Thrust's for_each packs
  /// 512 elements in a block, so 1,024 resting bunnies ran SolveColliderContacts on 2 of an H200's
  /// 132 SMs (measured: 21.8 ms per step in the collider-contact stage,
  /// bench/results/nvidia-h200/old_resting.txt). A pass
  /// over particles or chunks is large and gets 256-thread blocks as before. Fewer than 32
  /// elements per SM make a block of that many threads (a part of a warp), not a full warp on a
  /// quarter of the SMs: 1,024 resting bunnies then solve 8 to an SM, and a body's ~95 contacts
  /// (9 KB) × 8 stay in its L1 through the 32 sweeps; at 32 bunnies to an SM (292 KB) every
  /// sweep read them from L2 (Nsight Compute on the H200: 57% of SolveColliderContacts' stalls
  /// waited on those loads).
  static int blockThreads(int count, int multiprocessors) {
    const int perSm = (count + multiprocessors - 1) / multiprocessors;
    return perSm <= 32 ? perSm : std::min(256, (perSm + 31) / 32 * 32);
  }
  template <class Policy, class F>
  static void forEach(Policy&&, Context& context, int count, const F& f) {
    if (count <= 0) return;
    const int block = context.spread ? blockThreads(count, context.multiprocessors) : 256;
    for_each_kernel<<<(count + block - 1) / block, block, 0, context.stream>>>(count, f);
    SMASH_CUDA_CHECK(cudaGetLastError());
  }

  /// f(i, lanes) for i < count, a warp each, in blocks of 1 to 8 warps sized so that the launch
  /// has a block on every SM where it can (as forEach).
  /// SMASH_CUDA_LANES=0: a thread an element, its lanes in order (the form before the warps, for
  /// comparison: the same results). Nothing is counted (`steps`: the model's census runs on a
  /// CPU system).
  template <class Policy, class F>
  static void forEachLanes(Policy&& policy, Context& context, int count, const F& f, int* /*steps*/ = nullptr) {
    if (count <= 0) return;
    if (!context.lanes) {
      forEach(policy, context, count, WithSerialLanes<F>{f});
      return;
    }
    const int perSm = (count + context.multiprocessors - 1) / context.multiprocessors;
    const int warps = context.spread ? std::min(8, perSm) : 8;
    const int block = warps * WarpLanes::kWidth;
    const long long threads = static_cast<long long>(count) * WarpLanes::kWidth;
    for_each_lanes_kernel<<<static_cast<unsigned>((threads + block - 1) / block), block, 0, context.stream>>>(count, f);
    SMASH_CUDA_CHECK(cudaGetLastError());
  }

  /// A lanes launch whose elements stride over its work (SweepPairColor: a colour's pairs, up to
  /// one a body) is given at most 16 warps an SM (about one resident wave at ≤ 128 registers),
  /// not a warp for each body: rain_64k's colour launches would otherwise be 64,000 warps each,
  /// three in four returning at once, 384 launches a step. SMASH_CUDA_STRIDING_WARPS sets the
  /// warps an SM (0: a warp an element); with SMASH_CUDA_LANES=0, a thread an element as before.
  static int stridingWidth(const Context& context, int elements) {
    const long long most = static_cast<long long>(context.stridingWarps) * context.multiprocessors;
    return context.lanes && context.stridingWarps > 0 && most < elements ? static_cast<int>(most) : elements;
  }
  /// Device memory: never read in a step; a pass runs over the slots provisioned.
  static int passWidth(const long long* /*count*/, int provisioned) { return provisioned; }
  /// The per-body strategy (the CPU layout; CUDA's default is per particle) is not split.
  static int workers() { return 1; }
  /// A world at rest is skipped (DeviceWorld::restStep), learnt by startRead/finishedRead.
  static constexpr bool kSkipsRest = true;
  /// A flag read without a host wait: copied on the step's stream into pinned memory after the
  /// launches queued before it, its value there once the copy's event has passed.
  static void startRead(Context& context, const long long* at) {
    SMASH_CUDA_CHECK(cudaMemcpyAsync(context.readSlot, at, sizeof(long long), cudaMemcpyDeviceToHost, context.stream));
    SMASH_CUDA_CHECK(cudaEventRecord(context.readDone, context.stream));
  }
  static bool finishedRead(Context& context, long long& value) {
    const cudaError_t status = cudaEventQuery(context.readDone);
    if (status == cudaErrorNotReady) return false;
    SMASH_CUDA_CHECK(status);
    value = *context.readSlot;
    return true;
  }

  template <class Body>
  static void runStep(Context& context, Body&& launches, bool fixedSequence, int variant) {
    // Two plain steps first (one of each variant): they fill the world's cache of temporary
    // storage, so the captured step allocates nothing (cudaMalloc may not be called while a
    // capture is under way).
    cudaGraphExec_t& step = context.step[variant & 1];
    if (!fixedSequence || !context.graphs || (!step && context.plainSteps < 2)) {
      launches();
      ++context.plainSteps;
      return;
    }
    if (!step) {
      cudaGraph_t graph = nullptr;
      bool captured = cudaStreamBeginCapture(context.stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
      if (captured) {
        try {
          launches();  // recorded, not run
        } catch (const std::exception&) {
          captured = false;
        }
        captured = cudaStreamEndCapture(context.stream, &graph) == cudaSuccess && captured && graph;
        captured = captured && cudaGraphInstantiate(&step, graph, 0) == cudaSuccess;
        if (graph) cudaGraphDestroy(graph);
      }
      if (!captured) {
        cudaGetLastError();  // clear the capture's error; this world launches plainly from now on
        resetStep(context);
        context.graphs = false;
        launches();
        return;
      }
    }
    SMASH_CUDA_CHECK(cudaGraphLaunch(step, context.stream));
  }
  /// Buffers may have moved (a state was loaded, poses were set, pair slots grew): capture again.
  static void resetStep(Context& context) {
    for (cudaGraphExec_t& g : context.step) {
      if (g) cudaGraphExecDestroy(g);
      g = nullptr;
    }
    context.plainSteps = 0;
  }

  template <class Policy, class T>
  static void exclusiveScan(Policy&& policy, const T* in, int n, T* out) {
    if (n > 0) thrust::exclusive_scan(policy, in, in + n, out);
  }
  template <class Policy, class K, class V, class Scratch>
  static void stableSortByKey(Policy&& policy, K* keys, V* values, int n, Scratch&) {
    if (n > 1) thrust::stable_sort_by_key(policy, keys, keys + n, values);
  }
  template <class Policy, class K>
  static void sortKeys(Policy&& policy, K* keys, int n) {
    if (n > 1) thrust::sort(policy, keys, keys + n);
  }
  template <class Policy>
  static void lowerBounds(Policy&& policy, const int* sorted, int n, int queries, int* out) {
    thrust::counting_iterator<int> first(0);
    thrust::lower_bound(policy, sorted, sorted + n, first, first + queries, out);
  }
  template <class T>
  static void copyToHost(T* dst, const T* src, std::size_t n) {
    if (n) SMASH_CUDA_CHECK(cudaMemcpy(dst, src, n * sizeof(T), cudaMemcpyDeviceToHost));
  }
  static char* allocateBytes(std::size_t n) {
    void* p = nullptr;
    SMASH_CUDA_CHECK(cudaMalloc(&p, n));
    return static_cast<char*>(p);
  }
  static void freeBytes(char* p) { cudaFree(p); }
  static void synchronize() { SMASH_CUDA_CHECK(cudaDeviceSynchronize()); }
};

}  // namespace

int cudaDeviceCount() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver/device" error
    return 0;
  }
  return n;
}

std::size_t cudaFreeMemory() {
  std::size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return free;
}

void rethrowCudaError() {
  try {
    throw;
  } catch (const thrust::system_error& e) {
    throw DeviceError(std::string("CUDA: ") + e.what());
  }
}

std::string cudaDeviceName() {
  int device = 0;
  cudaDeviceProp props{};
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&props, device) != cudaSuccess) {
    cudaGetLastError();
    return "CUDA device (unknown)";
  }
  return props.name;
}

std::unique_ptr<World> makeCudaWorld(const Scene& scene, StepStrategy strategy) {
  return std::make_unique<DeviceWorld<CudaSystem>>(scene, strategy);
}

}  // namespace smash::pipeline
