// Rotation extraction torture suite (physics.md §2, DESIGN "testing tiers" 1). The oracle is Eigen's
// JacobiSVD: the optimal proper rotation is U diag(1, 1, d) Vᵀ with d = sign(det(U Vᵀ)), and the
// optimal value of tr(Rᵀ A) is σ1 + σ2 + d σ3.
#include <Eigen/Dense>
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "core/random.h"
#include "math/rotation.h"
#include "test_util.h"

using namespace smash;
using glm::dmat3;
using glm::dvec3;

namespace {

Eigen::Matrix3d toEigen(const dmat3& m) {
  Eigen::Matrix3d e;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) e(r, c) = m[c][r];
  return e;
}

dmat3 fromEigen(const Eigen::Matrix3d& e) {
  dmat3 m;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) m[c][r] = e(r, c);
  return m;
}

struct SvdOracle {
  dmat3 rotation;
  double optimum;  // max over proper rotations of tr(Rᵀ A)
  double gap;      // σ2 + d σ3: how well determined the optimum is
};

SvdOracle svdOracle(const dmat3& A) {
  Eigen::JacobiSVD<Eigen::Matrix3d> svd(toEigen(A), Eigen::ComputeFullU | Eigen::ComputeFullV);
  Eigen::Matrix3d U = svd.matrixU(), V = svd.matrixV();
  double d = (U * V.transpose()).determinant() < 0 ? -1.0 : 1.0;
  Eigen::Vector3d s = svd.singularValues();
  Eigen::Matrix3d D = Eigen::Matrix3d::Identity();
  D(2, 2) = d;
  return {fromEigen(U * D * V.transpose()), s(0) + s(1) + d * s(2), s(1) + d * s(2)};
}

double traceRtA(const dmat3& R, const dmat3& A) {
  double t = 0;
  for (int c = 0; c < 3; ++c) t += glm::dot(R[c], A[c]);
  return t;
}

double frobenius(const dmat3& m) {
  double s = 0;
  for (int c = 0; c < 3; ++c) s += glm::dot(m[c], m[c]);
  return std::sqrt(s);
}

dmat3 randomMatrix(Random& rng) {
  dmat3 m;
  for (int c = 0; c < 3; ++c)
    for (int r = 0; r < 3; ++r) m[c][r] = rng.uniform(-1, 1);
  return m;
}

dmat3 randomRotation(Random& rng) {
  const dvec3 xyz = rng.uniform3(-1, 1);  // fixed draw order (Random::uniform3): z, y, x, then w
  glm::dquat q(rng.uniform(-1, 1), xyz.x, xyz.y, xyz.z);
  return rotationMatrix(q);
}

// Every output must be a proper rotation and optimal; near-unique optima must match the SVD.
void checkExtraction(const dmat3& A, const dmat3& warm, const char* label) {
  INFO(label);
  dmat3 R = optimalRotation(A, warm);
  for (int c = 0; c < 3; ++c)
    for (int r = 0; r < 3; ++r) REQUIRE(std::isfinite(R[c][r]));
  REQUIRE(glm::determinant(R) == Approx(1.0).margin(1e-12));
  REQUIRE(frobenius(glm::transpose(R) * R - dmat3(1.0)) < 1e-12);
  SvdOracle o = svdOracle(A);
  double scale = frobenius(A);
  REQUIRE(traceRtA(R, A) >= o.optimum - 1e-11 * scale);
  if (o.gap > 1e-3 * scale) REQUIRE(frobenius(R - o.rotation) < 1e-8);
}

}  // namespace

TEST_CASE("rotation: identity and near identity", "[math][rotation]") {
  checkExtraction(dmat3(1.0), dmat3(1.0), "identity");
  REQUIRE(frobenius(optimalRotation(dmat3(1.0)) - dmat3(1.0)) < 1e-14);
  Random rng(7);
  for (int k = 0; k < 100; ++k) {
    dmat3 A = dmat3(1.0) + 1e-8 * randomMatrix(rng);
    checkExtraction(A, dmat3(1.0), "near identity");
  }
}

