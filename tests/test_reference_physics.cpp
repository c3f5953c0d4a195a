// Analytic physics on the CPU reference (DESIGN "testing tiers" 2), for both course methods.
#include <catch2/catch.hpp>
#include <cmath>

#include "core/random.h"
#include "math/rotation.h"
#include "reference/reference_world.h"
#include "test_util.h"

using namespace smash;
using glm::dmat3;
using glm::dvec3;

namespace {

// Eight particles at the corners of a box with half extents h (isotropic inertia for a cube).
Shape boxCorners(dvec3 h, double mass = 1.0) {
  std::vector<dvec3> p;
  for (int i = 0; i < 8; ++i)
    p.push_back(dvec3(i & 1 ? h.x : -h.x, i & 2 ? h.y : -h.y, i & 4 ? h.z : -h.z));
  return shapeFromParticles("box", p, std::vector<double>(8, mass));
}

// A lopsided cloud: no symmetry, distinct principal moments.
Shape irregularShape() {
  Random rng(99);
  std::vector<dvec3> p;
  std::vector<double> m;
  for (int i = 0; i < 57; ++i) {
    p.push_back(rng.uniform3(dvec3(-1, -0.4, -0.8), dvec3(1.5, 0.4, 0.8)));
    m.push_back(rng.uniform(0.2, 3));
  }
  return shapeFromParticles("irregular", p, m);
}

Scene emptyScene(Method method, double h) {
  Scene s;
  s.name = "test";
  s.dt = h;
  s.substeps = 1;
  s.solver.method = method;
  s.materials.push_back(Material{"default", 0.5, 0.2});
  return s;
}

Collider<double> ground(double y = 0) {
  Collider<double> c;
  c.type = ColliderType::Plane;
  c.point = dvec3(0, y, 0);
  c.normal = dvec3(0, 1, 0);
  return c;
}

Body bodyAt(dvec3 x, dvec3 v = dvec3(0.0), dvec3 w = dvec3(0.0), glm::dquat q = glm::dquat(1, 0, 0, 0)) {
  Body b;
  b.position = x;
  b.velocity = v;
  b.angularVelocity = w;
  b.rotation = q;
  return b;
}

double frobenius(const dmat3& m) {
  double s = 0;
  for (int c = 0; c < 3; ++c) s += glm::dot(m[c], m[c]);
  return std::sqrt(s);
}

const Method kMethods[] = {Method::ShapeMatching, Method::Impulse};

}  // namespace

TEST_CASE("free fall follows the discrete closed form of semi-implicit Euler", "[reference][physics]") {
  for (Method method : kMethods) {
    INFO(methodName(method));
    const double h = 0.01;
    Scene s = emptyScene(method, h);
    s.shapes.push_back(irregularShape());
    const dvec3 x0(1, 50, -2), v0(0.5, 3, -1);
    s.bodies.push_back(bodyAt(x0, v0, dvec3(0.0), glm::angleAxis(0.3, glm::normalize(dvec3(1, 1, 0)))));
    ReferenceWorld world(s);
    for (int n = 1; n <= 300; ++n) {
      world.step();
      // v_n = v0 + n h g;  x_n = x0 + h Σ_{k=1..n} v_k = x0 + n h v0 + h² g n(n+1)/2.
      dvec3 v = v0 + double(n) * h * s.gravity;
      dvec3 x = x0 + double(n) * h * v0 + h * h * s.gravity * (double(n) * (n + 1) / 2.0);
      REQUIRE(glm::length(world.body(0).velocity - v) < 1e-11);
      REQUIRE(glm::length(world.body(0).centre - x) < 1e-10);
    }
  }
}

