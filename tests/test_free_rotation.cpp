// Torque-free rotation against Euler's equations (issue 11 items 5 and 6), both methods: a
// 1×2×3 box spun about a general axis, and near its intermediate axis (the flip); and a body of
// isotropic inertia turning by exactly |ω| h per step up to |ω| h = π. The oracle is
// Euler's equations in the body frame, I ω̇ = (I ω) × ω, integrated by classical Runge–Kutta with
// steps 50 times smaller than the solver's (converged to ~1e-12 here: halving its step changes
// nothing at that level).
#include <catch2/catch.hpp>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <sstream>
#include <vector>

#include "core/mesh.h"
#include "core/random.h"
#include "core/shape.h"
#include "math/rotation.h"
#include "reference/reference_world.h"
#include "world/world.h"
#include "test_util.h"
#include "world_scenes.h"

using namespace smash;
using glm::dvec3;

namespace {

// Eight equal masses at the corners of an a×b×c box: principal moments ∝ (b²+c², a²+c², a²+b²).
Shape boxCorners123() {
  const dvec3 half(0.5, 1.0, 1.5);
  std::vector<dvec3> p;
  for (int i = 0; i < 8; ++i) p.push_back(dvec3(i & 1 ? half.x : -half.x, i & 2 ? half.y : -half.y, i & 4 ? half.z : -half.z));
  return shapeFromParticles("box123", p, std::vector<double>(8, 0.125));
}

Scene spinScene(const Shape& shape, const dvec3& omega, double h, Method method) {
  Scene s;
  s.name = "spin";
  s.dt = h;
  s.substeps = 1;
  s.gravity = dvec3(0.0);
  s.solver.method = method;
  s.materials.push_back(Material{"default", 0.0, 0.0});
  s.shapes.push_back(shape);
  Body b;
  b.position = dvec3(0.0);
  b.angularVelocity = omega;
  s.bodies.push_back(b);
  return s;
}

// Body-frame angular velocity after time t from ω(0) (the body starts at the identity, so body
// and world frames agree at t = 0); `I` is diagonal in the body frame.
dvec3 eulerOracle(const glm::dmat3& I, dvec3 w, double t, double h) {
  auto f = [&](const dvec3& x) {
    const dvec3 Iw = I * x;
    return glm::inverse(I) * glm::cross(Iw, x);
  };
  const int n = static_cast<int>(std::llround(t / h));
  for (int k = 0; k < n; ++k) {
    const dvec3 k1 = f(w), k2 = f(w + 0.5 * h * k1), k3 = f(w + 0.5 * h * k2), k4 = f(w + h * k3);
    w += (h / 6) * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
  }
  return w;
}

struct Track {
  double worstOmega = 0;  // max over samples of |ω_body − oracle| / |ω|
  double energy = 0;      // max relative deviation of ½ ωᵀ I ω
  double momentum = 0;    // max relative deviation of |L| (world vector L)
  bool flipped = false;   // the intermediate component changed sign during the run
  bool oracleFlipped = false;
};

template <class Pose>
Track follow(const Shape& shape, const dvec3& omega0, double h, double duration, Pose pose, std::function<void()> step) {
  Track t;
  const glm::dmat3& I = shape.inertia;  // diagonal: the box is axis-aligned
  const double e0 = 0.5 * glm::dot(omega0, I * omega0);
  const dvec3 L0 = I * omega0;
  dvec3 oracle = omega0;
  const int steps = static_cast<int>(std::llround(duration / h));
  for (int k = 1; k <= steps; ++k) {
    step();
    oracle = eulerOracle(I, oracle, h, h / 50);
    glm::dmat3 R;
    dvec3 w;
    pose(R, w);
    const dvec3 wBody = glm::transpose(R) * w;
    t.worstOmega = std::max(t.worstOmega, glm::length(wBody - oracle) / glm::length(omega0));
    t.energy = std::max(t.energy, std::abs(0.5 * glm::dot(wBody, I * wBody) / e0 - 1));
    t.momentum = std::max(t.momentum, glm::length(R * (I * wBody) - L0) / glm::length(L0));
    if (wBody.y * omega0.y < 0) t.flipped = true;
    if (oracle.y * omega0.y < 0) t.oracleFlipped = true;
  }
  return t;
}

/// The sweeps' bodies: trial k's is a cloud of 40 random particles (an inertia that is not
/// diagonal in the shape's frame) every fourth trial, else an 8-corner box of random proportions,
/// a symmetric top every tenth.
Shape sweptShape(Random& rng, int trial, int cloudSeed) {
  if (trial % 4 == 3) return test::randomShape(40, 0.3, static_cast<std::uint64_t>(cloudSeed + trial));
  const double hx = rng.uniform(0.02, 0.5), hy = trial % 10 == 0 ? hx : rng.uniform(0.02, 0.5);
  const double hz = rng.uniform(0.02, 0.5);
  std::vector<dvec3> p;
  for (int i = 0; i < 8; ++i) p.push_back(dvec3(i & 1 ? hx : -hx, i & 2 ? hy : -hy, i & 4 ? hz : -hz));
  return shapeFromParticles("box", p, std::vector<double>(8, 0.125));
}

/// A random spin axis, every seventh within 1% of the shape's y axis.
dvec3 sweptAxis(Random& rng, int trial) {
  const dvec3 axis = rng.uniform3(-1, 1);
  if (trial % 7 != 0) return axis;
  const double x = rng.uniform(0, 0.01);
  return dvec3(x, 1.0, rng.uniform(0, 0.01));
}

/// Trial k of a sweep: its body (sweptShape), axis (sweptAxis), a turn of 0.01 to `most` rad per
/// step, steps of 1 ms, 1/60 s or 0.5 s, and the method, alternating.
struct SweptSpin {
  Shape shape;
  dvec3 axis;
  double turn, h;
  Method method;
  dvec3 omega() const { return glm::normalize(axis) * (turn / h); }
};
SweptSpin sweptSpin(Random& rng, int trial, int cloudSeed, double most) {
  SweptSpin s;
  s.shape = sweptShape(rng, trial, cloudSeed);
  s.axis = sweptAxis(rng, trial);
  s.turn = rng.uniform(0.01, most);
  s.h = trial % 3 == 0 ? 0.001 : trial % 3 == 1 ? 1.0 / 60 : 0.5;
  s.method = trial % 2 ? Method::Impulse : Method::ShapeMatching;
  return s;
}

/// The largest relative departures of a free spin from its start over the samples it is given
/// (pose R and world ω of the body, `I` its inertia in the body frame): of the energy, and of the
/// world angular momentum L (a vector: size and direction).
struct SpinDrift {
  glm::dmat3 I;
  double e0;
  dvec3 L0;
  double energy = 0, momentum = 0;
  SpinDrift(const glm::dmat3& inertia, const dvec3& omega)
      : I(inertia), e0(0.5 * glm::dot(omega, inertia * omega)), L0(inertia * omega) {}
  /// Returns the body-frame ω.
  dvec3 sample(const glm::dmat3& R, const dvec3& omega) {
    const dvec3 wBody = glm::transpose(R) * omega;
    energy = std::max(energy, std::abs(0.5 * glm::dot(wBody, I * wBody) / e0 - 1));
    momentum = std::max(momentum, glm::length(R * (I * wBody) - L0) / glm::length(L0));
    return wBody;
  }
};

/// A pose's angular velocity in the body frame, and the rotation's energy ½ ωᵀ I ω (`I` in the
/// body frame) — the new tests' measures of a spin read back through World's poses.
dvec3 bodyOmega(const BodyPose& p) {
  return glm::transpose(rotationMatrix(glm::dquat(p.rotation))) * dvec3(p.angularVelocity);
}
double spinEnergy(const glm::dmat3& I, const BodyPose& p) {
  const dvec3 wb = bodyOmega(p);
  return 0.5 * glm::dot(wb, I * wb);
}

/// The ground plane y = 0, normal +y.
Collider<double> groundPlane() {
  Collider<double> ground;
  ground.type = ColliderType::Plane;
  ground.point = dvec3(0.0);
  ground.normal = dvec3(0.0, 1.0, 0.0);
  return ground;
}

/// A shape's bounding radius as the backends store it (rounded up), which their reach uses.
double storedRadius(const Shape& shape) { return shape.boundingRadius * (1 + 1e-6) + 1e-6; }

}  // namespace

