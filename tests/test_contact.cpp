// Contact responses of physics.md §4 and the rigid impulse of physics.md §3, each against its formula's
// defining property.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
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
// side moving, or both (a pair's sweep); several sweeps in a row, so loaded contacts carry
// impulses into later ones.
namespace {
enum class Sides { AMoves, BMoves, AAgainstWall, Both };

struct SweepCase {
  std::vector<PairContact<float>> contacts;
  SolverBody<float> moving, other;  // a and b of the pair (AMoves, AAgainstWall, Both), else b and a
  PairImpulse<float> onMoving, onOther;
};

SweepCase sweepCase(std::uint64_t seed, Sides sides, int most) {
  Random rng(seed);
  SweepCase s;
  const int count = 1 + static_cast<int>(rng.uniform() * most);
  s.moving.v = glm::vec3(rng.uniform3(dvec3(-1), dvec3(1)));
  s.moving.w = glm::vec3(rng.uniform3(dvec3(-3), dvec3(3)));
  s.moving.invMass = 0.5f;
  s.moving.invInertia = glm::mat3(4.0f);
  if (sides != Sides::AAgainstWall) {
    s.other.v = glm::vec3(rng.uniform3(dvec3(-0.5), dvec3(0.5)));
    s.other.w = glm::vec3(rng.uniform3(dvec3(-1), dvec3(1)));
  }
  if (sides == Sides::Both) {
    s.other.invMass = 0.25f;
    s.other.invInertia = glm::mat3(2.0f);
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
    if (sides == Sides::Both)
      prepareContactResponse(s.moving, &s.other, c);
    else
      prepareContactResponse(s.moving, static_cast<const SolverBody<float>*>(nullptr), c, sides != Sides::BMoves);
    if (rng.uniform() < 0.05) c.normalMass = 0.0f;  // immovable along n
    s.contacts.push_back(c);
  }
  return s;
}

template <Sides S, int Width>
SweepCase sweepWith(SweepCase s, int sweeps) {
  const int count = static_cast<int>(s.contacts.size());
  const InOrderLanes<Width> lanes;
  for (int i = 0; i < sweeps; ++i) {
    if constexpr (S == Sides::Both)
      pairSweep(s.moving, s.other, s.contacts.data(), count, 0.6f, s.onMoving, s.onOther, lanes);
    else
      sweepOneSided<float, S != Sides::BMoves, S == Sides::AAgainstWall>(s.moving, s.other, s.contacts.data(), count,
                                                                          0.6f, &s.onMoving, lanes);
  }
  return s;
}

bool sameBits(const SweepCase& a, const SweepCase& b) {
  auto same = [](const auto& x, const auto& y) { return std::memcmp(&x, &y, sizeof(x)) == 0; };
  auto sameBody = [&](const SolverBody<float>& x, const SolverBody<float>& y) { return same(x.v, y.v) && same(x.w, y.w); };
  auto sameImpulse = [&](const PairImpulse<float>& x, const PairImpulse<float>& y) {
    return same(x.linear, y.linear) && same(x.angular, y.angular);
  };
  if (!sameBody(a.moving, b.moving) || !sameBody(a.other, b.other) || !sameImpulse(a.onMoving, b.onMoving) ||
      !sameImpulse(a.onOther, b.onOther) || a.contacts.size() != b.contacts.size())
    return false;
  for (std::size_t k = 0; k < a.contacts.size(); ++k)
    if (!same(a.contacts[k].lambdaNormal, b.contacts[k].lambdaNormal) ||
        !same(a.contacts[k].lambdaTangent, b.contacts[k].lambdaTangent))
      return false;
  return true;
}

template <Sides S>
void checkWindows(int seeds, int most) {
  int changed = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    const SweepCase start = sweepCase(static_cast<std::uint64_t>(seed) * 7919 + static_cast<int>(S), S, most);
    const SweepCase chain = sweepWith<S, 1>(start, 4);
    INFO("seed " << seed << ", " << start.contacts.size() << " contacts");
    REQUIRE(sameBits(chain, sweepWith<S, 32>(start, 4)));
    REQUIRE(sameBits(chain, sweepWith<S, 7>(start, 4)));
    changed += sameBits(chain, start) ? 0 : 1;
  }
  REQUIRE(changed > seeds / 2);  // the sweeps did something to compare
}
}  // namespace

