// Swept contacts (physics.md §4, "Swept contacts"): a point's contact sample taken along its
// motion over the step, not only where the step left it.
//
// Contacts are found at the predicted pose. A point that moved farther in one step than the
// obstacle is thick can end the step behind it — outside, or inside but nearer the far face —
// and its sample there says "no contact" or points the wrong way: a body thrown at a 1 cm slab
// went through it from 1 m/s (issue 11). Here the point's chord x0 → x1 over the step (x0 at the
// step's start pose, x1 at the predicted pose) is sphere traced (Hart 1996): from x0, advance by
// φ / L, which cannot pass the surface of a field whose slope is at most L, until φ is within a
// tolerance of 0 (the entry point) or x1 is reached (no entry). When the point entered the solid
// and its sample at x1 does not describe that entry — x1 is outside again (it went through), or
// its normal leans more than 90° away from the entry normal (it is past the middle of a thin
// slab) — the contact becomes the entry point's tangent
// plane evaluated at x1: φ = φ(p) + (x1 − p)·n(p), n = n(p). The solver then sees a contact as
// deep as the point went past the surface, pointing back the way the point came, and stops it
// there (its targets close exactly the gap at the step's start). Samples that describe the entry
// are kept as they are, so resting and ordinary landing contacts are unchanged.
//
// Conservative advancement by time of impact (the alternative, Mirtich 1996; Box2D's TOI) stops
// the whole body at the first hit and loses the rest of the step; this keeps the step and every
// other contact of the body. Nothing is sampled beyond the end sample unless the point moved more
// than half the obstacle's thickness and its end sample does not already describe an entry.
#pragma once

#include "math/grid_sdf.h"
#include "math/hd.h"
#include "math/sdf_sample.h"