TEST_CASE("torque-free rotation follows Euler's equations", "[physics][rotation]") {
  const Shape shape = boxCorners123();
  REQUIRE(shape.inertia[0][1] == Approx(0.0).margin(1e-12));  // axis-aligned principal frame
  struct Case {
    dvec3 omega;
    double h, duration, tolerance;
    const char* what;
  } cases[] = {
      {dvec3(1.0, 2.0, 3.0), 1e-3, 4.0, 1e-4, "general axis, 1 ms"},
      {dvec3(1.0, 2.0, 3.0), 1.0 / 60, 4.0, 2e-2, "general axis, 60 Hz"},
      {dvec3(0.02, 3.0, 0.01), 1e-3, 6.0, 1e-3, "near the intermediate axis, 1 ms"},
  };
  for (Method method : {Method::ShapeMatching, Method::Impulse})
  for (const Case& c : cases) {
    INFO(methodName(method) << ", " << c.what);
    const Scene scene = spinScene(shape, c.omega, c.h, method);
    ReferenceWorld ref(scene);
    const Track r = follow(shape, c.omega, c.h, c.duration,
                           [&](glm::dmat3& R, dvec3& w) { R = ref.body(0).rotation; w = ref.body(0).angularVelocity; },
                           [&] { ref.step(); });
    auto omp = World::create(Backend::Omp, scene);
    const Track f = follow(shape, c.omega, c.h, c.duration,
                           [&](glm::dmat3& R, dvec3& w) {
                             const BodyPose p = omp->poses()[0];
                             R = rotationMatrix(glm::dquat(p.rotation));
                             w = dvec3(p.angularVelocity);
                           },
                           [&] { omp->step(); });
    INFO("reference: ω error " << r.worstOmega << ", energy " << r.energy << ", |L| " << r.momentum);
    INFO("omp: ω error " << f.worstOmega << ", energy " << f.energy << ", |L| " << f.momentum);
    CHECK(r.worstOmega < c.tolerance);
    CHECK(r.momentum < 1e-10);  // L is held exactly (to rounding)
    CHECK(r.energy < 1e-9);     // and the energy (keepRotationEnergy)
    // Float: the impulse method holds |L| to 1e-5; shape matching's float run drifts in |L| by
    // ~1e-5 per step (its L is summed over the particles; issue 11 item 7, open), so its float
    // run is not held to the oracle here.
    if (method == Method::Impulse) {
      // Near the intermediate axis the moment of the flip is sensitive to any perturbation, so
      // float's ω is compared with the oracle on the general axis only.
      if (c.omega.x > 0.1) CHECK(f.worstOmega < c.tolerance + 1e-4);
      CHECK(f.momentum < 1e-4);  // issue 11's float target is 1e-3 over 10,000 steps
      CHECK(f.energy < 1e-4);
    }
    if (c.omega.x < 0.1) {  // the intermediate axis flips within the run, as Euler's equations say
      CHECK(r.oracleFlipped);
      CHECK(r.flipped);
      if (method == Method::Impulse) CHECK(f.flipped);
    }
  }
}

TEST_CASE("shape matching turns a free body by |ω| h per step, up to π", "[physics][rotation]") {
  // A cube of corner particles (isotropic inertia: ω stays constant) spun at |ω| h from 0.1 to 3
  // rad per step. The chord prediction y = x + h v turned it by atan(|ω| h) (1.249 rad at 3).
  const Shape cube = shapeFromParticles("cube", [] {
    std::vector<dvec3> p;
    for (int i = 0; i < 8; ++i) p.push_back(dvec3(i & 1 ? 0.1 : -0.1, i & 2 ? 0.1 : -0.1, i & 4 ? 0.1 : -0.1));
    return p;
  }(), std::vector<double>(8, 0.125));
  const dvec3 axis = glm::normalize(dvec3(1, 2, 2));
  for (double turn : {0.1, 1.0, 2.0, 3.0}) {
    const double h = 0.01;
    const dvec3 omega = (turn / h) * axis;
    const Scene scene = spinScene(cube, omega, h, Method::ShapeMatching);
    ReferenceWorld ref(scene);
    const double e0 = ref.kineticEnergy();
    const glm::dvec3 L0 = ref.angularMomentum();
    double worstAngle = 0, worstEnergy = 0, worstL = 0;
    for (int k = 0; k < 10000; ++k) {
      const glm::dmat3 before = ref.body(0).rotation;
      ref.step();
      // The step's turn: angle of R_new R_oldᵀ.
      const glm::dmat3 d = ref.body(0).rotation * glm::transpose(before);
      const double c = std::max(-1.0, std::min(1.0, 0.5 * (d[0][0] + d[1][1] + d[2][2] - 1)));
      worstAngle = std::max(worstAngle, std::abs(std::acos(c) - turn));
      worstEnergy = std::max(worstEnergy, std::abs(ref.kineticEnergy() / e0 - 1));
      worstL = std::max(worstL, glm::length(ref.angularMomentum() - L0) / glm::length(L0));
    }
    INFO("turn " << turn << " rad per step: angle error " << worstAngle << ", energy " << worstEnergy << ", |L| "
                 << worstL << " over 10,000 steps");
    CHECK(worstAngle < 1e-6);
    CHECK(worstEnergy < 1e-6);
    CHECK(worstL < 1e-6);
  }
}

TEST_CASE("free rotation keeps energy and |L| at any step, and still flips", "[physics][rotation]") {
  // The 1×2×3 box on the reference (double), both methods, 10,000 steps from 0.04 to 3 rad per
  // step: energy and |L| within 1e-6 (the explicit midpoint alone gained 31% of the energy at
  // 0.37 rad per step); spun near the intermediate axis it still flips.
  const Shape shape = boxCorners123();
  for (Method method : {Method::ShapeMatching, Method::Impulse})
    for (double h : {0.01, 0.1, 0.8}) {
      for (bool nearIntermediate : {false, true}) {
        const dvec3 omega = nearIntermediate ? dvec3(0.02, 3.0, 0.01) : dvec3(1.0, 2.0, 3.0);
        ReferenceWorld ref(spinScene(shape, omega, h, method));
        SpinDrift drift(shape.inertia, omega);
        bool flipped = false;
        for (int k = 0; k < 10000; ++k) {
          ref.step();
          if (drift.sample(ref.body(0).rotation, ref.body(0).angularVelocity).y * omega.y < 0) flipped = true;
        }
        INFO(methodName(method) << ", h " << h << (nearIntermediate ? ", near the intermediate axis" : "")
                                << ": energy " << drift.energy << ", L " << drift.momentum);
        CHECK(drift.energy < 1e-6);
        CHECK(drift.momentum < 1e-6);
        if (nearIntermediate) CHECK(flipped);
      }
    }
}

