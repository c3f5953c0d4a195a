// Entry point of the CUDA test executable: the backend-parity tests of test_world.cpp built for
// Backend::Cuda. Without a CUDA device it exits 77, which ctest reports as skipped.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>

#include "world/world.h"

int main(int argc, char** argv) {
  if (!smash::backendAvailable(smash::Backend::Cuda)) {
    std::printf("no CUDA device: skipped\n");
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
