// The one contact solver (docs/solver.md, "Contact solver"): every contact of a step — a body
// against a static collider, or against another body — is a PairContact between two SolverBody
// states, a collider being a body of zero inverse mass and inertia (as Box2D keeps a static
// body). The same functions, instantiated in double by the CPU reference and in float by every
// backend, compute the targets, sweep the contacts, move a pose with the velocity change and
// push a body out of the colliders:
//
//   contactTargets   non-penetration from the gap at the step's start (speculative), and
//                    restitution from the approach speed before this step's velocity update
//   prepareResponse  each contact's response K and normal mass, once per solve, for the masses
//                    the sweeps then see
//   pairSweep        one Gauss–Seidel sweep of sequential impulses with accumulated clamping
//   solveAgainstStatic  a body alone against colliders: warm-started sweeps until its velocities
//                    settle (sweepSettled), at most `iterations`; or cold, `iterations` sweeps
//   moveWithVelocityChange  contacts act before the position update
//   pushOutOfColliders  the positional last word, the same passes and stopping rule everywhere
//
// Bodies in touching pairs are solved by mass splitting (Tonge, Benevolenskiy & Voroshilov,
// "Mass splitting for jitter-free parallel rigid body simulation", SIGGRAPH 2012): a body
// touched by n pairs (its collider contacts counting as one more pair against a static body)
// enters each of them with n times its inverse mass and inverse inertia, and its new velocity is
// the average of its n copies — the sum of the pair impulses applied with its true mass. Every
// pair can then be solved at once, in any order, with the same result on every backend. A body
// that touches no other body is the case n = 1, solved by Gauss–Seidel over its contacts. The
// first gauss_seidel_rounds rounds (16 of the 32 by default) are Gauss–Seidel over pairs instead
// (math/pair_colors.h).
#pragma once

#include "math/contact.h"
#include "math/hd.h"
#include "math/lanes.h"
#include "math/rotation.h"
#include "math/sdf.h"
#include "math/swept.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

// The collider sweep's scan four contacts at a time in SSE lanes (x86-64 host code; nvcc and other
// CPUs scan one at a time): solveAgainstStatic below.
#if defined(__SSE2__) && defined(__x86_64__) && !defined(__CUDACC__)
#define SMASH_WALL_SWEEP_SSE 1
#include <emmintrin.h>
#endif