TEST_CASE("lanes: a sweep's scan equals the chain to the bit for every window", "[math][contact][lanes]") {
  checkWindows<Sides::AAgainstWall>(200, 150);  // a body against the colliders
  checkWindows<Sides::AMoves>(200, 150);        // against a carrier, the body the pair's a
  checkWindows<Sides::BMoves>(200, 150);        // the body the pair's b
  checkWindows<Sides::Both>(200, 150);          // a pair's sweep: both bodies move
  checkWindows<Sides::Both>(300, 8);            // a manifold's ≤ 8 points (SweepPairColor)
}

TEST_CASE("lanes: the CPU's four-wide collider scan gives the chain's bits and census", "[math][contact][lanes]") {
  // solveAgainstStatic on an x86-64 CPU scans a body's collider contacts four at a time in SSE
  // lanes (contact_solver.h WallScan: their lever arms, normals, targets, normal masses and
  // carried flags in structure-of-arrays form) and applies the first that changes something with
  // the scalar code. Against the scalar sweeps written out (prepareResponse, then
  // sweepColliderContacts until settled): the same velocities and impulses to the bit, and the
  // same census (the warp's scan steps), for fixed and settling solves, windows of 32 and 7, and
  // contact counts past WallScan's 256 (the scalar path).
#if defined(__SSE2__) && defined(__x86_64__)
  CHECK(SMASH_WALL_SWEEP_SSE == 1);  // (else this compares the scalar sweeps with themselves)
#endif
  int compared = 0, changed = 0;
  for (int seed = 1; seed <= 240; ++seed) {
    const SweepCase start = sweepCase(static_cast<std::uint64_t>(seed) * 104729, Sides::AAgainstWall, seed % 8 == 0 ? 320 : 150);
    const int count = static_cast<int>(start.contacts.size());
    for (int iterations : {1, 4, 32})
      for (bool settle : {false, true}) {
        auto run = [&](auto lanesOf, bool written) {
          SweepCase s = start;
          int steps = 0;
          auto lanes = lanesOf;
          lanes.steps = &steps;
          if (!written) {
            solveAgainstStatic(s.moving, s.contacts.data(), count, 0.6f, iterations, settle, 0.5f, lanes);
          } else {
            prepareResponse<float>(s.moving, nullptr, s.contacts.data(), count, true, lanes);
            for (int it = 0; it < iterations; ++it) {
              const SolverBody<float> last = s.moving;
              sweepColliderContacts<float>(s.moving, s.contacts.data(), count, 0.6f, nullptr, lanes);
              if (settle && sweepSettled(last, s.moving, 0.5f)) break;
            }
          }
          return std::make_pair(s, steps);
        };
        INFO("seed " << seed << ", " << count << " contacts, " << iterations << " sweeps, settle " << settle);
        const auto scan32 = run(InOrderLanes<32>{}, false), chain32 = run(InOrderLanes<32>{}, true);
        REQUIRE(sameBits(scan32.first, chain32.first));
        REQUIRE(scan32.second == chain32.second);
        const auto scan7 = run(InOrderLanes<7>{}, false), chain7 = run(InOrderLanes<7>{}, true);
        REQUIRE(sameBits(scan7.first, chain7.first));
        REQUIRE(scan7.second == chain7.second);
        REQUIRE(sameBits(scan32.first, scan7.first));
        ++compared;
        changed += sameBits(scan32.first, start) ? 0 : 1;
      }
  }
  REQUIRE(changed > compared / 2);  // the sweeps did something to compare
}