namespace smash {

/// Most sphere-tracing steps per chord; a chord that has not reached the surface or its end by
/// then (a graze along the surface) has the rest of it scanned in as many even samples, and a
/// crossing found there bisected (kSweepHalvings); none: it keeps its end sample.
constexpr int kSweepSteps = 64;
/// Most bisections of a crossing found by the scan after a march that ran out of steps (a graze):
/// 2⁻²⁴ of the chord, past float's resolution of it.
constexpr int kSweepHalvings = 24;

/// The contact sample of a point that moved from x0 to x1 this step, given `end` = field(x1).
/// `field(x)` returns an SdfSample; `lipschitz` bounds its slope (1 for an exact distance, √3 for
/// a trilinear grid: each partial derivative within a cell is at most 1). `thickness` is the
/// obstacle's thinnest extent (0: unknown): a point that moved less than half of it cannot be past
/// its middle, so its end sample is right and nothing more is sampled — resting and slow contacts
/// cost nothing extra. `resolution`: the entry is located to the larger of it and 10⁻³ of the
/// chord (a grid's field is only as good as a fraction of its cell).
template <class T, class Field>
SMASH_HD SdfSample<T> sweptSample(const Field& field, const Vec3<T>& x0, const Vec3<T>& x1,
                                  const SdfSample<T>& end, T lipschitz, T thickness, T resolution) {
  const Vec3<T> d = x1 - x0;
  const T length = glm::length(d);
  if (!(T(2) * length > thickness)) return end;
  const T half = T(0.5) * thickness;
  if (end.phi < T(0)) {
    // Inside, through the face its normal names (moving against it) and no deeper than that
    // motion explains: the end sample describes the entry.
    const T along = glm::dot(d, end.gradient);
    if (along < T(0) && end.phi >= along) return end;
  } else if (!(length > end.phi / lipschitz + half)) {
    return end;  // outside again: it would have crossed the obstacle's thickness besides
  }
  T phi = field.phi(x0);
  // Started touching or inside (a resting contact): the entry is x0 itself.
  if (phi > T(0) && !(end.phi < T(0)) && !(length > (phi + end.phi) / lipschitz + half)) return end;
  // The march needs φ only (fewer registers on a GPU); the gradient is sampled at the entry.
  const T tolerance = glm::max(T(1e-3) * length, resolution);
  T travelled = T(0);
  for (int step = 0; !(phi <= tolerance); ++step) {
    if (step == kSweepSteps) {
      // A chord that grazes the surface advances by φ/L a step, too little to reach it: a box
      // sliding at 15 m/s onto a 1 cm slab (a 25 cm chord sinking 5 mm) stopped here, its end
      // sample past the slab's middle read the far face, and its contacts pushed down and up at
      // once: their friction stopped it dead within a step; on a 4 mm slab such particles went
      // through it (hostile tests, 2026-12-07). So the rest of the chord is scanned in
      // kSweepSteps even samples — a grazing chord stays inside a thin obstacle for a long way,
      // t / sin θ — and the first inside is bracketed against the sample before it, the crossing
      // found by bisection. None inside: the end sample stands (as before).
      const T from = travelled, stride = (length - from) / T(kSweepSteps);
      T inside = length;
      bool crossed = false;
      for (int k = 1; k <= kSweepSteps && !crossed; ++k) {
        const T along = k == kSweepSteps ? length : from + stride * T(k);
        if (k == kSweepSteps ? end.phi < T(0) : field.phi(x0 + d * (along / length)) < T(0)) {
          inside = along;
          crossed = true;
        } else {
          travelled = along;
        }
      }
      if (!crossed) return end;
      for (int halve = 0; halve < kSweepHalvings && inside - travelled > tolerance; ++halve) {
        const T middle = T(0.5) * (travelled + inside);
        if (field.phi(x0 + d * (middle / length)) < T(0))
          inside = middle;
        else
          travelled = middle;
      }
      travelled = inside;
      phi = T(0);  // at the crossing (the probe below starts there)
      break;
    }
    travelled += phi / lipschitz;
    if (!(travelled < length)) return end;  // reached x1 without meeting the surface
    phi = field.phi(x0 + d * (travelled / length));
  }
  const Vec3<T> at = x0 + d * (travelled / length);
  const SdfSample<T> s = field(at);
  // Ending outside, the chord must be seen inside past the entry: a chord that only came close —
  // past a convex edge, sliding off a face — did not cross, and its end sample stands. The probe
  // is where the chord, approaching the entry's tangent plane at `rate` (the cosine of its angle
  // to the normal), is (half the thickness) × rate along past that plane: the middle of the chord
  // through a sphere of that thickness at any angle, and inside a slab of it at any angle (half ×
  // rate² deep; two tolerances stand for half where the thickness is unknown; never shallower than
  // the field's resolution). Half the thickness along the chord fell short of the surface on a
  // shallow chord, or beyond the slab where the march's tolerance (10⁻³ of the chord) exceeded half
  // the thickness: a box thrown at 100 m/s 80° from a 1 cm slab's normal went through it, and at
  // 200 m/s with steps of 1/30 s (issue 11).
  if (!(end.phi < T(0))) {
    const T rate = -glm::dot(d, s.gradient) / length;
    if (!(rate > T(0))) return end;  // not moving into it
    const T middle = half > T(0) ? half : T(2) * tolerance;
    const T depth = glm::max(middle * rate * rate, resolution);
    const T probe = glm::min((glm::max(phi, T(0)) + depth) / rate, length - travelled);
    if (!(field.phi(at + d * (probe / length)) < T(0))) return end;
  }
  const T plane = s.phi + glm::dot(x1 - at, s.gradient);
  if (!(plane < T(0))) return end;  // x1 not past the entry's tangent plane: a graze
  // The end sample describes the entry when x1 is inside with a normal within 90° of the entry's.
  // (60° was tried: on the 1,000-body pile it replaced good samples of curved bunny surfaces by
  // tangent planes and the deepest penetration after 100 frames rose from 1.1 to 2.5 cm.)
  if (end.phi < T(0) && glm::dot(end.gradient, s.gradient) > T(0)) return end;
  return {plane, s.gradient};
}

// Arithmetic the GPU compiler may not contract into fused multiply-adds (__fmul_rn, __fadd_rn):
// whether a body or pair side is swept is decided again by each kernel that needs it, and must
// come out the same in every one of them (a count written by one kernel and its contacts by
// another). On the host nothing is contracted (ISO C++ mode).
SMASH_HD float mulRn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
SMASH_HD float addRn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
SMASH_HD double mulRn(double a, double b) { return a * b; }
SMASH_HD double addRn(double a, double b) { return a + b; }
template <class T>
SMASH_HD T lengthRn(const Vec3<T>& v) {
  return glm::sqrt(addRn(addRn(mulRn(v.x, v.x), mulRn(v.y, v.y)), mulRn(v.z, v.z)));
}

/// How far a point at unit distance from the centre moves when a body turns from R0 to R1:
/// ‖R1 − R0‖_F / √2 ≥ ‖R1 − R0‖₂ = 2 sin(θ/2) (the Frobenius form: √(3 − tr R0ᵀR1) cancels in
/// float for small turns).
template <class T>
SMASH_HD T turnChord(const Mat3<T>& R0, const Mat3<T>& R1) {
  T sum = T(0);
  for (int c = 0; c < 3; ++c) {
    const Vec3<T> e = R1[c] - R0[c];
    sum = addRn(sum, addRn(addRn(mulRn(e.x, e.x), mulRn(e.y, e.y)), mulRn(e.z, e.z)));
  }
  return glm::sqrt(mulRn(sum, T(0.5)));
}

/// Whether a point that moved at most `travel` may be swept against an obstacle of `thickness`
/// (sweptSample's first test for a whole body or pair side at once, with 1% to spare for
/// rounding): when false, sweptSample would return the end sample for every point, so the
/// callers skip it — and the start positions it needs.
template <class T>
SMASH_HD bool maySweep(T travel, T thickness) {
  return T(2.02) * travel > thickness;
}

/// A grid field as sweptSample reads it (in the grid's frame).
template <class T>
struct GridField {
  const GridSdfView& grid;
  SMASH_HD SdfSample<T> operator()(const Vec3<T>& q) const { return sampleGrid(grid, q); }
  SMASH_HD T phi(const Vec3<T>& q) const { return sampleGridPhi(grid, q); }
};

/// A point of one body against another body's grid (the pair narrow phase, physics.md §6): the
/// point moved from x0 to x1 while the other body moved from (c0, R0) to (c1, R1); the chord is
/// swept in the other body's frame, where its field is fixed. The sample is in world frame at the
/// other body's predicted pose, and equals sampleGridPlaced(g, c1, R1, x1) unless the point went
/// past the surface.
template <class T>
SMASH_HD SdfSample<T> sweptGridLocal(const GridSdfView& g, T thickness, const Vec3<T>& q0,
                                               const Vec3<T>& q1) {
  return sweptSample(GridField<T>{g}, q0, q1, sampleGrid(g, q1), T(1.7320508075688772), thickness,
                     T(0.05) * T(g.cell));
}
template <class T>
SMASH_HD SdfSample<T> sweptGridSample(const GridSdfView& g, T thickness, const Vec3<T>& c0,
                                      const Mat3<T>& R0, const Vec3<T>& x0, const Vec3<T>& c1,
                                      const Mat3<T>& R1, const Vec3<T>& x1) {
  const SdfSample<T> s =
      sweptGridLocal(g, thickness, Vec3<T>(glm::transpose(R0) * (x0 - c0)), Vec3<T>(glm::transpose(R1) * (x1 - c1)));
  return {s.phi, R1 * s.gradient};
}

}  // namespace smash
