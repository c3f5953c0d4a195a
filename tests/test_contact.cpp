// Contact responses of physics.md §4 and the rigid impulse of physics.md §3, each against its formula's
// defining property.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/random.h"
#include "math/contact.h"
#include "math/contact_solver.h"

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

// Issue 10: a sweep's scan (math/lanes.h; a warp tests 32 contacts at once for the first that
// changes something) is the chain's sweep to the bit, whatever its window. InOrderLanes<1> is
// the chain written plainly (a GPU thread), InOrderLanes<32> the warp's windows run in order (a
// CPU thread), InOrderLanes<7> windows that end anywhere. Contacts mostly hovering (no impulse
// before or after), some loaded, some with normal mass 0, a carrier moving or at rest, either
// side moving; several sweeps in a row, so loaded contacts carry impulses into later ones.
namespace {
struct SweepCase {
  std::vector<PairContact<float>> contacts;
  SolverBody<float> moving, fixed;
};

SweepCase sweepCase(std::uint64_t seed, bool fixedAtRest) {
  Random rng(seed);
  SweepCase s;
  const int count = 1 + static_cast<int>(rng.uniform() * 150);
  s.moving.v = glm::vec3(rng.uniform3(dvec3(-1), dvec3(1)));
  s.moving.w = glm::vec3(rng.uniform3(dvec3(-3), dvec3(3)));
  s.moving.invMass = 0.5f;
  s.moving.invInertia = glm::mat3(4.0f);
  if (!fixedAtRest) {
    s.fixed.v = glm::vec3(rng.uniform3(dvec3(-0.5), dvec3(0.5)));
    s.fixed.w = glm::vec3(rng.uniform3(dvec3(-1), dvec3(1)));
  }
  for (int k = 0; k < count; ++k) {
    PairContact<float> c{};
    c.ra = glm::vec3(rng.uniform3(dvec3(-0.2), dvec3(0.2)));
    c.rb = glm::vec3(rng.uniform3(dvec3(-0.2), dvec3(0.2)));
    const dvec3 n = rng.uniform3(dvec3(-0.3, 0.5, -0.3), dvec3(0.3, 1, 0.3));
    c.normal = glm::vec3(n / glm::length(n));
    const double kind = rng.uniform();
    // hovering: a target far below any approach (separating), nothing carried
    c.target = kind < 0.7 ? -50.0f : static_cast<float>(rng.uniform(-0.1, 0.4));
    if (kind > 0.85) {
      c.lambdaNormal = static_cast<float>(rng.uniform(0, 0.2));
      c.lambdaTangent = glm::vec3(rng.uniform3(dvec3(-0.01), dvec3(0.01)));
    }
    c.particle = k;
    prepareContactResponse(s.moving, static_cast<const SolverBody<float>*>(nullptr), c);
    if (rng.uniform() < 0.05) c.normalMass = 0.0f;  // immovable along n
    s.contacts.push_back(c);
  }
  return s;
}

template <bool AMoves, bool FixedAtRest, int Width>
SweepCase sweepWith(SweepCase s, int sweeps) {
  PairImpulse<float> on;
  for (int i = 0; i < sweeps; ++i)
    sweepOneSided<float, AMoves, FixedAtRest>(s.moving, s.fixed, s.contacts.data(), static_cast<int>(s.contacts.size()),
                                              0.6f, &on, InOrderLanes<Width>{});
  s.fixed.v = on.linear;  // the impulses gathered, compared below
  s.fixed.w = on.angular;
  return s;
}

bool sameBits(const SweepCase& a, const SweepCase& b) {
  auto same = [](const auto& x, const auto& y) { return std::memcmp(&x, &y, sizeof(x)) == 0; };
  if (!same(a.moving.v, b.moving.v) || !same(a.moving.w, b.moving.w) || !same(a.fixed.v, b.fixed.v) ||
      !same(a.fixed.w, b.fixed.w) || a.contacts.size() != b.contacts.size())
    return false;
  for (std::size_t k = 0; k < a.contacts.size(); ++k)
    if (!same(a.contacts[k].lambdaNormal, b.contacts[k].lambdaNormal) ||
        !same(a.contacts[k].lambdaTangent, b.contacts[k].lambdaTangent))
      return false;
  return true;
}

template <bool AMoves, bool FixedAtRest>
void checkWindows(int seeds) {
  int changed = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    const SweepCase start = sweepCase(static_cast<std::uint64_t>(seed) * 7919 + (AMoves ? 1 : 2), FixedAtRest);
    const SweepCase chain = sweepWith<AMoves, FixedAtRest, 1>(start, 4);
    INFO("seed " << seed << ", " << start.contacts.size() << " contacts");
    REQUIRE(sameBits(chain, sweepWith<AMoves, FixedAtRest, 32>(start, 4)));
    REQUIRE(sameBits(chain, sweepWith<AMoves, FixedAtRest, 7>(start, 4)));
    changed += sameBits(chain, start) ? 0 : 1;
  }
  REQUIRE(changed > seeds / 2);  // the sweeps did something to compare
}
}  // namespace

TEST_CASE("lanes: a sweep's scan equals the chain to the bit for every window", "[math][contact][lanes]") {
  checkWindows<true, true>(200);    // a body against the colliders
  checkWindows<true, false>(200);   // against a carrier, the body the pair's a
  checkWindows<false, false>(200);  // the body the pair's b
}