TEST_CASE("rotation: exact rotations are recovered from any warm start", "[math][rotation]") {
  Random rng(11);
  for (int k = 0; k < 1000; ++k) {
    dmat3 R0 = randomRotation(rng);
    dmat3 warm = randomRotation(rng);
    dmat3 R = optimalRotation(R0 * (0.1 + rng.uniform()), warm);
    REQUIRE(frobenius(R - R0) < 1e-10);
  }
}

TEST_CASE("rotation: 180 degree turns", "[math][rotation]") {
  // Symmetric rotation matrices: a fixed point of Müller-style iterations started at identity.
  Random rng(13);
  std::vector<dvec3> axes = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 0}, {1, -2, 3}};
  for (int k = 0; k < 50; ++k) axes.push_back(rng.uniform3(-1, 1));
  for (dvec3 axis : axes) {
    dmat3 R0 = rotationMatrix(glm::angleAxis(M_PI, glm::normalize(axis)));
    dmat3 R = optimalRotation(R0, dmat3(1.0));
    REQUIRE(frobenius(R - R0) < 1e-10);
    checkExtraction(R0, dmat3(1.0), "180 degrees");
  }
}

TEST_CASE("rotation: rank 2, 1 and 0", "[math][rotation]") {
  Random rng(17);
  for (int k = 0; k < 2000; ++k) {
    dmat3 U = randomRotation(rng), V = randomRotation(rng);
    double s1 = rng.uniform(0.1, 10), s2 = rng.uniform(0.1, 10);
    dmat3 rank2 = U * dmat3(dvec3(s1, 0, 0), dvec3(0, s2, 0), dvec3(0.0)) * glm::transpose(V);
    dmat3 rank1 = U * dmat3(dvec3(s1, 0, 0), dvec3(0.0), dvec3(0.0)) * glm::transpose(V);
    dmat3 warm = randomRotation(rng);
    checkExtraction(rank2, warm, "rank 2");
    checkExtraction(rank1, warm, "rank 1");
  }
  // Rank 0: no information, keep the warm start.
  Random rng2(19);
  dmat3 warm = randomRotation(rng2);
  REQUIRE(frobenius(optimalRotation(dmat3(0.0), warm) - warm) == 0.0);
}

TEST_CASE("rotation: rank-deficient input keeps the warm start where it is free to", "[math][rotation]") {
  // Collinear particles: A = a bᵀ only fixes where b goes; the twist about it is free, and the
  // extraction must not invent one (no spurious spin of thin shapes).
  Random rng(23);
  for (int k = 0; k < 200; ++k) {
    dmat3 warm = randomRotation(rng);
    dvec3 b = glm::normalize(rng.uniform3(-1, 1));
    dmat3 A = outer(warm * b, b);  // the line is exactly where warm puts it
    REQUIRE(frobenius(optimalRotation(A, warm) - warm) < 1e-10);
  }
}

TEST_CASE("rotation: reflections give the best proper rotation", "[math][rotation]") {
  Random rng(29);
  for (int k = 0; k < 2000; ++k) {
    dmat3 R0 = randomRotation(rng);
    dmat3 reflect(1.0);
    reflect[2][2] = -1;
    dmat3 A = R0 * reflect * dmat3(dvec3(3, 0, 0), dvec3(0, 2, 0), dvec3(0, 0, 1)) * randomRotation(rng);
    REQUIRE(glm::determinant(A) < 0);
    checkExtraction(A, randomRotation(rng), "reflection");
  }
  checkExtraction(-dmat3(1.0), dmat3(1.0), "point reflection");
}

