// Factories of the backend instantiations (one translation unit each).
#pragma once

#include <memory>
#include <string>

#include "world/world.h"

namespace smash::pipeline {

/// Bytes the backend buffers of a scene take (particles, shapes, bodies, contact buffers).
std::size_t backendBytes(const Scene& scene);

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
#endif

}  // namespace smash::pipeline
