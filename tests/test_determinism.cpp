// Determinism, snapshot and resume (the serial backend, and the OpenMP per-body layout).
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <fstream>

#include "test_util.h"
#include "world/world.h"

using namespace smash;

namespace {

std::uint64_t fnv1a(const std::vector<std::uint8_t>& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ull;
  return h;
}

Scene sceneNamed(const std::string& file, Method method) {
  Scene s = loadScene(test::sourcePath("scenes/" + file));
  s.solver.method = method;
  return s;
}

struct Pinned {
  const char* file;
  Method method;
  int steps;
  std::uint64_t hash;  // of saveState() after `steps` steps on the serial backend
};

// Golden values. They change when the physics changes on purpose: then run
// `smash_tests "[golden]"`, check the new values are the intended ones, and replace them.
const Pinned kPinned[] = {
    {"lab_bunny.json", Method::ShapeMatching, 300, 0xc3a76655ec6c77daull},
    {"lab_bunny.json", Method::Impulse, 300, 0x7ecc98d733b3214dull},
    {"bunny_grid.json", Method::ShapeMatching, 200, 0xaf3204f425f02ddfull},
};

}  // namespace

TEST_CASE("determinism: golden hashes of three scenes on the serial backend", "[determinism][golden]") {
  for (const Pinned& pin : kPinned) {
    auto world = World::create(Backend::Cpp, sceneNamed(pin.file, pin.method));
    for (int n = 0; n < pin.steps; ++n) world->step();
    const std::uint64_t h = fnv1a(world->saveState());
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%016llxull", static_cast<unsigned long long>(h));
    INFO(pin.file << ", " << methodName(pin.method) << ", " << pin.steps << " steps: hash " << hex);
    CHECK(h == pin.hash);
  }
}

TEST_CASE("determinism: OpenMP per-body runs repeat and equal the serial backend", "[determinism]") {
  Scene scene = sceneNamed("bunny_grid.json", Method::ShapeMatching);
  auto serial = World::create(Backend::Cpp, scene);
  auto a = World::create(Backend::Omp, scene, StepStrategy::PerBody);
  auto b = World::create(Backend::Omp, scene, StepStrategy::PerBody);
  for (int n = 0; n < 200; ++n) {
    serial->step();
    a->step();
    b->step();
  }
  REQUIRE(a->saveState() == b->saveState());
  REQUIRE(a->saveState() == serial->saveState());
}

TEST_CASE("snapshot: resume at step k reaches the uninterrupted state at 2k bit for bit", "[determinism][snapshot]") {
  for (Backend backend : {Backend::Cpp, Backend::Omp})
    for (Method method : {Method::ShapeMatching, Method::Impulse})
      for (const char* file : {"lab_bunny.json", "bunny_grid.json"}) {
        INFO(backendName(backend) << ", " << methodName(method) << ", " << file);
        const Scene scene = sceneNamed(file, method);
        const int k = 150;
        auto straight = World::create(backend, scene);
        auto first = World::create(backend, scene);
        for (int n = 0; n < 2 * k; ++n) straight->step();
        for (int n = 0; n < k; ++n) first->step();
        const std::string path = "smash_test_state.bin";
        saveStateFile(*first, path);
        auto resumed = World::create(backend, scene);
        loadStateFile(*resumed, path);
        REQUIRE(resumed->stepCount() == k);
        for (int n = 0; n < k; ++n) resumed->step();
        REQUIRE(resumed->stepCount() == 2 * k);
        REQUIRE(resumed->saveState() == straight->saveState());
      }
}

TEST_CASE("snapshot: bad state files give clear errors", "[snapshot][bad-input]") {
  const Scene lab = sceneNamed("lab_bunny.json", Method::ShapeMatching);
  auto world = World::create(Backend::Cpp, lab);
  world->step();
  const std::vector<std::uint8_t> good = world->saveState();
  auto writeBytes = [](const std::string& name, const std::vector<std::uint8_t>& bytes) {
    std::ofstream(name, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                 static_cast<std::streamsize>(bytes.size()));
    return name;
  };
  auto target = World::create(Backend::Cpp, lab);
  test::requireInputError([&] { loadStateFile(*target, "no/such/state.bin"); }, {"no/such/state.bin", "cannot open"});
  std::vector<std::uint8_t> truncated(good.begin(), good.end() - 100);
  test::requireInputError([&] { loadStateFile(*target, writeBytes("smash_test_trunc.bin", truncated)); },
                          {"smash_test_trunc.bin", "truncated"});
  std::vector<std::uint8_t> garbage(good);
  garbage[0] = 'X';
  test::requireInputError([&] { loadStateFile(*target, writeBytes("smash_test_magic.bin", garbage)); },
                          {"smash_test_magic.bin", "bad magic"});
  test::requireInputError([&] { target->loadState({1, 2, 3}, "tiny"); }, {"tiny", "too short"});
  Scene other = lab;
  other.bodies.push_back(other.bodies[0]);
  auto wrongScene = World::create(Backend::Cpp, other);
  test::requireInputError([&] { wrongScene->loadState(good, "lab state"); },
                          {"lab state", "does not belong to this scene"});
  // A failed load leaves the world as it was.
  REQUIRE(target->stepCount() == 0);
  REQUIRE(target->saveState() == World::create(Backend::Cpp, lab)->saveState());
  // Saving leaves no partial file behind.
  saveStateFile(*world, "smash_test_state2.bin");
  REQUIRE(!std::ifstream("smash_test_state2.bin.partial"));
}
