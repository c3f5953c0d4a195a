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