namespace smash {

/// One contact point between body a and body b (or a static collider, b = nothing).
template <class T>
struct PairContact {
  Vec3<T> ra;      ///< contact point minus a's centre (world frame)
  Vec3<T> rb;      ///< contact point minus b's centre (unused against a collider)
  Vec3<T> normal;  ///< unit, from b towards a: a positive impulse pushes a along it, b against it
  T phi;           ///< signed distance of the point from the other surface (< 0: inside)
  T target;        ///< wanted normal relative velocity
  T lambdaNormal;  ///< accumulated normal impulse, ≥ 0
  Vec3<T> lambdaTangent;  ///< accumulated friction impulse, |λ_T| ≤ μ λ_N
  int particle;    ///< identity across steps (warm starting): the particle's index in its shape
  int feature;     ///< and which side it came from (0: a's particle, 1: b's) or which collider
  /// The response of the pair at this point (prepareResponse): relative velocity change per unit
  /// impulse, K = Σ_sides (1/m) 1 − [r]× I⁻¹ [r]×, symmetric (xx, yy, zz, xy, xz, yz) ...
  T response[6];
  T normalMass;    ///< ... and 1 / (n·K n), 0 where neither side can move along n
};

/// The points of a pair's manifold whose normal withinPushCone left undecided (bit j of
/// `undecided`: it returned 0) take the normalised sum of the other points' normals — the patch's normal, up
/// for boxes stacked edge on edge — or, where every point is undecided, `pairNormal()` (the
/// manifold frame's normal axis: step_kernels.h frameNormalOf). A nearest face chosen per point
/// instead tipped exactly aligned stacks one way or the other (a tie between a side and the
/// top); the cone's axis made every corner push sideways, and a stack of 4 × 4-vertex boxes
/// whose manifold held only edge and corner points slid apart.
/// (A mask, not an array: in the per-pair GPU kernels an array of flags took 32 B more stack.)
template <class T, class PairNormal>
SMASH_HD void settleDegenerateNormals(PairContact<T>* c, unsigned undecided, int count, const PairNormal& pairNormal) {
  if (undecided == 0u) return;
  Vec3<T> sum(T(0));
  for (int j = 0; j < count; ++j)
    if (!(undecided >> j & 1u)) sum += c[j].normal;
  const T length = glm::length(sum);
  const Vec3<T> n = length > T(1e-6) ? sum / length : pairNormal();
  // Its φ measured the way out along the other body's side, not along n: such a point counts as
  // touching (φ ≤ 0), or a box whose corners hung just past the sides of the one under it sank
  // by that overhang every step (8-vertex cubes turned 0.02-0.5 degrees on each other).
  for (int j = 0; j < count; ++j)
    if (undecided >> j & 1u) {
      c[j].normal = n;
      c[j].phi = c[j].phi < T(0) ? c[j].phi : T(0);
    }
}

/// What the next step's warm start keeps of a contact: its identity and its accumulated impulses
/// (24 bytes in float, a quarter of a PairContact: the backends keep every body's collider
/// contacts of the last step in these).
template <class T>
struct ContactImpulse {
  int particle;
  int feature;
  T lambdaNormal;
  Vec3<T> lambdaTangent;
};
template <class T>
SMASH_HD ContactImpulse<T> impulseOf(const PairContact<T>& c) {
  return {c.particle, c.feature, c.lambdaNormal, c.lambdaTangent};
}

/// Warm starting (Catto): a contact that existed in the last step (same particle, same feature)
/// starts from last step's impulses — the normal one as it was, the friction one projected onto
/// the new tangent plane and kept in the cone — so the iterations of successive steps add up.
/// `previous` is last step's list for the same pair (PairContact or ContactImpulse). Returns the
/// impulse to pre-apply.
///
/// A contact's identity appears at most once in a list, and successive steps gather a body's or a
/// pair's contacts in the same order, so the search starts at `cursor` (just past the last
/// match; the caller starts it at 0 for a list) and wraps around: the same match as a search from
/// the start, found in a step or two instead of a walk over the list — up to 95² ≈ 9,000
/// comparisons per step for a bunny's 95 floor contacts, serial in a GPU thread (H100: the lone
/// solve of 1,024 resting bunnies 17% slower warm-started than cold, bench/results/nvidia-h100).
template <class T, class Previous>
SMASH_HD Vec3<T> warmStart(PairContact<T>& c, const Previous* previous, int previousCount, T friction,
                           int& cursor) {
  for (int n = 0, k = cursor; n < previousCount; ++n, k = k + 1 == previousCount ? 0 : k + 1) {
    if (previous[k].particle != c.particle || previous[k].feature != c.feature) continue;
    cursor = k + 1 == previousCount ? 0 : k + 1;
    c.lambdaNormal = previous[k].lambdaNormal;
    Vec3<T> t = previous[k].lambdaTangent - glm::dot(previous[k].lambdaTangent, c.normal) * c.normal;
    const T limit = friction * c.lambdaNormal, len = glm::length(t);
    if (len > limit) t *= limit / len;
    c.lambdaTangent = t;
    return c.lambdaNormal * c.normal + t;
  }
  return Vec3<T>(T(0));
}

/// warmStart over a body's `count` contacts against one partner (`previous`: the same contacts of
/// the last step): the impulses pre-applied, summed as Σ j and Σ r × j with the body's lever arms
/// (its `ra`). The caller applies them (one body, or with split masses in the contact rounds).
/// Over `lanes` (math/lanes.h): each contact's match by a lane, the sums in contact order.
template <class T, class Previous, class Lanes = SerialLanes>
SMASH_HD void warmStartContacts(PairContact<T>* c, int count, const Previous* previous, int previousCount,
                                T friction, Vec3<T>& linear, Vec3<T>& angular, const Lanes& lanes = Lanes{}) {
  int cursor = 0;  // (one lane in order: the search goes on from the last match)
  lanes.template forEachInOrder<Vec3<T>>(
      count,
      [&](int k) {
        cursor = lanes.searchStart(k, cursor, previousCount);
        return warmStart(c[k], previous, previousCount, friction, cursor);
      },
      [&](int k, const Vec3<T>& j) {
        linear += j;
        angular += glm::cross(c[k].ra, j);
      });
}

/// A body as one contact pair sees it: velocities, and inverse mass and inertia already scaled by
/// the number of pairs that share the body (mass splitting). A collider is invMass 0, inertia 0.
template <class T>
struct SolverBody {
  Vec3<T> v{T(0)};
  Vec3<T> w{T(0)};
  T invMass = T(0);
  Mat3<T> invInertia{T(0)};
};

/// The impulses a sweep gave one side of a pair: Σ j and Σ r × j.
template <class T>
struct PairImpulse {
  Vec3<T> linear{T(0)};
  Vec3<T> angular{T(0)};
};

/// Velocity change at offset r per unit impulse along d: (1/M) d − r × (I⁻¹ (r × d)).
template <class T>
SMASH_HD Vec3<T> responseAt(const SolverBody<T>& s, const Vec3<T>& r, const Vec3<T>& d) {
  return s.invMass * d - glm::cross(r, s.invInertia * glm::cross(r, d));
}

/// K d for a contact's symmetric response K (PairContact::response).
template <class T>
SMASH_HD Vec3<T> responseTimes(const T* k, const Vec3<T>& d) {
  return Vec3<T>(k[0] * d.x + k[3] * d.y + k[4] * d.z, k[3] * d.x + k[1] * d.y + k[5] * d.z,
                 k[4] * d.x + k[5] * d.y + k[2] * d.z);
}

/// Adds one side's response at offset r to K: (1/m) 1 − [r]× I⁻¹ [r]× (symmetric; the upper
/// triangle, column by column as responseAt(s, r, e_i)).
template <class T>
SMASH_HD void addResponse(T* k, const SolverBody<T>& s, const Vec3<T>& r) {
  const Vec3<T> x = responseAt(s, r, Vec3<T>(T(1), T(0), T(0)));
  const Vec3<T> y = responseAt(s, r, Vec3<T>(T(0), T(1), T(0)));
  const Vec3<T> z = responseAt(s, r, Vec3<T>(T(0), T(0), T(1)));
  k[0] += x.x;
  k[1] += y.y;
  k[2] += z.z;
  k[3] += y.x;
  k[4] += z.x;
  k[5] += z.y;
}

/// Once per solve, before the sweeps (Box2D's prepare step): each contact's response K for the
/// two sides as the sweeps see them (split masses in the rounds, one side alone against a
/// collider or a carrier) and its normal mass. The masses and lever arms do not change during the
/// sweeps, so the 32 rounds × sweeps read them instead of computing two responses per point and
/// direction each time (issue 13: the pair sweeps were ~40% of a pile's step). `b` null: one
/// side alone (the other immovable).
template <class T>
SMASH_HD void prepareContactResponse(const SolverBody<T>& a, const SolverBody<T>* b, PairContact<T>& s,
                                     bool aIsMoving = true) {
  for (int i = 0; i < 6; ++i) s.response[i] = T(0);
  addResponse(s.response, a, aIsMoving ? s.ra : s.rb);
  if (b) addResponse(s.response, *b, s.rb);
  const T kn = glm::dot(s.normal, responseTimes(s.response, s.normal));
  s.normalMass = kn > ScalarTraits<T>::tiny ? T(1) / kn : T(0);
}
template <class T, class Lanes = SerialLanes>
SMASH_HD void prepareResponse(const SolverBody<T>& a, const SolverBody<T>* b, PairContact<T>* c, int count,
                              bool aIsMoving = true, const Lanes& lanes = Lanes{}) {
  lanes.forEach(count, [&](int k) { prepareContactResponse(a, b, c[k], aIsMoving); });
}

template <class T>
SMASH_HD Vec3<T> relativeVelocity(const SolverBody<T>& a, const SolverBody<T>& b,
                                  const PairContact<T>& c) {
  return (a.v + glm::cross(a.w, c.ra)) - (b.v + glm::cross(b.w, c.rb));
}

/// The material of a pair: the larger restitution and the geometric mean of the frictions
/// (Box2D's mixing rules), the scene's restitution threshold.
template <class T>
SMASH_HD ContactMaterial<T> mixMaterials(T restitutionA, T frictionA, T restitutionB, T frictionB,
                                         T threshold) {
  return {restitutionA > restitutionB ? restitutionA : restitutionB,
          glm::sqrt(frictionA * frictionB), threshold};
}

/// How a contact closes within this step, from the relative normal velocity at the step's start
/// (vnStart: before the step's velocity update) and before the solve (vnPredicted), and the gap
/// at the step's start. The relative normal motion over the step is taken as the parabola the
/// integrator samples: acceleration a = (vnPredicted − vnStart)/h (gravity along the normal for a
/// body on a collider, 0 between two falling bodies), and vnStart the velocity half a step before
/// the step's start (semi-implicit Euler's velocities are the chords of the steps before).
template <class T>
struct Closing {
  bool closes = false;  ///< the gap closes within this step
  T gap = T(0);         ///< at the step's start
  T accel = T(0);       ///< a
  T time = T(0);        ///< of impact after the step's start, τ ∈ [0, h]
  T impact = T(0);      ///< normal velocity at impact, < 0
};

template <class T>
SMASH_HD Closing<T> closingOf(T phi, T vnStart, T vnPredicted, T h, bool moved) {
  Closing<T> c;
  c.gap = moved ? phi - h * vnPredicted : phi;
  c.closes = c.gap + h * vnPredicted < T(0);
  if (!c.closes) return c;
  c.accel = (vnPredicted - vnStart) / h;
  const T w = vnStart + c.accel * (h / T(2));  // velocity at the step's start
  if (c.gap > T(0)) {
    // Smallest root of gap + w τ + a τ²/2 = 0, in the form without cancellation for w < 0 (an
    // approaching contact; for w ≥ 0 the time is not used: such a contact does not bounce).
    const T root = glm::sqrt(glm::max(w * w - T(2) * c.accel * c.gap, T(0)));
    c.time = -w + root > T(0) ? glm::min(T(2) * c.gap / (-w + root), h) : h;
  }
  c.impact = w + c.accel * c.time;
  return c;
}

/// Restitution as the continuous bounce within the step: the contact reaches the surface at τ
/// with normal velocity u and leaves it at −e·u. At the step's end it is G = −e·u (h − τ) +
/// a (h − τ)²/2 apart (bounceGap), and its velocity, as the next steps' chords expect, is
/// −e·u + a (h/2 − τ) (bounceVelocity). With both, the steps after a bounce sample the bounced
/// parabola exactly: a box dropped with e = 1 rises to its drop height, with e < 1 to e² of it.
template <class T>
SMASH_HD T bounceVelocity(const Closing<T>& c, T e, T h) {
  return -e * c.impact + c.accel * (h / T(2) - c.time);
}
template <class T>
SMASH_HD T bounceGap(const Closing<T>& c, T e, T h) {
  const T rest = h - c.time;
  return glm::max(-e * c.impact * rest + c.accel * rest * rest / T(2), T(0));
}

/// Whether a contact that approached at vnStart (before the step's velocity update) rebounds at
/// all: its material restitutes (e > 0) and it approached faster than the threshold. A rebound
/// of e = 0 is none, on colliders (bounces) and between bodies (contactTarget) alike.
template <class T>
SMASH_HD bool rebounds(T vnStart, const ContactMaterial<T>& material) {
  return material.restitution > T(0) && vnStart < -material.restitutionThreshold;
}

template <class T>
SMASH_HD bool bounces(const Closing<T>& c, T vnStart, const ContactMaterial<T>& material) {
  return c.closes && rebounds(vnStart, material);
}

/// A contact's closing as if it met the surface at `time` (its approach speed then).
template <class T>
SMASH_HD Closing<T> closingAt(Closing<T> c, T time) {
  c.impact += c.accel * (time - c.time);
  c.time = time;
  return c;
}

/// The restitution a bounce uses: e above twice the threshold, ramping in linearly from 0 at the
/// threshold, so the rebound is a continuous function of the approach speed (a hard switch
/// flipped resting contacts near the threshold between float and double, and a tumbling body's
/// trajectory with them). Real materials also restitute less at low impact speeds.
template <class T>
SMASH_HD T restitutionAt(T vnStart, const ContactMaterial<T>& material) {
  const T threshold = material.restitutionThreshold;
  if (!(threshold > T(0))) return material.restitution;
  return material.restitution * glm::clamp((-vnStart - threshold) / threshold, T(0), T(1));
}

/// A contact's closing over the step (closingOf) from the two sides' velocities at the step's
/// start and before the solve; `vnStart` receives the normal velocity at the start.
template <class T>
SMASH_HD Closing<T> contactClosing(const SolverBody<T>& aStart, const SolverBody<T>& bStart, const SolverBody<T>& a,
                                   const SolverBody<T>& b, const PairContact<T>& c, T h, bool moved, T& vnStart) {
  const T vn = glm::dot(relativeVelocity(a, b, c), c.normal);
  vnStart = glm::dot(relativeVelocity(aStart, bStart, c), c.normal);
  return closingOf(c.phi, vnStart, vn, h, moved);
}

/// The body's first impact against static contacts this step: the earliest time of impact of
/// the contacts that bounce (h when none does). The bounce happens then, for the whole body: a
/// contact that would reach the surface later in the step (a sphere's next ring of points, a side
/// face's lowest row) has not fallen that far when the body turns back, so every contact's bounce
/// is taken at this time. With each contact's own time, the latest-arriving point set the rebound
/// as if the body had fallen until it arrived: a 642-point sphere dropped with e = 1 rose about
/// 6% higher at every bounce (docs/solver.md, "Restitution").
template <class T>
SMASH_HD T impactTime(const SolverBody<T>& aStart, const SolverBody<T>& bStart, const SolverBody<T>& a,
                      const SolverBody<T>& b, const PairContact<T>& c, const ContactMaterial<T>& material, T h,
                      bool moved) {
  // bounces() needs an approach faster than the threshold: a resting contact costs a dot product.
  if (!(glm::dot(relativeVelocity(aStart, bStart, c), c.normal) < -material.restitutionThreshold)) return h;
  T vnStart;
  const Closing<T> closing = contactClosing(aStart, bStart, a, b, c, h, moved, vnStart);
  return bounces(closing, vnStart, material) ? closing.time : h;
}
template <class T, class Lanes = SerialLanes>
SMASH_HD T firstImpact(const SolverBody<T>& aStart, const SolverBody<T>& bStart, const SolverBody<T>& a,
                       const SolverBody<T>& b, const PairContact<T>* c, int count,
                       const ContactMaterial<T>& material, T h, bool moved,
                       const Lanes& lanes = Lanes{}) {
  T first = h;
  if (!(material.restitution > T(0))) return first;
  lanes.forEach(count, [&](int k) { first = glm::min(first, impactTime(aStart, bStart, a, b, c[k], material, h, moved)); });
  return lanes.least(first);
}

/// Targets of `count` contacts, and their impulses cleared. `a` and `b` are the bodies'
/// velocities before the solve, `aStart` and `bStart` their approach velocities, before this
/// step's velocity update (gravity, damping): the start's v and the start's angular momentum at
/// the predicted pose (step_kernels.h withApproachVelocities). `moved`: the contacts were found at the
/// predicted pose, which has already moved by h·v, so φ is the gap after that move and the gap at
/// the step's start is φ − h·v_n (the solver then moves the pose with the velocity change,
/// moveWithVelocityChange).
///
///  - Non-penetration (speculative contact): against a static body (a collider) a contact whose
///    gap at the step's start is g > 0 may close it, v_n ≥ −g/h, so a falling body lands on the
///    surface; one touching or inside may not approach, v_n ≥ 0. Between two bodies the relative
///    velocity is only as good as the Jacobi round that produced it, so a pair contact may close
///    only the gap φ left after the move, v_n ≥ −φ/h (it lands up to a step's approach later).
///    Closing the whole gap between bodies too was measured and rejected: the 100-body pile kept
///    0.6–1.9 J of kinetic energy after 4 s instead of 5·10⁻⁴–1.4·10⁻³ J (docs/solver.md).
///    Penetration is not turned into velocity (no Baumgarte term, which made a box stack bounce
///    in place): push-out removes it.
///  - Restitution: a collider contact that closes within this step and approached faster than the
///    threshold before the step's velocity update leaves at bounceVelocity — from the approach
///    speed before the step's gravity (Box2D v3 keeps the pre-solve relative velocity for this),
///    corrected to the moment of impact. Taking v_n after gravity instead lost a step of gravity
///    at every bounce (docs/solver.md, "Restitution"); bounceTranslation places the body.
template <class T>
SMASH_HD void contactTarget(const SolverBody<T>& aStart, const SolverBody<T>& bStart, const SolverBody<T>& a,
                            const SolverBody<T>& b, PairContact<T>& c, const ContactMaterial<T>& material, T h,
                            bool moved, bool staticContacts, T first) {
  // Between two bodies the gap is φ itself (see above), as if the contact had been found
  // before the move: it engages when it would close within a step's approach.
  T vnStart;
  const Closing<T> closing = contactClosing(aStart, bStart, a, b, c, h, moved && staticContacts, vnStart);
  c.target = closing.gap > T(0) ? -closing.gap / h : T(0);
  if (!staticContacts) {
    // Between bodies: a contact within the margin that approached faster than the threshold
    // rebounds at −e v_n(start) (relative acceleration 0, so no time of impact), engaged or not:
    // gating it on engagement made the rebound jump at the engagement boundary. A rebound of
    // e = 0 is none (rebounds, as on colliders): the contact keeps −φ/h. (Taken as a target of 0
    // it stopped a point not yet touching where it was: a box sliding over a box body with
    // restitution 0 was stopped by the base's particles up to 2 cm ahead of its front face;
    // docs/solver.md, "Sliding on a body".)
    if (rebounds(vnStart, material))
      c.target = glm::max(c.target, -restitutionAt(vnStart, material) * vnStart);
  } else if (bounces(closing, vnStart, material)) {
    c.target = glm::max(c.target, bounceVelocity(closingAt(closing, first), restitutionAt(vnStart, material), h));
  }
  c.lambdaNormal = T(0);
  c.lambdaTangent = Vec3<T>(T(0));
}
template <class T, class Lanes = SerialLanes>
SMASH_HD void contactTargets(const SolverBody<T>& aStart, const SolverBody<T>& bStart,
                             const SolverBody<T>& a, const SolverBody<T>& b, PairContact<T>* c,
                             int count, const ContactMaterial<T>& material, T h, bool moved,
                             const Lanes& lanes = Lanes{}) {
  const bool staticContacts = !(b.invMass > T(0));
  const T first = staticContacts ? firstImpact(aStart, bStart, a, b, c, count, material, h, moved, lanes) : h;
  lanes.forEach(count, [&](int k) { contactTarget(aStart, bStart, a, b, c[k], material, h, moved, staticContacts, first); });
}

/// After the solve, for contacts found at the predicted pose: every contact that bounced asks to
/// end the step bounceGap apart; the pose has moved with the final velocities (aNow, bNow), so a
/// contact k asks a relative to b to move D_k = bounceGap − (gap + h·v_n,now) along its normal.
/// Returns the largest D_k (0 when nothing bounced) and its normal in `normal`: a largest value,
/// not the first contact to arrive, so the answer does not jump between nearly simultaneous
/// contacts (float and double then pick the same within rounding).
template <class T>
SMASH_HD bool bounceMove(const SolverBody<T>& aStart, const SolverBody<T>& bStart, const SolverBody<T>& aPredicted,
                         const SolverBody<T>& bPredicted, const SolverBody<T>& aNow, const SolverBody<T>& bNow,
                         const PairContact<T>& c, const ContactMaterial<T>& material, T h, T first, T& move) {
  T vnStart;
  const Closing<T> closing = contactClosing(aStart, bStart, aPredicted, bPredicted, c, h, true, vnStart);
  if (!bounces(closing, vnStart, material)) return false;
  const T vnNow = glm::dot(relativeVelocity(aNow, bNow, c), c.normal);
  move = bounceGap(closingAt(closing, first), restitutionAt(vnStart, material), h) - (closing.gap + h * vnNow);
  return true;
}
template <class T, class Lanes = SerialLanes>
SMASH_HD T bounceTranslation(const SolverBody<T>& aStart, const SolverBody<T>& bStart,
                             const SolverBody<T>& aPredicted, const SolverBody<T>& bPredicted,
                             const SolverBody<T>& aNow, const SolverBody<T>& bNow,
                             const PairContact<T>* c, int count, const ContactMaterial<T>& material,
                             T h, Vec3<T>& normal, const Lanes& lanes = Lanes{}) {
  // Over `lanes`: each lane's largest move (the first on ties), then the lanes' (the smallest
  // contact index on ties) — one lane in order, the first largest.
  bool any = false;
  T best = T(0);
  int index = -1;
  const T first = firstImpact(aStart, bStart, aPredicted, bPredicted, c, count, material, h, true, lanes);
  lanes.forEach(count, [&](int k) {
    T move;
    if (!bounceMove(aStart, bStart, aPredicted, bPredicted, aNow, bNow, c[k], material, h, first, move)) return;
    if (!any || move > best) {
      any = true;
      best = move;
      index = k;
      normal = c[k].normal;
    }
  });
  // Another lane's contact won: its normal (one lane in order: never, and no load — as the chain).
  const int winner = lanes.firstLargest(any, best, index);
  if (winner != index) normal = c[winner].normal;
  return best;
}

/// x / d for d > 0, with x = ±0 not divided (its quotient is x itself): the same bits. A float
/// division on a GPU takes a slow path (a call of ~40 instructions) when x is zero, and contacts
/// on a face have such: a resting contact's tangent on the floor (normal (0, 1, 0)) has t.y = 0,
/// an unloaded contact's friction limit is 0 (Nsight Compute on the H200: two slow paths per
/// contact update in SolveColliderContacts, 1,024 resting bunnies).
template <class T>
SMASH_HD T quotient(T x, T d) {
  return x == T(0) ? x : x / d;
}
template <class T>
SMASH_HD Vec3<T> quotient(const Vec3<T>& x, T d) {
  return Vec3<T>(quotient(x.x, d), quotient(x.y, d), quotient(x.z, d));
}

/// Whether a friction impulse is zero (either sign in each component).
template <class T>
SMASH_HD bool unloaded(const Vec3<T>& lambdaTangent) {
  return lambdaTangent.x == T(0) && lambdaTangent.y == T(0) && lambdaTangent.z == T(0);
}

/// A contact's normal impulse after this update, from the relative normal velocity vn now.
template <class T>
SMASH_HD T normalImpulse(const PairContact<T>& s, T vn) {
  return glm::max(s.lambdaNormal + (s.target - vn) * s.normalMass, T(0));
}
/// A contact that changes nothing (updateContact's early return).
template <class T>
SMASH_HD bool changesNothing(const PairContact<T>& s, T lambda) {
  return lambda == T(0) && s.lambdaNormal == T(0) && unloaded(s.lambdaTangent);
}

/// updateContact from the new normal impulse on, for a contact that changes something.
template <class T, class Relative, class Apply>
SMASH_HD void applyContact(PairContact<T>& s, T lambda, T friction, const Relative& relative, const Apply& apply) {
  apply((lambda - s.lambdaNormal) * s.normal);
  s.lambdaNormal = lambda;
  const Vec3<T> vr = relative();
  const Vec3<T> vt = vr - glm::dot(vr, s.normal) * s.normal;
  const T vtLen = glm::length(vt);
  Vec3<T> lambdaT = s.lambdaTangent;
  if (vtLen > ScalarTraits<T>::epsilon * T(1e-4)) {
    const Vec3<T> t = quotient(vt, vtLen);
    const T kt = glm::dot(t, responseTimes(s.response, t));
    if (kt > ScalarTraits<T>::tiny) lambdaT -= (vtLen / kt) * t;
  }
  const T limit = friction * s.lambdaNormal, len = glm::length(lambdaT);
  if (len > limit) lambdaT *= quotient(limit, len);
  apply(lambdaT - s.lambdaTangent);
  s.lambdaTangent = lambdaT;
}

/// One contact's sequential impulse, the step every sweep takes (sweepContacts): the normal
/// impulse towards the target with the accumulated impulse kept ≥ 0, then friction within the
/// Coulomb cone. `relative()` is the relative velocity at the contact now (a's minus b's),
/// `apply(j)` gives a the impulse j and b −j. `s` is the caller's copy of the contact, which
/// stores its impulses back when this returns true (false: it changed nothing): read as a value,
/// its fields load together, before the stores (on a GPU one wait for memory per contact, not one
/// per field read after a store; Nsight Compute, bench/results/nvidia-h200/ncu/).
template <class T, class Relative, class Apply>
SMASH_HD bool updateContact(PairContact<T>& s, T friction, const Relative& relative, const Apply& apply) {
  const T lambda = normalImpulse(s, glm::dot(relative(), s.normal));
  // A contact that carried nothing and still carries nothing — no normal impulse before or after,
  // no friction impulse before — changes nothing: its normal impulse is 0 − 0, its friction limit
  // μ·0 caps the friction at 0, so what the rest would apply is zero (±0: only the sign of a zero
  // velocity component could differ; with a finite friction coefficient and no overflow — an
  // infinite μ made the limit NaN and let an unloaded contact take friction, which this no longer
  // does). Most points within a resting body's margin hover (φ > 0) and are such; they skip the
  // friction's square roots and divisions (issues 10 and 13).
  if (changesNothing(s, lambda)) return false;
  applyContact(s, lambda, friction, relative, apply);
  return true;
}

/// One Gauss–Seidel sweep over contacts c[0 … count): each contact with a response along its
/// normal (normalMass > 0) updated in order (updateContact). `at(s)` gives, for the contact s, a
/// callable returning the relative velocity at s now (a's minus b's); `apply(s, j)` gives a the
/// impulse j at s and b −j. Every scalar sweep of the solver is this one (pairSweep, sweepOneSided;
/// math/contact_lanes.h sweeps four pairs in SSE lanes to the same bits).
///
/// Over `lanes` (math/lanes.h): one lane (a GPU thread) walks the chain; wider, each step is a
/// scan — the lanes test the next kWidth contacts against the velocities now, and every one before
/// the first that changes something changes nothing (updateContact's early return), as it would in
/// the chain, so that first one is applied — on every lane, each holding the bodies — and the scan
/// resumes after it: the chain's sweep, to the bit (tests/test_contact.cpp "[lanes]").
template <class T, class At, class Apply, class Lanes>
SMASH_HD void sweepContacts(PairContact<T>* c, int count, T friction, const At& at, const Apply& apply,
                            const Lanes& lanes) {
  if constexpr (Lanes::kWidth == 1) {
    for (int k = 0; k < count; ++k) {
      PairContact<T> s = c[k];  // as a value (updateContact)
      if (!(s.normalMass > T(0))) continue;  // immovable along n
      if (!updateContact(s, friction, at(s), [&](const Vec3<T>& j) { apply(s, j); })) continue;
      c[k].lambdaNormal = s.lambdaNormal;
      c[k].lambdaTangent = s.lambdaTangent;
    }
  } else {
    for (int k = 0; k < count;) {
      const int n = count - k < Lanes::kWidth ? count - k : Lanes::kWidth;
      T lambda = T(0);
      const int first = lanes.firstWhere(n, lambda, [&](int i, T& l) {
        const PairContact<T>& s = c[k + i];
        if (!(s.normalMass > T(0))) return false;  // immovable along n
        l = normalImpulse(s, glm::dot(at(s)(), s.normal));
        return !changesNothing(s, l);
      });
      if (first < 0) {
        k += n;
        continue;
      }
      PairContact<T> s = c[k + first];  // as a value (updateContact)
      applyContact(s, lambda, friction, at(s), [&](const Vec3<T>& j) { apply(s, j); });
      lanes.sync();  // every lane has read the contact before the leader stores into it
      if (lanes.leader()) {
        c[k + first].lambdaNormal = s.lambdaNormal;
        c[k + first].lambdaTangent = s.lambdaTangent;
      }
      lanes.sync();
      k += first + 1;
    }
  }
}

/// One Gauss–Seidel sweep over a pair's contacts (sweepContacts): normal impulse towards the
/// target with the accumulated impulse kept ≥ 0, then friction within the Coulomb cone. `a` and
/// `b` are updated as the sweep goes; the impulses it applied are added to `onA` and `onB`
/// (onB = −onA's linear part, with b's own lever arms).
template <class T, class Lanes = SerialLanes>
SMASH_HD void pairSweep(SolverBody<T>& a, SolverBody<T>& b, PairContact<T>* c, int count,
                        T friction, PairImpulse<T>& onA, PairImpulse<T>& onB, const Lanes& lanes = Lanes{}) {
  auto at = [&](const PairContact<T>& s) { return [&] { return relativeVelocity(a, b, s); }; };
  auto apply = [&](const PairContact<T>& s, const Vec3<T>& j) {
    a.v += a.invMass * j;
    a.w += a.invInertia * glm::cross(s.ra, j);
    b.v -= b.invMass * j;
    b.w -= b.invInertia * glm::cross(s.rb, j);
    onA.linear += j;
    onA.angular += glm::cross(s.ra, j);
    onB.linear -= j;
    onB.angular -= glm::cross(s.rb, j);
  };
  sweepContacts(c, count, friction, at, apply, lanes);
}

/// pairSweep with one side immovable — a collider, or a carrier in shock propagation (inverse
/// mass and inertia 0, its velocities fixed): `moving` is the pair's a when AMoves, else its b.
/// The moving side's arithmetic is pairSweep's, term for term; the immovable side's impulses,
/// which are zero, are not computed, nor its velocity at each contact twice (it does not change).
/// Every value that is not zero is pairSweep's to the bit: x ± 0 = x, and a zero can only differ
/// in its sign, which no division or comparison here can see. The contacts' responses must have
/// been prepared for the moving side alone (prepareResponse with no b). About half the work of
/// pairSweep: most of a resting body's step is this loop (32 sweeps over its collider contacts).
/// `onMoving` (may be null) gathers the impulses the moving side received, as pairSweep's onA or
/// onB. `FixedAtRest`: the fixed side is a collider (velocities zero): its point velocity, +0 in
/// every component for finite lever arms (0 + (0·r − 0·r) = +0), is not computed, and x − (+0) = x
/// to the bit, so the relative velocity is the moving side's own.
template <class T, bool AMoves, bool FixedAtRest = false, class Lanes = SerialLanes>
SMASH_HD void sweepOneSided(SolverBody<T>& moving, const SolverBody<T>& fixed, PairContact<T>* c, int count,
                            T friction, PairImpulse<T>* onMoving, const Lanes& lanes = Lanes{}) {
  // relativeVelocity's two terms, a's minus b's point velocity, the fixed side's taken once.
  auto at = [&](const PairContact<T>& s) {
    Vec3<T> vFixed(T(0));
    if constexpr (!FixedAtRest) vFixed = AMoves ? fixed.v + glm::cross(fixed.w, s.rb) : fixed.v + glm::cross(fixed.w, s.ra);
    return [&s, &moving, vFixed] {
      const Vec3<T> vMoving = moving.v + glm::cross(moving.w, AMoves ? s.ra : s.rb);
      if constexpr (FixedAtRest && AMoves) {
        (void)vFixed;  // (captured for the other forms; clang's -Wunused-lambda-capture here)
        return vMoving;
      } else {
        return AMoves ? vMoving - vFixed : vFixed - vMoving;
      }
    };
  };
  auto apply = [&](const PairContact<T>& s, const Vec3<T>& j) {  // j acts on a; b receives −j
    const Vec3<T>& rm = AMoves ? s.ra : s.rb;  // the moving side's lever arm
    if (AMoves) {
      moving.v += moving.invMass * j;
      moving.w += moving.invInertia * glm::cross(rm, j);
      if (onMoving) {
        onMoving->linear += j;
        onMoving->angular += glm::cross(rm, j);
      }
    } else {
      moving.v -= moving.invMass * j;
      moving.w -= moving.invInertia * glm::cross(rm, j);
      if (onMoving) {
        onMoving->linear -= j;
        onMoving->angular -= glm::cross(rm, j);
      }
    }
  };
  sweepContacts(c, count, friction, at, apply, lanes);
}

/// One sweep of a body's collider contacts (the colliders: at rest, immovable). `onBody` (may be
/// null) gathers the impulses the body received.
template <class T, class Lanes = SerialLanes>
SMASH_HD void sweepColliderContacts(SolverBody<T>& body, PairContact<T>* c, int count, T friction,
                                    PairImpulse<T>* onBody, const Lanes& lanes = Lanes{}) {
  const SolverBody<T> wall;
  sweepOneSided<T, true, true>(body, wall, c, count, friction, onBody, lanes);
}

/// A body's sweeps (against the colliders alone, or against its carriers in shock propagation)
/// stop when one changed its velocity by less than 10⁻⁵ of its speed (|v| + r|ω|, r its bounding
/// radius) plus 10⁻⁷ m/s: at 32 fixed sweeps the float and double solves of a pile still differed
/// by 1.4·10⁻⁴ m/s; converged, they agree to rounding, and a resting body stops after a few sweeps.
template <class T>
SMASH_HD bool sweepSettled(const SolverBody<T>& last, const SolverBody<T>& now, T radius) {
  const T change = glm::length(now.v - last.v) + radius * glm::length(now.w - last.w);
  const T speed = glm::length(now.v) + radius * glm::length(now.w);
  return change <= T(1e-5) * speed + T(1e-7);
}

#if SMASH_WALL_SWEEP_SSE
/// sweepColliderContacts on a CPU, its scan four contacts at a time. What the scan tests of a
/// contact — its lever arm, normal, target and normal mass, and whether it carries no impulse — is
/// kept in structure-of-arrays form (`WallScan`, filled once a solve: none of it changes during the
/// sweeps but the carried flag of the contact applied); each lane computes the scalar test's
/// normal impulse with its operations in their order (glm's cross and dot, max as (x < y) ? y : x,
/// no FMA), so the contact found is the chain's first that changes something; it is then applied
/// by the scalar code (applyContact) and the scan resumes after it, in windows of Lanes::kWidth
/// as the lanes scan (the census counts the same). The same bits as the scalar sweep (the golden
/// hashes; tests/test_contact.cpp `[lanes]`). Measured: the scalar scan was a resting bunny's
/// largest cost after the particle loops (a perf profile; docs/pipeline.md).
struct WallScan {
  static constexpr int kMost = 256;  ///< contacts it holds (max_contacts_per_body's default)
  alignas(16) float rx[kMost + 4], ry[kMost + 4], rz[kMost + 4], nx[kMost + 4], ny[kMost + 4], nz[kMost + 4];
  alignas(16) float target[kMost + 4], lambda[kMost + 4], normalMass[kMost + 4];
  alignas(16) float quiet[kMost + 4];  ///< all bits set where λ_N = 0 and λ_T = 0 (±0)
  void fill(const PairContact<float>* c, int count) {
    for (int k = 0; k < count; ++k) {
      rx[k] = c[k].ra.x, ry[k] = c[k].ra.y, rz[k] = c[k].ra.z;
      nx[k] = c[k].normal.x, ny[k] = c[k].normal.y, nz[k] = c[k].normal.z;
      target[k] = c[k].target, normalMass[k] = c[k].normalMass;
      mark(k, c[k]);
    }
    for (int k = count; k < count + 4; ++k) {  // padding that never changes anything
      rx[k] = ry[k] = rz[k] = nx[k] = ny[k] = nz[k] = target[k] = lambda[k] = 0.0f;
      normalMass[k] = 0.0f;
      quiet[k] = 0.0f;
    }
  }
  void mark(int k, const PairContact<float>& s) {
    lambda[k] = s.lambdaNormal;
    const bool q = s.lambdaNormal == 0.0f && unloaded(s.lambdaTangent);
    std::uint32_t bits = q ? 0xffffffffu : 0u;
    std::memcpy(&quiet[k], &bits, sizeof bits);
  }
  /// Bits 0–3: whether contacts k … k + 3 change something at the body's velocity (v, w).
  int changes(int k, __m128 vx, __m128 vy, __m128 vz, __m128 wx, __m128 wy, __m128 wz) const {
    const __m128 ax = _mm_loadu_ps(rx + k), ay = _mm_loadu_ps(ry + k), az = _mm_loadu_ps(rz + k);
    // v + glm::cross(w, r), then glm::dot with n.
    const __m128 ux = _mm_add_ps(vx, _mm_sub_ps(_mm_mul_ps(wy, az), _mm_mul_ps(ay, wz)));
    const __m128 uy = _mm_add_ps(vy, _mm_sub_ps(_mm_mul_ps(wz, ax), _mm_mul_ps(az, wx)));
    const __m128 uz = _mm_add_ps(vz, _mm_sub_ps(_mm_mul_ps(wx, ay), _mm_mul_ps(ax, wy)));
    const __m128 vn = _mm_add_ps(_mm_add_ps(_mm_mul_ps(ux, _mm_loadu_ps(nx + k)), _mm_mul_ps(uy, _mm_loadu_ps(ny + k))),
                                 _mm_mul_ps(uz, _mm_loadu_ps(nz + k)));
    // normalImpulse: max(λ_N + (target − v_n) m_n, 0), glm's max (l < 0) ? 0 : l = MAXPS(0, l).
    const __m128 mass = _mm_loadu_ps(normalMass + k);
    const __m128 l = _mm_add_ps(_mm_loadu_ps(lambda + k), _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(target + k), vn), mass));
    const __m128 zero = _mm_setzero_ps();
    const __m128 impulse = _mm_max_ps(zero, l);
    // Changes something: movable along n (m_n > 0) and not (impulse 0 and carrying nothing).
    const __m128 nothing = _mm_and_ps(_mm_cmpeq_ps(impulse, zero), _mm_loadu_ps(quiet + k));
    return _mm_movemask_ps(_mm_andnot_ps(nothing, _mm_cmpgt_ps(mass, zero)));
  }
};