TEST_CASE("free rotation keeps energy and |L| for any body and axis at steps up to pi rad", "[physics][rotation]") {
  // Issue 11 item 5 over a seeded sweep instead of one box: 8-corner boxes of random proportions
  // (a tenth of them symmetric tops), clouds of 40 random particles (an inertia that is not
  // diagonal in the shape's frame), spun about random axes (some within 1% of a principal one) by
  // 0.01 to π rad per step at three step sizes, both methods, 10,000 steps each on the reference.
  // Energy and |L| within 1e-6. Before the closed-form correction (math/rotation.h
  // keepRotationEnergy): 11 of these 160 runs failed, up to +486% in energy (the Newton
  // iteration's skipped and unfinished corrections each set a new energy for the rest of the run).
  Random rng(20261127);
  for (int trial = 0; trial < 160; ++trial) {
    const SweptSpin t = sweptSpin(rng, trial, 1000, glm::pi<double>());
    ReferenceWorld ref(spinScene(t.shape, t.omega(), t.h, t.method));
    SpinDrift drift(t.shape.inertia, t.omega());
    for (int k = 0; k < 10000; ++k) {
      ref.step();
      drift.sample(ref.body(0).rotation, ref.body(0).angularVelocity);
    }
    INFO("trial " << trial << ", " << methodName(t.method) << ", " << t.turn << " rad per step, h " << t.h
                  << ", axis (" << t.axis.x << ", " << t.axis.y << ", " << t.axis.z << "): energy " << drift.energy
                  << ", L " << drift.momentum);
    CHECK(drift.energy < 1e-6);
    CHECK(drift.momentum < 1e-6);
  }
}

TEST_CASE("float: a free body keeps its energy and |L| to 0.1% over 10,000 steps", "[physics][rotation][float]") {
  // Issue 11 item 7: on omp a free spinning box drifted 1–2.6% in energy and 0.5–1.3% in |L|;
  // measured before this test, shape matching drifted by up to 257% / 89% (0.1 s, near the
  // maximum axis). Causes: the warm-started rotation (warm · R(dq) as matrices) carried its
  // departure from orthonormality on from step to step; a free body's L was re-summed from its
  // particles in float; ω of L carried I⁻¹ I's rounding on the step's change; the energy
  // correction skipped errors below float's rounding of E, which a bias then added up.
  const Shape shape = boxCorners123();
  for (Method method : {Method::ShapeMatching, Method::Impulse})
    for (double h : {0.001, 0.01, 1.0 / 60, 0.1})
      for (const dvec3& omega : {dvec3(1.0, 2.0, 3.0), dvec3(0.02, 3.0, 0.01), dvec3(5, 0.1, 0.2), dvec3(0.1, 0.2, 8)}) {
        auto omp = World::create(Backend::Omp, spinScene(shape, omega, h, method));
        const glm::dmat3& I = shape.inertia;
        const double e0 = 0.5 * glm::dot(omega, I * omega);
        const dvec3 L0 = I * omega;
        double worstE = 0, worstL = 0, worstSize = 0, worstDirection = 0;
        for (int k = 0; k < 10000; ++k) {
          omp->step();
          const BodyPose p = omp->poses()[0];
          const glm::dmat3 R = rotationMatrix(glm::dquat(p.rotation));
          const dvec3 wb = glm::transpose(R) * dvec3(p.angularVelocity);
          worstE = std::max(worstE, std::abs(0.5 * glm::dot(wb, I * wb) / e0 - 1));
          worstL = std::max(worstL, std::abs(glm::length(I * wb) / glm::length(L0) - 1));
          worstDirection = std::max(worstDirection, glm::length(R * (I * wb) - L0) / glm::length(L0));
          if (k % 100 == 99) {  // the particles stay rigid (corners 0 and 7: the diagonal, √14)
            const std::vector<glm::vec3> x = omp->particlePositionsRelative();
            worstSize = std::max(worstSize, std::abs(glm::length(dvec3(x[0]) - dvec3(x[7])) / std::sqrt(14.0) - 1));
          }
        }
        INFO(methodName(method) << ", h " << h << ", ω (" << omega.x << ", " << omega.y << ", " << omega.z
                                << "): energy " << worstE << ", |L| " << worstL << ", L (world vector) "
                                << worstDirection << ", size " << worstSize);
        CHECK(worstE < 1e-3);
        CHECK(worstL < 1e-3);
        CHECK(worstDirection < 1e-3);
        CHECK(worstSize < 1e-5);
      }
}

TEST_CASE("float: free bodies of any shape keep energy and |L| to 0.1% at up to pi rad per step", "[physics][rotation][float]") {
  // The sweep of "free rotation keeps energy and |L| for any body and axis at steps up to pi rad"
  // on omp (float): 60 runs at 0.01 to 0.5 rad per step (up to 30 rad/s at 60 steps per second)
  // and 100 at 0.5 to π. A free body's energy is held from step to step (BodyData::heldEnergy,
  // math/rotation.h keepRotationEnergy). Before (each step's target the energy of the float pose
  // it started from, whose rounding random-walked): the first 60 stayed under 5.4e-4 (900 such
  // runs), but 6 of the 100 faster ones drifted past 0.1% (up to 0.52%; docs/solver.md).
  auto check = [](Random& rng, int trials, int cloudSeed, double least, double most) {
    for (int trial = 0; trial < trials; ++trial) {
      SweptSpin t = sweptSpin(rng, trial, cloudSeed, least == 0 ? most : glm::pi<double>());
      if (least > 0) t.turn = least + (most - least) * (t.turn - 0.01) / (glm::pi<double>() - 0.01);
      auto omp = World::create(Backend::Omp, spinScene(t.shape, t.omega(), t.h, t.method));
      SpinDrift drift(t.shape.inertia, t.omega());
      for (int k = 0; k < 10000; ++k) {
        omp->step();
        const BodyPose p = omp->poses()[0];
        drift.sample(rotationMatrix(glm::dquat(p.rotation)), dvec3(p.angularVelocity));
      }
      INFO("trial " << trial << ", " << methodName(t.method) << ", " << t.turn << " rad per step, h " << t.h
                    << ": energy " << drift.energy << ", L " << drift.momentum);
      CHECK(drift.energy < 1e-3);
      CHECK(drift.momentum < 1e-3);
    }
  };
  Random slow(4242), fast(777);
  check(slow, 60, 2000, 0.0, 0.5);
  check(fast, 100, 3000, 0.5, glm::pi<double>());
}

TEST_CASE("float: a body free again after a contact keeps the energy it left with", "[physics][rotation][float]") {
  // The held energy (BodyData::heldEnergy) is the free body's own: a contact lets it go, and the
  // body takes the energy it has when it is free again. A 1x2x3 box spinning at about 1.5 rad per
  // step, free at first, thrown at a plane (zero gravity, friction 0.5, restitution 0.5), leaves
  // it spinning otherwise and flies on for 6,000 steps. Near the plane nothing corrects the energy (the
  // integrator alone gains 2-5% a step at this rate); from the first step the body is free on,
  // it keeps the energy that step starts with. Had the energy held before the contact stayed
  // (measured with the reset taken out), the body would be turned towards it: 24-38% off.
  for (Method method : {Method::ShapeMatching, Method::Impulse})
    for (double h : {1.0 / 60, 0.05}) {
      Scene s = spinScene(boxCorners123(), glm::normalize(dvec3(1.0, 2.0, 3.0)) * (1.5 / h), h, method);
      s.materials[0] = Material{"default", 0.5, 0.5};
      s.bodies[0].position = dvec3(0.0, 12.0, 0.0);  // free at first: 30 steps or more
      s.bodies[0].velocity = dvec3(0.5, -4.0, 0.0);
      s.colliders.push_back(groundPlane());
      auto omp = World::create(Backend::Omp, s);
      const glm::dmat3 I = boxCorners123().inertia;
      auto energy = [&](const BodyPose& p) { return spinEnergy(I, p); };
      // awayFromColliders at the step's start: the plane beyond the bounding radius (as the
      // backends store it), the contact margin and the step's travel h (|v| + |ω| r).
      const double radius = storedRadius(boxCorners123()), margin = s.contactMargin();
      auto clearance = [&](const BodyPose& p) {
        return p.centre.y - (radius + margin + h * (glm::length(dvec3(p.velocity)) +
                                                    glm::length(dvec3(p.angularVelocity)) * radius));
      };
      BodyPose start = omp->poses()[0];
      const double before = energy(start);
      double first = 0, worst = 0, startClearance = 0;
      int touched = 0, away = 0;
      for (int k = 0; k < 20000 && away < 6000; ++k) {
        omp->step();
        const BodyPose p = omp->poses()[0];
        const bool free = clearance(start) > 0 && p.velocity.y > 0;
        if (!free) ++touched;
        if (free && touched > 0) {
          if (away++ == 0) {
            first = energy(start);  // the energy the first free step starts with
            startClearance = clearance(start);
          }
          worst = std::max(worst, std::abs(energy(p) / first - 1));
        }
        start = p;
      }
      INFO(methodName(method) << ", h " << h << ": energy before " << before << ", at the start of the first free step "
                              << first << " (clearance " << startClearance << " m), worst over " << away
                              << " steps since " << worst);
      REQUIRE(away == 6000);                       // it bounced off and flew away
      REQUIRE(startClearance > 1e-4);              // that step is free on the backends too (no tie)
      CHECK(std::abs(first / before - 1) > 0.01);  // the contact changed the spin's energy
      CHECK(worst < 1e-4);
    }
}