TEST_CASE("bounce height on a plane for restitution 0, 0.5 and 1", "[reference][physics]") {
  // A flat-landing box dropped from 1 m (lowest particles 1 m above the plane), no damping or
  // friction. Continuous answer: the apex after the first bounce is e² · 1 m. Discrete error:
  // at most one step, |v| h + g h² ≈ 4.4 mm here (the bounce itself is placed at the moment of
  // impact within the step: tests/test_bounce.cpp holds it to 1% at 60 Hz). A bounce may happen
  // between two samples, so "touched" is the body at the plane or moving up after the fall.
  for (Method method : kMethods)
    for (double e : {0.0, 0.5, 1.0}) {
      INFO(methodName(method) << ", restitution " << e);
      const double h = 1e-3, drop = 1.0;
      Scene s = emptyScene(method, h);
      s.materials[0] = Material{"default", e, 0.0};
      s.colliders.push_back(ground());
      s.shapes.push_back(boxCorners(dvec3(0.1)));
      s.bodies.push_back(bodyAt(dvec3(0, drop + 0.1, 0)));
      ReferenceWorld world(s);
      bool touched = false;
      double apex = 0;
      for (int n = 0; n < 2000; ++n) {
        world.step();
        double bottom = world.body(0).centre.y - 0.1;
        if (bottom < 1e-9 || world.body(0).velocity.y > 0) touched = true;
        if (touched) apex = std::max(apex, bottom);
        REQUIRE(world.deepestPenetration() < 1e-12);
      }
      REQUIRE(touched);
      const double tolerance = std::sqrt(2 * 9.8 * drop) * h + 9.8 * h * h;
      REQUIRE(apex == Approx(e * e * drop).margin(tolerance));
    }
}

TEST_CASE("a sliding body stops where Coulomb friction says", "[reference][physics]") {
  // Resting on the plane with horizontal speed v0 and friction μ (restitution 0): each step the
  // contact removes μ|v_N| = μ g h of sliding speed, so it stops after v0²/(2 μ g) (continuous);
  // the discrete sum differs by at most one step of travel, v0 h.
  for (Method method : kMethods)
    for (bool flatBox : {false, true}) {
      INFO(methodName(method) << (flatBox ? ", flat box" : ", single particle"));
      const double h = 1e-3, v0 = 2.0, mu = 0.3;
      Scene s = emptyScene(method, h);
      s.materials[0] = Material{"default", 0.0, mu};
      s.colliders.push_back(ground());
      if (flatBox) {
        s.shapes.push_back(boxCorners(dvec3(0.2, 0.02, 0.2)));
        s.bodies.push_back(bodyAt(dvec3(0, 0.02, 0), dvec3(v0, 0, 0)));
      } else {
        s.shapes.push_back(shapeFromParticles("dot", {dvec3(0.0)}, {1.0}));
        s.bodies.push_back(bodyAt(dvec3(0, 0, 0), dvec3(v0, 0, 0)));
      }
      ReferenceWorld world(s);
      for (int n = 0; n < 1500; ++n) world.step();
      const double expected = v0 * v0 / (2 * mu * 9.8);
      REQUIRE(world.body(0).centre.x == Approx(expected).margin(v0 * h));
      REQUIRE(glm::length(world.body(0).velocity) < 1e-9);  // and it has stopped
      REQUIRE(world.deepestPenetration() < 1e-12);
    }
}

TEST_CASE("bodies stay rigid after every step", "[reference][physics]") {
  for (Method method : kMethods) {
    INFO(methodName(method));
    Scene s = loadScene(test::sourcePath("scenes/lab_bunny.json"));
    s.solver.method = method;
    ReferenceWorld world(s);
    const Shape& shape = world.scene().shapes[0];
    const double size = shape.boundingRadius;
    for (int n = 0; n < 300; ++n) {
      world.step();
      const dmat3& R = world.body(0).rotation;
      REQUIRE(frobenius(glm::transpose(R) * R - dmat3(1.0)) < 1e-12);
      REQUIRE(glm::determinant(R) == Approx(1.0).margin(1e-12));
      auto x = world.particlePositions(0);
      double residual = 0, distortion = 0;
      for (std::size_t i = 0; i < x.size(); ++i) {
        residual = std::max(residual, glm::length(x[i] - (world.body(0).centre + R * shape.rest[i])));
        // Independent of the reported pose: distances to particle 0 keep their rest length.
        std::size_t j = (i * 7919) % x.size();
        distortion = std::max(distortion, std::fabs(glm::length(x[i] - x[j]) -
                                                    glm::length(shape.rest[i] - shape.rest[j])));
      }
      REQUIRE(residual < 1e-9 * size);
      REQUIRE(distortion < 1e-9 * size);
    }
  }
}