template <class Lanes>
inline void sweepWallScan(SolverBody<float>& body, PairContact<float>* c, int count, float friction, WallScan& scan,
                          const Lanes& lanes) {
  auto relative = [&](const PairContact<float>& s) { return [&s, &body] { return body.v + glm::cross(body.w, s.ra); }; };
  auto apply = [&](const PairContact<float>& s, const Vec3<float>& j) {
    body.v += body.invMass * j;
    body.w += body.invInertia * glm::cross(s.ra, j);
  };
  for (int k = 0; k < count;) {
    const int n = count - k < Lanes::kWidth ? count - k : Lanes::kWidth;
    const __m128 vx = _mm_set1_ps(body.v.x), vy = _mm_set1_ps(body.v.y), vz = _mm_set1_ps(body.v.z);
    const __m128 wx = _mm_set1_ps(body.w.x), wy = _mm_set1_ps(body.w.y), wz = _mm_set1_ps(body.w.z);
    int first = -1;
    for (int g = 0; g < n; g += 4) {
      int mask = scan.changes(k + g, vx, vy, vz, wx, wy, wz);
      if (n - g < 4) mask &= (1 << (n - g)) - 1;
      if (mask) {
        first = g + __builtin_ctz(static_cast<unsigned>(mask));
        break;
      }
    }
    lanes.countScan(first >= 0);
    if (first < 0) {
      k += n;
      continue;
    }
    PairContact<float> s = c[k + first];
    const float lambda = normalImpulse(s, glm::dot(relative(s)(), s.normal));
    applyContact(s, lambda, friction, relative(s), [&](const Vec3<float>& j) { apply(s, j); });
    c[k + first].lambdaNormal = s.lambdaNormal;
    c[k + first].lambdaTangent = s.lambdaTangent;
    scan.mark(k + first, s);
    k += first + 1;
  }
}
#endif

