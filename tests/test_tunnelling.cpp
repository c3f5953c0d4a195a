// Tunnelling (issue 11 item 1, physics.md §4 "Swept contacts"): a 0.1 m hollow box — particles on
// its surface only — thrown at a 1 cm slab, as a box collider, a mesh collider and a free body,
// at speeds from walking pace to 200 m/s, from start distances spread over a step's travel (the
// phase of the step at which it arrives), both methods, on the reference (double) and OpenMP
// (float) in both step layouts. No particle may end any step beyond the slab's far face, and the
// slab may not be left inside the box.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <glm/gtc/quaternion.hpp>

#include "scene/scene.h"
#include "test_util.h"
#include "world/world.h"

using namespace smash;

namespace {

constexpr double kHalfSlab = 0.005;  // the slab is 1 cm thick, its faces at x = ±kHalfSlab
constexpr double kHalfBox = 0.05;    // the thrown box is 0.1 m
constexpr double kDt = 1.0 / 60.0;

enum class Slab { Collider, Mesh, Body };

const char* slabName(Slab s) {
  return s == Slab::Collider ? "box collider" : s == Slab::Mesh ? "mesh collider" : "free body";
}

/// The box starts `gap` from the slab's near face (x > 0 side), moving at `speed` along −x with a
/// little spin, so it arrives at an arbitrary phase of a step.
std::string scene(Slab slab, const std::string& method, double speed, double gap, double angle) {
  const double x = kHalfSlab + kHalfBox + gap;
  std::ostringstream s;
  s << R"({"dt": )" << kDt << R"(, "frames": 10, "gravity": [0, 0, 0],
    "solver": {"method": ")" << method << R"("},
    "materials": {"default": {"restitution": 0.3, "friction": 0.3}},
    "shapes": {"box": {"mesh": "meshes/box.obj", "scale": 0.1, "sdf_resolution": 16,
                       "sampling": {"mode": "surface", "count": 300, "seed": 7}})";
  if (slab == Slab::Body)
    s << R"(, "slab": {"mesh": "meshes/box.obj", "scale": [0.01, 0.4, 0.4], "sdf_resolution": 128,
                       "particle_mass": 0.01, "sampling": {"mode": "surface", "count": 600, "seed": 3}})";
  s << "},\n";
  if (slab == Slab::Collider)
    s << R"("colliders": [{"type": "box", "center": [0, 0, 0], "half_extents": [)" << kHalfSlab
      << R"(, 0.5, 0.5]}],)";
  if (slab == Slab::Mesh)
    s << R"("colliders": [{"type": "mesh", "mesh": "meshes/box.obj", "scale": [0.01, 0.4, 0.4], "sdf_resolution": 128}],)";
  s << R"("bodies": [{"shape": "box", "position": [)" << x << R"(, 0.01, -0.02], "velocity": [)" << -speed
    << R"(, 0, 0], "angular_velocity": [0, 0, 0.5], "rotation": {"axis": [0, 1, 0], "degrees": )" << angle << "}}";
  if (slab == Slab::Body) s << R"(, {"shape": "slab", "position": [0, 0, 0]})";
  s << "]}";
  return s.str();
}

struct Outcome {
  double worstBehind = 0;  // deepest any particle of the box got past the slab's far face
  bool centreCrossed = false;
};

/// Steps until the box, had it gone through, would be 0.3 m past the slab; records how far past
/// the slab's far face (x < −kHalfSlab, relative to the slab's centre) any of the box's particles
/// ever got.
template <class StepFn, class ParticlesFn, class SlabXFn>
Outcome observe(double speed, double gap, int boxParticles, StepFn step, ParticlesFn particles, SlabXFn slabX) {
  Outcome o;
  const int steps = static_cast<int>((gap + 2 * kHalfBox + 0.3) / (speed * kDt)) + 3;
  for (int n = 0; n < steps; ++n) {
    step();
    const std::vector<glm::vec3> x = particles();
    const double slab = slabX();
    double minX = 1e30, centre = 0;
    for (int i = 0; i < boxParticles; ++i) {
      minX = std::min(minX, double(x[i].x) - slab);
      centre += double(x[i].x) - slab;
    }
    centre /= boxParticles;
    o.worstBehind = std::max(o.worstBehind, -kHalfSlab - minX);
    if (centre < 0) o.centreCrossed = true;
  }
  return o;
}

