// pairSweep (contact_solver.h) for four pairs at once, one pair to each lane of an SSE register:
// the CPU backends' contact rounds (SweepPairContacts). The pairs of a Jacobi round are
// independent (mass splitting: each reads the round's starting velocities and writes only its
// own impulses and contacts), so four of them share one chain of instructions instead of four
// latency-bound chains of one. Each lane does what the scalar sweep does to its pair, operation
// for operation in the same order (glm's dot, cross and matrix product as glm evaluates them, its
// max as (x < y) ? y : x, no FMA: the CPU builds compile with -ffp-contract=off), and a lane with
// nothing to do (past its pair's contacts, a contact with normalMass 0, or one that carried nothing
// and still carries nothing: updateContact's early return) keeps its values by
// selection, not by adding zeros (x + 0 turns −0 into +0): the same bits as pairSweep
// (tests/test_world.cpp compares them; the golden hashes of tests/test_determinism.cpp hold).
//
// x86-64 host code only (SMASH_CONTACT_LANES); nvcc and other CPUs sweep pair by pair.
#pragma once

#include "math/contact_solver.h"

#if defined(__SSE2__) && defined(__x86_64__) && !defined(__CUDACC__)
#define SMASH_CONTACT_LANES 1
#include <emmintrin.h>

#include <cstddef>