TEST_CASE("contact normals at edges and corners: within the particle's cone", "[math][contact][edges]") {
  // physics.md §6: a box's +x+y+z corner can be pushed along its faces' inward normals (−x, −y,
  // −z); its +x+y edge along −x and −y. Frames: the body's.
  const glm::dvec3 corner[3] = {{-1, 0, 0}, {0, -1, 0}, {0, 0, -1}};
  const glm::dvec3 cornerAxis = glm::normalize(glm::dvec3(-1, -1, -1));
  const double cornerCos = 1 / std::sqrt(3.0);
  const glm::dvec3 edge[3] = {{-1, 0, 0}, {0, -1, 0}, {0, 0, 0}};
  const glm::dvec3 edgeAxis = glm::normalize(glm::dvec3(-1, -1, 0));
  const double edgeCos = std::sqrt(0.5);
  auto near = [](const glm::dvec3& a, const glm::dvec3& b) { return glm::length(a - b) < 1e-12; };
  // Within the cone: the gradient as it is.
  const glm::dvec3 inside = glm::normalize(glm::dvec3(-1, -2, -1.5));
  CHECK(near(withinPushCone(inside, cornerAxis, cornerCos, corner), inside));
  // A gradient along the other body's diagonal (the mirrored corner above): straight down.
  CHECK(near(withinPushCone(glm::normalize(glm::dvec3(1, -1, 1)), cornerAxis, cornerCos, corner), glm::dvec3(0, -1, 0)));
  // Along an edge's blend of top and side: the face it leans on.
  CHECK(near(withinPushCone(glm::normalize(glm::dvec3(1, -1, 0)), edgeAxis, edgeCos, edge), glm::dvec3(0, -1, 0)));
  // With a component along the edge: the wedge's nearest direction, off the edge's plane.
  CHECK(near(withinPushCone(glm::normalize(glm::dvec3(1, -1, 0.5)), edgeAxis, edgeCos, edge), glm::dvec3(0, -1, 0)));
  // Pointing away from every face (the other body's side normal): undecided, 0.
  CHECK(withinPushCone(glm::dvec3(1, 0, 0), edgeAxis, edgeCos, edge) == glm::dvec3(0.0));
  CHECK(withinPushCone(glm::normalize(glm::dvec3(1, 0, 1)), cornerAxis, cornerCos, corner) == glm::dvec3(0.0));
  // No cone: the gradient as it is.
  const glm::dvec3 none[3] = {};
  CHECK(withinPushCone(glm::dvec3(1, 0, 0), glm::dvec3(0.0), -2.0, none) == glm::dvec3(1, 0, 0));
  // A flat face's particle (shape.h surfacePushCones, math/contact.h faceContactNormal): the
  // other body's gradient where it came through, made unit, when it is more than 30° from the one
  // found at the particle; without a direction, or within 30°, the one found.
  const glm::dvec3 up(0, 1, 0), side(1, 0, 0);
  CHECK(faceContactNormal(side, up) == up);
  CHECK(glm::length(faceContactNormal(side, glm::dvec3(0, 3, 4)) - glm::dvec3(0, 0.6, 0.8)) < 1e-15);
  CHECK(faceContactNormal(side, glm::dvec3(0.0)) == side);
  // Within 30° of the gradient found at the particle: that one is kept.
  const glm::dvec3 near25 = glm::dvec3(std::cos(0.436), std::sin(0.436), 0), near35 = glm::dvec3(std::cos(0.611), std::sin(0.611), 0);
  CHECK(faceContactNormal(side, 2.0 * near25) == side);
  CHECK(glm::length(faceContactNormal(side, 2.0 * near35) - near35) < 1e-15);
  // Undecided points take the others' normal, or the pair's, and count as touching.
  PairContact<double> c[3]{};
  c[0].normal = glm::dvec3(0, 1, 0);
  c[0].phi = 1e-3;
  c[1].phi = 2e-3;
  c[2].phi = -1e-3;
  settleDegenerateNormals(c, 0b110u, 3, [] { return glm::dvec3(1, 0, 0); });
  CHECK(c[1].normal == glm::dvec3(0, 1, 0));
  CHECK(c[2].normal == glm::dvec3(0, 1, 0));
  CHECK(c[0].phi == 1e-3);  // decided: its φ as it was
  CHECK(c[1].phi == 0.0);
  CHECK(c[2].phi == -1e-3);
  settleDegenerateNormals(c, 0b111u, 3, [] { return glm::dvec3(1, 0, 0); });
  CHECK(c[0].normal == glm::dvec3(1, 0, 0));
}

