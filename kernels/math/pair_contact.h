// Body-against-body contact (SPEC §6), the parts shared by the CPU reference (double) and the
// backends (float): the contact record, the two-body effective mass (Baraff's impulse, seed 001
// §8) and one Gauss–Seidel sweep of sequential impulses over the contacts of one pair.
//
// The solver around it (docs/solver.md, "Bodies that touch"): contacts of one pair of bodies are
// solved together by Gauss–Seidel, pairs are solved in parallel and combined per body by mass
// splitting (Tonge, Benevolenskiy & Voroshilov, "Mass splitting for jitter-free parallel rigid
// body simulation", SIGGRAPH 2012): a body touched by n pairs enters each of them with n times
// its inverse mass and inverse inertia, and its new velocity is the average of its n copies —
// which is the sum of the pair impulses applied with its true mass. Every pair can then be solved
// at once, in any order, with the same result on every backend.
#pragma once

#include "math/contact.h"
#include "math/hd.h"

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
};

/// Warm starting (Catto): a contact that existed in the last step (same particle, same feature)
/// starts from last step's impulses — the normal one as it was, the friction one projected onto
/// the new tangent plane and kept in the cone — so the iterations of successive steps add up.
/// `previous` is last step's list for the same pair. Returns the impulse to pre-apply.
template <class T>
SMASH_HD Vec3<T> warmStart(PairContact<T>& c, const PairContact<T>* previous, int previousCount,
                           T friction) {
  for (int k = 0; k < previousCount; ++k) {
    if (previous[k].particle != c.particle || previous[k].feature != c.feature) continue;
    c.lambdaNormal = previous[k].lambdaNormal;
    Vec3<T> t = previous[k].lambdaTangent - glm::dot(previous[k].lambdaTangent, c.normal) * c.normal;
    const T limit = friction * c.lambdaNormal, len = glm::length(t);
    if (len > limit) t *= limit / len;
    c.lambdaTangent = t;
    return c.lambdaNormal * c.normal + t;
  }
  return Vec3<T>(T(0));
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

/// SPEC §4 targets from the velocities before the solve: a point approaching faster than the
/// threshold rebounds at −e·v_N; a point still apart may approach by φ/h (speculative contact).
/// Penetration is not turned into velocity (no Baumgarte term, which made a box stack bounce in
/// place); the solver moves the pose with the velocity change and push-out does the rest.
template <class T>
SMASH_HD void pairTargets(const SolverBody<T>& a, const SolverBody<T>& b, PairContact<T>* c,
                          int count, const ContactMaterial<T>& material, T h) {
  for (int k = 0; k < count; ++k) {
    const T vn = glm::dot(relativeVelocity(a, b, c[k]), c[k].normal);
    c[k].target = c[k].phi > T(0) ? -c[k].phi / h : T(0);
    if (vn < -material.restitutionThreshold)
      c[k].target = glm::max(c[k].target, -material.restitution * vn);
    c[k].lambdaNormal = T(0);
    c[k].lambdaTangent = Vec3<T>(T(0));
  }
}

/// One Gauss–Seidel sweep over a pair's contacts: normal impulse towards the target with the
/// accumulated impulse kept ≥ 0, then friction within the Coulomb cone. `a` and `b` are updated
/// as the sweep goes; the impulses it applied are added to `onA` and `onB` (onB = −onA's linear
/// part, with b's own lever arms).
template <class T>
SMASH_HD void pairSweep(SolverBody<T>& a, SolverBody<T>& b, PairContact<T>* c, int count,
                        T friction, PairImpulse<T>& onA, PairImpulse<T>& onB) {
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
  for (int k = 0; k < count; ++k) {
    PairContact<T>& s = c[k];
    const T vn = glm::dot(relativeVelocity(a, b, s), s.normal);
    const T kn = glm::dot(s.normal, responseAt(a, s.ra, s.normal) + responseAt(b, s.rb, s.normal));
    if (!(kn > ScalarTraits<T>::tiny)) continue;  // both sides immovable along n
    const T lambda = glm::max(s.lambdaNormal + (s.target - vn) / kn, T(0));
    apply(s, (lambda - s.lambdaNormal) * s.normal);
    s.lambdaNormal = lambda;
    const Vec3<T> vr = relativeVelocity(a, b, s);
    const Vec3<T> vt = vr - glm::dot(vr, s.normal) * s.normal;
    const T vtLen = glm::length(vt);
    Vec3<T> lambdaT = s.lambdaTangent;
    if (vtLen > ScalarTraits<T>::epsilon * T(1e-4)) {
      const Vec3<T> t = vt / vtLen;
      const T kt = glm::dot(t, responseAt(a, s.ra, t) + responseAt(b, s.rb, t));
      if (kt > ScalarTraits<T>::tiny) lambdaT -= (vtLen / kt) * t;
    }
    const T limit = friction * s.lambdaNormal, len = glm::length(lambdaT);
    if (len > limit) lambdaT *= limit / len;
    apply(s, lambdaT - s.lambdaTangent);
    s.lambdaTangent = lambdaT;
  }
}

/// Keeps at most `capacity` contacts in `slots`: appends while there is room, then a new contact
/// replaces the shallowest kept one if it is deeper. Returns whether one was dropped.
template <class T>
SMASH_HD bool keepDeepest(PairContact<T>* slots, int& count, int capacity, const PairContact<T>& c) {
  if (count < capacity) {
    slots[count++] = c;
    return false;
  }
  int shallowest = 0;
  for (int j = 1; j < count; ++j)
    if (slots[j].phi > slots[shallowest].phi) shallowest = j;
  if (c.phi < slots[shallowest].phi) slots[shallowest] = c;
  return true;
}

}  // namespace smash
