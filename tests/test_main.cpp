// Test entry point. With SMASH_FP_TRAPS=1 in the environment, invalid operations, division by
// zero and overflow raise SIGFPE (the sanitizer job runs the suite this way), so a NaN or an
// infinity cannot appear silently; tests that feed such values on purpose switch the traps off
// around that input (test::FpTrapsOff).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cfenv>
#include <cstdlib>

int main(int argc, char** argv) {
  const char* traps = std::getenv("SMASH_FP_TRAPS");
  if (traps && *traps && *traps != '0') feenableexcept(FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW);
  return Catch::Session().run(argc, argv);
}