namespace {
// Steps a body through 1000 steps of free flight, requiring P and L to stay at their start.
void requireMomentumConserved(Method method, const Shape& shape) {
  Scene s = emptyScene(method, 0.01);
  s.gravity = dvec3(0.0);
  s.shapes.push_back(shape);
  s.bodies.push_back(bodyAt(dvec3(3, -1, 2), dvec3(1, -2, 0.5), dvec3(2, -3, 1.5)));
  ReferenceWorld world(s);
  const dvec3 P = world.linearMomentum(), L = world.angularMomentum();
  for (int n = 0; n < 1000; ++n) {
    world.step();
    REQUIRE(glm::length(world.linearMomentum() - P) < 1e-12 * glm::length(P));
    REQUIRE(glm::length(world.angularMomentum() - L) < 1e-10 * glm::length(L));
  }
  // It really tumbles: the orientation moved far from the start.
  REQUIRE(frobenius(world.body(0).rotation - dmat3(1.0)) > 0.5);
}
}  // namespace

TEST_CASE("momentum is conserved in free flight without damping", "[reference][physics]") {
  SECTION("shape matching conserves linear and angular momentum of any body") {
    requireMomentumConserved(Method::ShapeMatching, irregularShape());
  }
  SECTION("the impulse method conserves them for a body with isotropic inertia") {
    requireMomentumConserved(Method::Impulse, boxCorners(dvec3(0.3)));
  }
  SECTION("and, holding L rather than ω (the gyroscopic term), for any body") {
    // physics.md §3 kept ω constant without torque, which conserves L = Iω only when I is isotropic.
    requireMomentumConserved(Method::Impulse, irregularShape());
  }
}

TEST_CASE("the seeds' rotation variant runs and stays rigid", "[reference][physics]") {
  Scene s = loadScene(test::sourcePath("scenes/lab_bunny.json"));
  s.solver.rotation = RotationFit::Seeds;
  ReferenceWorld world(s);
  for (int n = 0; n < 600; ++n) world.step();
  const dmat3& R = world.body(0).rotation;
  REQUIRE(frobenius(glm::transpose(R) * R - dmat3(1.0)) < 1e-12);
  REQUIRE(world.finite());
  REQUIRE(world.deepestPenetration() < 1e-9);
}

TEST_CASE("penalty contact models hold a body at their equilibrium depth", "[reference][physics]") {
  // Cube of 8 unit-mass corners resting on 4 of them: each carries m_total g / 4 = 2 g.
  // Linear: k |φ| = 2g; buffered: k (ε − φ) = 2g; barrier: ρ/φ = 2g.
  const double k = 2e4, eps = 0.01, rho = 0.002, g = 9.8;
  struct Case {
    ContactModel model;
    double expectedPhi;
  } cases[] = {{ContactModel::PenaltyLinear, -2 * g / k},
               {ContactModel::PenaltyBuffered, eps - 2 * g / k},
               {ContactModel::PenaltyBarrier, rho / (2 * g)}};
  for (Method method : kMethods)
    for (const Case& c : cases) {
      INFO(methodName(method) << " model " << int(c.model));
      Scene s = emptyScene(method, 1e-3);
      s.linearDamping = 0.99;  // let the spring settle
      s.angularDamping = 0.99;
      s.solver.contact = c.model;
      s.solver.penalty = {c.model, k, eps, rho};
      s.colliders.push_back(ground());
      s.shapes.push_back(boxCorners(dvec3(0.1)));
      s.bodies.push_back(bodyAt(dvec3(0, 0.1 + std::max(0.0, c.expectedPhi), 0)));
      ReferenceWorld world(s);
      for (int n = 0; n < 3000; ++n) world.step();
      double lowest = world.body(0).centre.y - 0.1;
      REQUIRE(world.finite());
      REQUIRE(lowest == Approx(c.expectedPhi).margin(0.05 * std::fabs(c.expectedPhi) + 1e-6));
    }
}

TEST_CASE("edge cases: no bodies, one particle", "[reference]") {
  Scene s = emptyScene(Method::ShapeMatching, 0.01);
  s.colliders.push_back(ground());
  ReferenceWorld none(s);
  none.step();
  REQUIRE(none.bodyCount() == 0);
  REQUIRE(none.kineticEnergy() == 0.0);
  for (Method method : kMethods) {
    Scene one = emptyScene(method, 0.01);
    one.colliders.push_back(ground());
    one.shapes.push_back(shapeFromParticles("dot", {dvec3(0.0)}, {1.0}));
    one.bodies.push_back(bodyAt(dvec3(0, 1, 0), dvec3(0.0), dvec3(1, 2, 3)));
    ReferenceWorld world(one);
    for (int n = 0; n < 500; ++n) world.step();
    REQUIRE(world.finite());
    REQUIRE(world.deepestPenetration() < 1e-12);
    REQUIRE(world.body(0).centre.y == Approx(0.0).margin(1e-9));
  }
}