TEST_CASE("float: the held energy resumes with the state, setPoses drops it, and a bad one is refused", "[physics][rotation][float][snapshot]") {
  // BodyData::heldEnergy is state (format 8): a free spin saved and resumed mid-run ends where the
  // uninterrupted one does, bit for bit; a body given a new spin by setPoses keeps the energy of
  // that spin (had the old one stayed held, the correction would turn the body towards it); and
  // a state whose held energy is no E/|L|² the shape can have is refused.
  const Shape shape = boxCorners123();
  const glm::dmat3 I = shape.inertia;
  auto energy = [&](const BodyPose& p) { return spinEnergy(I, p); };
  const double h = 1.0 / 60;
  for (Backend backend : {Backend::Cpp, Backend::Omp})
    for (Method method : {Method::ShapeMatching, Method::Impulse}) {
      INFO(backendName(backend) << ", " << methodName(method));
      const Scene scene = spinScene(shape, glm::normalize(dvec3(1.0, 2.0, 3.0)) * (1.5 / h), h, method);
      auto straight = World::create(backend, scene), first = World::create(backend, scene);
      for (int n = 0; n < 600; ++n) straight->step();
      for (int n = 0; n < 300; ++n) first->step();
      auto resumed = World::create(backend, scene);
      resumed->loadState(first->saveState(), "spin state");
      for (int n = 0; n < 300; ++n) resumed->step();
      REQUIRE(resumed->saveState() == straight->saveState());

      BodyPose pose = straight->poses()[0];
      pose.angularVelocity = glm::vec3(glm::normalize(dvec3(3.0, -1.0, 0.5)) * (1.2 / h));
      straight->setPoses({pose});
      const double given = energy(straight->poses()[0]);
      double worst = 0;
      for (int n = 0; n < 6000; ++n) {
        straight->step();
        worst = std::max(worst, std::abs(energy(straight->poses()[0]) / given - 1));
      }
      INFO("energy given " << given << ", worst over 6,000 steps " << worst);
      CHECK(worst < 1e-3);

      // The held energy is body 0's last 4 bytes; body 0 follows the 120-byte header.
      std::vector<std::uint8_t> state = first->saveState();
      std::uint32_t bodyBytes = 0;
      std::memcpy(&bodyBytes, state.data() + 12, 4);
      const std::size_t at = 120 + bodyBytes - 4;
      float held = 0;
      std::memcpy(&held, state.data() + at, 4);
      const BodyPose p = first->poses()[0];
      const dvec3 Lb = I * bodyOmega(p);  // |L| in either frame
      REQUIRE(held == Approx(energy(p) / glm::dot(Lb, Lb)).epsilon(1e-3));  // found it
      for (float bad : {-1.0f, std::nanf(""), 0.1f * held, 100.0f * held}) {
        std::memcpy(state.data() + at, &bad, 4);
        auto target = World::create(backend, scene);
        test::requireInputError([&] { target->loadState(state, "spin state"); }, {"spin state", "held energy"});
      }
    }
}

TEST_CASE("float: damping keeps the held energy's ratio E/|L|^2", "[physics][rotation][float]") {
  // The held energy is κ = E/|L|², which a uniform scaling of L keeps: linear_decay scales every
  // particle velocity of a free shape-matched body (and so L), angular_decay the impulse method's
  // ω. A spin at about 1 rad per step damped to a fifth of its L keeps κ within 0.1%.
  const Shape shape = boxCorners123();
  const glm::dmat3 I = shape.inertia;
  for (Method method : {Method::ShapeMatching, Method::Impulse}) {
    const double h = 1.0 / 60;
    Scene scene = spinScene(shape, glm::normalize(dvec3(1.0, 2.0, 3.0)) * (1.0 / h), h, method);
    scene.linearDamping = 0.999;
    scene.angularDamping = 0.999;
    auto omp = World::create(Backend::Omp, scene);
    auto ratio = [&] {
      const dvec3 wb = bodyOmega(omp->poses()[0]);
      const dvec3 Lb = I * wb;
      return 0.5 * glm::dot(wb, Lb) / glm::dot(Lb, Lb);
    };
    const double start = ratio();
    double worst = 0, L0 = 0, L1 = 0;
    for (int n = 0; n < 1600; ++n) {
      omp->step();
      const double size = glm::length(I * bodyOmega(omp->poses()[0]));
      if (n == 0) L0 = size;
      L1 = size;
      worst = std::max(worst, std::abs(ratio() / start - 1));
    }
    INFO(methodName(method) << ": |L| " << L0 << " -> " << L1 << ", E/|L|^2 worst " << worst);
    CHECK(L1 < 0.25 * L0);  // damped
    CHECK(worst < 1e-3);
  }
}

namespace {

/// Kinetic energy of a body (mass M, body-frame inertia I) from its pose.
double kineticEnergy(double M, const glm::dmat3& I, const glm::dmat3& R, const dvec3& v, const dvec3& w) {
  const dvec3 wb = glm::transpose(R) * w;
  return 0.5 * M * glm::dot(v, v) + 0.5 * glm::dot(wb, I * wb);
}

/// A spin near a ground plane (zero gravity): trial k's body and spin as in the free sweeps, at
/// 0.2 to 1.5 rad per step, steps of 1/60, 0.02 or 0.05 s; `touch`: moving towards the plane from
/// 0.5 m beyond its bounding radius, else gliding along it with a gap that no particle's chord
/// h |v_i| ≤ h (|v| + |ω| r) can cross in a step but within the body's reach (the contact margin,
/// half the bounding radius here, plus the step's travel): never free, never touched.
struct NearPlane {
  Scene scene;
  double mass, gap;
  glm::dmat3 inertia;
};
NearPlane nearPlane(Random& rng, int trial, bool touch, double e, double mu) {
  SweptSpin t = sweptSpin(rng, trial, 5000, glm::pi<double>());
  t.turn = rng.uniform(0.2, 1.5);
  t.h = trial % 3 == 0 ? 1.0 / 60 : trial % 3 == 1 ? 0.02 : 0.05;
  NearPlane n;
  n.scene = spinScene(t.shape, t.omega(), t.h, t.method);
  n.scene.materials[0] = Material{"default", e, mu};
  const double r = storedRadius(t.shape);
  n.scene.solver.contactMargin = 0.5 * r;
  const dvec3 v = touch ? dvec3(0.3, -1.0, 0.0) : dvec3(0.5, 0.0, 0.0);
  const double chord = t.h * (glm::length(v) + glm::length(t.omega()) * r);
  // (At most half the margin: |ω| varies as a body of three moments turns, and the reach is
  // judged each step.)
  n.gap = touch ? 0.5 : chord + rng.uniform(0.05, 0.5) * n.scene.solver.contactMargin;
  n.scene.bodies[0].position = dvec3(0.0, r + n.gap, 0.0);
  n.scene.bodies[0].velocity = v;
  n.scene.colliders.push_back(groundPlane());
  n.mass = t.shape.totalMass;
  n.inertia = t.shape.inertia;
  return n;
}

}  // namespace