/// "omp" is the OpenMP backend's default layout; "omp per-particle" the wide one (the CUDA default:
/// chunked collider gathers and the wide narrow phase, with their swept kernels).
/// "reference", "omp" or "omp per-particle".
std::unique_ptr<World> worldOn(const std::string& backend, const Scene& scene) {
  if (backend == "reference") return World::create(Backend::Reference, scene);
  return World::create(Backend::Omp, scene, backend == "omp per-particle" ? StepStrategy::PerParticle : StepStrategy::PerBody);
}

Outcome run(Slab slab, const std::string& method, const std::string& backend, double speed, double gap,
            double angle) {
  // Parsed (and the slab baked) once per slab and method; each case sets the box's start.
  static std::map<std::string, Scene> parsed;
  const std::string key = std::string(slabName(slab)) + method;
  if (!parsed.count(key))
    parsed[key] = parseScene(scene(slab, method, 1.0, 0.0, 0.0), "tunnel.json", test::sourcePath("scenes"));
  Scene s = parsed[key];
  const Scene exact = parseScene(scene(Slab::Collider, method, speed, gap, angle), "tunnel.json", test::sourcePath("scenes"));
  s.bodies[0] = exact.bodies[0];
  const int boxParticles = static_cast<int>(s.shapes[0].rest.size());
  auto w = worldOn(backend, s);
  return observe(
      speed, gap, boxParticles, [&] { w->step(); }, [&] { return w->particlePositions(); },
      [&] { return slab == Slab::Body ? w->poses()[1].centre.x : 0.0; });
}

}  // namespace

TEST_CASE("tunnelling: a hollow box thrown at a 1 cm slab never passes it, at any speed and phase",
          "[physics][tunnel]") {
  for (Slab slab : {Slab::Collider, Slab::Mesh, Slab::Body})
    for (const char* method : {"shape_matching", "impulse"})
      for (const char* backend : {"reference", "omp", "omp per-particle"})
        for (double speed : {1.0, 3.0, 7.0, 15.0, 30.0, 60.0, 120.0, 200.0})
          for (double phase : {0.05, 0.35, 0.65, 0.95}) {
            const double gap = 0.0005 + phase * speed * kDt;
            const Outcome o = run(slab, method, backend, speed, gap, 20 * phase);
            INFO(slabName(slab) << ", " << method << ", " << backend << ", " << speed << " m/s, start gap " << gap
                                << " m: a particle got " << o.worstBehind << " m past the far face");
            CHECK_FALSE(o.centreCrossed);
            CHECK(o.worstBehind < 0.25 * kHalfSlab);
          }
}

