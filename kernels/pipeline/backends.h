// Factories of the backend instantiations (one translation unit each).
#pragma once

#include <memory>

#include "world/world.h"

namespace smash::pipeline {

std::unique_ptr<World> makeCppWorld(const Scene& scene);
std::unique_ptr<World> makeOmpWorld(const Scene& scene);
#if defined(SMASH_HAVE_CUDA)
std::unique_ptr<World> makeCudaWorld(const Scene& scene);
/// Number of usable CUDA devices (0 without a driver or device).
int cudaDeviceCount();
#endif

}  // namespace smash::pipeline