TEST_CASE("a spinning body within a collider's reach gains no energy from its rotation", "[physics][rotation]") {
  // A hostile test's find (experiments/hostile-2026-11-28, rod_energy_gain.json): a thin rod
  // spinning at 0.8 rad per step 0.1 m above a plane, never touching it, went from 15 kJ to
  // 333 kJ in three steps, on every backend and both methods. Not free (a collider within its
  // reach), nothing held its rotation's energy, and the explicit midpoint alone is unstable for
  // a body whose moments differ by 100s. Now every step's rotation keeps the energy its L has at
  // the step's start pose (math/rotation.h keepRotationEnergy); only the held energy needs the
  // body free, and near a collider errors below 2e-6 of the energy are left (float cannot tell
  // them from its rounding). Gliding within reach, never touching: the rotation's energy within
  // 1e-3 over 600 steps (measured: 2.8e-4 float, 2.7e-4 double — those skipped errors adding up;
  // at 2e-6 a step they could reach 1.2e-3); before, 38 of these 48 runs went beyond 1e-3, up to
  // +443%. Thrown at the plane (restitution 0 to 1, friction 0 or 0.5): before up to +7,370%
  // (trial 22, shape matching) and 6 of 48 runs above +15%; then at most +10% — the contacts' own
  // gains, which the collider solve's pose correction and bounce made (a spinning rod's test
  // below); since they turn ω with the correction and bounce from the step's approach spin,
  // measured at most 1.6·10⁻⁵, checked below 10⁻³.
  for (bool touch : {false, true}) {
    Random rng(touch ? 5151 : 4141);
    for (int trial = 0; trial < 24; ++trial) {
      const double e = touch ? (trial % 3) * 0.5 : 0.3, mu = touch && trial % 2 ? 0.5 : 0.0;
      const NearPlane n = nearPlane(rng, trial, touch, e, mu);
      for (Backend backend : {Backend::Reference, Backend::Omp}) {
        auto world = World::create(backend, n.scene);
        BodyPose p = world->poses()[0];
        // Gliding: the rotation's energy (the glide's ½ M v² is constant); thrown: all of it.
        auto energy = [&](const BodyPose& q) {
          return touch ? kineticEnergy(n.mass, n.inertia, rotationMatrix(glm::dquat(q.rotation)), dvec3(q.velocity),
                                       dvec3(q.angularVelocity))
                       : spinEnergy(n.inertia, q);
        };
        const double e0 = energy(p);
        double most = 0, least = 0;
        for (int k = 0; k < 600; ++k) {
          world->step();
          const double ek = energy(world->poses()[0]) / e0 - 1;
          most = std::max(most, ek);
          least = std::min(least, ek);
        }
        INFO("trial " << trial << (touch ? " thrown" : " gliding") << ", " << methodName(n.scene.solver.method) << ", "
                      << backendName(backend) << ", e " << e << ", mu " << mu << ", h " << n.scene.dt << ", gap "
                      << n.gap << ": energy up to " << most << ", down to " << least);
        CHECK(most < 1e-3);
        if (!touch) CHECK(least > -1e-3);
      }
    }
  }
}

namespace {

/// A thin rod, length `length`, square section `width`: particles on its surface (the four long
/// edges and each face's centre line, `rows` along it, and both end caps), equal masses.
Shape rodSurface(double length, double width, int rows) {
  std::vector<dvec3> p;
  const double a = 0.5 * length, b = 0.5 * width;
  for (int i = 0; i < rows; ++i) {
    const double x = -a + length * i / (rows - 1);
    for (int k = 0; k < 8; ++k) {
      const double y = k < 4 ? (k & 1 ? b : -b) : (k == 4 ? b : k == 5 ? -b : 0.0);
      const double z = k < 4 ? (k & 2 ? b : -b) : (k < 6 ? 0.0 : k == 6 ? b : -b);
      p.push_back(dvec3(x, y, z));
    }
  }
  for (double x : {-a, a}) p.push_back(dvec3(x, 0.0, 0.0));
  return shapeFromParticles("rod", p, std::vector<double>(p.size(), 1.0 / static_cast<double>(p.size())));
}

}  // namespace

TEST_CASE("a spinning rod's collider contacts add no energy", "[physics][rotation][contact]") {
  // A hostile test's finds (experiments/hostile-2026-11-28b): a 1.2 m rod (its inertia across
  // ~245 times that about its axis) spinning in a zero-gravity box container with restitution 1
  // went from 7.3 kJ to 309 kJ, and one landing step of a rod dropped spinning on a plane added
  // half its energy. Two causes in the collider solve (math/contact_solver.h
  // resolveAgainstStatic): the pose correction turned the body by h Δω and left ω fixed in the
  // world, so a spin about the long axis ended across the tilted rod; and the bounce restituted
  // the normal speed of the step's start ω at the moved pose, where ω = I(R)⁻¹ L had turned
  // within the step. Now ω turns with the correction, and the bounce's start body is the
  // predicted one with this step's velocity update undone.
  // With restitution 1 the 32 sweeps do not converge on a rod's multi-point impacts: they ended
  // above the targets, and in a zero-gravity container the energy grew by up to 95% over 300
  // steps. A lone body's solve now does no work (limitStaticWork: the kinetic energy after it at
  // most the approach's, with the step's gravity), and the approach spin is the start's angular
  // momentum at the predicted pose.
  // Rods in a container (zero gravity; restitution 0, 0.5, 0.9 and 1) and rods dropped spinning
  // on a plane (0, 0.5 and 0.9), no friction, both methods, reference and omp, 300 steps: the
  // kinetic energy (plus the potential in gravity) never rises above its start by 10⁻⁴ (measured
  // at most 6.7·10⁻⁵, omp, e 1 in the container). Before the ω turn and approach, 19 of the 48
  // runs at e ≤ 0.9 rose by more than 1%, up to ×1,270; before the work limit, 8 of these 56 runs
  // beyond 10⁻⁴ (the container at e 1, up to +48%). Dropped with restitution 1 the limit, which
  // allows gravity's work within the step, still leaves gains of up to 2.2% (a rod's multi-point
  // landing): open (issue 11; docs/solver.md, "A spinning body's collider contacts").
  const Shape rod = rodSurface(1.2, 0.04, 25);
  const double M = rod.totalMass;
  for (bool container : {true, false}) {
    Random rng(container ? 7171 : 8181);
    // Each restitution with each method twice: 0, 0.5, 0.9 and 1 in the container, 0, 0.5 and
    // 0.9 dropped (restitution 1 under gravity: open, above).
    const int kinds = container ? 4 : 3;
    for (int trial = 0; trial < 4 * kinds; ++trial) {
      const Method method = (trial / kinds) % 2 ? Method::Impulse : Method::ShapeMatching;
      const double e = std::array<double, 4>{0.0, 0.5, 0.9, 1.0}[trial % kinds];
      const dvec3 axis = glm::normalize(rng.uniform3(-1, 1) + dvec3(0, 0, 0.01));
      const dvec3 omega = rng.uniform(10.0, 30.0) * glm::normalize(rng.uniform3(-1, 1) + dvec3(0.01, 0, 0));
      Scene s = spinScene(rod, omega, container ? 0.02 : 1.0 / 60, method);
      s.materials[0] = Material{"default", e, 0.0};
      s.bodies[0].rotation = glm::angleAxis(rng.uniform(0.0, 6.28), axis);
      if (container) {
        Collider<double> box;
        box.type = ColliderType::BoxContainer;
        box.point = dvec3(0.0, 0.9, 0.0);
        box.halfExtents = dvec3(0.9);
        s.colliders.push_back(box);
        s.bodies[0].position = dvec3(0.0, 0.9, 0.0);
        s.bodies[0].velocity = rng.uniform3(-2, 2);
      } else {
        s.gravity = dvec3(0.0, -9.8, 0.0);
        s.colliders.push_back(groundPlane());
        s.bodies[0].position = dvec3(0.0, rng.uniform(0.7, 1.0), 0.0);
        s.bodies[0].velocity = dvec3(rng.uniform(-0.5, 0.5), 0.0, 0.0);
      }
      for (Backend backend : {Backend::Reference, Backend::Omp}) {
        auto world = World::create(backend, s);
        auto energy = [&](const BodyPose& q) {
          return kineticEnergy(M, rod.inertia, rotationMatrix(glm::dquat(q.rotation)), dvec3(q.velocity),
                               dvec3(q.angularVelocity)) -
                 M * glm::dot(s.gravity, dvec3(q.centre));
        };
        BodyPose p = world->poses()[0];
        const double e0 = energy(p);
        double most = 0;
        int contacts = 0;  // steps whose velocity change is not gravity's alone
        for (int k = 0; k < 300; ++k) {
          world->step();
          const BodyPose q = world->poses()[0];
          most = std::max(most, energy(q) / e0 - 1);
          contacts += glm::length(dvec3(q.velocity - p.velocity) - s.dt * s.gravity) > 1e-3;
          p = q;
        }
        INFO("trial " << trial << (container ? " in a container" : " dropped") << ", " << methodName(method) << ", "
                      << backendName(backend) << ", e " << e << ", |omega| " << glm::length(omega) << ": energy up to "
                      << most << " of the start, " << contacts << " steps with contacts");
        CHECK(contacts > 0);
        CHECK(most < 1e-4);
      }
    }
  }
}