/// A body alone against static colliders (the n = 1 case of mass splitting): Gauss–Seidel sweeps
/// over its contacts, `iterations` of them, or (`untilSettled`) until one leaves its velocities
/// settled (sweepSettled, `radius` its bounding radius), at most `iterations`. `body` holds the
/// result. Warm-started (resolveAgainstStatic), a resting body needs a few; cold, the 32 sweeps of
/// a bunny on the floor (95 contacts) left it moving at 1.5–1.9·10⁻⁵ m/s, the velocity shrinking
/// by only 0.86 a sweep (docs/solver.md, "Warm starts against the colliders").
///
/// Spread over `lanes` (math/lanes.h): the responses one contact to a lane, and each sweep a scan
/// for the next contact that changes something (sweepOneSided) — the same sweeps to the bit.
template <class T, class Lanes = SerialLanes>
SMASH_HD void solveAgainstStatic(SolverBody<T>& body, PairContact<T>* c, int count, T friction,
                                 int iterations, bool untilSettled, T radius, const Lanes& lanes = Lanes{}) {
  prepareResponse<T>(body, nullptr, c, count, true, lanes);
#if SMASH_WALL_SWEEP_SSE
  if constexpr (std::is_same_v<T, float> && Lanes::kWidth > 1) {  // (one lane: the chain, counted as such)
    if (count <= WallScan::kMost) {
      WallScan scan;
      scan.fill(c, count);
      for (int it = 0; it < iterations; ++it) {
        const SolverBody<T> last = body;
        sweepWallScan(body, c, count, friction, scan, lanes);
        if (untilSettled && sweepSettled(last, body, radius)) break;
      }
      return;
    }
  }
#endif
  for (int it = 0; it < iterations; ++it) {
    const SolverBody<T> last = body;
    sweepColliderContacts<T>(body, c, count, friction, nullptr, lanes);
    if (untilSettled && sweepSettled(last, body, radius)) break;
  }
}

/// Contacts act before the position update (semi-implicit Euler): the predicted pose moved with
/// the velocities before the solve, so it moves with the velocity change too — a resting body's
/// fall during the prediction is taken back here, not left as penetration.
template <class T>
SMASH_HD void moveWithVelocityChange(Vec3<T>& centre, Mat3<T>& rotation, const Vec3<T>& dv,
                                     const Vec3<T>& dw, T h) {
  centre += h * dv;
  rotation = rotationMatrix(integrateOrientation(quaternionFromRotation(rotation), dw, h));
}

/// The world inertia of a solver body, the inverse of its inverse inertia, for the energy bounds
/// of a body alone against the colliders (limitStaticWork, limitBounceEnergy): false for a static
/// body or one whose inverse inertia cannot be inverted (inf, NaN or singular), which the bounds
/// leave as solved. (Each computes it: kept live across the bounce's placement, SolveColliderContacts
/// took 109 registers instead of 102.)
template <class T>
SMASH_HD bool inertiaOfSolverBody(const SolverBody<T>& body, Mat3<T>& inertia) {
  if (!(body.invMass > T(0))) return false;
  const T det = glm::determinant(body.invInertia);
  if (!(det > ScalarTraits<T>::tiny) || !(det * T(0) == T(0))) return false;  // (inf or NaN: not 0)
  inertia = glm::inverse(body.invInertia);
  return true;
}

/// A static collider does no work (issue 11): after the solve a body alone against colliders
/// may not leave with more kinetic energy than it approached with — the approach's linear speed
/// with twice the step's velocity update added (gravity's work within the step: the integrator's
/// velocity after a bounce at τ within the step is the approach speed plus 2 g τ, the bounced
/// parabola sampled by semi-implicit Euler; off a ceiling a body leaves faster than it came) and
/// its spin as approached (`approach`: the start's angular momentum at the predicted pose), both
/// at the predicted pose. The restitution targets ask for no
/// more, but the sweeps meet them only where they converge: on a thin rod's two ends with
/// restitution 1 the 32 sweeps ended above them, and over 300 steps in a zero-gravity container
/// a rod's energy grew by up to 95% (tests/test_free_rotation.cpp). Beyond the bound the solve's
/// velocity change is scaled back by s < 1, the largest with E(s) within it — along s the energy
/// is a parabola whose minimum lies below the bound, so s keeps at least the elastic reflection
/// along the change.
template <class T>
SMASH_HD void limitStaticWork(SolverBody<T>& body, const SolverBody<T>& predicted, const SolverBody<T>& approach) {
  Mat3<T> inertia(T(0));
  if (!inertiaOfSolverBody(body, inertia)) return;
  const Vec3<T> dv = body.v - predicted.v, dw = body.w - predicted.w;
  const T m = T(1) / body.invMass;
  const Vec3<T> Ip = inertia * predicted.w, Idw = inertia * dw;
  // E(s) − E(0) = a s + b s² for the velocities predicted + s (change).
  const T a = m * glm::dot(predicted.v, dv) + glm::dot(dw, Ip);
  const T b = T(0.5) * (m * glm::dot(dv, dv) + glm::dot(dw, Idw));
  const T speed = glm::length(approach.v) + T(2) * glm::length(predicted.v - approach.v);
  // (At least 0: the linear part is but for rounding, |v_p| ≤ speed; the spin's part can be below
  // it where shape matching's predicted L holds the particle impulses of physics.md §2.2.)
  const T allow = glm::max(T(0.5) * m * (speed * speed - glm::dot(predicted.v, predicted.v)) +
                               T(0.5) * (glm::dot(approach.w, inertia * approach.w) - glm::dot(predicted.w, Ip)),
                           T(0));
  if (!(a + b > allow) || !(b > T(0))) return;
  const T s = (-a + glm::sqrt(a * a + T(4) * b * allow)) / (T(2) * b);
  if (!(s >= T(0) && s < T(1))) return;
  body.v = predicted.v + s * dv;
  body.w = predicted.w + s * dw;
}