namespace smash::lanes {

/// A vector of the four lanes: x, y and z each in a register.
struct V3x4 {
  __m128 x, y, z;
};
/// A 3×3 matrix of the four lanes, m[column][row] as glm's.
struct M3x4 {
  __m128 m[3][3];
};

inline __m128 select(__m128 mask, __m128 a, __m128 b) { return _mm_or_ps(_mm_and_ps(mask, a), _mm_andnot_ps(mask, b)); }
inline V3x4 select(__m128 mask, const V3x4& a, const V3x4& b) {
  return {select(mask, a.x, b.x), select(mask, a.y, b.y), select(mask, a.z, b.z)};
}
inline V3x4 add(const V3x4& a, const V3x4& b) { return {_mm_add_ps(a.x, b.x), _mm_add_ps(a.y, b.y), _mm_add_ps(a.z, b.z)}; }
inline V3x4 sub(const V3x4& a, const V3x4& b) { return {_mm_sub_ps(a.x, b.x), _mm_sub_ps(a.y, b.y), _mm_sub_ps(a.z, b.z)}; }
inline V3x4 scale(__m128 s, const V3x4& v) { return {_mm_mul_ps(s, v.x), _mm_mul_ps(s, v.y), _mm_mul_ps(s, v.z)}; }
/// glm::dot: (a.x b.x + a.y b.y) + a.z b.z.
inline __m128 dot(const V3x4& a, const V3x4& b) {
  return _mm_add_ps(_mm_add_ps(_mm_mul_ps(a.x, b.x), _mm_mul_ps(a.y, b.y)), _mm_mul_ps(a.z, b.z));
}
/// glm::cross.
inline V3x4 cross(const V3x4& a, const V3x4& b) {
  return {_mm_sub_ps(_mm_mul_ps(a.y, b.z), _mm_mul_ps(b.y, a.z)), _mm_sub_ps(_mm_mul_ps(a.z, b.x), _mm_mul_ps(b.z, a.x)),
          _mm_sub_ps(_mm_mul_ps(a.x, b.y), _mm_mul_ps(b.x, a.y))};
}
/// glm's mat3 × vec3: row i is (m[0][i] v.x + m[1][i] v.y) + m[2][i] v.z.
inline V3x4 mul(const M3x4& m, const V3x4& v) {
  auto row = [&](int i) {
    return _mm_add_ps(_mm_add_ps(_mm_mul_ps(m.m[0][i], v.x), _mm_mul_ps(m.m[1][i], v.y)), _mm_mul_ps(m.m[2][i], v.z));
  };
  return {row(0), row(1), row(2)};
}
/// responseTimes: K d for the symmetric response (xx, yy, zz, xy, xz, yz).
inline V3x4 responseTimes(const __m128* k, const V3x4& d) {
  return {_mm_add_ps(_mm_add_ps(_mm_mul_ps(k[0], d.x), _mm_mul_ps(k[3], d.y)), _mm_mul_ps(k[4], d.z)),
          _mm_add_ps(_mm_add_ps(_mm_mul_ps(k[3], d.x), _mm_mul_ps(k[1], d.y)), _mm_mul_ps(k[5], d.z)),
          _mm_add_ps(_mm_add_ps(_mm_mul_ps(k[4], d.x), _mm_mul_ps(k[5], d.y)), _mm_mul_ps(k[2], d.z))};
}
/// glm::max(x, y) = (x < y) ? y : x (which keeps x = −0 against y = +0, as _mm_max_ps does not).
inline __m128 maxGlm(__m128 x, __m128 y) { return select(_mm_cmplt_ps(x, y), y, x); }
/// quotient (contact_solver.h): x itself where x is ±0, else x / d.
inline __m128 quotient(__m128 x, __m128 d) {
  return select(_mm_cmpeq_ps(x, _mm_setzero_ps()), x, _mm_div_ps(x, d));
}
inline __m128 length(const V3x4& v) { return _mm_sqrt_ps(dot(v, v)); }
/// The four lanes of v as four vectors.
inline void unpack(const V3x4& v, Vec3<float> (&out)[4]) {
  alignas(16) float x[4], y[4], z[4];
  _mm_store_ps(x, v.x);
  _mm_store_ps(y, v.y);
  _mm_store_ps(z, v.z);
  for (int l = 0; l < 4; ++l) out[l] = Vec3<float>(x[l], y[l], z[l]);
}

/// Four 16-byte rows (one per lane, unaligned) as four registers of one field each.
inline void loadTransposed(const float* const lane[4], int at, __m128& f0, __m128& f1, __m128& f2, __m128& f3) {
  f0 = _mm_loadu_ps(lane[0] + at);
  f1 = _mm_loadu_ps(lane[1] + at);
  f2 = _mm_loadu_ps(lane[2] + at);
  f3 = _mm_loadu_ps(lane[3] + at);
  _MM_TRANSPOSE4_PS(f0, f1, f2, f3);
}
inline void storeTransposed(float* const lane[4], int at, __m128 f0, __m128 f1, __m128 f2, __m128 f3) {
  _MM_TRANSPOSE4_PS(f0, f1, f2, f3);
  _mm_storeu_ps(lane[0] + at, f0);
  _mm_storeu_ps(lane[1] + at, f1);
  _mm_storeu_ps(lane[2] + at, f2);
  _mm_storeu_ps(lane[3] + at, f3);
}

// The float layouts the transposes read (the ints particle and feature travel as their bits).
static_assert(sizeof(PairContact<float>) == 24 * sizeof(float), "PairContact<float>: 24 floats");
static_assert(offsetof(PairContact<float>, ra) == 0 && offsetof(PairContact<float>, rb) == 12 &&
                  offsetof(PairContact<float>, normal) == 24 && offsetof(PairContact<float>, target) == 40 &&
                  offsetof(PairContact<float>, lambdaNormal) == 44 && offsetof(PairContact<float>, lambdaTangent) == 48 &&
                  offsetof(PairContact<float>, response) == 68 && offsetof(PairContact<float>, normalMass) == 92,
              "PairContact<float>: the field offsets the lanes read");
static_assert(sizeof(SolverBody<float>) == 16 * sizeof(float) && offsetof(SolverBody<float>, w) == 12 &&
                  offsetof(SolverBody<float>, invMass) == 24 && offsetof(SolverBody<float>, invInertia) == 28,
              "SolverBody<float>: the field offsets the lanes read");

/// pairSweep, `sweeps` times, for up to four pairs: lane l sweeps `count[l]` contacts at
/// `contacts[l]` (null for a lane with no pair) between `a[l]` and `b[l]` with friction
/// `friction[l]`, adding its impulses to `onA[l]` and `onB[l]` and storing the contacts'
/// accumulated impulses — the same bits as `for (s < sweeps) pairSweep(a, b, contacts[l],
/// count[l], friction[l], onA[l], onB[l])` on copies a, b of the bodies. The velocities after the
/// sweeps go to `aOut`, `bOut` where given (the Gauss–Seidel rounds' colours, whose pairs share no
/// awake body: each lane's bodies written back); the Jacobi rounds use only the impulses.
inline void pairSweeps(const SolverBody<float> a[4], const SolverBody<float> b[4], PairContact<float>* const contacts[4],
                       const int count[4], const float friction[4], int sweeps, PairImpulse<float> onA[4],
                       PairImpulse<float> onB[4], SolverBody<float>* aOut = nullptr, SolverBody<float>* bOut = nullptr) {
  // A lane past its contacts reads and writes this contact, whose normalMass 0 leaves it idle.
  alignas(16) float idle[24] = {};
  const __m128 zero = _mm_setzero_ps();
  auto bodies = [&](const SolverBody<float>* s, V3x4& v, V3x4& w, __m128& invMass, M3x4& invInertia) {
    const float* lane[4] = {&s[0].v.x, &s[1].v.x, &s[2].v.x, &s[3].v.x};
    __m128 f[16];
    for (int at = 0; at < 16; at += 4) loadTransposed(lane, at, f[at], f[at + 1], f[at + 2], f[at + 3]);
    v = {f[0], f[1], f[2]};
    w = {f[3], f[4], f[5]};
    invMass = f[6];
    for (int c = 0; c < 3; ++c)
      for (int r = 0; r < 3; ++r) invInertia.m[c][r] = f[7 + 3 * c + r];
  };
  V3x4 av, aw, bv, bw;
  __m128 aInvMass, bInvMass;
  M3x4 aInvInertia, bInvInertia;
  bodies(a, av, aw, aInvMass, aInvInertia);
  bodies(b, bv, bw, bInvMass, bInvInertia);
  auto impulses = [&](const PairImpulse<float>* s, V3x4& linear, V3x4& angular) {
    linear = {_mm_setr_ps(s[0].linear.x, s[1].linear.x, s[2].linear.x, s[3].linear.x),
              _mm_setr_ps(s[0].linear.y, s[1].linear.y, s[2].linear.y, s[3].linear.y),
              _mm_setr_ps(s[0].linear.z, s[1].linear.z, s[2].linear.z, s[3].linear.z)};
    angular = {_mm_setr_ps(s[0].angular.x, s[1].angular.x, s[2].angular.x, s[3].angular.x),
               _mm_setr_ps(s[0].angular.y, s[1].angular.y, s[2].angular.y, s[3].angular.y),
               _mm_setr_ps(s[0].angular.z, s[1].angular.z, s[2].angular.z, s[3].angular.z)};
  };
  V3x4 onALinear, onAAngular, onBLinear, onBAngular;
  impulses(onA, onALinear, onAAngular);
  impulses(onB, onBLinear, onBAngular);
  const __m128 mu = _mm_setr_ps(friction[0], friction[1], friction[2], friction[3]);
  const __m128 vtSmall = _mm_set1_ps(ScalarTraits<float>::epsilon * 1e-4f);  // updateContact's
  const __m128 tiny = _mm_set1_ps(ScalarTraits<float>::tiny);
  const __m128 one = _mm_set1_ps(1.0f);
  int most = 0;
  for (int l = 0; l < 4; ++l) most = count[l] > most ? count[l] : most;

  for (int sweep = 0; sweep < sweeps; ++sweep)
    for (int k = 0; k < most; ++k) {
      float* lane[4];
      for (int l = 0; l < 4; ++l) lane[l] = k < count[l] ? &contacts[l][k].ra.x : idle;
      // The contact's 24 floats: ra rb | normal | phi target λn | λt particle | feature response | normalMass.
      __m128 f[24];
      for (int at = 0; at < 24; at += 4) loadTransposed(lane, at, f[at], f[at + 1], f[at + 2], f[at + 3]);
      const V3x4 ra{f[0], f[1], f[2]}, rb{f[3], f[4], f[5]}, n{f[6], f[7], f[8]};
      const __m128 target = f[10], lambdaNormal = f[11], normalMass = f[23];
      const V3x4 lambdaTangent{f[12], f[13], f[14]};
      const __m128* response = f + 17;
      // pairSweep's `continue`: both sides immovable along n (and the idle lanes).
      const __m128 movable = _mm_cmpgt_ps(normalMass, zero);
      if (_mm_movemask_ps(movable) == 0) continue;
      auto relative = [&] { return sub(add(av, cross(aw, ra)), add(bv, cross(bw, rb))); };
      // updateContact, term for term.
      const __m128 vn = dot(relative(), n);
      const __m128 lambda =
          maxGlm(_mm_add_ps(lambdaNormal, _mm_mul_ps(_mm_sub_ps(target, vn), normalMass)), zero);
      // updateContact's return: a contact that carried nothing and still carries nothing.
      const __m128 unloadedLane =
          _mm_and_ps(_mm_and_ps(_mm_cmpeq_ps(lambda, zero), _mm_cmpeq_ps(lambdaNormal, zero)),
                     _mm_and_ps(_mm_and_ps(_mm_cmpeq_ps(lambdaTangent.x, zero), _mm_cmpeq_ps(lambdaTangent.y, zero)),
                                _mm_cmpeq_ps(lambdaTangent.z, zero)));
      const __m128 active = _mm_andnot_ps(unloadedLane, movable);
      if (_mm_movemask_ps(active) == 0) continue;
      auto apply = [&](const V3x4& j) __attribute__((always_inline)) {
        const V3x4 raj = cross(ra, j), rbj = cross(rb, j);
        av = select(active, add(av, scale(aInvMass, j)), av);
        aw = select(active, add(aw, mul(aInvInertia, raj)), aw);
        bv = select(active, sub(bv, scale(bInvMass, j)), bv);
        bw = select(active, sub(bw, mul(bInvInertia, rbj)), bw);
        onALinear = select(active, add(onALinear, j), onALinear);
        onAAngular = select(active, add(onAAngular, raj), onAAngular);
        onBLinear = select(active, sub(onBLinear, j), onBLinear);
        onBAngular = select(active, sub(onBAngular, rbj), onBAngular);
      };
      apply(scale(_mm_sub_ps(lambda, lambdaNormal), n));
      const V3x4 vr = relative();
      const V3x4 vt = sub(vr, scale(dot(vr, n), n));
      const __m128 vtLen = length(vt);
      // updateContact divides only behind its tests; here every lane divides, so a lane whose
      // quotient is thrown away divides by 1 instead (no 0/0 to trap under SMASH_FP_TRAPS, no NaN
      // to compare): the lanes that keep it divide by what the scalar code does.
      V3x4 lambdaT = lambdaTangent;
      const __m128 sliding = _mm_cmpgt_ps(vtLen, vtSmall);
      const __m128 vtDivisor = select(sliding, vtLen, one);
      const V3x4 t{quotient(vt.x, vtDivisor), quotient(vt.y, vtDivisor), quotient(vt.z, vtDivisor)};
      const __m128 kt = dot(t, responseTimes(response, t));
      const __m128 slides = _mm_and_ps(sliding, _mm_cmpgt_ps(kt, tiny));
      lambdaT = select(slides, sub(lambdaT, scale(_mm_div_ps(vtLen, select(slides, kt, one)), t)), lambdaT);
      const __m128 limit = _mm_mul_ps(mu, lambda), len = length(lambdaT);
      const __m128 capped = _mm_cmpgt_ps(len, limit);
      lambdaT = select(capped, scale(quotient(limit, select(capped, len, one)), lambdaT), lambdaT);
      apply(sub(lambdaT, lambdaTangent));
      // Back into the contacts: λn (with normal.z, phi, target as they were) and λt (with particle).
      storeTransposed(lane, 8, f[8], f[9], f[10], select(active, lambda, lambdaNormal));
      storeTransposed(lane, 12, select(active, lambdaT.x, f[12]), select(active, lambdaT.y, f[13]),
                      select(active, lambdaT.z, f[14]), f[15]);
    }

  // Each lane's pair of vectors back into its own record: `first` and `second` pick the fields.
  auto store = [&](auto* s, const V3x4& firstLanes, const V3x4& secondLanes, auto first, auto second) {
    Vec3<float> x[4], y[4];
    unpack(firstLanes, x);
    unpack(secondLanes, y);
    for (int l = 0; l < 4; ++l) {
      s[l].*first = x[l];
      s[l].*second = y[l];
    }
  };
  store(onA, onALinear, onAAngular, &PairImpulse<float>::linear, &PairImpulse<float>::angular);
  store(onB, onBLinear, onBAngular, &PairImpulse<float>::linear, &PairImpulse<float>::angular);
  if (aOut) store(aOut, av, aw, &SolverBody<float>::v, &SolverBody<float>::w);
  if (bOut) store(bOut, bv, bw, &SolverBody<float>::v, &SolverBody<float>::w);
}

}  // namespace smash::lanes
#endif