/// The box thrown at a wide 1 cm slab collider (its faces at x = ±kHalfSlab, 40 m across)
/// obliquely: `degrees` from the slab's normal, starting `gap` from its near face, steps of `dt`.
std::string obliqueScene(const std::string& method, double speed, double degrees, double gap, double dt) {
  const double a = degrees * 3.14159265358979 / 180;
  std::ostringstream s;
  s << R"({"dt": )" << dt << R"(, "frames": 10, "gravity": [0, 0, 0],
    "solver": {"method": ")" << method << R"("},
    "materials": {"default": {"restitution": 0, "friction": 0}},
    "shapes": {"box": {"mesh": "meshes/box.obj", "scale": 0.1, "sampling": {"mode": "surface", "count": 300, "seed": 3}}},
    "colliders": [{"type": "box", "center": [0, 0, 0], "half_extents": [)" << kHalfSlab << R"(, 20, 20]}],
    "bodies": [{"shape": "box", "position": [)" << kHalfSlab + kHalfBox + gap << R"(, 0, -10], "velocity": [)"
    << -speed * std::cos(a) << ", 0, " << speed * std::sin(a) << "]}]}";
  return s.str();
}

TEST_CASE("tunnelling: a box thrown obliquely or with long steps at a 1 cm slab collider stays on its side",
          "[physics][tunnel]") {
  // Found by an examiner (issue 11): at 100 m/s 60–80° from the normal (1/60 s steps) the box went
  // through the slab or ended with it inside, and at 200 m/s with 1/30 s steps (6.7 m a step)
  // straight through — the swept sample's probe past the entry (math/swept.h) fell short of the
  // face on a shallow chord, or past the slab on a long one. (Not here: 200 m/s with 1/30 s steps,
  // which now lands, but on the reference the impact at one of these phases leaves the box
  // spinning, and a corner that started the next step touching the slab is carried 2 cm past its
  // far face: a chord that starts inside is not swept.)
  struct Throw {
    double speed, degrees, dt;
  };
  for (const char* method : {"shape_matching", "impulse"})
    for (const char* backend : {"reference", "omp", "omp per-particle"})
      for (const Throw t : {Throw{50, 60, 1.0 / 60}, Throw{100, 45, 1.0 / 60}, Throw{100, 70, 1.0 / 60},
                            Throw{100, 80, 1.0 / 60}, Throw{200, 30, 1.0 / 60}, Throw{200, 75, 1.0 / 60},
                            Throw{150, 0, 1.0 / 30}, Throw{100, 0, 1.0 / 20}, Throw{50, 0, 0.1}})
        for (double phase : {0.05, 0.5, 0.9}) {
          const double normalSpeed = t.speed * std::cos(t.degrees * 3.14159265358979 / 180);
          const double gap = 0.0005 + phase * normalSpeed * t.dt;
          const Scene scene =
              parseScene(obliqueScene(method, t.speed, t.degrees, gap, t.dt), "oblique.json", test::sourcePath("scenes"));
          auto w = worldOn(backend, scene);
          const int steps = static_cast<int>((gap + 2 * kHalfBox + 0.3) / (normalSpeed * t.dt)) + 3;
          double worstBehind = 0, lowestCentre = 1e30;
          for (int n = 0; n < steps; ++n) {
            w->step();
            for (const glm::vec3& x : w->particlePositions()) worstBehind = std::max(worstBehind, -kHalfSlab - double(x.x));
            lowestCentre = std::min(lowestCentre, double(w->poses()[0].centre.x));
          }
          INFO(method << ", " << backend << ", " << t.speed << " m/s at " << t.degrees << "°, steps of " << t.dt
                      << " s, start gap " << gap << " m: a particle got " << worstBehind
                      << " m past the far face, the centre as low as " << lowestCentre);
          CHECK(lowestCentre > kHalfSlab);
          CHECK(worstBehind < 0.25 * kHalfSlab);
        }
}

/// The box dropped under gravity onto a 1 cm slab (its faces at y = ±kHalfSlab): a box collider
/// 2 m across, or a mesh collider 0.8 m across; tilted `degrees` about `axis`, its lowest corner
/// `gap` above the slab, thrown down at `speed` and spinning about z at `spin`.
std::string tumbleScene(bool mesh, const std::string& method, double degrees, const glm::dvec3& axis, double speed, double spin,
                        double restitution, int seed, double gap) {
  const glm::dvec3 u = glm::normalize(axis);
  const glm::dmat3 R = glm::mat3_cast(glm::angleAxis(degrees * 3.14159265358979 / 180, u));
  double lowest = 0;  // the tilted box's lowest corner below its centre
  for (int c = 0; c < 8; ++c)
    lowest = std::max(lowest, -(R * glm::dvec3(c & 1 ? kHalfBox : -kHalfBox, c & 2 ? kHalfBox : -kHalfBox,
                                               c & 4 ? kHalfBox : -kHalfBox)).y);
  std::ostringstream s;
  s << R"({"dt": )" << kDt << R"(, "frames": 10, "gravity": [0, -9.8, 0],
    "solver": {"method": ")" << method << R"("},
    "materials": {"default": {"restitution": )" << restitution << R"(, "friction": 0.2}},
    "shapes": {"box": {"mesh": "meshes/box.obj", "scale": 0.1, "sampling": {"mode": "surface", "count": 200, "seed": )"
    << seed << "}}},\n";
  if (mesh)
    s << R"("colliders": [{"type": "mesh", "mesh": "meshes/box.obj", "scale": [0.8, )" << 2 * kHalfSlab
      << R"(, 0.8], "sdf_resolution": 128}],)";
  else
    s << R"("colliders": [{"type": "box", "center": [0, 0, 0], "half_extents": [1, )" << kHalfSlab << R"(, 1]}],)";
  s << R"("bodies": [{"shape": "box", "position": [0, )" << kHalfSlab + lowest + gap << R"(, 0], "velocity": [0, )"
    << -speed << R"(, 0], "angular_velocity": [0, 0, )" << spin << R"(], "rotation": {"axis": [)" << u.x << ", "
    << u.y << ", " << u.z << R"(], "degrees": )" << degrees << "}}]}";
  return s.str();
}

TEST_CASE("tunnelling: a box that lands on a 1 cm slab with a tumble stays on top of it", "[physics][tunnel]") {
  // Found by an examiner (experiments/hostile-2026-12-07d F10): a box tilted 61° thrown down at
  // 1 m/s onto a 1 cm slab collider lands on an edge and slaps onto its face turning at 8 rad/s;
  // its far edge moves 1.3 cm a step, and particles end the step past the slab's middle. The
  // solve (swept contacts) sent it up, but the push-out that followed read the far face as the
  // nearest and pushed it 16 mm down, and it went through (impulse method, every backend). The
  // push-out is now swept too (math/contact_solver.h PushStart). Here: tilts about several axes,
  // speeds from a drop to 3 m/s, a spin, restitution 0 to 0.8, sampling seeds, both slabs and
  // methods, on the reference and both OpenMP layouts. While the box is over the slab its centre
  // stays above it and no particle gets past its far face; after 2 s it is on top.
  struct Throw {
    double degrees;
    glm::dvec3 axis;
    double speed, spin, restitution;
    int seed;
  };
  const Throw throws[] = {{61, {1, 0.3, 0.7}, 1, 0, 0.5, 5},  {37, {0.2, 0, 1}, 3, 0, 0.8, 6},
                          {80, {1, 1, 0}, 3, 0, 0.5, 7},      {20, {0, 0.4, 1}, 1, 4, 0.8, 8},
                          {45, {1, 0, 0}, 0, 0, 0.0, 9},      {61, {1, 0.3, 0.7}, 2, -6, 0.3, 10},
                          {30, {0.3, 0.2, 1}, 3, 10, 0.0, 11}, {70, {0.5, 1, 0.2}, 1.5, 0, 0.8, 12}};
  int throwsOver = 0, runs = 0;  // runs that stayed over the slab to the end
  for (bool mesh : {false, true})
    for (const char* method : {"impulse", "shape_matching"})
      for (const char* backend : {"reference", "omp", "omp per-particle"})
        for (const Throw& t : throws) {
          const Scene s = parseScene(tumbleScene(mesh, method, t.degrees, t.axis, t.speed, t.spin, t.restitution, t.seed, 0.01),
                                     "tumble.json", test::sourcePath("scenes"));
          auto w = worldOn(backend, s);
          const double across = mesh ? 0.4 - kHalfBox : 1.0 - kHalfBox;  // over the slab
          double lowestCentre = 1e30, worstBehind = 0;
          bool over = true;
          for (int n = 0; n < 120; ++n) {
            w->step();
            const glm::dvec3 c = w->poses()[0].centre;
            over = over && std::max(std::abs(c.x), std::abs(c.z)) < across;
            if (!over) break;  // bounced off the edge: nothing more to check
            lowestCentre = std::min(lowestCentre, c.y);
            for (const glm::vec3& x : w->particlePositions()) worstBehind = std::max(worstBehind, -kHalfSlab - double(x.y));
          }
          const glm::dvec3 last = w->poses()[0].centre;
          INFO((mesh ? "mesh" : "box") << " slab, " << method << ", " << backend << ", " << t.degrees << "° about ("
                                       << t.axis.x << ", " << t.axis.y << ", " << t.axis.z << "), " << t.speed
                                       << " m/s, spin " << t.spin << ", restitution " << t.restitution << ": centre as low as "
                                       << lowestCentre << ", a particle " << worstBehind
                                       << " m past the far face; at the end the centre at " << last.y << ", speed "
                                       << glm::length(w->poses()[0].velocity));
          CHECK(lowestCentre > kHalfSlab);
          CHECK(worstBehind < 0.25 * kHalfSlab);
          ++runs;
          if (over) {
            ++throwsOver;
            CHECK(last.y > kHalfSlab + 0.8 * kHalfBox);  // on top at the end (some still bounce)
          }
        }
  INFO(throwsOver << " of " << runs << " runs stayed over the slab");
  CHECK(throwsOver >= runs * 3 / 4);  // the checks above saw most landings to the end
  // The push-out of a body that sweeps a collider runs in its own thread in the per-particle layout
  // (PushOutSweptBodies); both layouts give the same state to the bit (serial backend).
  for (bool mesh : {false, true})
    for (const char* method : {"impulse", "shape_matching"})
      for (int k = 0; k < 3; ++k) {
        const Throw& t = throws[k];
        const Scene s = parseScene(tumbleScene(mesh, method, t.degrees, t.axis, t.speed, t.spin, t.restitution, t.seed, 0.01),
                                   "tumble.json", test::sourcePath("scenes"));
        auto a = World::create(Backend::Cpp, s, StepStrategy::PerBody);
        auto b = World::create(Backend::Cpp, s, StepStrategy::PerParticle);
        for (int n = 0; n < 60; ++n) {
          a->step();
          b->step();
        }
        INFO((mesh ? "mesh" : "box") << " slab, " << method << ", throw " << k);
        const bool same = a->saveState() == b->saveState();  // (megabytes: a bool to print)
        CHECK(same);
      }
}

/// The box dropped (no gravity, thrown along −y) onto the 6 mm top edge of a blade collider,
/// which could slip between the particles of its bottom face.
std::string bladeScene(const std::string& method, double speed, double gap) {
  std::ostringstream j;
  j << R"({"dt": )" << kDt << R"(, "frames": 10, "gravity": [0, 0, 0],
    "solver": {"method": ")" << method << R"("},
    "materials": {"default": {"restitution": 0.3, "friction": 0.3}},
    "shapes": {"box": {"mesh": "meshes/box.obj", "scale": 0.1,
                       "sampling": {"mode": "surface", "count": 300, "seed": 7}}},
    "colliders": [{"type": "box", "center": [0, -0.1, 0], "half_extents": [0.003, 0.1, 0.3]}],
    "bodies": [{"shape": "box", "position": [0.004, )"
    << kHalfBox + gap << R"(, 0.01], "velocity": [0, )" << -speed << R"(, 0]}]})";
  return j.str();
}

TEST_CASE("tunnelling: a hollow box dropped on a blade's edge does not swallow it", "[physics][tunnel]") {
  for (const char* method : {"shape_matching", "impulse"})
    for (const char* backend : {"reference", "omp", "omp per-particle"})
      for (double speed : {0.3, 1.0, 3.0, 7.0, 15.0, 30.0, 60.0, 120.0, 200.0})
        for (double phase : {0.05, 0.35, 0.65, 0.95}) {
          const double gap = 0.0005 + phase * speed * kDt;
          const Scene s = parseScene(bladeScene(method, speed, gap), "blade.json", test::sourcePath("scenes"));
          const int steps = static_cast<int>((gap + 0.3) / (speed * kDt)) + 3;
          // How far the blade's top (y = 0) got into the box, below its centre's height less a
          // half size: the deepest over the run, and at the end.
          double deepest = 0, last = 0;
          auto record = [&](double centreY) {
            last = kHalfBox - centreY;
            deepest = std::max(deepest, last);
          };
          auto w = worldOn(backend, s);
          for (int n = 0; n < steps; ++n) {
            w->step();
            record(w->poses()[0].centre.y);
          }
          INFO(method << ", " << backend << ", " << speed << " m/s, start gap " << gap << " m: the blade got "
                      << deepest << " m into the box, " << last << " m at the end");
          // Never past the box's centre; out again at the end (the box bounced off).
          CHECK(deepest < kHalfBox);
          CHECK(last < 0.001);
        }
}

// Through a sphere (a 2 cm ball collider, thickness 2r) at 0 to 75° from the normal at entry, on
// chords that end outside again: a crossing wherever the chord goes deeper than the sphere's
// rounding, and a chord passing 1 mm outside it is not. (A probe half the thickness along the
// chord past the entry missed crossings at 60°: the chord inside is only 2r cos θ long; one
// (half × cos θ + φ/cos θ) along is its middle.)
TEST_CASE("swept samples: crossings of a sphere at any angle are caught", "[physics][tunnel]") {
  Collider<double> ball;
  ball.type = ColliderType::Sphere;
  ball.point = glm::dvec3(0.0);
  ball.radius = 0.01;
  const double thickness = colliderThickness(ball);
  REQUIRE(thickness == Approx(0.02));
  for (double lipschitz : {1.0, std::sqrt(3.0)})
    for (double degrees : {0.0, 30.0, 50.0, 60.0, 75.0}) {
      // The chord enters at the point (0, r, 0) heading θ from the inward normal, and runs 5 cm.
      const double a = degrees * 3.14159265358979 / 180;
      const glm::dvec3 entry(0.0, ball.radius, 0.0), dir(std::sin(a), -std::cos(a), 0.0);
      const glm::dvec3 x0 = entry - 0.01 * dir, x1 = entry + 0.04 * dir;
      REQUIRE(sdfCollider(ball, x1).phi > 0);  // out again
      const SdfSample<double> s =
          sweptSample(ColliderField<double>{ball}, x0, x1, sdfCollider(ball, x1), lipschitz, thickness, 0.0);
      INFO("Lipschitz bound " << lipschitz << ", " << degrees << "°: φ " << s.phi);
      CHECK(s.phi < 0);
      CHECK(s.gradient.y == Approx(1.0).margin(0.02));
    }
  // Passing 1 mm outside: no contact.
  const glm::dvec3 x0(-0.05, 0.011, 0.0), x1(0.05, 0.011, 0.0);
  CHECK(sweptSample(ColliderField<double>{ball}, x0, x1, sdfCollider(ball, x1), 1.0, thickness, 0.0).phi > 0);
}

// The swept sample itself (math/swept.h), against a 1 cm slab collider (the box |x| ≤ 5 mm, top
// face y = 0.2, 0.4 m wide), with the exact field (L = 1) and with L = √3 as the grids use.
TEST_CASE("swept samples: crossings are caught, near misses and slides off an edge are not", "[physics][tunnel]") {
  Collider<double> slab;
  slab.type = ColliderType::Box;
  slab.point = glm::dvec3(0.0);
  slab.halfExtents = glm::dvec3(kHalfSlab, 0.2, 0.2);
  const double thickness = colliderThickness(slab);
  REQUIRE(thickness == Approx(0.01));
  for (double lipschitz : {1.0, std::sqrt(3.0)}) {
    auto sample = [&](glm::dvec3 x0, glm::dvec3 x1) {
      return sweptSample(ColliderField<double>{slab}, x0, x1, sdfCollider(slab, x1), lipschitz, thickness, 0.0);
    };
    INFO("Lipschitz bound " << lipschitz);
    // Through the slab head on, and at 8° to its face: a contact on the entry face, as deep as
    // the particle went past it.
    for (double degrees : {90.0, 30.0, 8.0}) {
      const double a = degrees * 3.14159265358979 / 180;
      const glm::dvec3 dir(-std::sin(a), 0.0, std::cos(a));
      // From 3 mm before the face to 1 cm past the far face.
      const glm::dvec3 x0(kHalfSlab + 0.003, 0.0, -0.08);
      const glm::dvec3 x1 = x0 + (0.023 / std::sin(a)) * dir;
      const SdfSample<double> s = sample(x0, x1);
      INFO(degrees << "°: φ " << s.phi << ", normal " << s.gradient.x);
      CHECK(s.gradient.x == Approx(1.0));
      CHECK(s.phi == Approx(x1.x - kHalfSlab).margin(1e-4));
    }
    // Long chords (issue 11, found by an examiner): 1.67 m at 10° to the face from 1.46 cm before
    // it to 0.27 m past the far face (100 m/s at 80° from the normal, 1/60 s), and 6.67 m head on
    // from 0.33 m before it (200 m/s, 1/30 s: the march's tolerance, 10⁻³ of the chord, is more
    // than half the slab). A fixed probe of half the thickness along the chord fell short of the
    // face, or past the slab: both read as misses and the box went through.
    // (And a 3 m chord at 20° from 4 mm before the face: both at once.)
    for (const auto& [degrees, before, length] : {std::tuple{10.0, 0.0146, 1.67}, std::tuple{90.0, 0.333, 6.67},
                                                  std::tuple{20.0, 0.004, 3.0}}) {
      const double a = degrees * 3.14159265358979 / 180;
      const glm::dvec3 dir(-std::sin(a), 0.0, std::cos(a));
      const glm::dvec3 x0(kHalfSlab + before, 0.0, -(before / std::sin(a)) * std::cos(a));  // meets it at z = 0
      const glm::dvec3 x1 = x0 + length * dir;
      REQUIRE(x1.x < -kHalfSlab);  // past the far face, outside again
      const SdfSample<double> s = sample(x0, x1);
      INFO(degrees << "°, " << length << " m: φ " << s.phi << ", normal " << s.gradient.x);
      CHECK(s.gradient.x == Approx(1.0));
      CHECK(s.phi == Approx(x1.x - kHalfSlab).margin(1e-4));
    }
    // Starting 0.3 mm inside the face (a resting contact) and driven 2 cm through the slab: the
    // contact is the face it started on.
    {
      const glm::dvec3 x0(kHalfSlab - 0.0003, 0.0, 0.0), x1(kHalfSlab - 0.0203, 0.0, 0.0);
      const SdfSample<double> s = sample(x0, x1);
      CHECK(s.gradient.x == Approx(1.0));
      CHECK(s.phi == Approx(-0.0203).margin(1e-6));
    }
    // Sliding 0.1 mm above the face, 1 cm from its edge, off the edge 0.5 mm lower (it passes the
    // edge 0.05 mm above it): no contact.
    {
      const glm::dvec3 x0(kHalfSlab + 0.0001, 0.19, 0.0), x1(kHalfSlab - 0.0004, 0.29, 0.0);
      CHECK(sample(x0, x1).phi > 0.0);
    }
    // Passing 0.5 mm outside the slab's edge on a 1 m chord: no contact.
    {
      const glm::dvec3 x0(0.5, 0.2005, 0.0), x1(-0.5, 0.2005, 0.0);
      CHECK(sample(x0, x1).phi > 0.0);
    }
    // Grazing chords (a hostile test, 2026-12-07): 35 cm long across the slab's face, sinking
    // 9.5 mm from 3 mm before it — to 1.5 mm past the slab's middle — and 16 mm, through it; a
    // march of φ/L steps does not reach the face in 64 steps (it ended with the end sample: the
    // far face's, or none): the rest of the chord is scanned. Both: the entry face.
    for (const double sink : {0.0095, 0.016}) {
      const glm::dvec3 x0(kHalfSlab + 0.003, 0.0, -0.17), x1(kHalfSlab + 0.003 - sink, 0.0, 0.18);
      const SdfSample<double> s = sample(x0, x1);
      INFO("sinking " << sink << " m over 35 cm: φ " << s.phi << ", normal " << s.gradient.x);
      CHECK(s.gradient.x == Approx(1.0));
      CHECK(s.phi == Approx(x1.x - kHalfSlab).margin(1e-4));
    }
    // ... and one that comes within 1 mm of the face and leaves it: no contact.
    {
      const glm::dvec3 x0(kHalfSlab + 0.003, 0.0, -0.17), x1(kHalfSlab + 0.001, 0.0, 0.18);
      CHECK(sample(x0, x1).phi > 0.0);
    }
  }
}

/// A box sliding fast across a thin slab (its faces at y = ±half), friction μ, dropped from 1 cm
/// above it flat, or tilted `degrees` about z and spinning about y.
std::string slideScene(const std::string& method, double half, double speed, double degrees, double spin) {
  std::ostringstream s;
  s << R"({"dt": )" << kDt << R"(, "frames": 10, "gravity": [0, -9.8, 0],
    "solver": {"method": ")" << method << R"("},
    "materials": {"default": {"restitution": 0.3, "friction": 0.3}},
    "shapes": {"box": {"mesh": "meshes/box.obj", "scale": 0.1, "sampling": {"mode": "surface", "count": 200, "seed": 5}}},
    "colliders": [{"type": "box", "center": [0, 0, 0], "half_extents": [6, )" << half << R"(, 3]}],
    "bodies": [{"shape": "box", "position": [-5, )" << half + 0.0455 + (degrees > 0 ? 0.025 : 0.01) << R"(, 0], "velocity": [)"
    << speed << R"(, 0, 0.5], "angular_velocity": [0, )" << spin << R"(, 0], "rotation": {"axis": [0, 0, 1], "degrees": )"
    << degrees << "}}]}";
  return s.str();
}

TEST_CASE("tunnelling: a box sliding fast across a thin slab slides on, on top of it", "[physics][tunnel]") {
  // A hostile test (2026-12-07): a box sliding at 15 m/s onto a 1 cm slab stopped dead within a
  // step — its bottom particles' chords (25 cm, sinking a few mm) grazed the face, the swept
  // sample's march ran out of steps, the end samples past the slab's middle read the far face,
  // and contacts pushing down and up at once had friction enough to stop it; tilted, on a 4 mm
  // slab, it came to rest with the slab inside it. The rest of such a chord is now scanned
  // (math/swept.h). Here 6–20 m/s, slabs 4 mm and 1 cm thick, flat and tilted 30° with a spin:
  // while over the slab no particle gets past its far face, and a step takes off about μ g h
  // of the speed, not all of it.
  for (const char* method : {"impulse", "shape_matching"})
    for (const char* backend : {"reference", "omp", "omp per-particle"})
      for (double half : {0.002, 0.005})
        for (double speed : {6.0, 15.0, 20.0})
          for (double degrees : {0.0, 30.0}) {
            const Scene scene = parseScene(slideScene(method, half, speed, degrees, degrees > 0 ? 5.0 : 0.0), "slide.json",
                                           test::sourcePath("scenes"));
            auto w = worldOn(backend, scene);
            double worstBehind = 0, slowest = 1e30;
            int over = 0;
            for (int n = 0; n < 40; ++n) {
              w->step();
              const BodyPose pose = w->poses()[0];
              if (std::abs(pose.centre.x) > 5.8) break;  // off the slab's end
              ++over;
              for (const glm::vec3& x : w->particlePositions()) worstBehind = std::max(worstBehind, -half - double(x.y));
              slowest = std::min(slowest, double(pose.velocity.x));
            }
            INFO(method << ", " << backend << ", slab " << 2 * half << " m, " << speed << " m/s, tilted " << degrees
                        << "°: over it for " << over << " steps, slowest " << slowest << " m/s, a particle "
                        << worstBehind << " m past the far face");
            CHECK(worstBehind < 0.25 * half);
            // 40 steps of μ g h (0.049 m/s) and the landing of a tilted box: far from a stop.
            CHECK(slowest > speed - 3.0);
          }
}