TEST_CASE("pair targets: a contact with restitution 0 is held by its gap, not stopped where it is", "[math][contact][rebound]") {
  // Body a above body b by φ (1 cm, 3 mm, touching, 2 mm in), closing at 1 m/s (faster than the
  // threshold; 1.7 cm a step at 1/60 s). The normal points from b towards a; the target is the
  // wanted normal velocity.
  const double h = 1.0 / 60.0;
  SolverBody<double> a, b;
  a.v = dvec3(0, -1, 0);
  a.invMass = b.invMass = 1.0;
  a.invInertia = b.invInertia = dmat3(1.0);
  for (double phi : {0.01, 0.003, 0.0, -0.002}) {
    PairContact<double> c{};
    c.normal = dvec3(0, 1, 0);
    c.ra = dvec3(0, -0.1, 0);
    c.rb = dvec3(0, 0.1, 0);
    c.phi = phi;
    INFO("phi " << phi);
    // e = 0: no rebound, so the contact may close its gap (−φ/h) and no more; touching, it may not
    // approach (0). Before 2026-11-28 its target was 0 wherever it was: stopped up to the margin away.
    ContactMaterial<double> inelastic{0.0, 0.2, 0.1};
    contactTarget(a, b, a, b, c, inelastic, h, true, false, h);
    CHECK(c.target == Approx(phi > 0 ? -phi / h : 0.0).margin(1e-12));
    // e = 0.5 (the approach, 1 m/s, is past twice the threshold: the whole e): it rebounds at 0.5 m/s.
    ContactMaterial<double> elastic{0.5, 0.2, 0.1};
    contactTarget(a, b, a, b, c, elastic, h, true, false, h);
    CHECK(c.target == Approx(0.5));
    // Slower than the threshold: no rebound whatever e is.
    SolverBody<double> slow = a;
    slow.v = dvec3(0, -0.05, 0);
    contactTarget(slow, b, slow, b, c, elastic, h, true, false, h);
    CHECK(c.target == Approx(phi > 0 ? -phi / h : 0.0).margin(1e-12));
  }
}

namespace {
/// E* − E*_start as limitPushWork measures it: E* = KE + PE(c − h v/2), the potential part from
/// the centres' difference `fromStart`.
template <class T>
T pushGain(const glm::vec<3, T>& v, const glm::vec<3, T>& w, const glm::mat<3, 3, T>& r, const glm::vec<3, T>& startV,
           const glm::vec<3, T>& startW, const glm::mat<3, 3, T>& startR, const glm::vec<3, T>& fromStart, T mass,
           const glm::mat<3, 3, T>& inertia, const glm::vec<3, T>& g, T h) {
  const glm::vec<3, T> wb = glm::transpose(r) * w, wbs = glm::transpose(startR) * startW;
  const T ke = T(0.5) * (mass * glm::dot(v, v) + glm::dot(wb, inertia * wb));
  const T keStart = T(0.5) * (mass * glm::dot(startV, startV) + glm::dot(wbs, inertia * wbs));
  return ke - keStart - mass * glm::dot(g, fromStart - T(0.5) * h * (v - startV));
}
}  // namespace

