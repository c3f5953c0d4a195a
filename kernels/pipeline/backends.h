// Factories of the backend instantiations (one translation unit each).
#pragma once

#include <memory>

#include "world/world.h"

namespace smash::pipeline {

std::unique_ptr<World> makeCppWorld(const Scene& scene, StepStrategy strategy);
std::unique_ptr<World> makeOmpWorld(const Scene& scene, StepStrategy strategy);
#if defined(SMASH_HAVE_CUDA)
std::unique_ptr<World> makeCudaWorld(const Scene& scene, StepStrategy strategy);
/// Number of usable CUDA devices (0 without a driver or device).
int cudaDeviceCount();
#endif

}  // namespace smash::pipeline