/// The larger root s of γ s² + β s = c (γ > 0), without the cancellation of −β + √disc for β > 0;
/// false where there is none (disc < 0). limitBounceEnergy's and limitPushWork's scalings of a
/// velocity change, whose energy is a parabola in s.
template <class T>
SMASH_HD bool largerRoot(T beta, T gamma, T c, T& s) {
  const T disc = beta * beta + T(4) * gamma * c;
  if (!(disc >= T(0))) return false;
  s = beta > T(0) ? T(2) * c / (beta + glm::sqrt(disc)) : (-beta + glm::sqrt(disc)) / (T(2) * gamma);
  return true;
}

/// A static collider does no work, across the whole bounce (issue 11): after the solve, the
/// pose's move with the velocity change (h s Δv) and the bounce's placement (`lift` along
/// `normal`), the body's E* = KE + PE(c − h v/2) — the energy semi-implicit Euler keeps in free
/// flight, to rounding — may not exceed the step's start's (`approach`'s velocities, its spin as
/// in limitStaticWork, at the start centre c_p − h v_p, c_p = `moveFrom` the predicted centre).
/// limitStaticWork bounds the kinetic energy alone and allows gravity's work in the step (twice
/// the step's velocity update), which a bounce off a plane needs; on a thin rod's multi-point
/// landing at restitution 1 the sweeps used that room: a 0.6 m rod dropped spinning gained 9.8%
/// of its energy in one bounce on the reference, 26–53% over 10 s on omp with shape matching.
/// Beyond the start's E*, first a lift against gravity is taken back as far as it raised E*, then
/// the velocity change and the move with it are scaled back by the largest s < 1 with E*(s)
/// within it; returns s (1: nothing scaled). `predicted`: the velocities before the solve.
template <class T>
SMASH_HD T limitBounceEnergy(SolverBody<T>& body, const SolverBody<T>& predicted, const SolverBody<T>& approach,
                             T& lift, const Vec3<T>& normal, const Vec3<T>& gravity, T h) {
  Mat3<T> inertia(T(0));
  if (!inertiaOfSolverBody(body, inertia)) return T(1);
  const T m = T(1) / body.invMass;
  const Vec3<T> dv = body.v - predicted.v, dw = body.w - predicted.w;
  const Vec3<T> Ip = inertia * predicted.w;
  const T kePredicted = T(0.5) * (m * glm::dot(predicted.v, predicted.v) + glm::dot(predicted.w, Ip));
  const T keApproach = T(0.5) * (m * glm::dot(approach.v, approach.v) + glm::dot(approach.w, inertia * approach.w));
  // E*(s) − E*(start) = α + β s + γ s², the end at c_p + h s Δv + lift n with the velocities
  // predicted + s (change): its c − h v/2 − (c_start − h v_a/2) = lift n + h/2 (v_p + v_a) + h/2 s Δv;
  // PE(x) = −m g·x.
  const T rise = -m * glm::dot(gravity, normal);  // dE*/d lift
  T alpha = kePredicted - keApproach - T(0.5) * m * h * glm::dot(gravity, predicted.v + approach.v) + rise * lift;
  const T beta = m * glm::dot(predicted.v, dv) + glm::dot(dw, Ip) - T(0.5) * m * h * glm::dot(gravity, dv);
  const T gamma = T(0.5) * (m * glm::dot(dv, dv) + glm::dot(dw, inertia * dw));
  // Rounding's slack: a body at rest, or bounced elastically, sits on the bound itself.
  const T slack = T(1e-5) * (kePredicted + keApproach + gamma + glm::abs(beta)) + ScalarTraits<T>::tiny;
  if (!(alpha + beta + gamma > slack)) return T(1);
  if (lift > T(0) && rise > T(0)) {
    const T back = glm::min(lift, (alpha + beta + gamma - slack) / rise);
    lift -= back;
    alpha -= rise * back;
  }
  if (!(alpha + beta + gamma > slack) || !(gamma > T(0))) return T(1);
  T scale = T(1);
  if (!largerRoot(beta, gamma, slack - alpha, scale)) return T(1);
  if (!(scale >= T(0) && scale < T(1))) return T(1);
  body.v = predicted.v + scale * dv;
  body.w = predicted.w + scale * dw;
  return scale;
}

/// limitPushWork's stop at one point. An impulse J n (n the push's direction, g·n < 0) at a point
/// whose velocity along n is u < 0 and whose inverse effective mass along n is k changes E* by
/// J (u + h g·n / 2) + J² k / 2 — the potential part from c − h v/2; `halfGn` = h g·n / 2 —
/// falling for J up to −u/k (the point's approach stopped). In units of the point's velocity
/// change Δ = J k: Δ a + Δ² / 2 per 1/k, a = u + halfGn; returns Δ, the smaller root of a change
/// of −excess (`twiceExcessK` = 2 excess k), without the cancellation of −a − √disc (a < 0), at
/// most −u.
template <class T>
SMASH_HD T pushStop(T u, T halfGn, T twiceExcessK) {
  const T a = u + halfGn;
  const T disc = a * a - twiceExcessK;
  return disc >= T(0) ? glm::min(-u, twiceExcessK / (-a + glm::sqrt(disc))) : -u;
}

/// The push-out does no work past the step's start, as far as the body's approach allows (issue
/// 11): after a lone body's collider contacts and push-out, the excess of its E* = KE + PE(c − h v/2)
/// over the start's (`startV`, `startW` at `startRotation`; `fromStart` = c − c_start) beyond
/// rounding is taken back, at most the push-out's own lift against gravity (−m g·pushed, `pushed`
/// the centre's move by the push-out; a push that does not rise against gravity is left). The push-out moves the pose out of a collider without touching
/// the velocities; where the solve found nothing to stop — a rod spinning at 0.77 rad a step whose
/// end passes through the floor within the step and rises again by its end, so every contact
/// separates at the predicted pose — the body kept falling while each step's push-out lifted it:
/// a 0.6 m rod dropped spinning at e = 1 gained 79% of its energy in 30 steps (omp, shape
/// matching; experiments/hostile-2026-12-07). The excess is taken from the centre's approach
/// along the push: an impulse through the centre along the push's direction that at most stops
/// that approach, never reverses it — the inelastic part of a contact (not along −g: a body
/// sliding down a slope falls without approaching the slope's normal). What the centre cannot
/// give comes off the approach of the push's deepest point (`at` its arm from the centre at the
/// end pose, `atStart` the same particle's from the start's centre at the start's rotation, both
/// in the world; 0: none), by an
/// impulse there along the push that at most stops it: a rod that its bounce spun up and sent
/// rising, its far end swung into the floor within the step, gained 7.7% in one step with
/// nothing falling to stop. Last, the collider solve's own velocity change is scaled back (from
/// `solvedFromV`, `solvedFromW`, the velocities before the solve, ω turned with the pose; the
/// current velocities where nothing was solved) with the pose where the push-out left it. What
/// none of them can take stays: scaling the spin down instead stopped the lab bunny's spin every
/// step under the averaged impulse, which then slid it out of the scene (docs/solver.md, "The
/// push-out's work"). `inertia` and `invInertia` in the body frame. Only for contacts after the move (the pose at the step's end, where E* is the energy kept). `far`:
/// the largest centre coordinate of either pose, whose rounding `pushed` and `fromStart` carry
/// (differences of float centres: ~ulp(far) each) and the slack allows for (10⁻⁶ far m|g|, 8
/// float ε).
template <class T>
SMASH_HD void limitPushWork(Vec3<T>& v, Vec3<T>& w, const Mat3<T>& rotation, const Vec3<T>& pushed,
                            const Vec3<T>& at, const Vec3<T>& atStart, const Vec3<T>& startV, const Vec3<T>& startW,
                            const Mat3<T>& startRotation, const Vec3<T>& fromStart, T far, T mass,
                            const Mat3<T>& inertia, const Mat3<T>& invInertia, const Vec3<T>& gravity, T h,
                            const Vec3<T>& solvedFromV, const Vec3<T>& solvedFromW) {
  const T rise = -mass * glm::dot(gravity, pushed);
  if (!(rise > T(0))) return;
  const Vec3<T> wb = glm::transpose(rotation) * w, wbStart = glm::transpose(startRotation) * startW;
  const T ke = T(0.5) * (mass * glm::dot(v, v) + glm::dot(wb, inertia * wb));
  const T keStart = T(0.5) * (mass * glm::dot(startV, startV) + glm::dot(wbStart, inertia * wbStart));
  // E* − E*_start, the potential part from the centres' difference (not from each centre's
  // height: far from the origin those round to more than a resting body's energies).
  const T gain = ke - keStart - mass * glm::dot(gravity, fromStart - T(0.5) * h * (v - startV));
  // (The float allowance in double too: the reference decides as the float backends do.)
  const T slack = T(1e-5) * (ke + keStart) + T(1e-6) * far * mass * glm::length(gravity) + ScalarTraits<T>::tiny;
  T excess = glm::min(gain - slack, rise);
  if (!(excess > T(0))) return;
  const Vec3<T> n = pushed / glm::length(pushed);
  const T halfGn = T(0.5) * h * glm::dot(gravity, n);
  // First the centre (k = 1/m): the inelastic part of the contacts the solve did not see.
  const T vn = glm::dot(v, n);
  if (vn < T(0)) {
    const T delta = pushStop(vn, halfGn, T(2) * excess / mass);
    if (delta > T(0)) v += delta * n;
    if (delta < -vn) return;                                  // all of it
    excess += mass * delta * (vn + halfGn + T(0.5) * delta);  // what the centre's stop took
  }
  // Then the rest from the push's deepest point: a body whose bounce spun it up and sent it
  // rising, its far end swung into the floor within the step, has no fall of its centre to stop —
  // the far end's approach is the contact the step did not resolve. First at the end pose (`at`,
  // from the centre; 0: none), then where the point was at the step's start (`atStart`, from the
  // start's centre, at the start's rotation): a rod spinning at 1 rad a step swings its end down
  // through the floor and up again within the step, rising at the end pose — it was approaching
  // at the start. An impulse J n at arm r: k = 1/m + (r × n)·I⁻¹(r × n) (world inverse inertia
  // R I⁻¹ Rᵀ, `invInertia` in the body frame, at the end pose, where the velocities are). (One
  // loop, not a lambda called twice: on CUDA the lambda took 80 registers, the loop 72; the arms
  // in the body frame 76.)
  for (int stage = 0; stage < 2 && excess > T(0); ++stage) {
    const Vec3<T> r = stage == 0 ? at : atStart;
    const Vec3<T> rn = glm::cross(r, n);
    const T u = glm::dot(v + glm::cross(w, r), n);
    if (!(u < T(0))) continue;
    const Vec3<T> turn = rotation * (invInertia * (glm::transpose(rotation) * rn));
    const T k = T(1) / mass + glm::dot(rn, turn);
    const T delta = pushStop(u, halfGn, T(2) * excess * k);
    if (!(delta > T(0))) continue;
    const T impulse = delta / k;
    v += (impulse / mass) * n;
    w += impulse * turn;
    excess += impulse * (u + halfGn + T(0.5) * delta);
  }
  // Last, the bounce itself: the collider solve's velocity change (from `solvedFromV`,
  // `solvedFromW`, the velocities before it, ω turned with the pose; the stages' impulses with
  // it) scaled back by s < 1 — limitBounceEnergy's scaling with the pose where the push-out left
  // it. limitBounceEnergy allows the bounce the energy its placement's lowering frees; where the
  // push-out lifts the body back, that credit was never there: a rod whose bounce turned it 2.6
  // rad in the step, placed 0.11 m down and pushed 0.16 m up, gained 7.4%. With the pose fixed,
  // E*(s) − E*(1) = β (s − 1) + γ (s² − 1), β = m v_p·Δv + Δω·I ω_p + (m h/2) g·Δv,
  // γ = ½ (m Δv·Δv + Δω·I Δω); s the larger root for −excess, or the minimum where the parabola
  // does not reach it, at least 0 (the change never reversed).
  if (!(excess > T(0))) return;
  const Vec3<T> dv = v - solvedFromV, dwb = glm::transpose(rotation) * (w - solvedFromW);
  const Vec3<T> wpb = glm::transpose(rotation) * solvedFromW;
  const T beta = mass * glm::dot(solvedFromV, dv) + glm::dot(dwb, inertia * wpb) + T(0.5) * mass * h * glm::dot(gravity, dv);
  const T gamma = T(0.5) * (mass * glm::dot(dv, dv) + glm::dot(dwb, inertia * dwb));
  if (!(gamma > T(0))) return;
  T s = -beta / (T(2) * gamma);           // the minimum, where no s reaches the excess
  largerRoot(beta, gamma, beta + gamma - excess, s);
  s = glm::max(s, T(0));
  if (!(s < T(1))) return;
  v = solvedFromV + s * dv;
  w = solvedFromW + s * (w - solvedFromW);
}