TEST_CASE("a spinning rod's contacts with a body add no energy", "[physics][rotation][contact][bodies]") {
  // The pair path had the collider solve's two faults (the previous test): its pose correction
  // (FinishPairBodies, the reference's finishPairBodies) turned the bodies under a fixed ω, and
  // its targets restituted the start ω's normal speed at the predicted pose. A 1.2 m rod dropped
  // spinning on a heavy slab resting on the ground (restitution 0.5, no friction) went from 48.7 kJ
  // to 93.5 kJ in two steps, and with sparser particles the slab was thrown 3 m high (impulse
  // method, reference and omp). Now a pair's targets take the same approach spin as the
  // collider solve's, and the pose correction adds no rotational energy (capTurnEnergy: turning
  // ω with the pose, as a lone body's is, made bunny_grid's bunnies spin up on the reference).
  // Restitution 0, 0.5 and 0.9, no friction, both methods, reference and omp, 150 steps: the
  // kinetic plus potential energy of the two bodies never rises above its start by more than 10⁻⁴
  // of the rod's (measured: never above it); before, 11 of these 24 runs did, up to 2,912 times
  // the rod's energy (e 0.9: the slab thrown off the ground). With the turn instead of the cap,
  // 3 of the 12 runs at e 0.9 still gained up to 18 times.
  for (int trial = 0; trial < 12; ++trial) {
    Random rng(9191 + trial);
    const char* method = (trial / 3) % 2 ? "impulse" : "shape_matching";
    const double e = std::array<double, 3>{0.0, 0.5, 0.9}[trial % 3];
    const dvec3 axis = glm::normalize(rng.uniform3(-1, 1) + dvec3(0, 0, 0.01));
    const dvec3 w = rng.uniform(10.0, 25.0) * glm::normalize(rng.uniform3(-1, 1) + dvec3(0.01, 0, 0));
    std::ostringstream json;
    json << R"({"dt": 0.016666666666666666, "frames": 150, "gravity": [0, -9.8, 0],
      "solver": {"method": ")" << method << R"("},
      "materials": {"default": {"restitution": )" << e << R"(, "friction": 0}},
      "colliders": [{"type": "plane", "point": [0, 0, 0], "normal": [0, 1, 0]}],
      "shapes": {
        "rod": {"mesh": "meshes/box.obj", "scale": [1.2, 0.04, 0.04], "sdf_resolution": 128,
                "sampling": {"mode": "surface", "count": 800, "seed": 3}},
        "slab": {"mesh": "meshes/box.obj", "scale": [2, 0.2, 2], "sdf_resolution": 48, "particle_mass": 1.0,
                 "sampling": {"mode": "surface", "count": 2400, "seed": 3}}},
      "bodies": [{"shape": "slab", "position": [0, 0.1, 0]},
                 {"shape": "rod", "position": [0, )" << rng.uniform(0.9, 1.1) << R"(, 0],
                  "rotation": {"axis": [)" << axis.x << ", " << axis.y << ", " << axis.z << R"(], "degrees": )"
         << rng.uniform(0.0, 360.0) << R"(},
                  "velocity": [)" << rng.uniform(-0.5, 0.5) << R"(, 0, 0], "angular_velocity": [)" << w.x << ", "
         << w.y << ", " << w.z << "]}]}";
    const Scene s = parseScene(json.str(), "rod_on_slab.json", test::sourcePath("scenes"));
    for (Backend backend : {Backend::Reference, Backend::Omp}) {
      auto world = World::create(backend, s);
      // Both bodies' energy (the ground at y = 0), measured against the rod's at the start.
      auto energy = [&](std::size_t from) {
        double sum = 0;
        const std::vector<BodyPose> poses = world->poses();
        for (std::size_t b = from; b < poses.size(); ++b) {
          const Shape& shape = s.shapes[s.bodies[b].shape];
          const BodyPose& q = poses[b];
          sum += kineticEnergy(shape.totalMass, shape.inertia, rotationMatrix(glm::dquat(q.rotation)),
                               dvec3(q.velocity), dvec3(q.angularVelocity)) -
                 shape.totalMass * glm::dot(s.gravity, dvec3(q.centre));
        }
        return sum;
      };
      const double e0 = energy(0), rod = energy(1);
      double most = 0;
      std::int64_t touching = 0;
      for (int k = 0; k < 150; ++k) {
        world->step();
        most = std::max(most, (energy(0) - e0) / rod);
        touching += world->touchingPairs();
      }
      INFO("trial " << trial << ", " << method << ", " << backendName(backend) << ", e " << e << ", |omega| "
                    << glm::length(w) << ": energy up to " << most << " of the rod's above the start, " << touching
                    << " touching pair-steps");
      CHECK(touching > 0);
      CHECK(most < 1e-4);
    }
  }
}

namespace {

/// A thin box's surface sampled at random (`count` points, equal masses), as a scene's
/// `sampling: surface` does (core/shape.h sampleSurface on scenes/meshes/box.obj, scaled): its two
/// moments across the long axis differ by a few per cent, unlike rodSurface's symmetric rows.
Shape randomRod(Random& rng, double length, double width, int count) {
  Mesh box = loadObj(test::sourcePath("scenes/meshes/box.obj"));
  for (dvec3& v : box.vertices) v *= dvec3(length, width, width);
  const std::vector<dvec3> p = sampleSurface(box, count, rng.nextU64());
  return shapeFromParticles("rod", p, std::vector<double>(p.size(), 1.0 / count));
}

/// A random restitution-1 rod drop (the next from `rng`): a rod of 80 to 300 random surface
/// points, 0.3 to 1 m long and 1 to 5 cm across, dropped from 0.4 to 1.5 m at any orientation,
/// spinning at 5 to 25 rad/s about a random axis, onto a plane with no friction; h 0.02 s for an
/// even `trial`, 1/60 s for an odd one.
struct RodDrop {
  Shape rod;
  Scene scene;
  double length, width, h;
  dvec3 omega;
};
RodDrop randomRodDrop(Random& rng, int trial) {
  RodDrop d;
  d.length = rng.uniform(0.3, 1.0);
  d.width = rng.uniform(0.01, 0.05);
  d.rod = randomRod(rng, d.length, d.width, 80 + static_cast<int>(rng.uniform(0.0, 220.0)));
  d.h = trial % 2 ? 1.0 / 60 : 0.02;
  d.omega = rng.uniform(5.0, 25.0) * glm::normalize(rng.uniform3(-1, 1) + dvec3(0.0, 0.0, 0.01));
  const glm::dquat turn = glm::angleAxis(rng.uniform(0.0, 6.28), glm::normalize(rng.uniform3(-1, 1) + dvec3(0.01, 0.0, 0.0)));
  d.scene = spinScene(d.rod, d.omega, d.h, Method::ShapeMatching);
  d.scene.gravity = dvec3(0.0, -9.81, 0.0);
  d.scene.materials[0] = Material{"default", 1.0, 0.0};
  d.scene.bodies[0].rotation = turn;
  d.scene.bodies[0].position = dvec3(0.0, 0.5 * d.length + rng.uniform(0.4, 1.5), 0.0);
  Collider<double> ground;
  ground.type = ColliderType::Plane;
  ground.point = dvec3(0.0);
  ground.normal = dvec3(0.0, 1.0, 0.0);
  d.scene.colliders.push_back(ground);
  return d;
}

/// E* = KE + PE(c − h v/2) of a body of `shape` at pose q under `gravity`: the energy
/// semi-implicit Euler keeps in free flight (to rounding), which a bounce may not raise.
double staggeredEnergy(const Shape& shape, const dvec3& gravity, double h, const BodyPose& q) {
  const dvec3 v(q.velocity);
  return kineticEnergy(shape.totalMass, shape.inertia, rotationMatrix(glm::dquat(q.rotation)), v,
                       dvec3(q.angularVelocity)) -
         shape.totalMass * glm::dot(gravity, dvec3(q.centre) - 0.5 * h * v);
}

}  // namespace

TEST_CASE("a thin rod of unequal cross moments spins end over end without gaining energy", "[physics][rotation]") {
  // A hostile scene's find (experiments/hostile-2026-11-28b/rod_container_e1.json with shape
  // matching): a 1.2 × 0.04 × 0.04 m rod, its surface sampled at random, spinning at 27 rad/s in
  // a zero-gravity box container with restitution 1, gained 7.1% of its kinetic energy on omp in
  // 40 steps — 0.26% in one step far from every wall. Its axial spin is stiff (Euler's
  // equations: I_a ω̇_a = (I_1 − I_2) ω_1 ω_2 with I_a 1/225 of I_1 and I_1 − I_2 a few per cent
  // of I_1), so the explicit midpoint turn moves the body-frame L by ~0.48 rad a step and the
  // energy correction (math/rotation.h keepRotationEnergy) takes it back along the great circle
  // towards the start's L — a root exactly `moved` away, which the closed form did not give within
  // the bound in that step: left uncorrected, the pose kept a 28° twist and the next step's
  // prediction was off by 50 times the energy. Now L is turned onto the start's there.
  // Rods of 80 to 300 random surface points, 10 to 35 rad/s end over end (within 0.2 of the long
  // axis' normal plane), steps of 0.02 s and 1/60 s, in a container whose walls are within reach
  // (no energy held: keepRotationEnergy's `free` false) and in open space (held), both methods,
  // reference and omp, 200 steps without touching anything: the energy never above the start by
  // 10⁻⁴ nor below it by 10⁻³ (measured: +5.3·10⁻⁵ / −2.5·10⁻⁵; before, 5 of these 96 runs
  // above 10⁻⁴, up to +24%; docs/solver.md "A thin rod's stiff axial spin").
  Random rng(90210);
  for (int trial = 0; trial < 48; ++trial) {
    const Shape rod = randomRod(rng, 1.2, 0.04, 80 + static_cast<int>(rng.uniform(0.0, 220.0)));
    const Method method = trial % 2 ? Method::Impulse : Method::ShapeMatching;
    const bool walls = (trial / 2) % 2 == 0;
    const double h = (trial / 4) % 2 ? 1.0 / 60 : 0.02;
    // Body-frame ω across the long axis (x), with an axial part of at most 0.2 of it.
    const dvec3 across = glm::normalize(dvec3(0.0, rng.uniform(-1.0, 1.0), rng.uniform(-1.0, 1.0)));
    const dvec3 omegaBody = rng.uniform(10.0, 35.0) * (across + dvec3(rng.uniform(-0.2, 0.2), 0.0, 0.0));
    const glm::dquat turn = glm::angleAxis(rng.uniform(0.0, 6.28), glm::normalize(rng.uniform3(-1, 1) + dvec3(0.0, 0.0, 0.01)));
    Scene s = spinScene(rod, glm::dmat3(glm::mat3_cast(turn)) * omegaBody, h, method);
    s.materials[0] = Material{"default", 1.0, 0.0};
    s.bodies[0].rotation = turn;
    s.bodies[0].position = dvec3(0.0, 0.9, 0.0);
    if (walls) {
      // The rod (0.6007 m from its centre, a few mm more from its centre of mass) spins in place
      // 5 cm inside the nearest walls, which its reach with the speculative margin, h |ω| r ≥
      // 0.1 m, crosses: not free, and never touching.
      Collider<double> box;
      box.type = ColliderType::BoxContainer;
      box.point = dvec3(0.0, 0.9, 0.0);
      box.halfExtents = dvec3(0.9, 0.9, 0.65);
      s.colliders.push_back(box);
    }
    for (Backend backend : {Backend::Reference, Backend::Omp}) {
      auto world = World::create(backend, s);
      auto energy = [&](const BodyPose& q) {
        return kineticEnergy(rod.totalMass, rod.inertia, rotationMatrix(glm::dquat(q.rotation)), dvec3(q.velocity),
                             dvec3(q.angularVelocity));
      };
      const double e0 = energy(world->poses()[0]);
      double most = 0, least = 0, speed = 0;
      for (int k = 0; k < 200; ++k) {
        world->step();
        speed = std::max(speed, double(glm::length(world->poses()[0].velocity)));
        const double ek = energy(world->poses()[0]) / e0 - 1;
        most = std::max(most, ek);
        least = std::min(least, ek);
      }
      INFO("trial " << trial << (walls ? " within the walls' reach" : " in open space") << ", " << methodName(method)
                    << ", " << backendName(backend) << ", h " << h << ", |omega| " << glm::length(omegaBody)
                    << ", " << rod.rest.size() << " points: energy up to " << most << ", down to " << least << ", speed up to " << speed);
      CHECK(speed < 1e-4);  // nothing touched
      CHECK(most < 1e-4);
      CHECK(least > -1e-3);
    }
  }
}

TEST_CASE("a spinning rod dropped with restitution 1 gains no energy", "[physics][rotation][contact]") {
  // A hostile test's find (experiments/hostile-2026-12-07/rod_e1_drop_energy_gain.json): a 0.6 m
  // rod of 200 random surface points dropped 1.5 m spinning at 18 rad/s onto a plane with
  // restitution 1 and no friction gained 9.8% of its energy in one bounce on the reference with
  // shape matching (and 0.6% with the impulse method, 53% on omp with shape matching). The
  // collider solve's work limit (limitStaticWork) bounds the kinetic energy alone, allowing
  // gravity's work in the step, and the sweeps do not converge on a rod's multi-point landing;
  // now the whole bounce — the solve, the pose's move with it, the bounce's placement — may not
  // raise E* = KE + PE(c − h v/2), the energy semi-implicit Euler keeps in free flight
  // (math/contact_solver.h limitBounceEnergy). Energy here is E*; 600 steps (10 s, 12 bounces).
  // Measured: at most +9·10⁻⁵ (reference, shape matching), +2.2·10⁻⁴ (impulse, reference and
  // omp). With shape matching on omp the rod, pivoting on its end at 0.77 rad a step, kept falling
  // while each step's push-out lifted it — every contact separated at the predicted pose, so the
  // solve did nothing — and gained 79% over the 10 s; now the push-out does no work past the
  // step's start either (math/contact_solver.h limitPushWork): +9·10⁻⁵. Random drops: the test
  // below (open).
  const Scene scene = loadScene(test::sourcePath("experiments/hostile-2026-12-07/rod_e1_drop_energy_gain.json"));
  const Shape& rod = scene.shapes[0];
  const double h = scene.dt / scene.substeps;
  const std::array<std::pair<Method, Backend>, 4> runs = {{{Method::ShapeMatching, Backend::Reference},
                                                           {Method::Impulse, Backend::Reference},
                                                           {Method::ShapeMatching, Backend::Omp},
                                                           {Method::Impulse, Backend::Omp}}};
  for (const auto& [method, backend] : runs) {
    Scene s = scene;
    s.solver.method = method;
    auto world = World::create(backend, s);
    auto energy = [&](const BodyPose& q) { return staggeredEnergy(rod, s.gravity, h, q); };
    const double e0 = energy(world->poses()[0]);
    double most = 0, least = 0;
    int bounces = 0;
    float vy = world->poses()[0].velocity.y;
    for (int k = 0; k < 600; ++k) {
      world->step();
      const BodyPose q = world->poses()[0];
      most = std::max(most, energy(q) / e0 - 1);
      least = std::min(least, energy(q) / e0 - 1);
      bounces += vy < 0 && q.velocity.y > 0.5f;  // a bounce, not a rounding's flip at rest
      vy = q.velocity.y;
    }
    INFO(methodName(method) << ", " << backendName(backend) << ": energy up to " << most << ", down to " << least
                            << ", over " << bounces << " bounces");
    CHECK(bounces >= 5);
    CHECK(most < 1e-3);
    CHECK(least > -0.5);  // still bouncing: an over-damping limit (an inelastic stop) would not be
  }
}

TEST_CASE("rods dropped spinning on a plane with restitution 1 gain no energy", "[.][open][physics][rotation][contact]") {
  // OPEN, hidden (run it with "[open]"): it fails today. The same property as above over random
  // drops: rods of 80 to 300 random surface points, 0.3 to 1 m long and 1 to 5 cm across, dropped
  // from 0.4 to 1.5 m at any orientation, spinning at 5 to 25 rad/s about a random axis, onto a
  // plane with restitution 1 and no friction, h 1/60 and 0.02 s; both methods, reference and omp,
  // 400 steps. Energy is E* (above). Measured (2026-12-07): 3 of the 96 runs gain more than 10⁻³,
  // up to +2.6% (before limitPushWork: 32, up to +96%; with its centre stage alone 24, up to
  // +19%; with its point stages 12, up to +8.3%; math/contact_solver.h limitPushWork). What is
  // left, shape matching only (trial 8, reference and omp, +2.6%; trial 14, reference, +0.39%):
  // a rod spinning on one end at 40–50 rad/s, mostly about its axis, that climbs by a push-out
  // each step with no solve and nothing approaching — its pose turns 0.2–0.4 rad a step while
  // |ω| h is 1 rad, the stiff axial spin (docs/solver.md, "A thin rod's stiff axial spin").
  Random rng(4242);
  int runs = 0, bounced = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const RodDrop drop = randomRodDrop(rng, trial);
    const Shape& rod = drop.rod;
    const double length = drop.length, width = drop.width, h = drop.h;
    const dvec3 omega = drop.omega;
    Scene s = drop.scene;
    for (Method method : {Method::ShapeMatching, Method::Impulse})
      for (Backend backend : {Backend::Reference, Backend::Omp}) {
        s.solver.method = method;
        auto world = World::create(backend, s);
        auto energy = [&](const BodyPose& q) { return staggeredEnergy(rod, s.gravity, h, q); };
        const double e0 = energy(world->poses()[0]);
        double most = 0, lowest = 1e9;
        int bounces = 0;
        float vy = world->poses()[0].velocity.y;
        for (int k = 0; k < 400; ++k) {
          world->step();
          const BodyPose q = world->poses()[0];
          most = std::max(most, energy(q) / e0 - 1);
          lowest = std::min(lowest, double(q.centre.y));
          bounces += vy < 0 && q.velocity.y > 0.5f;
          vy = q.velocity.y;
        }
        ++runs;
        bounced += bounces > 0;
        INFO("trial " << trial << ", " << methodName(method) << ", " << backendName(backend) << ", h " << h
                      << ", length " << length << ", width " << width << ", |omega| " << glm::length(omega) << ", "
                      << rod.rest.size() << " points: energy up to " << most << ", " << bounces << " bounces");
        CHECK(most < 1e-3);
        CHECK(lowest > 0.0);  // the centre never below the plane
      }
  }
  CHECK(bounced == runs);  // every rod reached the plane and left it
}

TEST_CASE("the push-out's work bound gives the same bits on both layouts", "[physics][rotation][contact][layout]") {
  // limitPushWork on the per-body layout (resolveBodyContacts: the push-out's deepest particle
  // from pushOut, the velocities before the solve kept in registers) and on the per-particle one
  // (ChunkDeepest/PushOutApply's deepest particle, SolveColliderContacts' pushSolvedFrom, the
  // LimitPushWork kernel): the random e = 1 rod drops of the test above, which take every stage
  // of it (counted over these runs, both layouts: the centre's stop over 200 times, the point at
  // the end pose over 20, at the start's pose at least once, the solve scaled back over 15), run
  // on omp in both layouts — the same state, step by step, both methods.
  Random rng(4242);
  int stepsCompared = 0;
  for (int trial = 0; trial < 6; ++trial) {
    const RodDrop drop = randomRodDrop(rng, trial);
    Scene s = drop.scene;
    for (Method method : {Method::ShapeMatching, Method::Impulse}) {
      s.solver.method = method;
      auto perBody = World::create(Backend::Omp, s, StepStrategy::PerBody);
      auto perParticle = World::create(Backend::Omp, s, StepStrategy::PerParticle);
      for (int k = 0; k < 400; ++k) {
        perBody->step();
        perParticle->step();
        INFO("trial " << trial << ", " << methodName(method) << ", step " << k + 1);
        REQUIRE(perBody->saveState() == perParticle->saveState());
        ++stepsCompared;
      }
    }
  }
  CHECK(stepsCompared == 6 * 2 * 400);
}

TEST_CASE("a hostile test's restitution-1 drops gain no energy", "[physics][rotation][contact]") {
  // experiments/hostile-2026-12-07c (restitution 1, friction 0, restitution threshold 0): a rod
  // dropped at dt 1/30 (F1: +35% in one step on the reference with impulses before limitPushWork's
  // point and last stages), a rod tipped from 45° (F3: up to +17.5%), a spinning bunny's bounces
  // at dt 1/60, 1/30 and 1/120 (F4, F4b, F4c: +0.6–4.4%). Energy is E* (staggeredEnergy); 300
  // steps, both methods, reference and omp. Measured after: at most +5.5·10⁻⁴ (F4b, impulses).
  for (const char* name : {"F1_rod_drop_dt30", "F3_rod_tip45_e1mu0_dt60", "F4_bunny_bounce_dt60",
                           "F4b_bunny_bounce_dt30", "F4c_bunny_bounce_dt120"}) {
    const Scene scene = loadScene(test::sourcePath(std::string("experiments/hostile-2026-12-07c/") + name + ".json"));
    const Shape& shape = scene.shapes[scene.bodies[0].shape];
    const double h = scene.dt / scene.substeps;
    for (Method method : {Method::ShapeMatching, Method::Impulse})
      for (Backend backend : {Backend::Reference, Backend::Omp}) {
        Scene s = scene;
        s.solver.method = method;
        auto world = World::create(backend, s);
        const double e0 = staggeredEnergy(shape, s.gravity, h, world->poses()[0]);
        double most = 0;
        int bounces = 0;
        float vy = world->poses()[0].velocity.y;
        for (int k = 0; k < 300; ++k) {
          world->step();
          const BodyPose q = world->poses()[0];
          most = std::max(most, staggeredEnergy(shape, s.gravity, h, q) / e0 - 1);
          bounces += vy < 0 && q.velocity.y > 0.5f;
          vy = q.velocity.y;
        }
        INFO(name << ", " << methodName(method) << ", " << backendName(backend) << ": energy up to " << most << ", "
                  << bounces << " bounces");
        CHECK(bounces >= 1);
        CHECK(most < 1e-3);
      }
  }
}
