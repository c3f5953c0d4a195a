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

struct CudaSystem {
  template <class T>
  using Vector = thrust::cuda::vector<T>;
  static constexpr Backend kBackend = Backend::Cuda;
  static constexpr StepStrategy kDefaultStrategy = StepStrategy::PerParticle;
  static constexpr bool kReduceByKey = true;
  static constexpr bool kHostMemory = false;
  static auto policy() { return thrust::cuda::par; }
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