/// Twice the rotational energy of world ω `w` at pose `r` (`inertia` in the body frame).
template <class T>
SMASH_HD T twiceSpinEnergy(const Mat3<T>& r, const Vec3<T>& w, const Mat3<T>& inertia) {
  const Vec3<T> wb = glm::transpose(r) * w;
  return glm::dot(wb, inertia * wb);
}
/// ω after a pose correction turned the body from `before` to `after` (a pair body's
/// FinishPairBodies, the reference's finishPairBodies): the world ω the solve left, scaled down
/// where at the turned pose it has more energy than at `before` (`inertia` in the body frame).
/// Left alone, the turn moved a spinning rod's spin about its long axis across it (245 times the
/// inertia) and a rod dropped on a slab body went from 48.7 to 93.5 kJ in two steps; turned with
/// the pose, as a lone body's ω is (resolveAgainstStatic), the ten bunnies of bunny_grid did not
/// come to rest on the reference (one bunny in contact on the sphere collider spun up from 340 J
/// to 5.6 kJ over 100 steps): capped, both hold.
/// `e0`: twiceSpinEnergy at `before`, taken before the correction (only it stays live across).
template <class T>
SMASH_HD Vec3<T> capTurnEnergy(T e0, const Mat3<T>& after, const Vec3<T>& w, const Mat3<T>& inertia) {
  const T e1 = twiceSpinEnergy(after, w, inertia);
  return e1 > e0 ? glm::sqrt(e0 / e1) * w : w;
}

/// A body alone against static colliders, the whole of it: targets (`start`: the body's approach
/// velocities, step_kernels.h withApproachVelocities), the solve's work limited (limitStaticWork),
/// and (`warm`) the warm start from `previous` (the body's collider contacts
/// of the last step, `previousCount` of them) and sweeps until the velocities settle
/// (solveAgainstStatic, `radius` the body's bounding radius) — or, not `warm`, a cold solve of
/// `iterations` sweeps (a scene whose bodies touch: docs/solver.md, "Warm starts against the
/// colliders") — and, when the contacts were found at the predicted pose (`moved`), the pose
/// moved with the velocity change and placed by a bounce, the whole bounce doing no work
/// (limitBounceEnergy, `gravity` the scene's g), ω turned with it (the body-frame spin is
/// the solve's: left fixed in the world, a spinning rod's spin about its long axis ended across
/// it, where the inertia is 245 times larger — docs/solver.md, "A spinning body's collider
/// contacts"). `body` holds the velocities before the
/// solve on entry and after it on return; centre and rotation are the body's pose. The backends
/// (solveColliderContacts) and the reference call this one function.
///
/// Spread over `lanes` (math/lanes.h; CUDA: a warp a body): each pass over the contacts that is
/// independent per contact — the first impact, the targets, the warm start's matches, the
/// responses, the bounce's candidates — one contact to a lane; the warm start's sums in contact
/// order; the sweeps as scans (sweepOneSided). One lane in order is the chain, to the bit.
template <class T, class Previous, class Lanes = SerialLanes>
SMASH_HD void resolveAgainstStatic(Vec3<T>& centre, Mat3<T>& rotation, SolverBody<T>& body,
                                   const SolverBody<T>& start, PairContact<T>* c, int count,
                                   const Previous* previous, int previousCount, bool warm,
                                   const ContactMaterial<T>& material, T h, int iterations, T radius, bool moved,
                                   const Vec3<T>& gravity, const Lanes& lanes = Lanes{}) {
  const SolverBody<T> wall, predicted = body;
  contactTargets(start, wall, body, wall, c, count, material, h, moved, lanes);
  if (warm) {
    Vec3<T> linear(T(0)), angular(T(0));
    warmStartContacts(c, count, previous, previousCount, material.friction, linear, angular, lanes);
    body.v += body.invMass * linear;
    body.w += body.invInertia * angular;
  }
  solveAgainstStatic(body, c, count, material.friction, iterations, warm, radius, lanes);
  limitStaticWork(body, predicted, start);
  if (!moved) return;
  const Mat3<T> before = rotation;
  const Vec3<T> moveFrom = centre;
  moveWithVelocityChange(centre, rotation, body.v - predicted.v, body.w - predicted.w, h);
  Vec3<T> normal(T(0));
  T lift = bounceTranslation(start, wall, predicted, wall, body, wall, c, count, material, h, normal, lanes);
  if (limitBounceEnergy(body, predicted, start, lift, normal, gravity, h) < T(1)) {
    centre = moveFrom;  // the move again, with the velocity change scaled back
    rotation = before;
    moveWithVelocityChange(centre, rotation, body.v - predicted.v, body.w - predicted.w, h);
  }
  centre += lift * normal;
  body.w = rotation * (glm::transpose(before) * body.w);
}

/// Shock propagation (Guendelman, Bridson & Fedkiw, "Nonconvex rigid bodies with stacking", 2003;
/// Erleben, "Velocity-based shock propagation", 2007). Jacobi rounds with mass splitting converge
/// at a rate set by the mass ratio: a box 100 times heavier than the one it stands on sank into
/// it and toppled (issue 11). After the rounds, the bodies in touching pairs are ordered by their
/// distance in the contact graph from the colliders — level 0 touches a collider, level k touches
/// level k − 1 — and solved level by level upwards, each body against the colliders (level 0) or
/// against its lower neighbours (level k), which count as static: their velocities and poses are
/// final. A body then cannot sink into what carries it whatever the masses, and each level is one
/// pass over the bodies. Levels beyond `shock_levels` and bodies no path connects to a collider
/// keep the rounds' result.
///
/// Only contacts that hold a body up count (Guendelman et al. order by gravity): a collider
/// contact whose normal is within 60° of up (−g), a pair whose summed contact normal is — the
/// body above rests on the one below. A body touching a container's side wall is not level 0,
/// and a body under it is not carried by it (measured: counting every contact, the 100-body pile
/// in a box ended with 7% interpenetration and 32 J).
constexpr int kNoLevel = 1 << 30;  ///< not connected to a collider within the levels

/// Whether a contact normal n (or a sum of them) holds a body up: within 60° of `up`.
template <class T>
SMASH_HD bool holdsUp(const Vec3<T>& n, const Vec3<T>& up) {
  return glm::dot(n, up) > T(0.5) * glm::length(n);
}

/// Which body of a pair rests on the other: +1 a on b, −1 b on a, 0 neither (from the sum of the
/// contact normals, which point from b towards a).
template <class T>
SMASH_HD int pairSupport(const PairContact<T>* c, int count, const Vec3<T>& up) {
  Vec3<T> sum(T(0));
  for (int k = 0; k < count; ++k) sum += c[k].normal;
  return holdsUp(sum, up) ? 1 : holdsUp(-sum, up) ? -1 : 0;
}

/// A body touching the colliders rests on them: one of its collider contacts holds it up.
template <class T>
SMASH_HD bool restsOnCollider(const PairContact<T>* c, int count, const Vec3<T>& up) {
  for (int k = 0; k < count; ++k)
    if (holdsUp(c[k].normal, up)) return true;
  return false;
}

/// A body against static partners: its velocities change, the partner's not (its inverse mass
/// and inertia count as 0; sweepOneSided does not read them). `selfIsA`:
/// the body is the pair's a. The contacts' accumulated impulses carry the change (warm start).
/// `onSelf` gathers the impulses the body received.
template <class T, class Lanes = SerialLanes>
SMASH_HD void sweepAgainstCarrier(SolverBody<T>& self, SolverBody<T> carrier, bool selfIsA, PairContact<T>* c,
                                  int count, T friction, PairImpulse<T>& onSelf, const Lanes& lanes = Lanes{}) {
  if (selfIsA)
    sweepOneSided<T, true>(self, carrier, c, count, friction, &onSelf, lanes);
  else
    sweepOneSided<T, false>(self, carrier, c, count, friction, &onSelf, lanes);
}

/// Shock propagation only takes energy out: a body's velocity change in its pass (impulses J,
/// angular J_ω, from `before` to `after`) is scaled by the largest s ≤ 1 that does not raise its
/// kinetic energy, ΔE(s) = s (v·J + ω·J_ω) + s² (Δv·J + Δω·J_ω)/2 ≤ 0. Without it, a body landing
/// on one that the rounds had bounced up was lifted with it: bodies poured into a bowl gained
/// 60% of their kinetic energy within four steps and one left the bowl.
template <class T>
SMASH_HD void keepEnergyDown(const SolverBody<T>& before, SolverBody<T>& after, const PairImpulse<T>& j) {
  const Vec3<T> dv = after.v - before.v, dw = after.w - before.w;
  const T b = glm::dot(before.v, j.linear) + glm::dot(before.w, j.angular);
  const T a = (glm::dot(dv, j.linear) + glm::dot(dw, j.angular)) / T(2);
  T scale = T(1);
  if (!(b < T(0)))
    scale = T(0);
  else if (a > -b)
    scale = -b / a;
  if (scale == T(1)) return;
  after.v = scale > T(0) ? before.v + scale * dv : before.v;
  after.w = scale > T(0) ? before.w + scale * dw : before.w;
}

/// The targets of shock propagation: non-penetration (contactTargets' speculative part, `hold`,
/// from the velocities before the solve), and a bounce kept as far as the rounds achieved it,
/// target = max(hold, min(target, v_n now)) — against a collider and against a carrier body
/// alike. Taking the bounce back made a body that touches another land dead on the floor, and,
/// against a carrier, a body dropped on a body resting on the ground land dead on it (issue 11:
/// a 0.1 m box dropped 1 m with e = 1 onto a 0.6 m box did not rebound at all; now it rises back
/// to 1 m, both methods, mass ratios 1 and 1,000: tests/test_body_contacts.cpp). An earlier
/// session kept `hold` only against carriers because a 100:1 stack with restitution 0.2 at
/// threshold 0 kept a 2–30 mm/s jitter with this rule (0.13–0.19 m/s with the full restitution
/// targets); with two substeps it now rests with either rule (10⁻⁹ m/s after 5,000 steps, both
/// methods), as do the heavy-stack tests. `aNow`, `bNow`: the velocities as the
/// pass starts (the carrier's are final). `againstStatic`: the gap is taken ahead by the predicted
/// approach (a collider does not move); against a carrier, φ as found.
template <class T>
SMASH_HD void shockTarget(const SolverBody<T>& aPredicted, const SolverBody<T>& bPredicted, const SolverBody<T>& aNow,
                          const SolverBody<T>& bNow, PairContact<T>& c, T h, bool againstStatic) {
  const T vn = glm::dot(relativeVelocity(aPredicted, bPredicted, c), c.normal);
  const T gap = againstStatic ? c.phi - h * vn : c.phi;
  const T hold = gap > T(0) ? -gap / h : T(0);
  const T now = glm::dot(relativeVelocity(aNow, bNow, c), c.normal);
  c.target = glm::max(hold, glm::min(c.target, now));
}
template <class T, class Lanes = SerialLanes>
SMASH_HD void shockTargets(const SolverBody<T>& aPredicted, const SolverBody<T>& bPredicted, const SolverBody<T>& aNow,
                           const SolverBody<T>& bNow, PairContact<T>* c, int count, T h, bool againstStatic,
                           const Lanes& lanes = Lanes{}) {
  lanes.forEach(count, [&](int k) { shockTarget(aPredicted, bPredicted, aNow, bNow, c[k], h, againstStatic); });
}