TEST_CASE("rotation: scales from 1e-4 to 1e4", "[math][rotation]") {
  Random rng(31);
  for (double scale : {1e-4, 1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3, 1e4})
    for (int k = 0; k < 500; ++k) {
      const dmat3 R = randomRotation(rng);  // draws in a fixed order (see Random::uniform3)
      checkExtraction(scale * randomMatrix(rng), R, "scaled");
    }
}

TEST_CASE("rotation: 10^5 seeded random matrices", "[math][rotation][torture]") {
  Random rng(20261121);
  for (int k = 0; k < 100000; ++k) {
    double scale = std::pow(10.0, rng.uniform(-4, 4));
    dmat3 warm = (k % 2) ? randomRotation(rng) : dmat3(1.0);
    checkExtraction(scale * randomMatrix(rng), warm, "random");
  }
}

TEST_CASE("rotation: float instantiation stays a rotation", "[math][rotation][float]") {
  Random rng(37);
  for (int k = 0; k < 20000; ++k) {
    const dmat3 M = randomMatrix(rng);  // draws in a fixed order (see Random::uniform3)
    dmat3 Ad = std::pow(10.0, rng.uniform(-4, 4)) * M;
    glm::mat3 A(Ad);
    glm::mat3 R = optimalRotation(A, glm::mat3(1.0f));
    REQUIRE(glm::determinant(R) == Approx(1.0f).margin(1e-5));
    glm::mat3 E = glm::transpose(R) * R - glm::mat3(1.0f);
    for (int c = 0; c < 3; ++c)
      for (int r = 0; r < 3; ++r) REQUIRE(std::fabs(E[c][r]) < 1e-5f);
    // Optimal to float precision.
    SvdOracle o = svdOracle(Ad);
    REQUIRE(traceRtA(dmat3(R), Ad) >= o.optimum - 1e-5 * frobenius(Ad));
  }
}

TEST_CASE("rotation: the default fit minimises the matching objective", "[math][rotation][physics]") {
  // physics.md §2 note: R = rotation part of A_pq minimises Σ m_i ‖c + R r_i − y_i‖²; the seeds'
  // rotation part of A_pq A_qq⁻¹ does not when the motion is not rigid.
  Random rng(41);
  int seedsWorse = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<dvec3> r(40), y(40);
    std::vector<double> m(40);
    dvec3 centre(0.0);
    double M = 0;
    for (int i = 0; i < 40; ++i) {
      r[i] = rng.uniform3(dvec3(-1, -0.3, -2), dvec3(1, 0.3, 2));
      m[i] = rng.uniform(0.5, 2);
      centre += m[i] * r[i];
      M += m[i];
    }
    centre /= M;
    for (auto& ri : r) ri -= centre;
    const dmat3 D = randomMatrix(rng);  // draws in a fixed order (see Random::uniform3)
    dmat3 F = randomRotation(rng) * (dmat3(1.0) + 0.4 * D);  // non-rigid
    dvec3 t = rng.uniform3(-5, 5);
    dvec3 c(0.0);
    for (int i = 0; i < 40; ++i) {
      y[i] = t + F * r[i] + 0.05 * rng.uniform3(-1, 1);
      c += m[i] * y[i];
    }
    c /= M;
    dmat3 Apq(0.0), Aqq(0.0);
    for (int i = 0; i < 40; ++i) {
      Apq += m[i] * outer(y[i] - c, r[i]);
      Aqq += m[i] * outer(r[i], r[i]);
    }
    auto objective = [&](const dmat3& R) {
      double e = 0;
      for (int i = 0; i < 40; ++i) {
        dvec3 d = c + R * r[i] - y[i];
        e += m[i] * glm::dot(d, d);
      }
      return e;
    };
    dmat3 Rdefault = optimalRotation(Apq);
    dmat3 Rseeds = optimalRotation(Apq * glm::inverse(Aqq));
    double best = objective(Rdefault);
    REQUIRE(best <= objective(Rseeds) + 1e-9 * best);
    if (objective(Rseeds) > best * (1 + 1e-6)) ++seedsWorse;
    for (int k = 0; k < 20; ++k) {  // no nearby or random rotation does better
      dvec3 axis = rng.uniform3(-1, 1);
      dmat3 nearby = Rdefault * rotationMatrix(glm::angleAxis(rng.uniform(-0.05, 0.05), glm::normalize(axis)));
      REQUIRE(best <= objective(nearby) + 1e-9 * best);
      REQUIRE(best <= objective(randomRotation(rng)) + 1e-9 * best);
    }
  }
  REQUIRE(seedsWorse > 100);  // and the difference is real, not a tie
}

