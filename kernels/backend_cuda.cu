// CUDA backend: Thrust's CUDA system, compiled by nvcc for sm_90.
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/system/cuda/vector.h>

#include <cuda_runtime.h>

#include <string>

#include "core/error.h"
#include "pipeline/backends.h"
#include "pipeline/device_world.inl"

namespace smash::pipeline {
namespace {

void check(cudaError_t err, const char* what, const char* file, int line) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + what + ": " +
                             cudaGetErrorString(err));
}
#define SMASH_CUDA_CHECK(call) check((call), #call, __FILE__, __LINE__)

/// The CUDA system: the same collective algorithms as HostAlgorithms (host_algorithms.h), here
/// through Thrust on the device. Every call uses `par_nosync`: Thrust does not wait for the
/// device after an algorithm that returns nothing, so a step queues its kernels on the default
/// stream without a host wait; the only waits are the explicit reads (copyToHost) the world
/// makes and counts. Temporary storage comes from the world's caching allocator; blocks it hands
/// back are reused by later calls on the same stream, which is stream-ordered and safe.
struct CudaSystem {
  template <class T>
  using Vector = thrust::cuda::vector<T>;
  static constexpr Backend kBackend = Backend::Cuda;
  static constexpr StepStrategy kDefaultStrategy = StepStrategy::PerParticle;
  static auto policy() { return thrust::cuda::par_nosync; }

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