/// Where a point carried by a body, at offset r from its centre when the body was at (centre0,
/// rotation0), has moved to at (centre, rotation): the anchor update of Box2D v3's relax step.
template <class T>
SMASH_HD Vec3<T> anchorMotion(const Vec3<T>& centre, const Mat3<T>& rotation, const Vec3<T>& centre0,
                              const Mat3<T>& rotation0, const Vec3<T>& r) {
  return centre - centre0 + rotation * (glm::transpose(rotation0) * r) - r;
}

/// The smallest separation now of a pair's contacts, found when the bodies were at their `0`
/// poses (φ along the normal, corrected by the motion of both anchors since), and its normal
/// (from b towards a). Returns a large value for no contacts.
template <class T>
SMASH_HD T separationNow(const PairContact<T>* c, int count, const Vec3<T>& ca, const Mat3<T>& Ra,
                         const Vec3<T>& ca0, const Mat3<T>& Ra0, const Vec3<T>& cb, const Mat3<T>& Rb,
                         const Vec3<T>& cb0, const Mat3<T>& Rb0, Vec3<T>& normal) {
  T least = T(1e30);
  for (int k = 0; k < count; ++k) {
    const Vec3<T> d = anchorMotion(ca, Ra, ca0, Ra0, c[k].ra) - anchorMotion(cb, Rb, cb0, Rb0, c[k].rb);
    const T s = c[k].phi + glm::dot(d, c[k].normal);
    if (s < least) {
      least = s;
      normal = c[k].normal;
    }
  }
  return least;
}

/// Push-out: at most this many passes over the colliders, each moving the body out of one
/// collider along the normal of its deepest point; a pass that moves nothing ends it.
constexpr int kPushOutPasses = 5;

/// How far any point of a body (bounding radius `radius`) moved from the pose (c0, R0) to
/// (c1, R1): |Δc| + turnChord · radius, in arithmetic the GPU compiler does not contract (every
/// kernel that decides whether a body is swept must decide the same: math/swept.h mulRn).
template <class T>
SMASH_HD T poseTravel(const Vec3<T>& c0, const Mat3<T>& R0, const Vec3<T>& c1, const Mat3<T>& R1, T radius) {
  return addRn(lengthRn(Vec3<T>(c1 - c0)), mulRn(turnChord(R0, R1), radius));
}

/// Where the push-out of a body comes from this step (its pose at the step's start) and whether
/// it looks there at all: the push-out samples collider k swept (math/swept.h, from each
/// particle's place at `centre`, `rotation`) where the body's travel from that pose to the pose
/// the push-out starts at may have taken a particle past the collider's middle (maySweep) — as
/// the gather did. Otherwise a particle that the step carried past the middle of a thin collider
/// reads the far face as its nearest and is pushed out through it: a box landing on a 1 cm slab
/// with a tumble, its far edge moving 1.3 cm a step, was pushed 16 mm down after its solve sent it
/// up, and went through (experiments/hostile-2026-12-07d F10). `swept` false: plain samples.
template <class T>
struct PushStart {
  Vec3<T> centre{T(0)};
  Mat3<T> rotation{T(1)};
  bool swept = false;
};

/// Whether the push-out samples collider c swept for a body that moved `travel` (poseTravel) from
/// its PushStart to the pose its push-out starts at.
template <class T>
SMASH_HD bool pushSweeps(const Collider<T>& c, const PushStart<T>& from, T travel) {
  return from.swept && maySweep(travel, colliderThickness(c));
}

/// The push-out's gate: whether a particle of a body (bounding radius `radius`) at `centre` may be
/// inside collider c — an SDF is 1-Lipschitz (within lipschitzSlack), so φ(centre) > radius
/// proves none is — or, swept (`from`), may have crossed into it on the way: every particle's
/// chord stays within the radius of the centre's segment, along which φ ≥ ½(φ0 + φ1 − L |Δc|).
template <class T>
SMASH_HD bool pushMayReach(const Collider<T>& c, const Vec3<T>& centre, T radius, bool swept, const Vec3<T>& from) {
  const T reach = radius + lipschitzSlack(c);
  const T phi1 = sdfCollider(c, centre).phi;
  if (!(phi1 > reach)) return true;
  if (!swept) return false;
  const T phi0 = sdfCollider(c, from).phi;
  return T(0.5) * (phi0 + phi1 - lipschitzBound(c) * glm::length(centre - from)) <= reach;
}

/// The deepest point of a body (centre, rotation, rest offsets rest(i), i < count) inside one
/// collider: depth −φ > 0 and the normal there; depth 0 when none is inside. The gate
/// (pushMayReach; radius: the shape's bounding radius) skips the particles of a body that cannot
/// reach the collider; the answer is the same. `from.swept` (pushSweeps for this collider): each
/// particle's sample is swept from its place on the pose `from` (sweptColliderSample).
template <class T, class Rest>
SMASH_HD T deepestInside(const Collider<T>& collider, const Vec3<T>& centre, const Mat3<T>& rotation,
                         const Rest& rest, int count, T radius, Vec3<T>& normal, int& at,
                         const PushStart<T>& from = PushStart<T>{}) {
  T deepest = T(0);
  if (!pushMayReach(collider, centre, radius, from.swept, from.centre)) return deepest;
  for (int i = 0; i < count; ++i) {
    const Vec3<T> x = centre + rotation * rest(i);
    const SdfSample<T> s = from.swept ? sweptColliderSample(collider, from.centre + from.rotation * rest(i), x)
                                      : sdfCollider(collider, x);
    if (-s.phi > deepest) {
      deepest = -s.phi;
      normal = s.gradient;
      at = i;
    }
  }
  return deepest;
}
template <class T, class Rest>
SMASH_HD T deepestInside(const Collider<T>& collider, const Vec3<T>& centre, const Mat3<T>& rotation,
                         const Rest& rest, int count, T radius, Vec3<T>& normal) {
  int at = -1;
  return deepestInside(collider, centre, rotation, rest, count, radius, normal, at);
}

/// The push-out passes of one body against every collider (the per-particle strategy runs the
/// same passes as segmented maxima over chunks: ChunkDeepest, PushOutApply; a body that sweeps a
/// collider runs these in its thread there, PushOutSweptBodies), swept where pushSweeps says so
/// for the body's travel from `from` to the pose it starts at (that travel, not the pushes after
/// it: a push that carried a particle half another thin collider's thickness into it would not
/// make that collider swept). Returns the particle of the deepest of the pushes, the first on
/// ties (limitPushWork's point); −1: none.
template <class T, class Rest>
SMASH_HD int pushOutOfColliders(const Collider<T>* colliders, int colliderCount, Vec3<T>& centre,
                                const Mat3<T>& rotation, const Rest& rest, int count, T radius,
                                const PushStart<T>& from = PushStart<T>{}) {
  T most = T(0);
  int deepest = -1;
  const T travel = from.swept ? poseTravel(from.centre, from.rotation, centre, rotation, radius) : T(0);
  for (int pass = 0; pass < kPushOutPasses; ++pass) {
    bool moved = false;
    for (int k = 0; k < colliderCount; ++k) {
      Vec3<T> normal(T(0));
      int at = -1;
      const PushStart<T> sweptFrom{from.centre, from.rotation, pushSweeps(colliders[k], from, travel)};
      const T depth = deepestInside(colliders[k], centre, rotation, rest, count, radius, normal, at, sweptFrom);
      if (depth > T(0)) {
        centre += depth * normal;
        moved = true;
        if (depth > most) {
          most = depth;
          deepest = at;
        }
      }
    }
    if (!moved) break;
  }
  return deepest;
}

// ---------------------------------------------------------------------------------------------
// Contact manifold of a body pair (docs/physics.md §6, "Contact manifold"). Of all the pair's
// points within the margin — often a hundred on a face-to-face contact — at most kManifoldPoints
// are solved: the four deepest (a deep, tangled contact of two non-convex bodies needs several
// of its deepest points held), and four extremes that span the patch. The extremes are chosen in
// the frame of the pair's smaller body: its axis nearest the other body's field gradient at the
// frame body's centre is the normal axis, the other two span the tangent plane, which the
// midpoint of the centres splits into four quadrants (poses and one field sample, so the frame
// moves as smoothly as the bodies); in each, the
// point farthest out along the quadrant's diagonal, less
// kManifoldDepthWeight times its gap (a corner of a face-to-face patch that touches, not a point
// behind its rim). Each point is ranked by 64-bit keys (larger wins; ties go to the lower side,
// then the lower particle index), so the winners do not depend on the order the points are
// visited in: one thread per pair keeps the largest keys, the wide narrow phase merges chunks'
// keys — the same manifold, bit for bit on the CPU backends (tested) — and the reference ranks
// by the same rule in double (a depth at a bin edge, or scores within rounding of each other, can
// choose differently in float). A point keeps its identity
// (side, particle) from step to step, so the same points are chosen again and warm starting
// holds.
//
// Measured on the 100-body pile and the five-box stack (docs/solver.md, "Contact manifold"):
// the eight deepest alone rock a stack (on a resting face the deepest change with every µm);
// the deepest of each quadrant or of eight sectors around the deepest leave a tangled pile 5 mm
// to 2 cm deep (the deepest points cluster in one or two of them); the two deepest too.

constexpr int kManifoldPoints = 8;     ///< most points of a pair's manifold (max_contacts_per_pair ≤ it)
constexpr int kManifoldDeepest = 4;    ///< criteria 0–3: the four deepest, deepest first
constexpr int kManifoldCriteria = 8;   ///< and 4–7: the extreme of each quadrant
using ManifoldKey = unsigned long long;  ///< 0: no point

/// How much a point's gap (φ > 0) counts against its extent along a quadrant's diagonal: a point
/// 1 mm apart must reach 64 mm farther out to be the extreme. Points within the margin but
/// apart are speculative and hold nothing up at rest, and the baked fields round a box's rim, so
/// its corners read up to a millimetre apart. (With 2 the extremes of a stack's faces were points
/// on the boxes' sides; with 16 and 32, corners that read as gaps: the stack rocked.)
constexpr double kManifoldDepthWeight = 64;

/// The deepest points are ranked by their depth in bins of this fraction of the frame body's
/// bounding radius (0.17 mm for a 0.2 m box, whose radius is 0.17 m), ties to the lower identity:
/// rounding below it does not reorder them, and a resting face's points, within micrometres of
/// each other, share a bin, so the same ones are chosen from step to step.
constexpr double kManifoldDepthBin = 1e-3;

