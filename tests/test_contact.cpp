// Contact responses of physics.md §4 and the rigid impulse of physics.md §3, each against its formula's
// defining property.
#include <catch2/catch.hpp>
#include <cmath>

#include "core/random.h"
#include "math/contact.h"

using namespace smash;
using glm::dmat3;
using glm::dvec3;

TEST_CASE("impulse response: restitution, Coulomb friction, separation", "[math][contact]") {
  const dvec3 n(0, 1, 0);
  ContactMaterial<double> m{0.5, 0.2, 0.0};
  SECTION("separating velocities are left alone") {
    REQUIRE(impulseResponse(dvec3(1, 2, 3), n, m) == dvec3(1, 2, 3));
    REQUIRE(impulseResponse(dvec3(1, 0, 3), n, m) == dvec3(1, 0, 3));
  }
  SECTION("head-on: v_N' = -mu_N v_N") {
    for (double e : {0.0, 0.5, 1.0}) {
      m.restitution = e;
      REQUIRE(impulseResponse(dvec3(0, -3, 0), n, m).y == Approx(3 * e));
    }
  }
  SECTION("dynamic friction removes mu_T (1 + mu_N) |v_N| of tangential speed") {
    dvec3 v(4, -2, 0);  // |v_T| = 4, |v_N| = 2
    dvec3 r = impulseResponse(v, n, m);
    REQUIRE(r.y == Approx(1.0));
    REQUIRE(r.x == Approx(4 - 0.2 * 1.5 * 2));
    REQUIRE(r.z == 0.0);
  }
  SECTION("static friction stops slow sliding") {
    dvec3 r = impulseResponse(dvec3(0.1, -2, 0.05), n, m);
    REQUIRE(r.x == 0.0);
    REQUIRE(r.z == 0.0);
    REQUIRE(r.y == Approx(1.0));
  }
  SECTION("below the restitution threshold contacts are inelastic") {
    m.restitutionThreshold = 0.5;
    REQUIRE(impulseResponse(dvec3(0, -0.4, 0), n, m).y == 0.0);
    REQUIRE(impulseResponse(dvec3(0, -0.6, 0), n, m).y == Approx(0.3));
  }
}

TEST_CASE("penalty forces of physics.md section 4", "[math][contact]") {
  const dvec3 n(0, 0, 1), still(0.0);
  PenaltyParams<double> p;
  p.stiffness = 100;
  p.buffer = 0.1;
  p.barrier = 2;
  SECTION("linear: inside only") {
    p.model = ContactModel::PenaltyLinear;
    REQUIRE(penaltyForce(p, -0.02, n, still, 1.0, 0.0, 0.01).z == Approx(2.0));
    REQUIRE(penaltyForce(p, 0.02, n, still, 1.0, 0.0, 0.01) == dvec3(0.0));
  }
  SECTION("buffered: starts at phi < epsilon") {
    p.model = ContactModel::PenaltyBuffered;
    REQUIRE(penaltyForce(p, 0.05, n, still, 1.0, 0.0, 0.01).z == Approx(5.0));
    REQUIRE(penaltyForce(p, 0.15, n, still, 1.0, 0.0, 0.01) == dvec3(0.0));
  }
  SECTION("log barrier: rho N / phi for 0 < phi < epsilon") {
    p.model = ContactModel::PenaltyBarrier;
    REQUIRE(penaltyForce(p, 0.05, n, still, 1.0, 0.0, 0.01).z == Approx(40.0));
    REQUIRE(penaltyForce(p, 0.2, n, still, 1.0, 0.0, 0.01) == dvec3(0.0));
    REQUIRE(penaltyForce(p, -0.01, n, still, 1.0, 0.0, 0.01) == dvec3(0.0));  // crossed: nothing
  }
  SECTION("friction: f_T = -a v_T, a = min(m/dt, mu k |phi| / |v_T|)") {
    p.model = ContactModel::PenaltyLinear;
    // Fast slide: Coulomb-limited, |f_T| = mu |f_N| = 0.5 * 2.
    dvec3 f = penaltyForce(p, -0.02, n, dvec3(10, 0, 0), 1.0, 0.5, 0.01);
    REQUIRE(f.x == Approx(-1.0));
    // Slow slide: capped at m/dt so one step cannot reverse the motion.
    f = penaltyForce(p, -0.02, n, dvec3(0.001, 0, 0), 1.0, 0.5, 0.01);
    REQUIRE(f.x == Approx(-0.1));
  }
}

TEST_CASE("impulse at a point sets that point's velocity", "[math][contact]") {
  Random rng(3);
  for (int k = 0; k < 200; ++k) {
    double M = rng.uniform(0.5, 10);
    dmat3 A;
    for (int c = 0; c < 3; ++c)
      for (int r = 0; r < 3; ++r) A[c][r] = rng.uniform(-1, 1);
    dmat3 I = glm::transpose(A) * A + dmat3(0.1);  // symmetric positive definite
    dmat3 Iinv = glm::inverse(I);
    dvec3 rc = rng.uniform3(-1, 1);
    dvec3 v = rng.uniform3(-1, 1);
    dvec3 w = rng.uniform3(-1, 1);
    dvec3 vc = v + glm::cross(w, rc);
    dvec3 want = rng.uniform3(-1, 1);
    dvec3 j = impulseAtPoint(1 / M, Iinv, rc, vc, want);
    dvec3 v2 = v + j / M, w2 = w + Iinv * glm::cross(rc, j);
    REQUIRE(glm::length(v2 + glm::cross(w2, rc) - want) < 1e-10);
  }
}
