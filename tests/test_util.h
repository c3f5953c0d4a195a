// Small helpers shared by the tests.
#pragma once

#include <cstdlib>

#include <catch2/catch.hpp>
#include <cfenv>
#include <cstdio>
#include <fstream>
#include <string>

#include "core/error.h"

namespace smash::test {

/// Switches floating-point traps off for a scope whose input is non-finite or overflows on
/// purpose (traps are on when the suite runs with SMASH_FP_TRAPS=1).
class FpTrapsOff {
 public:
  FpTrapsOff() : saved_(fegetexcept()) { fedisableexcept(FE_ALL_EXCEPT); }
  ~FpTrapsOff() {
    feclearexcept(FE_ALL_EXCEPT);
    feenableexcept(saved_);
  }
  FpTrapsOff(const FpTrapsOff&) = delete;
  FpTrapsOff& operator=(const FpTrapsOff&) = delete;

 private:
  int saved_;
};

/// A file of the source tree: under $SMASH_SOURCE_DIR when set (binaries carried to another
/// machine, scripts/gpu-offline.sh), else where the build was configured.
inline std::string sourcePath(const std::string& rel) {
  const char* moved = std::getenv("SMASH_SOURCE_DIR");
  return std::string(moved && *moved ? moved : SMASH_SOURCE_DIR) + "/" + rel;
}

/// Writes `text` to a file under the build's temp folder and returns its path.
inline std::string writeTemp(const std::string& name, const std::string& text) {
  std::string path = std::string("smash_test_") + name;
  std::ofstream(path) << text;
  return path;
}

/// Runs `f`, requires an InputError whose message contains every one of `parts`.
template <class F>
void requireInputError(F&& f, std::initializer_list<const char*> parts) {
  bool thrown = false;
  try {
    f();
  } catch (const smash::InputError& e) {
    thrown = true;
    std::string what = e.what();
    INFO("message: " << what);
    for (const char* p : parts) CHECK(what.find(p) != std::string::npos);
  }
  REQUIRE(thrown);
}

struct CommandResult {
  int exitCode = -1;
  std::string output;  // stdout and stderr together
};

inline CommandResult runCommand(const std::string& command) {
  CommandResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  char buffer[4096];
  std::size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) r.output.append(buffer, n);
  int status = pclose(pipe);
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace smash::test