/// Floats ordered as unsigned integers: a larger float gives a larger integer.
SMASH_HD unsigned orderedFloatBits(float f) {
#if defined(__CUDA_ARCH__)
  const unsigned u = __float_as_uint(f);
#else
  unsigned u = 0;
  memcpy(&u, &f, sizeof u);
#endif
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

/// A point's key for one criterion: the score (rounded to float) in the high word, the inverted
/// identity in the low word. Never 0 for a finite score.
SMASH_HD ManifoldKey manifoldKey(float score, int side, int particle) {
  const unsigned id = (static_cast<unsigned>(side) << 30) | static_cast<unsigned>(particle);
  return (static_cast<ManifoldKey>(orderedFloatBits(score)) << 32) | static_cast<ManifoldKey>(0xFFFFFFFFu - id);
}
SMASH_HD unsigned manifoldIdentity(ManifoldKey key) { return 0xFFFFFFFFu - static_cast<unsigned>(key & 0xFFFFFFFFu); }
SMASH_HD int manifoldSide(ManifoldKey key) { return static_cast<int>(manifoldIdentity(key) >> 30); }
SMASH_HD int manifoldParticle(ManifoldKey key) { return static_cast<int>(manifoldIdentity(key) & 0x3FFFFFFFu); }

/// The pair's normal axis: the frame body's axis (0, 1, 2) nearest `towards` (in its frame), the
/// first of the largest.
template <class T>
SMASH_HD int manifoldNormalAxis(const Vec3<T>& towards) {
  const T x = towards.x < T(0) ? -towards.x : towards.x;
  const T y = towards.y < T(0) ? -towards.y : towards.y;
  const T z = towards.z < T(0) ? -towards.z : towards.z;
  return (x >= y && x >= z) ? 0 : (y >= z ? 1 : 2);
}

/// Inserts `key` into the descending list best[0 .. kManifoldDeepest) (a key already there, or
/// not larger than the last, changes nothing). Merging lists this way gives the largest keys of
/// their union, whatever the order. Constant indices only, so that a GPU thread keeps the list
/// in registers (kernels/gpu_budget.txt: the wide narrow phase has no stack).
SMASH_HD void insertDeepest(ManifoldKey* best, ManifoldKey key) {
  static_assert(kManifoldDeepest == 4, "insertDeepest is written out for four keys");
  if (key <= best[3] || key == best[0] || key == best[1] || key == best[2]) return;
  best[3] = key;
  if (best[3] > best[2]) { const ManifoldKey t = best[2]; best[2] = best[3]; best[3] = t; }
  if (best[2] > best[1]) { const ManifoldKey t = best[1]; best[1] = best[2]; best[2] = t; }
  if (best[1] > best[0]) { const ManifoldKey t = best[0]; best[0] = best[1]; best[1] = t; }
}

/// Ranks a point into `best`: `u` is the point relative to the quadrants' origin, in the frame
/// body's frame; `axis` the normal axis; `phi` its signed distance; `radius` the frame body's
/// bounding radius.
template <class T>
SMASH_HD void keepManifoldKeys(ManifoldKey (&best)[kManifoldCriteria], const Vec3<T>& u, int axis, T phi, T radius,
                               int side, int particle) {
  insertDeepest(best, manifoldKey(static_cast<float>(floor(-phi / (T(kManifoldDepthBin) * radius))), side, particle));
  const T t1 = axis == 0 ? u.y : u.x, t2 = axis == 2 ? u.y : u.z;
  const int q = (t1 < T(0) ? 1 : 0) + (t2 < T(0) ? 2 : 0);
  const T gap = phi > T(0) ? phi : T(0);
  const T extent = (t1 < T(0) ? -t1 : t1) + (t2 < T(0) ? -t2 : t2) - T(kManifoldDepthWeight) * gap;
  const ManifoldKey extreme = manifoldKey(static_cast<float>(extent), side, particle);
  // The quadrant's slot by constant indices and selects, not best[4 + q] (registers on a GPU, as
  // insertDeepest; an indexed store put the keys in local memory).
  static_assert(kManifoldCriteria - kManifoldDeepest == 4, "four quadrants");
  best[4] = (q == 0 && extreme > best[4]) ? extreme : best[4];
  best[5] = (q == 1 && extreme > best[5]) ? extreme : best[5];
  best[6] = (q == 2 && extreme > best[6]) ? extreme : best[6];
  best[7] = (q == 3 && extreme > best[7]) ? extreme : best[7];
}

/// The distinct winners of `best` in criterion order (the deepest first): their keys in
/// `winners`; returns how many.
SMASH_HD int manifoldWinners(const ManifoldKey (&best)[kManifoldCriteria], ManifoldKey (&winners)[kManifoldCriteria]) {
  int n = 0;
  for (int k = 0; k < kManifoldCriteria; ++k) {
    if (best[k] == 0) continue;
    bool seen = false;
    for (int j = 0; j < n; ++j) seen = seen || manifoldIdentity(winners[j]) == manifoldIdentity(best[k]);
    if (!seen) winners[n++] = best[k];
  }
  return n;
}

/// Greedy spread: of `n` winners at `points` (the deepest first), keeps the deepest, then
/// repeatedly the one farthest from those kept (the largest least squared distance; ties to the
/// earlier), at most `capacity`. Writes the kept winners' indices to `order`; returns how many.
template <class T>
SMASH_HD int chooseManifold(const Vec3<T> (&points)[kManifoldCriteria], int n, int capacity,
                            int (&order)[kManifoldCriteria]) {
  if (n == 0 || capacity <= 0) return 0;
  T least[kManifoldCriteria];
  bool taken[kManifoldCriteria];
  for (int j = 0; j < n; ++j) taken[j] = false;
  order[0] = 0;
  taken[0] = true;
  int kept = 1;
  for (int j = 1; j < n; ++j) {
    const Vec3<T> d = points[j] - points[0];
    least[j] = glm::dot(d, d);
  }
  while (kept < capacity && kept < n) {
    int far = -1;
    for (int j = 1; j < n; ++j)
      if (!taken[j] && (far < 0 || least[j] > least[far])) far = j;
    taken[far] = true;
    order[kept++] = far;
    for (int j = 1; j < n; ++j) {
      const Vec3<T> d = points[j] - points[far];
      const T d2 = glm::dot(d, d);
      if (!taken[j] && d2 < least[j]) least[j] = d2;
    }
  }
  return kept;
}

/// The patch of a collider contact for its manifold: the collider, and which of the six world
/// directions ±x, ±y, ±z its normal is nearest (the first of the largest). A container's floor
/// and walls, or a box's faces, are one collider but separate patches.
template <class T>
SMASH_HD int colliderPatch(const PairContact<T>& c) {
  const T x = c.normal.x < T(0) ? -c.normal.x : c.normal.x;
  const T y = c.normal.y < T(0) ? -c.normal.y : c.normal.y;
  const T z = c.normal.z < T(0) ? -c.normal.z : c.normal.z;
  const int axis = (x >= y && x >= z) ? 0 : (y >= z ? 1 : 2);
  const T along = axis == 0 ? c.normal.x : (axis == 1 ? c.normal.y : c.normal.z);
  return 6 * c.feature + 2 * axis + (along < T(0) ? 1 : 0);
}

/// Collider contact manifold (docs/physics.md §4.3, "Collider contact manifold"): of a body's
/// contacts in each patch (colliderPatch) — a bunny standing on the ground has 14 of its 200
/// surface samples within the margin, 95 of its 3,483 vertices — `capacity` (≤ kManifoldPoints)
/// are solved: the kColliderDeepest deepest (depth in bins of kManifoldDepthBin of the body's
/// bounding radius, rounded to the nearest so that points resting at φ = 0 ± rounding share bin
/// 0; ties to the lower particle), then, one at a time, the point farthest from those kept, less
/// kManifoldDepthWeight times its gap (farthest-point sampling: the rim of the patch, not points
/// that hover). No frame is involved — a frame's quadrants flipped a yawed box's corners from
/// step to step, and a body axis chosen as the normal flipped for a tilted bunny — so the choice
/// moves only where two scores tie. Every score is a ManifoldKey (the score rounded to float, then
/// the identity), so the choice does not depend on the gathered order; the kept contacts stay in
/// that order (compacted in place), so every layout that gathers the same list — the per-body
/// gather, the wide gather, the reference — solves the same manifold (the reference scores in
/// double, rounded to float as for pairs). Returns the new count; O(capacity × count) per patch,
/// for a body with more contacts than `capacity` only.
constexpr int kColliderDeepest = 4;

template <class T>
SMASH_HD int reduceColliderContacts(PairContact<T>* c, int count, T radius, int capacity) {
  if (capacity <= 0 || count <= capacity) return count;  // 0: every contact is solved
  // A contact's mark is its target (contactTargets sets it after this): −1 not yet decided,
  // 1 kept, 0 dropped. Its lambdaNormal holds its least squared distance to the kept points of
  // its patch while the patch is sampled (cleared below; contactTargets clears it too). Squared
  // distances and scores are rounded at every operation (mulRn, addRn: no FMA contraction on
  // CUDA), so the per-body and the wide layout choose alike on every backend.
  for (int j = 0; j < count; ++j) c[j].target = T(-1);
  for (int first = 0; first < count; ++first) {
    if (c[first].target != T(-1)) continue;  // the first contact of a patch not yet reduced
    const int patch = colliderPatch(c[first]);
    auto undecided = [&](int j) { return c[j].target == T(-1) && colliderPatch(c[j]) == patch; };
    int here = 0;
    for (int j = first; j < count; ++j) here += undecided(j) ? 1 : 0;
    if (here <= capacity) {  // the whole patch
      for (int j = first; j < count; ++j)
        if (undecided(j)) c[j].target = T(1);
      continue;
    }
    for (int kept = 0; kept < capacity; ++kept) {
      int winner = -1;
      ManifoldKey best = 0;
      for (int j = first; j < count; ++j) {
        if (!undecided(j)) continue;
        T score;
        if (kept < kColliderDeepest) {
          score = static_cast<T>(floor(-c[j].phi / (T(kManifoldDepthBin) * radius) + T(0.5)));
        } else {
          const T gap = c[j].phi > T(0) ? c[j].phi : T(0);
          score = addRn(glm::sqrt(c[j].lambdaNormal), -mulRn(T(kManifoldDepthWeight), gap));
        }
        const ManifoldKey key = manifoldKey(static_cast<float>(score), 0, c[j].particle);
        if (key > best) {
          best = key;
          winner = j;
        }
      }
      c[winner].target = T(1);
      if (kept + 1 == capacity) break;  // no distances needed after the last
      // Farthest-point sampling's distances to the kept points, lowered by each new one.
      for (int j = first; j < count; ++j) {
        if (!undecided(j)) continue;
        const Vec3<T> d = c[j].ra - c[winner].ra;
        const T d2 = addRn(addRn(mulRn(d.x, d.x), mulRn(d.y, d.y)), mulRn(d.z, d.z));
        if (kept == 0 || d2 < c[j].lambdaNormal) c[j].lambdaNormal = d2;
      }
    }
    for (int j = first; j < count; ++j)
      if (undecided(j)) c[j].target = T(0);
  }
  int kept = 0;
  for (int j = 0; j < count; ++j)
    if (c[j].target == T(1)) {
      c[j].target = T(0);
      c[j].lambdaNormal = T(0);
      c[kept++] = c[j];
    }
  return kept;
}

/// The rank of a body's collider contact when it has more than it keeps (max_contacts_per_body;
/// the larger is kept): its depth in bins of kManifoldDepthBin of the body's bounding radius,
/// rounded to the nearest bin — points resting on the surface, φ ≈ 0 to either side by rounding,
/// share bin 0 — and among the points of one bin a hash of the point's identity, so that a face
/// resting on the ground keeps a scattered sample of its points, not the ones that happen to read a
/// micrometre deeper. (Keeping the strictly deepest, a 2 m plank on the ground kept 256 of its
/// 615 bottom points all from one end, and the double reference rocked it at 1 J for ever.)
template <class T>
SMASH_HD ManifoldKey colliderContactRank(T phi, T radius, int particle, int collider) {
  const float bin = static_cast<float>(floor(-phi / (T(kManifoldDepthBin) * radius) + T(0.5)));
  unsigned h = static_cast<unsigned>(particle) * 0x9E3779B1u ^ static_cast<unsigned>(collider) * 0x85EBCA77u;
  h ^= h >> 16;
  h *= 0x7FEB352Du;
  h ^= h >> 15;
  h *= 0x846CA68Bu;
  h ^= h >> 16;
  return (static_cast<ManifoldKey>(orderedFloatBits(bin)) << 32) | static_cast<ManifoldKey>(h);
}

/// Keeps at most `capacity` collider contacts in `slots`: appends while there is room, then a new
/// contact replaces the kept one of the lowest rank (colliderContactRank; `radius` the body's
/// bounding radius) if its own is higher. The kept set does not depend on the visiting order.
/// Returns whether one was dropped.
template <class T>
SMASH_HD bool keepDeepest(PairContact<T>* slots, int& count, int capacity, const PairContact<T>& c, T radius) {
  if (count < capacity) {
    slots[count++] = c;
    return false;
  }
  int lowest = 0;
  ManifoldKey lowestRank = colliderContactRank(slots[0].phi, radius, slots[0].particle, slots[0].feature);
  for (int j = 1; j < count; ++j) {
    const ManifoldKey rank = colliderContactRank(slots[j].phi, radius, slots[j].particle, slots[j].feature);
    if (rank < lowestRank) {
      lowest = j;
      lowestRank = rank;
    }
  }
  if (colliderContactRank(c.phi, radius, c.particle, c.feature) > lowestRank) slots[lowest] = c;
  return true;
}

}  // namespace smash