TEST_CASE("quaternion helpers", "[math][rotation]") {
  SECTION("integration of a constant spin matches the exact rotation to second order") {
    dvec3 omega(0.3, -1.2, 0.7);
    for (double h : {1e-2, 5e-3}) {
      glm::dquat q(1, 0, 0, 0);
      for (int k = 0; k < int(std::lround(1.0 / h)); ++k) q = integrateOrientation(q, omega, h);
      dmat3 exact = rotationMatrix(glm::angleAxis(glm::length(omega), glm::normalize(omega)));
      double err = frobenius(rotationMatrix(q) - exact);
      REQUIRE(err < 2 * h);  // first-order method: error O(h) over unit time
      REQUIRE(glm::length(q) == Approx(1.0).margin(1e-14));
    }
  }
  SECTION("skew is the cross product") {
    dvec3 a(1, 2, 3), b(-4, 0.5, 2);
    REQUIRE(glm::length(skew(a) * b - glm::cross(a, b)) < 1e-15);
  }
  SECTION("rotation matrix round trip") {
    Random rng(43);
    for (int k = 0; k < 1000; ++k) {
      dmat3 R = randomRotation(rng);
      REQUIRE(frobenius(rotationMatrix(quaternionFromRotation(R)) - R) < 1e-12);
    }
  }
  SECTION("pseudo-inverse of a singular inertia") {
    dmat3 I(dvec3(2, 0, 0), dvec3(0, 2, 0), dvec3(0, 0, 0));  // collinear shape along z
    dmat3 P = symmetricPseudoInverse(I, 1e-10);
    REQUIRE(frobenius(P - dmat3(dvec3(0.5, 0, 0), dvec3(0, 0.5, 0), dvec3(0.0))) < 1e-14);
    Random rng(47);
    dmat3 Q = randomRotation(rng);
    dmat3 S = Q * dmat3(dvec3(3, 0, 0), dvec3(0, 1, 0), dvec3(0, 0, 0.25)) * glm::transpose(Q);
    REQUIRE(frobenius(symmetricPseudoInverse(S, 1e-10) * S - dmat3(1.0)) < 1e-12);
  }
}

