// Particle-versus-SDF contact responses (physics.md §4) and the rigid impulse at a contact point
// (physics.md §3 step 2).
#pragma once

#include "math/rotation.h"

namespace smash {

/// Surface material of a contact: restitution μ_N ∈ [0, 1] and Coulomb friction μ_T ≥ 0.
/// Below `restitutionThreshold` (approach speed, m/s) the contact is treated as inelastic,
/// as Box2D and PhysX do, so resting contacts do not micro-bounce; 0 gives physics.md §4 exactly.
template <class T>
struct ContactMaterial {
  T restitution = T(0);
  T friction = T(0);
  T restitutionThreshold = T(0);
};

/// physics.md §4, impulse response of a velocity relative to the surface, with unit normal N.
/// Returns the new relative velocity; a separating velocity (v·N >= 0) is returned unchanged.
///   v_N = (v·N) N, v_T = v − v_N, v_N' = −μ_N v_N,
///   a = max(1 − μ_T (1 + μ_N) ‖v_N‖/‖v_T‖, 0), v_T' = a v_T.
template <class T>
SMASH_HD Vec3<T> impulseResponse(const Vec3<T>& vRel, const Vec3<T>& n,
                                 const ContactMaterial<T>& m) {
  T vn = glm::dot(vRel, n);
  if (!(vn < T(0))) return vRel;
  Vec3<T> vN = vn * n;
  Vec3<T> vT = vRel - vN;
  T e = (-vn < m.restitutionThreshold) ? T(0) : m.restitution;
  T vTlen = glm::length(vT);
  T a = T(0);  // ‖v_T‖ == 0: static friction, nothing to scale
  if (vTlen > ScalarTraits<T>::tiny)
    a = glm::max(T(1) - m.friction * (T(1) + e) * (-vn) / vTlen, T(0));
  return -e * vN + a * vT;
}

/// The Euclidean projection of g onto the wedge {a u + b v : a, b ≥ 0} (u, v unit, not parallel;
/// v = 0: the ray along u). Its length is the cosine between g (unit) and it.
template <class T>
SMASH_HD Vec3<T> wedgeProjection(const Vec3<T>& g, const Vec3<T>& u, const Vec3<T>& v) {
  const T gu = glm::dot(g, u), gv = glm::dot(g, v), d = glm::dot(u, v);
  const T det = T(1) - d * d;
  if (det > T(1e-6)) {  // the wedge's plane: least squares g ≈ a u + b v
    const T a = (gu - d * gv) / det, b = (gv - d * gu) / det;
    if (a >= T(0) && b >= T(0)) return a * u + b * v;
  }
  // On its boundary: the nearer ray (nothing when g points away from both).
  const T best = gu >= gv ? gu : gv;
  if (!(best > T(0))) return Vec3<T>(T(0));
  return gu >= gv ? gu * u : gv * v;
}

/// The normal of a body–body contact at a particle on an edge or a corner of its own body
/// (physics.md §6, "Normals at edges and corners"): the other body's field gradient g (unit, the
/// way out of it) when it lies within the particle's cone — the directions its own faces can be
/// pushed along, bounded by a circular cone of half-angle α about `axis` (unit, the particle's
/// body frame; shape.h pushCone) — else the nearest direction of the cone: the Euclidean
/// projection onto the cone spanned by the faces' inward normals `rays` (body frame, unit; an edge
/// has two, a corner three, the others are 0) when the particle has at most three faces, else the
/// circular cone's boundary on the great circle through g (the axis itself for g opposite it;
/// never 0). When g
/// points away from every face (that cone's projection is 0: a particle exactly on the other
/// body's side plane, where its field's gradient is that side's normal — boxes stacked exactly
/// edge on edge) the answer is 0, and the caller takes the pair's other points' normal
/// (settleDegenerateNormals). The
/// field's gradient at another body's edge is a blend of that body's faces' normals, sideways for
/// a particle on its edge: two boxes stacked edge on edge pushed each other apart and not up.
/// cosAlpha < −1 (kNoPushCone): g as it is. cosAlpha > 1 marks a flat face's particle
/// (faceContactNormal), which callers handle before this.
template <class T>
SMASH_HD Vec3<T> withinPushCone(const Vec3<T>& g, const Vec3<T>& axis, T cosAlpha, const Vec3<T> (&rays)[3]) {
  const T c = glm::dot(g, axis);
  if (!(c < cosAlpha)) return g;  // within the cone, no cone, or not finite (left to the watchdog)
  if (glm::dot(rays[0], rays[0]) > T(0)) {
    // Outside the circular cone, which holds the faces' cone: the nearest point is on one of its
    // sides (a wedge of two rays; a corner has three).
    Vec3<T> best = wedgeProjection(g, rays[0], rays[1]);
    if (glm::dot(rays[2], rays[2]) > T(0)) {
      const Vec3<T> p12 = wedgeProjection(g, rays[1], rays[2]), p20 = wedgeProjection(g, rays[2], rays[0]);
      if (glm::dot(p12, p12) > glm::dot(best, best)) best = p12;
      if (glm::dot(p20, p20) > glm::dot(best, best)) best = p20;
    }
    const T length = glm::length(best);
    // g points away from every face: 0 (settleDegenerateNormals below).
    return length > T(1e-6) ? best / length : Vec3<T>(T(0));
  }
  const Vec3<T> t = g - c * axis;  // g's part across the axis
  const T across = glm::length(t);
  if (!(across > T(1e-6))) return axis;  // g opposite the axis: the axis itself
  const T sinAlpha = glm::sqrt(glm::max(T(0), T(1) - cosAlpha * cosAlpha));
  return cosAlpha * axis + (sinAlpha / across) * t;
}

/// cos 30°: a flat face's particle keeps the gradient found at it when the gradient where it came
/// through is within 30° of it (faceContactNormal).
constexpr double kFaceNormalAgrees = 0.86602540378443865;

/// The normal of a body–body contact at a particle on a flat face of its own body (shape.h
/// surfacePushCones; physics.md §6, "Normals on flat faces"): the other body's field gradient
/// `g2` sampled at the particle moved back along its face's inward normal by its depth — where it
/// came through the other body's surface — made unit, when it is more than 30° from `g`, the
/// gradient at the particle; else (or if `g2` has no direction) `g`. Deep inside the other body
/// near its rim the gradient at the particle names the rim's side (a landing box's contacts
/// 25–80° from the vertical); moved back out it names the face the particle came through. Where the particle is the one at fault — its own edge lying across the
/// other body's face — both name that face. (Taking the particle's own face normal instead fixed
/// the landing but left tumbled box piles resting twice as deep, or, within 35° only, added
/// energy to a spinning rod striking a slab; replacing every gradient, not only those 30° off,
/// tilted a staggered 0.2 m stack by 0.037 rad where it had 0.009: experiments/hostile-2026-12-08.)
template <class T>
SMASH_HD Vec3<T> faceContactNormal(const Vec3<T>& g, const Vec3<T>& g2) {
  const T length = glm::length(g2);
  if (!(length > T(1e-6)) || glm::dot(g, g2) >= T(kFaceNormalAgrees) * length) return g;
  return g2 / length;
}

enum class ContactModel : int {
  Impulse = 0,          ///< physics.md §4 impulse (default)
  PenaltyLinear = 1,    ///< f = −k φ N for φ < 0
  PenaltyBuffered = 2,  ///< f = −k (φ − ε) N for φ < ε
  PenaltyBarrier = 3,   ///< f = ρ N / φ for 0 < φ < ε
};

template <class T>
struct PenaltyParams {
  ContactModel model = ContactModel::PenaltyLinear;
  T stiffness = T(0);  ///< k
  T buffer = T(0);     ///< ε
  T barrier = T(0);    ///< ρ
};

/// physics.md §4 penalty force on a particle of mass `mass` at signed distance `phi` with unit normal N,
/// moving at vRel relative to the surface. Includes the friction of seed 004:
///   f_T = −a v_T, a = min(m/dt, μ k |φ| / ‖v_T‖)   (for the barrier, k|φ| is the normal force ρ/φ).
/// The log barrier is only defined for 0 < φ < ε; once a particle has crossed the surface it feels
/// nothing (the method's known failure mode, physics.md §4).
template <class T>
SMASH_HD Vec3<T> penaltyForce(const PenaltyParams<T>& p, T phi, const Vec3<T>& n,
                              const Vec3<T>& vRel, T mass, T friction, T dt) {
  T fn = T(0);  // magnitude of the normal force, along +N
  switch (p.model) {
    case ContactModel::PenaltyLinear:
      if (phi < T(0)) fn = -p.stiffness * phi;
      break;
    case ContactModel::PenaltyBuffered:
      if (phi < p.buffer) fn = -p.stiffness * (phi - p.buffer);
      break;
    case ContactModel::PenaltyBarrier:
      if (phi > T(0) && phi < p.buffer) fn = p.barrier / phi;
      break;
    case ContactModel::Impulse:
      break;
  }
  if (!(fn > T(0))) return Vec3<T>(T(0));
  Vec3<T> f = fn * n;
  Vec3<T> vT = vRel - glm::dot(vRel, n) * n;
  T vTlen = glm::length(vT);
  if (vTlen > ScalarTraits<T>::tiny && friction > T(0)) {
    T a = glm::min(mass / dt, friction * fn / vTlen);
    f -= a * vT;
  }
  return f;
}

/// physics.md §3 step 2: the impulse j that changes the velocity of the body point at world offset
/// rc (from the centre of mass) from vc to vWanted, for a body of mass M and world inverse
/// inertia Iinv:  K = (1/M)·1 − [rc]× I⁻¹ [rc]×,  j = K⁻¹ (vWanted − vc).
/// K is symmetric positive definite whenever M > 0, so the inverse exists.
template <class T>
SMASH_HD Vec3<T> impulseAtPoint(T invMass, const Mat3<T>& Iinv, const Vec3<T>& rc,
                                const Vec3<T>& vc, const Vec3<T>& vWanted) {
  Mat3<T> rx = skew(rc);
  Mat3<T> K = Mat3<T>(invMass) - rx * Iinv * rx;
  return glm::inverse(K) * (vWanted - vc);
}

}  // namespace smash
