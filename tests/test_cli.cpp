// The first runner, end to end: exit codes and messages.
#include <catch2/catch.hpp>

#include "test_util.h"
#include "world/world.h"

using smash::test::runCommand;

TEST_CASE("cli: run the lab scene", "[cli]") {
  auto r = runCommand(std::string(SMASH_EXE) + " run " + smash::test::sourcePath("scenes/lab_bunny.json") +
                      " --frames 600 --every 100");
  INFO(r.output);
  REQUIRE(r.exitCode == 0);
  REQUIRE(r.output.find("3483 particles") != std::string::npos);
  REQUIRE(r.output.find("verdict: PASS") != std::string::npos);
  REQUIRE(r.output.find("    600 ") != std::string::npos);  // the last frame's summary line
}

TEST_CASE("cli: a failing check exits 1", "[cli]") {
  // Too short to come to rest: the rest check must fail, and say so.
  auto r = runCommand(std::string(SMASH_EXE) + " run " + smash::test::sourcePath("scenes/lab_bunny.json") +
                      " --frames 20");
  INFO(r.output);
  REQUIRE(r.exitCode == 1);
  REQUIRE(r.output.find("verdict: FAIL") != std::string::npos);
  REQUIRE(r.output.find("FAIL at rest") != std::string::npos);
}

TEST_CASE("cli: bad input and bad arguments exit 2 with a message", "[cli][bad-input]") {
  auto missing = runCommand(std::string(SMASH_EXE) + " run no_such_scene.json");
  REQUIRE(missing.exitCode == 2);
  REQUIRE(missing.output.find("no_such_scene.json: cannot open scene file") != std::string::npos);
  auto badMethod = runCommand(std::string(SMASH_EXE) + " run x.json --method verlet");
  REQUIRE(badMethod.exitCode == 2);
  REQUIRE(badMethod.output.find("verlet") != std::string::npos);
  auto none = runCommand(std::string(SMASH_EXE));
  REQUIRE(none.exitCode == 2);
  auto validate = runCommand(std::string(SMASH_EXE) + " validate " + smash::test::sourcePath("scenes/lab_bunny.json"));
  REQUIRE(validate.exitCode == 0);
  REQUIRE(validate.output.find("ok (1 shapes, 1 bodies, 2 colliders)") != std::string::npos);
  std::string bad = smash::test::writeTemp("bad_scene.json", "{\"dt\": -1}");
  auto invalid = runCommand(std::string(SMASH_EXE) + " validate " + bad);
  REQUIRE(invalid.exitCode == 2);
  REQUIRE(invalid.output.find("dt: must be > 0") != std::string::npos);
}

TEST_CASE("cli: run the lab scene on a pipeline backend", "[cli][world]") {
  auto r = runCommand(std::string(SMASH_EXE) + " run " + smash::test::sourcePath("scenes/lab_bunny.json") +
                      " --backend omp --every 300");
  INFO(r.output);
  REQUIRE(r.exitCode == 0);
  REQUIRE(r.output.find("backend omp (float)") != std::string::npos);
  REQUIRE(r.output.find("verdict: PASS") != std::string::npos);
  if (!smash::backendAvailable(smash::Backend::Cuda)) {
    auto cuda = runCommand(std::string(SMASH_EXE) + " run " + smash::test::sourcePath("scenes/lab_bunny.json") +
                           " --backend cuda");
    REQUIRE(cuda.exitCode == 2);
    REQUIRE(cuda.output.find("backend cuda:") != std::string::npos);
  }
}

TEST_CASE("cli: the watchdog stops a run and names the body", "[cli][watchdog]") {
  const std::string mesh = smash::test::sourcePath("scenes/meshes/bunny.obj");
  const std::string scene = smash::test::writeTemp("watchdog_scene.json", R"({
    "dt": 0.01, "frames": 50,
    "materials": {"default": {}},
    "shapes": {"bunny": {"mesh": ")" + mesh + R"(", "scale": 0.4}},
    "bodies": [{"shape": "bunny", "position": [0, 1, 0]},
               {"shape": "bunny", "position": [5, 1, 0], "velocity": [0, 50, 0]}],
    "watchdog": {"max_speed": 20, "policy": "stop"}
  })");
  for (const char* backend : {"reference", "omp"}) {
    auto r = runCommand(std::string(SMASH_EXE) + " run " + scene + " --backend " + backend);
    INFO(r.output);
    REQUIRE(r.exitCode == 3);
    REQUIRE(r.output.find("watchdog: body 1: faster than the speed limit at step 1") != std::string::npos);
    REQUIRE(r.output.find("stopped by the watchdog at frame 1") != std::string::npos);
  }
}