TEST_CASE("push-out work: a body rising from its bounce pays the lift of its far end", "[math][contact][push]") {
  // A rod rising at 2 m/s after a bounce on one end, spinning so that its far end (0.4 m out)
  // comes down at 4 m/s: the push-out lifted it 5 cm out of the floor, and E* is 0.4 J above
  // the step's start. The centre does not approach the floor — the far end does: the excess
  // comes off the far end's approach (before: nothing was taken from a body rising along the
  // push, and each such lift was a gain; the random rod drops of test_free_rotation.cpp).
  auto check = [](auto one) {
    using T = decltype(one);
    using V = glm::vec<3, T>;
    using M = glm::mat<3, 3, T>;
    const T mass = 1, h = T(1) / T(60);
    const M inertia(glm::vec<3, T>(T(1e-4), 0, 0), V(0, T(0.05), 0), V(0, 0, T(0.05)));
    const M inverse = glm::inverse(inertia), r(T(1));
    const V g(0, T(-9.81), 0), pushed(0, T(0.05), 0), arm(T(0.4), T(-0.01), 0);
    const V startV(0, -3, 0), startW(0, 0, -9), fromStart(0, T(-0.03), 0);
    V v(0, 2, 0), w(0, 0, -15);
    const T before = pushGain(v, w, r, startV, startW, r, fromStart, mass, inertia, g, h);
    const T uBefore = glm::dot(v + glm::cross(w, arm), V(0, 1, 0));
    limitPushWork(v, w, r, pushed, arm, arm, startV, startW, r, fromStart, T(1), mass, inertia, inverse, g, h, V(v), V(w));
    const T after = pushGain(v, w, r, startV, startW, r, fromStart, mass, inertia, g, h);
    const T u = glm::dot(v + glm::cross(w, arm), V(0, 1, 0));
    INFO("E* above the start: " << before << " J before, " << after << " after; far end's approach " << uBefore
                                << " -> " << u << " m/s");
    CHECK(before > T(0.39));
    CHECK(after < T(1e-3));   // the slack: 10⁻⁵ of the energies, 10⁻⁶ m|g| far
    CHECK(after >= T(0));     // no more than the excess
    CHECK(u > uBefore);       // the far end's approach slowed ...
    CHECK(u <= T(0));         // ... never reversed
    CHECK(v.y > T(2));        // and the body pushed up
  };
  check(0.0);
  check(0.0f);
}

TEST_CASE("push-out work: a bounce whose placement the push-out undid pays for it", "[math][contact][push]") {
  // A bounce took a body from 2.2 m/s down to 2.8 m/s up and spun it (the solve's change), and
  // its placement lowered it, which its energy bound credited (limitBounceEnergy); then the
  // push-out lifted it back and higher: E* 0.9 J above the step's start, with nothing approaching
  // along the push (the centre rises, no deepest point given). The solve's change is scaled back
  // until E* is at the start's (before: the excess stayed — a rod turned 2.6 rad by its bounce
  // gained 7.4% in one step).
  auto check = [](auto one) {
    using T = decltype(one);
    using V = glm::vec<3, T>;
    using M = glm::mat<3, 3, T>;
    const T mass = 1, h = T(1) / T(60);
    const M inertia(V(T(0.02), 0, 0), V(0, T(0.05), 0), V(0, 0, T(0.05)));
    const M inverse = glm::inverse(inertia), r(T(1));
    const V g(0, T(-9.81), 0), pushed(0, T(0.15), 0), none(0);
    const V fromV(0, T(-2.2), 0), fromW(0, 0, T(-6));
    const V startV(0, T(-2.04), 0), startW(0, 0, T(-6));
    V v(0, T(2.8), 0), w(T(1), 0, T(9));
    const V fromStart(0, T(-0.17), 0);  // 0.32 m down by the placement, 0.15 m up by the push
    const T before = pushGain(v, w, r, startV, startW, r, fromStart, mass, inertia, g, h);
    limitPushWork(v, w, r, pushed, none, none, startV, startW, r, fromStart, T(1), mass, inertia, inverse, g, h, fromV, fromW);
    const T after = pushGain(v, w, r, startV, startW, r, fromStart, mass, inertia, g, h);
    const T s = (v.y - fromV.y) / (T(2.8) - fromV.y);
    INFO("E* above the start: " << before << " J before, " << after << " after; the change scaled by " << s);
    CHECK(before > T(0.8));
    CHECK(after < T(1e-3));
    CHECK(after >= T(0));
    CHECK(s > T(0));
    CHECK(s < T(1));
    // The whole change scaled alike: ω on the same segment.
    CHECK(w.x == Approx(double(s)).epsilon(1e-4));
    CHECK(w.z == Approx(double(T(-6) + s * T(15))).epsilon(1e-4));
  };
  check(0.0);
  check(0.0f);
}

