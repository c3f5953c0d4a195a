// sin, cos, atan2 and acos that give the same bits on the host and on the device.
//
// The pipeline is compiled without FMA contraction everywhere (-ffp-contract=off on the CPU
// backends, nvcc --fmad=false on CUDA), so its additions, multiplications, divisions and square
// roots round once, as IEEE 754 says, and a CUDA world steps to the OpenMP world's bits. The
// library's transcendental functions are not so bound: glibc's sinf is documented within about
// 0.56 ulp, CUDA's within 2 ulp, and the two differ for some arguments — the likely reason a
// spinning shape-matched body parted the backends at step 38 (bench/results/nvidia-h200, run 24).
// These are written here from + − × ÷ and √ alone: a range reduction by Cody–Waite (π/2 in three
// parts) and Taylor polynomials in Horner form, in double, within 2–3 ulp of the C library's
// (test_rotation.cpp measures them); the float forms round the double result once.
#pragma once

#include <glm/glm.hpp>

#include "math/hd.h"

namespace smash::same {

namespace detail {

// π/2 in three parts: the first two with their trailing bits zero (31 and 32 significant bits),
// so that k × part is exact for |k| < 2²⁰ and x − k π/2 loses nothing to those products for
// |x| < 10⁶ (the pipeline's angles are a few radians); the third, the rest, rounds its product.
constexpr double kHalfPi1 = 1.5707963267341256e+00;  // the first 33 bits of π/2
constexpr double kHalfPi2 = 6.077100506303966e-11;   // the next 33
constexpr double kHalfPi3 = 2.0222662487959506e-21;  // the rest, to double
constexpr double kTwoOverPi = 6.3661977236758138e-01;
constexpr double kPi = 3.1415926535897931e+00;
constexpr double kHalfPi = 1.5707963267948966e+00;
constexpr double kSixthPi = 5.2359877559829893e-01;
constexpr double kSqrt3 = 1.7320508075688772e+00;
constexpr double kTanTwelfthPi = 2.6794919243112270e-01;  // tan(π/12) = 2 − √3

/// sin r for |r| ≤ π/4 (+ rounding): the series to r¹⁷; the first term left out, r¹⁹/19!, is
/// below 1.1·10⁻¹⁹ |r| there. ±0 stays ±0.
SMASH_HD double sinReduced(double r) {
  const double r2 = r * r;
  double p = -1.0 / 355687428096000.0;    // −1/17!
  p = p * r2 + 1.0 / 1307674368000.0;     // 1/15!
  p = p * r2 - 1.0 / 6227020800.0;        // −1/13!
  p = p * r2 + 1.0 / 39916800.0;          // 1/11!
  p = p * r2 - 1.0 / 362880.0;            // −1/9!
  p = p * r2 + 1.0 / 5040.0;              // 1/7!
  p = p * r2 - 1.0 / 120.0;               // −1/5!
  p = p * r2 + 1.0 / 6.0;                 // 1/3!
  return r == 0 ? r : r - r * r2 * p;
}

/// cos r for |r| ≤ π/4 (+ rounding): the series to r¹⁸ (r²⁰/20! < 10⁻²⁰ there).
SMASH_HD double cosReduced(double r) {
  const double r2 = r * r;
  double p = 1.0 / 6402373705728000.0;    // 1/18!
  p = p * r2 - 1.0 / 20922789888000.0;    // −1/16!
  p = p * r2 + 1.0 / 87178291200.0;       // 1/14!
  p = p * r2 - 1.0 / 479001600.0;         // −1/12!
  p = p * r2 + 1.0 / 3628800.0;           // 1/10!
  p = p * r2 - 1.0 / 40320.0;             // −1/8!
  p = p * r2 + 1.0 / 720.0;               // 1/6!
  p = p * r2 - 1.0 / 24.0;                // −1/4!
  p = p * r2 + 0.5;                       // 1/2!
  return 1.0 - r2 * p;
}

/// x = k π/2 + r with |r| ≤ π/4 (+ rounding); k mod 4 in `quadrant`. k is x (2/π) rounded half
/// away from zero through an integer, which every backend computes exactly. A non-finite x gives
/// NaN; beyond |x| ~ 10⁶ the reduction loses accuracy (not bits: the same on every backend).
SMASH_HD double reduced(double x, int& quadrant) {
  const double t = x * kTwoOverPi;
  quadrant = 0;
  if (!(t > -1e15 && t < 1e15)) return x - x;  // NaN for ±∞ and NaN; a meaningless angle else
  const long long ki = t >= 0 ? static_cast<long long>(t + 0.5) : -static_cast<long long>(-t + 0.5);
  const double k = static_cast<double>(ki);
  quadrant = static_cast<int>(ki & 3);
  return ((x - k * kHalfPi1) - k * kHalfPi2) - k * kHalfPi3;
}

/// atan t for 0 ≤ t ≤ 1: above tan(π/12), atan t = π/6 + atan((√3 t − 1)/(t + √3)), whose
/// argument is within ±tan(π/12); there the series to t²⁹ (t³¹/31 < 2.3·10⁻¹⁹ t).
SMASH_HD double atanUnit(double t) {
  double offset = 0.0;
  if (t > kTanTwelfthPi) {
    t = (kSqrt3 * t - 1.0) / (t + kSqrt3);
    offset = kSixthPi;
  }
  const double t2 = t * t;
  double p = 1.0 / 29.0;
  for (int n = 27; n >= 3; n -= 2) p = (n % 4 == 1 ? 1.0 : -1.0) / static_cast<double>(n) + t2 * p;
  // p now holds −1/3 + t²/5 − … (the sign of each term by n mod 4: 1/5, 1/9, … positive).
  return offset + (t + t * t2 * p);
}

}  // namespace detail

/// sin x, within a few ulp of double, the same bits on every backend (|x| < 10⁶).
SMASH_HD double sin(double x) {
  int q = 0;
  const double r = detail::reduced(x, q);
  switch (q) {
    case 0: return detail::sinReduced(r);
    case 1: return detail::cosReduced(r);
    case 2: return -detail::sinReduced(r);
    default: return -detail::cosReduced(r);
  }
}

/// cos x, within a few ulp of double, the same bits on every backend (|x| < 10⁶).
SMASH_HD double cos(double x) {
  int q = 0;
  const double r = detail::reduced(x, q);
  switch (q) {
    case 0: return detail::cosReduced(r);
    case 1: return -detail::sinReduced(r);
    case 2: return -detail::cosReduced(r);
    default: return detail::sinReduced(r);
  }
}

/// The float forms: the double result rounded once.
SMASH_HD float sin(float x) { return static_cast<float>(sin(static_cast<double>(x))); }
SMASH_HD float cos(float x) { return static_cast<float>(cos(static_cast<double>(x))); }

/// atan2(y, x) in [−π, π], the C library's quadrants except at signed zeros (the pipeline never
/// has them): y = ±0 with x < 0 gives +π, and y = x = 0 gives 0.
SMASH_HD double atan2(double y, double x) {
  const double ay = y < 0 ? -y : y, ax = x < 0 ? -x : x;
  if (ay == 0 && ax == 0) return 0.0;
  // The angle of (ax, ay) in [0, π/2], from the ratio of the smaller to the larger.
  const double a = ay <= ax ? detail::atanUnit(ay / ax) : detail::kHalfPi - detail::atanUnit(ax / ay);
  const double folded = x < 0 ? detail::kPi - a : a;
  return y < 0 ? -folded : folded;
}

/// acos c for c in [−1, 1] (clamped), as the angle of (c, √((1 − c)(1 + c))).
SMASH_HD double acos(double c) {
  c = c < -1.0 ? -1.0 : c > 1.0 ? 1.0 : c;
  return atan2(glm::sqrt((1.0 - c) * (1.0 + c)), c);
}

}  // namespace smash::same
