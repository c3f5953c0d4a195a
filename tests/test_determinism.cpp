// Determinism, snapshot and resume (the serial backend, and the OpenMP per-body layout).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "reference/reference_world.h"
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
// History: state format 2 (warm-start state) changed every hash; the lab's state bytes were
// checked equal to format 1's (its physics did not change); bunny_grid changed with body contacts.
// Issue 10: shape matching's segmented sums run in a fixed chunked order on every backend and in
// both layouts (32 particles, then the chunks), a different float summation order: the two
// shape-matching hashes changed (the impulse method, which has no such sum, kept its hash; the
// lab and parity tests against the reference passed unchanged).
// Issues 10 and 11: one contact solver for colliders and bodies (math/contact_solver.h); collider
// contacts move the pose with the velocity change, an impact lands from the gap it had at the
// step's start, and a bounce restitutes the approach speed before the step's gravity at its moment
// within the step (and places the body there): every hash changed. Issue 11: the impulse method
// holds the angular momentum (the gyroscopic term): the impulse lab's hash changed. Issue 11:
// shape matching predicts rotation-aware (the offsets turn by exp(h ω½)), ω is read from L as a
// correction, and both methods keep the free rotation's energy away from colliders
// (keepRotationEnergy): the shape-matching hashes changed (the impulse lab's correction stays
// below rounding, so its hash did not). Then: no energy correction in scenes with body contacts,
// pair restitution not gated on engagement, Jacobi skips rotations below rounding, and the state
// writes unused contact slots as zeros (a resumed run saves the same bytes): the shape-matching
// hashes changed again. Issue 11: shock propagation after the contact rounds (contact_solver.h;
// bodies resting on others are solved against them as static, level by level upwards): the
// bunny grid's hash changed (the lab has one body: unchanged). Issue 11: sleeping (math/sleep.h;
// islands at rest stop being stepped) — state format 3 holds each body's steps at rest, sleep
// flag and island, so every hash changed. Issue 11 item 7: state format 4 records the working
// origin (docs/physics.md §10) in its header, so every hash changed; the physics did not (the
// three scenes lie near the origin, whose working origin is 0: the same coordinates, the same
// arithmetic). Issue 11 item 7, float drift: the matched rotation is composed as unit quaternions
// (no longer warm · R(dq) as matrices), ω of L is corrected twice, a free body's L is its own
// (not re-summed from its particles) and the energy correction works in double: every hash
// changed (the impulse lab through ω of L). Issues 10 and 13: a body pair's contacts are a
// manifold of at most 8 points (math/contact_solver.h, "Contact manifold"; max_contacts_per_pair
// now 1–8, default 8, was 64) and a sleeping island woken before the solve takes the step's
// gravity (wakeIntegrate): the bunny grid's hash changed; the labs (one body, no pairs) changed
// only through the state header's contacts-per-pair field — with that field set back to 64 their
// states hash to the previous values (checked). Issue 11: each contact round sweeps a pair's
// manifold twice (pair_sweeps, default 2; physics.md §6): the bunny grid's hash changed (the labs
// have no pairs: unchanged). Issue 10: state format 5 records the pair slots provisioned and the
// most pairs found since the host looked (a resumed run provisions as the uninterrupted one): the
// header grew, so every hash changed; the physics did not (the pair count left the host, the
// same pairs in the same order; a pile_100 state file was byte-identical before the format change).
// Issues 10 and 13: the one-sided sweep (sweepOneSided) changed no hash. The collider contact
// manifold (max_contacts_per_collider) is off by default, so no hash changed; with it at 8 the
// three hashes were 0xc18f2c47e2be9e18, 0xe7761c08612ae6c9 and 0xb76b67b62b6a4006.
// Issue 13: each contact carries its response K and normal mass, computed once per solve
// (prepareResponse) instead of twice per point and direction in every sweep; the normal impulse
// multiplies by 1/kn instead of dividing by kn, and kt = t·K t replaces two responses (rounding
// only), and state format 6 holds the larger contacts: every hash changed — the header's contact
// size alone would change them, so it is the parity tests against the double reference, passing
// unchanged, that show the physics kept (to rounding). Issue 13: FusedBodyStep's particle loops
// in SSE changed no hash (the same operations per lane). Issue 11: a body's bounce off colliders
// is taken at its first contact's time of impact (firstImpact): with each contact's own time, the
// points that would arrive later in the step (a sphere's next rings, a side face's lowest row)
// set the rebound as if the body had fallen until then, and an examiner's 642-point sphere or 400-point box
// rose about 6% higher at every bounce with e = 1: every hash changed (the bunnies land on the
// ground and the lab's wall). Issue 10: the sweep loads each contact as a value, divides no zero
// and skips the wall's zero velocity: no hash changed. Issue 11: shock propagation keeps a
// bounce against a carrier body as far as the contact rounds achieved it, as against a collider
// (before, non-penetration only: a body dropped on a body resting on the ground landed dead):
// the bunny grid's hash changed (its bunnies land on each other); the labs have no pairs.
// Issues 13 and 11: in a scene whose bodies do not touch, a body's collider contacts are
// warm-started from the last step's and swept until its velocities settle (at most
// contact_iterations), and state format 7 keeps every body's collider contacts (24 B each): the
// labs' hashes changed with the physics (the lab bunny ends 2.6 mm from where it ended with shape
// matching, 0.04 mm with the impulse method, on omp); the bunny grid's with the format only — its
// poses.csv on the serial backend, and rain_1k's for 40 frames on omp, are byte for byte those
// of the build before (bodies that touch keep the cold solve: docs/solver.md).
// Issue 11 item 3: the defaults became 16 Gauss–Seidel rounds of the 32 (was 0: Jacobi only) and
// a 0.2 mm penetration slop (was 10 µm), so that piles of hundreds of bodies come to rest and
// sleep (rain_1k: every body asleep by 10 s; docs/solver.md, "Piles that sleep"): the bunny
// grid's hash changed (its bunnies touch); the labs' did not (one body, no pair; the slop's
// per-particle test flipped for none of their particles).
// Issues 10 and 13: a contact that carried no impulse and still carries none skips the rest of
// its update (updateContact): what it would apply is a zero (±0). The impulse lab's and the bunny
// grid's hashes changed, the physics did not: their poses, and those of rain_1k (150 steps) and
// pile_100 (480), compared with == at every step with and without the skip, are equal; the saved
// state also holds the contacts' impulses, where a skipped update keeps a +0 the full one wrote as −0.
// Issue 11 item 7: a free body holds its rotation's energy from step to step (BodyData::heldEnergy,
// state format 8): every hash changed with the format (4 bytes more per body and the version). The
// bunny grid's physics did not (with body contacts nothing is held: its poses.csv, serial, 300
// frames, byte for byte the build before's, as box_stack's, bowl's, ramp's and pile_100's on omp);
// the labs' did at float rounding — the bunny falls spinning, free, at the start, and holds its
// energy then: its poses differ from frame 1, and at rest after 9 s it lies 4.7 µm (shape
// matching) and 66 µm (impulse) from where it lay before (omp).
// Issue 11: a body near a collider keeps its rotation's energy too (math/rotation.h
// rotateWithMomentum; errors below 2e-6 of it left), where only free bodies did: a thin rod
// spinning within a plane's reach gained 20 times its energy without touching it. The labs'
// hashes changed: the bunny spins near the ground and the wall — its poses part from frame 44 on
// omp, and at rest it lies 52 µm (shape matching) and 144 µm (impulse) from where it lay before.
// The bunny grid's did not (the correction changed none of its steps), nor box_stack's
// or ramp's poses.csv on omp; pile_100's and bowl's did (chaotic piles; all bodies asleep in both).
// Issue 11: the collider solve's pose correction turns ω with the body (it left ω fixed in the
// world), and its bounce restitutes the approach speed of the step's predicted ω with the step's
// angular update undone (it took the start ω at the moved pose; step_kernels.h startBodyOf and
// the reference's resolveBodyContacts), and a held free-rotation energy skips errors below 2e-6 of it
// as the near-collider one does: a spinning rod's collider contacts gained up to ×1,270 its
// energy (tests/test_free_rotation.cpp). Every hash changed: the lab bunny spins against the
// ground and the wall (its poses part at frame 2 with shape matching, 24 with impulses, on omp,
// and at rest it lies 1.9 cm and 4.4 cm from where it lay before), the bunny grid's bunnies land
// spinning (part at frame 47). box_stack's poses.csv on omp is byte for byte the build before's;
// ramp's, pile_100's and bowl's part at frames 3, 11 and 29 and end asleep, as before (pile_100's
// deepest body penetration 1.07 → 0.25 mm, asleep before its last 2 s).
// Issue 11: the pair path as the collider path — a pair's and a pair body's collider targets
// restitute the approach spin (the start's angular momentum at the predicted pose, now also the
// collider solve's, where it was the predicted ω over the damping), FinishPairBodies' pose
// correction adds no rotational energy (capTurnEnergy), and a lone body's collider solve does no
// work (limitStaticWork): a rod dropped spinning on a slab body gained up to 66 times its energy.
// Every hash changed (the lab bunny's poses part at frame 24 with shape matching, 44 with
// impulses, on omp, and it rests 1.7 cm and 0.1 µm from where it rested before; the grid's
// bunnies part at frame 46). box_stack on omp parts at frame 4 and ends within 17 nm; ramp,
// pile_100 and bowl part at frames 12, 10 and 18 and end with every body asleep, as before.
// Issue 11 (2026-12-07): the collider solve's whole bounce — the solve, the pose's move with it,
// the bounce's placement — may not raise E* = KE + PE(c − h v/2) above the step's start's
// (math/contact_solver.h limitBounceEnergy): a 0.6 m rod dropped spinning with restitution 1
// gained 9.8% of its energy in one bounce. The shape-matching lab's hash changed: its poses
// part at frame 119 on omp and the bunny rests where it rested before (within 1 µm). The impulse
// lab's and the bunny grid's did not, nor box_stack's or bowl's poses.csv (omp, both methods) or
// pile_100's with impulses; ramp's part at frame 85 (shape matching: 21 mm at the end) and 107
// (impulses: 10 µm), pile_100's with shape matching at frame 15 (chaotic pile, 0.11 m): every
// body asleep at the end in all, verdicts passing, the deepest collider penetrations unchanged.
// Issue 11 (2026-12-07): a lone body's push-out out of the colliders may not raise E* above the
// step's start's (math/contact_solver.h limitPushWork: the excess, up to the push's own lift, is
// taken from the centre's approach along the push): a rod spinning at e = 1, pivoting on its
// end, gained 79% of its energy in 30 steps on omp. Both labs' hashes changed: on omp their poses
// part at frame 104 (shape matching) and 115 (impulses) and the bunny rests 0.12 mm and 0.03 µm
// from where it rested. The bunny grid's did not, nor box_stack's poses.csv (omp, both methods),
// bowl's and pile_100's with impulses; bowl's with shape matching parts at frame 38 (1.4 mm at
// the end), ramp's at 12 and 58 (a pile sliding into a corner: 0.14 m and 66 mm), pile_100's with
// shape matching at 15 (0.10 m): every body at rest at the end, verdicts passing.
const Pinned kPinned[] = {
    {"lab_bunny.json", Method::ShapeMatching, 300, 0x2ef11e0e86567a00ull},
    {"lab_bunny.json", Method::Impulse, 300, 0xd582228c215e6a39ull},
    {"bunny_grid.json", Method::ShapeMatching, 200, 0xa502867e46f9f00aull},
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

TEST_CASE("determinism: OpenMP runs repeat and equal the serial backend", "[determinism]") {
  // With body contacts the serial system runs the pair passes as CUDA does, over every slot
  // provisioned (threads past the count idle, padded sorts), OpenMP over the pairs found
  // (System::passWidth): the same bits, in both layouts.
  Scene scene = sceneNamed("bunny_grid.json", Method::ShapeMatching);
  for (StepStrategy strategy : {StepStrategy::PerBody, StepStrategy::PerParticle}) {
    INFO(strategyName(strategy));
    auto serial = World::create(Backend::Cpp, scene, strategy);
    auto a = World::create(Backend::Omp, scene, strategy);
    auto b = World::create(Backend::Omp, scene, strategy);
    for (int n = 0; n < 200; ++n) {
      serial->step();
      a->step();
      b->step();
    }
    REQUIRE(a->saveState() == b->saveState());
    REQUIRE(a->saveState() == serial->saveState());
  }
}

TEST_CASE("determinism: Gauss-Seidel rounds repeat on OpenMP and equal the serial backend", "[determinism]") {
  // The colours' pairs share no awake body, so their order within a colour cannot matter: a race
  // (two pairs of one colour writing one body) or a colour launched over other pairs on OpenMP
  // (as wide as the colour) than on the serial system (over every slot, CUDA's shape) would show
  // here. All rounds Gauss–Seidel, and half of them (the Jacobi rounds after them).
  for (int rounds : {32, 16}) {
    Scene scene = sceneNamed("pile_100.json", Method::ShapeMatching);
    scene.solver.gaussSeidelRounds = rounds;
    INFO(rounds << " Gauss-Seidel rounds");
    auto serial = World::create(Backend::Cpp, scene);
    auto a = World::create(Backend::Omp, scene);
    auto b = World::create(Backend::Omp, scene);
    for (int n = 0; n < 150; ++n) {
      serial->step();
      a->step();
      b->step();
    }
    CHECK(a->touchingPairs() > 100);
    REQUIRE(a->saveState() == b->saveState());
    REQUIRE(a->saveState() == serial->saveState());
  }
}

TEST_CASE("snapshot: resume at step k reaches the uninterrupted state at 2k bit for bit", "[determinism][snapshot]") {
  for (Backend backend : {Backend::Cpp, Backend::Omp})
    for (Method method : {Method::ShapeMatching, Method::Impulse})
      for (const char* file : {"lab_bunny.json", "bunny_grid.json", "box_stack.json"}) {
        INFO(backendName(backend) << ", " << methodName(method) << ", " << file);
        const Scene scene = sceneNamed(file, method);
        // box_stack: saved while it settles, falls asleep after the resume (math/sleep.h).
        const int k = std::string(file) == "box_stack.json" ? 50 : 150;
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
        if (std::string(file) == "box_stack.json") {
          CHECK(first->sleepingBodies() == 0);
          CHECK(straight->sleepingBodies() == 5);
        }
      }
}

TEST_CASE("snapshot: bad state files give clear errors", "[snapshot][bad-input]") {
  const Scene lab = sceneNamed("lab_bunny.json", Method::ShapeMatching);
  auto world = World::create(Backend::Cpp, lab);
  world->step();
  const std::vector<std::uint8_t> good = world->saveState();
  auto writeRaw = [](const std::string& name, const std::vector<std::uint8_t>& bytes) {
    std::ofstream(name, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                 static_cast<std::streamsize>(bytes.size()));
    return name;
  };
  // With a valid checksum trailer, so that the state's own checks are reached.
  auto writeBytes = [&](const std::string& name, const std::vector<std::uint8_t>& bytes) {
    return writeRaw(name, withStateChecksum(bytes));
  };
  auto target = World::create(Backend::Cpp, lab);
  test::requireInputError([&] { loadStateFile(*target, "no/such/state.bin"); }, {"no/such/state.bin", "cannot open"});
  test::requireInputError([&] { loadStateFile(*target, "."); }, {".", "is a folder"});
  test::requireInputError([&] { loadStateFile(*target, "/dev/zero"); }, {"/dev/zero", "not a regular file"});
  // Files without the trailer (cut short, or raw bytes) and with one flipped byte.
  test::requireInputError([&] { loadStateFile(*target, writeRaw("smash_test_raw.bin", good)); },
                          {"smash_test_raw.bin", "truncated"});
  {
    std::vector<std::uint8_t> file = withStateChecksum(good);
    file[file.size() / 2] ^= 0x10;
    test::requireInputError([&] { loadStateFile(*target, writeRaw("smash_test_flip.bin", file)); },
                            {"smash_test_flip.bin", "checksum"});
  }
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
  other.solver.bodyContacts = false;
  auto wrongScene = World::create(Backend::Cpp, other);
  test::requireInputError([&] { wrongScene->loadState(good, "lab state"); },
                          {"lab state", "does not belong to this scene"});
  // A failed load leaves the world as it was.
  REQUIRE(target->stepCount() == 0);
  REQUIRE(target->saveState() == World::create(Backend::Cpp, lab)->saveState());
  // Saving leaves no partial file behind, and never replaces what is not a regular file.
  saveStateFile(*world, "smash_test_state2.bin");
  REQUIRE(!std::ifstream("smash_test_state2.bin.partial"));
  std::filesystem::create_directories("smash_test_state_dir");
  REQUIRE_THROWS_AS(saveStateFile(*world, "smash_test_state_dir"), OutputError);
  REQUIRE(std::filesystem::is_directory("smash_test_state_dir"));
  REQUIRE_THROWS_AS(saveStateFile(*world, "no/such/folder/state.bin"), OutputError);
}

namespace {
// Three single-particle bodies, no gravity, h = 1 s: body 0 at rest, body 1 too fast (2e4 m/s,
// still inside the bound after one step), body 2 leaving the 1e5 m bound in its first step.
Scene watchdogScene(Watchdog::Policy policy) {
  Scene s;
  s.dt = 1.0;
  s.gravity = glm::dvec3(0.0);
  s.materials.push_back({"default", 0.5, 0.2});
  s.shapes.push_back(shapeFromParticles("dot", {glm::dvec3(0.0)}, {1.0}));
  for (double vx : {0.0, 2e4, 3e5}) {
    Body b;
    b.velocity = glm::dvec3(vx, 0, 0);
    s.bodies.push_back(b);
  }
  s.watchdog.policy = policy;
  s.solver.bodyContacts = false;  // points have no mesh to bake
  return s;
}

void requireIncidents(const std::vector<BodyIncident>& got) {
  REQUIRE(got.size() == 2);
  REQUIRE(got[0].body == 1);
  REQUIRE(got[0].step == 1);
  REQUIRE(got[0].what == Incident::TooFast);
  REQUIRE(got[1].body == 2);
  REQUIRE(got[1].step == 1);
  REQUIRE(got[1].what == Incident::OutOfBounds);
}
}  // namespace

TEST_CASE("watchdog: incidents are reported with body and step, and handled by the policy", "[watchdog]") {
  for (Watchdog::Policy policy : {Watchdog::Policy::Stop, Watchdog::Policy::Clamp}) {
    const Scene scene = watchdogScene(policy);
    const bool clamp = policy == Watchdog::Policy::Clamp;
    const double limit = scene.watchdog.maxSpeed * (1 + 1e-6), bound = scene.watchdog.worldBound * (1 + 1e-6);
    INFO((clamp ? "clamp" : "stop"));
    ReferenceWorld ref(scene);
    ref.step();
    ref.step();  // a later step does not re-report or move the first incident
    requireIncidents(ref.incidents());
    if (clamp) {
      REQUIRE(glm::length(ref.body(1).velocity) <= limit);
      REQUIRE(ref.body(2).centre.x <= bound);
    } else {
      REQUIRE(glm::length(ref.body(1).velocity) == Approx(2e4));
      REQUIRE(ref.body(2).centre.x == Approx(6e5));
    }
    for (Backend backend : {Backend::Cpp, Backend::Omp}) {
      INFO(backendName(backend));
      auto world = World::create(backend, scene);
      world->step();
      world->step();
      requireIncidents(world->incidents());
      std::vector<BodyPose> poses = world->poses();
      if (clamp) {
        REQUIRE(glm::length(poses[1].velocity) <= limit);
        REQUIRE(poses[2].centre.x <= bound);
      } else {
        REQUIRE(glm::length(poses[1].velocity) == Approx(2e4));
      }
      // Non-finite: a NaN velocity put into body 0 is caught in the next step.
      test::FpTrapsOff nanOnPurpose;
      poses[0].velocity.x = std::nanf("");
      world->setPoses(poses);
      world->step();
      std::vector<BodyIncident> got = world->incidents();
      REQUIRE(got.size() == 3);
      REQUIRE(got[0].body == 0);
      REQUIRE(got[0].step == 3);
      REQUIRE(got[0].what == Incident::NonFinite);
      const BodyPose after = world->poses()[0];
      if (clamp) {
        REQUIRE(after.velocity == glm::vec3(0.0f));  // frozen at its pose from the step's start
        REQUIRE(after.centre == glm::dvec3(0.0));
      } else {
        REQUIRE(!std::isfinite(after.velocity.x));  // stop: left as it is, the runner stops
      }
    }
  }
}