TEST_CASE("same_trig: sin, cos, atan2 and acos from + - x / and sqrt, near the C library's", "[rotation][trig]") {
  // The pipeline's trigonometry (rotation.h) is written from IEEE operations alone so that the
  // device computes the host's bits (test_device_math.cu checks those on a GPU); here, how far it
  // is from the C library's (glibc, itself within about 1 ulp): measured, sin and cos (double)
  // within 1 ulp up to |x| = 40 (the pipeline's angles are a few radians) and 2 ulp at 10⁴, where
  // the reduction's last part rounds; atan2 and acos within 3 ulp; the float forms within 1 ulp
  // (they round the double result once).
  const auto ulps = [](double a, double b) {
    std::int64_t x = 0, y = 0;
    std::memcpy(&x, &a, sizeof a);
    std::memcpy(&y, &b, sizeof b);
    return x > y ? x - y : y - x;
  };
  const auto ulpsF = [](float a, float b) {
    std::int32_t x = 0, y = 0;
    std::memcpy(&x, &a, sizeof a);
    std::memcpy(&y, &b, sizeof b);
    return x > y ? std::int64_t(x) - y : std::int64_t(y) - x;
  };
  std::mt19937_64 rng(20261127);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::int64_t worstSin = 0, worstCos = 0, worstSinNear = 0, worstCosNear = 0, worstSinF = 0, worstCosF = 0;
  double worstAtan2 = 0, worstAcos = 0;  // relative
  for (int i = 0; i < 200000; ++i) {
    const double scale = i % 4 == 0 ? 1e-3 : i % 4 == 1 ? 1.0 : i % 4 == 2 ? 40.0 : 1e4;
    const double x = scale * unit(rng);
    // Away from sin's and cos's zeros (where a relative error is an absolute one over a tiny value).
    std::int64_t& sinWorst = std::fabs(x) <= 40 ? worstSinNear : worstSin;
    std::int64_t& cosWorst = std::fabs(x) <= 40 ? worstCosNear : worstCos;
    if (std::fabs(std::sin(x)) > 1e-3) sinWorst = std::max(sinWorst, ulps(same::sin(x), std::sin(x)));
    if (std::fabs(std::cos(x)) > 1e-3) cosWorst = std::max(cosWorst, ulps(same::cos(x), std::cos(x)));
    const float xf = static_cast<float>(x);
    if (std::fabs(std::sin(xf)) > 1e-3f) worstSinF = std::max(worstSinF, ulpsF(same::sin(xf), std::sin(xf)));
    if (std::fabs(std::cos(xf)) > 1e-3f) worstCosF = std::max(worstCosF, ulpsF(same::cos(xf), std::cos(xf)));
    const double y = (i % 2 ? 1e3 : 1.0) * unit(rng), z = unit(rng);
    worstAtan2 = std::max(worstAtan2, std::fabs(same::atan2(y, z) - std::atan2(y, z)) / std::fabs(std::atan2(y, z)));
    const double c = unit(rng);
    worstAcos = std::max(worstAcos, std::fabs(same::acos(c) - std::acos(c)) / std::acos(c));
  }
  INFO("up to 40: sin " << worstSinNear << " ulp, cos " << worstCosNear << "; beyond: sin " << worstSin << ", cos "
                         << worstCos << "; float sin " << worstSinF << ", float cos " << worstCosF << "; atan2 "
                         << worstAtan2 << " relative, acos " << worstAcos);
  CHECK(worstSinNear <= 1);
  CHECK(worstCosNear <= 1);
  CHECK(worstSin <= 2);
  CHECK(worstCos <= 2);
  CHECK(worstSinF <= 1);
  CHECK(worstCosF <= 1);
  CHECK(worstAtan2 <= 8 * 2.220446049250313e-16);
  CHECK(worstAcos <= 8 * 2.220446049250313e-16);
  // The exact points and the quadrants.
  CHECK(same::sin(0.0) == 0.0);
  CHECK(std::signbit(same::sin(-0.0)));
  CHECK(same::cos(0.0) == 1.0);
  CHECK(same::acos(1.0) == 0.0);
  CHECK(same::acos(-1.0) == std::acos(-1.0));
  CHECK(same::acos(2.0) == 0.0);  // clamped
  for (double a : {-3.0, -2.0, -1.0, -0.5, 0.5, 1.0, 2.0, 3.0})
    CHECK(std::fabs(same::atan2(std::sin(a), std::cos(a)) - a) < 1e-15);
  CHECK(same::atan2(0.0, -1.0) == std::atan2(0.0, -1.0));
  // Non-finite angles give NaN, raising the invalid exception as the C library's sin(∞) does: not
  // under the sanitizer run's floating-point traps (test_main.cpp), which are held off here.
  bool nanForInfinity = false, nanForNan = false;
  {
    test::FpTrapsOff nanOnPurpose;
    nanForInfinity = std::isnan(same::sin(std::numeric_limits<double>::infinity()));
    nanForNan = std::isnan(same::cos(std::numeric_limits<double>::quiet_NaN()));
  }
  CHECK(nanForInfinity);
  CHECK(nanForNan);
}
