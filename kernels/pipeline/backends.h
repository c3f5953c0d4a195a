// Factories of the backend instantiations (one translation unit each).
#pragma once

#include <memory>
#include <string>

#include "world/world.h"

namespace smash::pipeline {

/// Bytes the backend buffers of a scene take in a step layout (Auto: the CPU backends' default),
/// with the grow-only contact slots at their expected size — from the same description of the
/// buffers that allocates them (DeviceWorld::describeBuffers). Element sizes are the same on
/// every backend.
std::size_t backendBytes(const Scene& scene, StepStrategy strategy = StepStrategy::Auto);

std::unique_ptr<World> makeCppWorld(const Scene& scene, StepStrategy strategy);
std::unique_ptr<World> makeOmpWorld(const Scene& scene, StepStrategy strategy);
#if defined(SMASH_HAVE_CUDA)
std::unique_ptr<World> makeCudaWorld(const Scene& scene, StepStrategy strategy);
/// Number of usable CUDA devices (0 without a driver or device).
int cudaDeviceCount();
/// Free memory of the current CUDA device, bytes.
std::size_t cudaFreeMemory();
/// The current CUDA device's name.
std::string cudaDeviceName();
/// Inside a catch block: rethrows a Thrust or CUDA error (thrust::system_error) as a DeviceError,
/// anything else as it is.
[[noreturn]] void rethrowCudaError();
#endif

}  // namespace smash::pipeline