TEST_CASE("push-out work: never adds energy, never takes more than the excess", "[math][contact][push]") {
  // Random states (poses, velocities, arms, pushes, starts), double and float: limitPushWork only
  // lowers E*, by at most its excess over the start (up to the push's lift against gravity), and
  // stays finite.
  auto run = [](auto one) {
    using T = decltype(one);
    using V = glm::vec<3, T>;
    using M = glm::mat<3, 3, T>;
    Random rng(2026);
    int taken = 0;
    for (int trial = 0; trial < 4000; ++trial) {
      const T mass = T(rng.uniform(0.1, 10.0)), h = T(rng.uniform(0.001, 0.04));
      const V diag = V(rng.uniform3(dvec3(0.01), dvec3(1.0))) * mass;
      const M inertia(V(diag.x, 0, 0), V(0, diag.y, 0), V(0, 0, diag.z));
      const M inverse = glm::inverse(inertia);
      auto rotation = [&] {
        const dvec3 axis = glm::normalize(rng.uniform3(dvec3(-1), dvec3(1)) + dvec3(1e-3, 0, 0));
        return M(glm::dmat3(glm::mat3_cast(glm::angleAxis(rng.uniform(0.0, 6.28), axis))));
      };
      const M r = rotation(), startR = rotation();
      const V g(0, T(-9.81), 0);
      const V pushed = V(rng.uniform3(dvec3(-0.02, -0.01, -0.02), dvec3(0.02, 0.1, 0.02)));
      const V arm = V(rng.uniform3(dvec3(-0.5), dvec3(0.5)));
      const V armStart = V(rng.uniform3(dvec3(-0.5), dvec3(0.5)));
      const V startV = V(rng.uniform3(dvec3(-5), dvec3(5))), startW = V(rng.uniform3(dvec3(-30), dvec3(30)));
      V v = V(rng.uniform3(dvec3(-5), dvec3(5))), w = V(rng.uniform3(dvec3(-30), dvec3(30)));
      const V fromStart = V(rng.uniform3(dvec3(-0.1), dvec3(0.1)));
      const T rise = -mass * glm::dot(g, pushed);
      const T before = pushGain(v, w, r, startV, startW, startR, fromStart, mass, inertia, g, h);
      limitPushWork(v, w, r, pushed, arm, armStart, startV, startW, startR, fromStart, T(1), mass, inertia, inverse, g, h,
                    V(v), V(w));
      const T after = pushGain(v, w, r, startV, startW, startR, fromStart, mass, inertia, g, h);
      // The rounding of the energies' differences: ~ε of the kinetic energies.
      const T wb = glm::length(glm::transpose(r) * w);
      const T scale = mass * (T(25) + glm::dot(v, v)) + glm::dot(diag, V(1)) * (wb * wb + T(900));
      const T tol = T(64) * std::numeric_limits<T>::epsilon() * scale;
      INFO("trial " << trial << ": E* above the start " << before << " -> " << after << ", push's lift " << rise);
      REQUIRE(std::isfinite(double(after)));
      REQUIRE(std::isfinite(double(glm::length(w))));
      CHECK(after <= before + tol);
      CHECK(before - after <= glm::max(glm::min(before, rise), T(0)) + tol);
      taken += after < before - tol;
    }
    CHECK(taken > 400);  // the states exercise it
  };
  run(0.0);
  run(0.0f);
}
