// Rotations: quaternion helpers, symmetric eigen-solvers and robust rotation extraction.
//
// Design note — why Horn's quaternion eigenproblem and not the lab's closed form or Müller's
// iteration:
//   The shape-matching step needs the proper rotation R that maximises tr(Rᵀ A) for the 3×3
//   matrix A = Σ m_i (y_i − c) r_iᵀ (physics.md §2; equivalently the rotation factor of the polar
//   decomposition with the det-correction of Kabsch). Horn (1987) showed that this R is the
//   rotation of the unit quaternion q maximising qᵀ N q, where N is a symmetric 4×4 matrix built
//   linearly from A. The largest eigenvector of a symmetric matrix is found by cyclic Jacobi
//   sweeps, which converge for *every* symmetric input (no division by a small determinant,
//   no acos of an out-of-range value), and a unit quaternion always maps to det R = +1.
//   - Degenerate A (rank 2, 1 or 0) gives a repeated top eigenvalue: every vector of the top
//     eigenspace is optimal, and we take the one closest to the warm start (the previous step's
//     rotation), so flat, collinear and single-particle shapes keep their orientation instead of
//     flipping.
//   - Reflections (det A < 0) need no special case: the optimum over proper rotations is
//     what the eigenvector gives (σ1 + σ2 − σ3).
//   - 180° turns are not a fixed point trap as they are for Müller et al. 2016, whose
//     iteration stalls at R_prev when R_prevᵀ A is symmetric.
//   - Scale: N is divided by its largest entry before the sweeps.
//   Warm start: we solve for Q with A' = R_prevᵀ A and return R = R_prev Q; for a body that
//   turned a little since the last step N is almost diagonal and one or two sweeps suffice.
#pragma once

#include "math/hd.h"
#include "math/same_trig.h"

namespace smash {

// ---------------------------------------------------------------------------------------------
// Small helpers.

template <class T>
SMASH_HD T absT(T x) {
  return x < T(0) ? -x : x;
}

/// Cross-product matrix: skew(a) * b == cross(a, b).
template <class T>
SMASH_HD Mat3<T> skew(const Vec3<T>& a) {
  // glm is column-major: m[col][row].
  Mat3<T> m(T(0));
  m[1][0] = -a.z;
  m[2][0] = a.y;
  m[0][1] = a.z;
  m[2][1] = -a.x;
  m[0][2] = -a.y;
  m[1][2] = a.x;
  return m;
}

/// Outer product a bᵀ.
template <class T>
SMASH_HD Mat3<T> outer(const Vec3<T>& a, const Vec3<T>& b) {
  Mat3<T> m;
  for (int c = 0; c < 3; ++c) m[c] = a * b[c];
  return m;
}

/// Rotation matrix of a quaternion (normalised first, so any non-zero q gives det +1).
template <class T>
SMASH_HD Mat3<T> rotationMatrix(Quat<T> q) {
  T n = glm::sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
  if (!(n > ScalarTraits<T>::tiny)) return Mat3<T>(T(1));
  q = Quat<T>(q.w / n, q.x / n, q.y / n, q.z / n);
  return glm::mat3_cast(q);
}

/// physics.md §3 step 3: q ← normalize(q + [0, (dt/2)·ω] ⊗ q).
template <class T>
SMASH_HD Quat<T> integrateOrientation(const Quat<T>& q, const Vec3<T>& omega, T dt) {
  Quat<T> w(T(0), omega.x * (dt / T(2)), omega.y * (dt / T(2)), omega.z * (dt / T(2)));
  Quat<T> dq = w * q;
  Quat<T> r(q.w + dq.w, q.x + dq.x, q.y + dq.y, q.z + dq.z);
  return glm::normalize(r);
}

// ---------------------------------------------------------------------------------------------
// Symmetric eigen-decomposition by cyclic Jacobi rotations (Golub & Van Loan §8.5).
// a: symmetric N×N, overwritten with (nearly) diagonal; v: columns receive the eigenvectors.
// Converges for every symmetric input; maxSweeps bounds the work on a device.

template <class T, int N>
SMASH_HD void jacobiEigenSymmetric(T (&a)[N][N], T (&v)[N][N], int maxSweeps) {
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) v[i][j] = (i == j) ? T(1) : T(0);
  for (int sweep = 0; sweep < maxSweeps; ++sweep) {
    T off = T(0), diag = T(0);
    for (int i = 0; i < N; ++i) {
      diag += a[i][i] * a[i][i];
      for (int j = i + 1; j < N; ++j) off += a[i][j] * a[i][j];
    }
    // Stop when the off-diagonal part is at rounding level of the whole matrix.
    if (!(off > ScalarTraits<T>::epsilon * ScalarTraits<T>::epsilon * (diag + off) * T(1e-2)))
      return;
    for (int p = 0; p < N; ++p) {
      for (int q = p + 1; q < N; ++q) {
        T apq = a[p][q];
        if (apq == T(0)) continue;
        // An element below rounding of its diagonal needs a rotation below rounding: annihilate it
        // (a denormal a[p][q] made θ overflow, which the suite's floating-point traps report).
        if (absT(apq) < ScalarTraits<T>::epsilon * T(1e-3) * (absT(a[p][p]) + absT(a[q][q]))) {
          a[p][q] = a[q][p] = T(0);
          continue;
        }
        // Rotation angle that annihilates a[p][q] (stable form, |t| <= 1).
        T theta = (a[q][q] - a[p][p]) / (T(2) * apq);
        // t = sign(θ) / (|θ| + sqrt(θ² + 1)); for huge θ, θ² would overflow, and t = 1/(2θ)
        // to working precision.
        T t = absT(theta) > T(1e15) ? T(0.5) / theta
                                    : T(1) / (absT(theta) + glm::sqrt(theta * theta + T(1)));
        if (theta < T(0) && t > T(0)) t = -t;
        T c = T(1) / glm::sqrt(t * t + T(1));
        T s = t * c;
        for (int k = 0; k < N; ++k) {  // a ← Jᵀ a J, columns then rows
          T akp = a[k][p], akq = a[k][q];
          a[k][p] = c * akp - s * akq;
          a[k][q] = s * akp + c * akq;
        }
        for (int k = 0; k < N; ++k) {
          T apk = a[p][k], aqk = a[q][k];
          a[p][k] = c * apk - s * aqk;
          a[q][k] = s * apk + c * aqk;
        }
        a[p][q] = a[q][p] = T(0);
        for (int k = 0; k < N; ++k) {
          T vkp = v[k][p], vkq = v[k][q];
          v[k][p] = c * vkp - s * vkq;
          v[k][q] = s * vkp + c * vkq;
        }
      }
    }
  }
}

/// Moore–Penrose pseudo-inverse of a symmetric 3×3 matrix (e.g. an inertia tensor). Eigenvalues
/// below relTol·(largest |eigenvalue|) are treated as zero, so a collinear or single-particle
/// shape gets "infinite inertia" about its degenerate axes instead of a division by zero.
template <class T>
SMASH_HD Mat3<T> symmetricPseudoInverse(const Mat3<T>& m, T relTol) {
  T a[3][3], v[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) a[i][j] = T(0.5) * (m[j][i] + m[i][j]);
  jacobiEigenSymmetric<T, 3>(a, v, 32);
  T maxAbs = T(0);
  for (int i = 0; i < 3; ++i) maxAbs = glm::max(maxAbs, absT(a[i][i]));
  Mat3<T> r(T(0));
  for (int k = 0; k < 3; ++k) {
    T lambda = a[k][k];
    if (!(absT(lambda) > relTol * maxAbs) || maxAbs == T(0)) continue;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) r[j][i] += v[i][k] * v[j][k] / lambda;
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// Optimal rotation.

/// Quaternion of a proper rotation matrix (Shepperd's method: pick the largest diagonal term).
template <class T>
SMASH_HD Quat<T> quaternionFromRotation(const Mat3<T>& r) {
  // glm::quat_cast implements the same branch-on-largest scheme and is host/device.
  return glm::normalize(glm::quat_cast(r));
}

/// The proper rotation R maximising tr(Rᵀ A) (= minimising Σ m_i‖R r_i − (y_i − c)‖² when
/// A = Σ m_i (y_i − c) r_iᵀ), warm-started from `warm`. Always finite, orthonormal, det +1.
/// Non-finite input returns `warm` unchanged (the caller's watchdog reports the body).
template <class T>
SMASH_HD Mat3<T> optimalRotation(const Mat3<T>& A, const Mat3<T>& warm) {
  // A' = warmᵀ A; Horn's matrix is built from S = A'ᵀ (S_xy = Σ r_x a_y).
  Mat3<T> Ap = glm::transpose(warm) * A;
  // Horn's S = Σ r aᵀ, i.e. S_ab = A'_ba = Ap[a][b] (glm stores m[col][row]).
  const T Sxx = Ap[0][0], Sxy = Ap[0][1], Sxz = Ap[0][2];
  const T Syx = Ap[1][0], Syy = Ap[1][1], Syz = Ap[1][2];
  const T Szx = Ap[2][0], Szy = Ap[2][1], Szz = Ap[2][2];
  T n[4][4] = {{Sxx + Syy + Szz, Syz - Szy, Szx - Sxz, Sxy - Syx},
               {Syz - Szy, Sxx - Syy - Szz, Sxy + Syx, Szx + Sxz},
               {Szx - Sxz, Sxy + Syx, -Sxx + Syy - Szz, Syz + Szy},
               {Sxy - Syx, Szx + Sxz, Syz + Szy, -Sxx - Syy + Szz}};
  T scale = T(0);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) scale = glm::max(scale, absT(n[i][j]));
  if (!(scale > ScalarTraits<T>::tiny) || !(scale < T(1) / ScalarTraits<T>::tiny) ||
      scale != scale)
    return warm;  // A == 0 (no information) or non-finite
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) n[i][j] /= scale;
  T v[4][4];
  jacobiEigenSymmetric<T, 4>(n, v, 24);
  T lmax = n[0][0];
  for (int k = 1; k < 4; ++k) lmax = glm::max(lmax, n[k][k]);
  // Top eigenspace (eigenvalues within rounding of the largest); project the identity
  // quaternion (= "no change from warm") onto it, which picks the optimum closest to warm.
  const T tieTol = T(64) * ScalarTraits<T>::epsilon * T(4);
  T q[4] = {T(0), T(0), T(0), T(0)};
  int best = 0;
  for (int k = 0; k < 4; ++k) {
    if (n[k][k] > n[best][best]) best = k;
    if (n[k][k] >= lmax - tieTol) {
      T w = v[0][k];  // component of e0 along eigenvector k
      for (int i = 0; i < 4; ++i) q[i] += w * v[i][k];
    }
  }
  T qn = glm::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (!(qn > T(1e-3))) {  // identity orthogonal to the top eigenspace: any member will do
    for (int i = 0; i < 4; ++i) q[i] = v[i][best];
    qn = glm::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  }
  Quat<T> dq(q[0] / qn, q[1] / qn, q[2] / qn, q[3] / qn);
  // Composed as unit quaternions: warm · R(dq) as matrices carried the last step's departure
  // from orthonormality into this one, and in float a spinning body's particles (projected by
  // it) grew by 6·10⁻⁵ over 10,000 steps.
  return rotationMatrix(glm::normalize(quaternionFromRotation(warm) * dq));
}

/// Same with the identity as warm start.
template <class T>
SMASH_HD Mat3<T> optimalRotation(const Mat3<T>& A) {
  return optimalRotation(A, Mat3<T>(T(1)));
}

/// The angular momentum I(R) ω = R I_ref Rᵀ ω of a body at pose r (`inertia` is I_ref).
template <class T>
SMASH_HD Vec3<T> momentumAt(const Mat3<T>& r, const Vec3<T>& omega, const Mat3<T>& inertia) {
  return r * (inertia * (glm::transpose(r) * omega));
}

/// What to add to `omega` to get the ω of angular momentum L at pose r: I(r)⁻¹ (L − I(r) ω).
template <class T>
SMASH_HD Vec3<T> omegaCorrection(const Mat3<T>& r, const Vec3<T>& omega, const Vec3<T>& L,
                                 const Mat3<T>& inertia, const Mat3<T>& inertiaInverse) {
  return r * (inertiaInverse * (glm::transpose(r) * (L - momentumAt(r, omega, inertia))));
}

/// Whether `inertiaInverse` is a true inverse of `inertia` (not the pseudo-inverse of a rod's or
/// a point's inertia, whose zero axis a correction of ω would keep spinning).
template <class T>
SMASH_HD bool invertibleInertia(const Mat3<T>& inertia, const Mat3<T>& inertiaInverse) {
  const Mat3<T> p = inertia * inertiaInverse;
  T off = T(0);
  for (int c = 0; c < 3; ++c)
    for (int r = 0; r < 3; ++r) off += glm::abs(p[c][r] - (c == r ? T(1) : T(0)));
  return off < T(1e-3);
}

/// The ω of angular momentum L at pose r, as a correction of `omega` (see rotateWithMomentum);
/// for a degenerate inertia, I(r)⁺ L.
template <class T>
SMASH_HD Vec3<T> omegaOfMomentum(const Mat3<T>& r, const Vec3<T>& omega, const Vec3<T>& L,
                                 const Mat3<T>& inertia, const Mat3<T>& inertiaInverse) {
  if (!invertibleInertia(inertia, inertiaInverse))
    return r * (inertiaInverse * (glm::transpose(r) * L));
  // Twice: the first correction carries the fixed rounding of I_ref⁻¹ I_ref on the change
  // L − I(r) ω, which is of the size of the step's turn (0.37 of |L| at 0.37 rad per step) and
  // always of one sign along a spin's orbit — a drift of |L| of 3·10⁻³ over 10,000 steps in
  // float; the second carries it on what the first left, the square of it.
  const Vec3<T> once = omega + omegaCorrection(r, omega, L, inertia, inertiaInverse);
  return once + omegaCorrection(r, once, L, inertia, inertiaInverse);
}

/// An angle folded into [−π, π).
template <class T>
SMASH_HD T wrappedAngle(T x) {
  const T turn = T(2) * glm::pi<T>();
  return x - turn * glm::floor((x + glm::pi<T>()) / turn);
}

/// The turn a of `u` towards `v` (|u| = |v|, u ⟂ v) nearest 0 at which L_s(a) = cos a u + sin a v
/// has the energy ½ L_sᵀ I⁻¹ L_s = `target`, a ∈ [−π/2, π/2]; false when no point of that great
/// circle has it. On the circle the energy is a sinusoid of 2a, P + Q cos 2a + S sin 2a, so the
/// root is in closed form.
SMASH_HD bool energyTurn(const glm::dvec3& u, const glm::dvec3& v, const glm::dmat3& Iinv, double target,
                         bool reachable, double& angle) {
  const double euu = glm::dot(u, Iinv * u), evv = glm::dot(v, Iinv * v), euv = glm::dot(u, Iinv * v);
  const double P = (euu + evv) / 4, Q = (euu - evv) / 4, S = euv / 2;
  const double R = glm::sqrt(Q * Q + S * S);  // E(a) = P + R cos(2a − φ)
  if (!(R > 0)) return false;
  double c = (target - P) / R;
  if (reachable) c = glm::clamp(c, -1.0, 1.0);  // (an extreme of the circle, up to rounding)
  if (!(glm::abs(c) <= 1)) return false;
  const double phi = same::atan2(S, Q), d = same::acos(c);
  // 2a folded into [−π, π): a and a + π give the same energy (at −L_s).
  const double first = wrappedAngle(phi - d), second = wrappedAngle(phi + d);
  angle = (glm::abs(first) < glm::abs(second) ? first : second) / 2;
  return true;
}

/// Keeps a rotation's turn on its invariants: turns `rotation` (about an axis of the body) so that
/// the body-frame angular momentum Rᵀ L has the energy E = ½ Lᵀ I(R)⁻¹ L of `energyRotation` (the
/// pose at the step's start) — |L| is kept by any rotation. A torque-free body's energy and |L|
/// are then conserved to rounding whatever the step (the explicit midpoint alone gained 31% of a
/// 1×2×3 box's energy over 6,000 steps at 0.37 rad per step); the dynamics between the invariants
/// are the integrator's. The turn takes Rᵀ L along the great circle of the energy's gradient, as
/// little as gives the energy (energyTurn, in closed form). Where that circle does not reach it —
/// near the axis of the least or the most energy, whose neighbourhood is a long valley when the two
/// other moments differ much — along the great circle towards the start's Rᵀ L, which has it. (By
/// Newton's iteration on the gradient circle, 8 steps, a correction it could not finish or reach
/// was left half done or undone, and that step's energy stayed for the rest of the run: up to
/// +486% over 10,000 steps at 1 to 3 rad per step, docs/solver.md.) Nothing when the gradient
/// vanishes (rotation about a principal axis) or the inertia is degenerate, and nothing when the
/// correction would exceed the larger of (|ω| h)² for the step's ω and the angle the body-frame L
/// moved in the step: the integrator's energy error is of higher order than the turn, so a larger
/// correction is not that error (a body at rest has an L of rounding noise, a float pose a rounding
/// of its energy; in contact, correcting by up to the whole turn made the lab bunny's path
/// sensitive to rounding). Every step takes it, free or in contact (rotateWithMomentum);
/// `free` false (a collider within the body's reach, body contacts in the scene) leaves an error
/// below 2e-6 of the energy, which float cannot tell from its rounding.
///
/// `held` (the float backends; null: none): the energy is held from step to step as the ratio
/// κ = E/|L|², which damping (a uniform scaling of L) keeps — taken from `energyRotation` where
/// *held is 0, then the target is κ |L|². In float the start pose carries a rounding of its
/// energy, and taking each step's target from it random-walked: 6 of 100 runs at 0.5 to π rad per
/// step drifted past 0.1% over 10,000 steps, up to 0.52% (docs/solver.md, "Held energy"). *held is
/// taken in the first free step that reaches the target's computation (a turn above 1e-4 rad,
/// invertible inertia, L ≠ 0). The caller sets *held to 0 when the body is no longer free. The
/// reference (double) takes each step's target from its pose.
template <class T>
SMASH_HD void keepRotationEnergy(Mat3<T>& rotation, const Mat3<T>& energyRotation, const Vec3<T>& L,
                                 const Mat3<T>& inertia, const Mat3<T>& inertiaInverse, const Vec3<T>& omega,
                                 T h, T* held = nullptr, bool free = true) {
  const T turn = glm::length(omega) * h;
  // A turn this small leaves an energy error below rounding (and would allow no correction).
  if (!(turn > T(1e-4))) return;
  if (!invertibleInertia(inertia, inertiaInverse)) return;
  // In double whatever T is: the energies are those of the state as it is held (float on the
  // backends), so that an error of a step is seen however small. In float, skipping errors below
  // the rounding of E let a bias of the rotation extraction add up (up to 1% of the energy over
  // 10,000 steps); the correction's own rounding is random from step to step.
  using D = double;
  const D maxAngle = D(turn) * D(turn);
  const glm::dvec3 Ld(L);
  const glm::dmat3 Iinv(inertiaInverse);
  const D L2 = glm::dot(Ld, Ld);
  if (!(L2 > D(0))) return;
  const glm::dvec3 Lstart = glm::transpose(glm::dmat3(energyRotation)) * Ld;
  D target = D(0.5) * glm::dot(Lstart, Iinv * Lstart);
  if (held) {
    if (!(*held > T(0))) *held = T(target / L2);
    target = D(*held) * L2;
  }
  const glm::dvec3 Lb = glm::transpose(glm::dmat3(rotation)) * Ld;
  const glm::dvec3 grad = Iinv * Lb;
  const glm::dvec3 g = grad - (glm::dot(Lb, grad) / L2) * Lb;  // tangent to the sphere |L_b| = |L|
  const D gLen = glm::length(g);
  const D Llen = glm::sqrt(L2);
  // A gradient within the rounding of the held pose: about a principal axis no turn changes E.
  if (!(gLen > D(ScalarTraits<T>::epsilon) * D(16) * glm::length(grad))) return;
  const D e0 = D(0.5) * glm::dot(Lb, grad);
  if (!(glm::abs(target - e0) > D(4) * ScalarTraits<D>::epsilon * target)) return;
  // An error within float's rounding of the energy is not the integrator's: corrected near a
  // principal axis (a flat energy landscape) it turned a float body by 1e-4 rad where the double
  // one turned by 3e-10. Both skip below 2e-6 (16 float ulps) near a collider (nothing held) and
  // when the target is held (the float backends' free bodies: the target is fixed, so the skipped
  // errors cannot add up). The reference holds nothing and corrects a free body's every error.
  if ((!free || held) && !(glm::abs(target - e0) > D(2e-6) * target)) return;
  // How far the turn may go: the integrator's energy error is of higher order than the step's
  // turn, (|ω| h)², or as far back as the body-frame L moved in this step (a long body's L moves
  // across a steep energy landscape).
  const D moved = same::acos(glm::clamp(glm::dot(Lb, Lstart) / L2, D(-1), D(1)));
  const D most = glm::max(maxAngle, moved);
  glm::dvec3 towards = g / gLen;
  D angle = D(0);
  if (!energyTurn(Lb, Llen * towards, Iinv, target, false, angle) || !(glm::abs(angle) <= most)) {
    const glm::dvec3 back = Lstart - (glm::dot(Lb, Lstart) / L2) * Lb;  // towards the start's
    const D backLen = glm::length(back);
    if (!(backLen > D(0))) return;
    towards = back / backLen;
    // The start's L_b has the energy (with a held energy, up to the rounding of the start pose):
    // a root at most `moved` away. Where the closed form does not find it there — its acos is
    // ill-conditioned where the circle's energy touches the target near an extremum, and a held
    // target may lie just beyond — L_b is turned onto the start's itself (angle `moved`). Left
    // uncorrected instead, a thin rod spinning end over end at 0.54 rad per step in float (its
    // explicit-midpoint turn moves L_b 0.48 rad a step about the rod's axis, which this path
    // takes back every step) kept a 0.25% energy error and a 28° twist from one step, and the next
    // step's prediction from that pose was off by 50 times the energy: +7% kinetic energy in
    // 40 steps without touching a wall (issue 11; tests/test_free_rotation.cpp).
    // (The angle to the start's L_b from the sine and cosine: `moved`, from the cosine over |L|²,
    // is off by up to ~5·10⁻⁴ rad for a small angle where the float poses' |R_bᵀ L| differ.)
    if (!energyTurn(Lb, Llen * towards, Iinv, target, true, angle) || !(glm::abs(angle) <= most * D(1 + 1e-6)))
      angle = same::atan2(glm::length(glm::cross(Lb, Lstart)), glm::dot(Lb, Lstart));
  }
  // Q turns L_b towards `towards` by `angle` (about L_b × towards); then (R Qᵀ)ᵀ L = Q L_b.
  const glm::dvec3 axis = glm::cross(Lb / Llen, towards);
  const D s = same::sin(angle / D(2)), c = same::cos(angle / D(2));
  const Mat3<T> Q = Mat3<T>(rotationMatrix(Quat<D>(c, s * axis.x, s * axis.y, s * axis.z)));
  rotation = rotation * glm::transpose(Q);
}

/// The impulse method's orientation update in angular momentum form (docs/solver.md, "Impulse
/// method"): without torque the world angular momentum L = R I_ref Rᵀ ω is what stays constant,
/// not ω, so ω turns with the body (Euler's equations; the gyroscopic term). L is taken from ω at
/// the current pose; the orientation moves by the explicit midpoint rule (the quaternion update of physics.md §3.3
/// with the ω of L at the half-step pose), and ω is then the ω of L at the new pose. For isotropic
/// inertia this is physics.md §3.3's update with ω constant. `inertia` is I_ref, `inertiaInverse` its
/// (pseudo-)inverse.
///
/// "The ω of L at pose R" is computed as a correction of the current ω, ω + I(R)⁻¹ (L − I(R) ω):
/// in float, I_ref⁻¹ I_ref differs from the identity by a rounding that is the same every step,
/// and the plain I(R)⁻¹ L compounded it into a drift of |L| (7·10⁻⁴ over 4,000 steps of a 1×2×3
/// box); the correction carries that rounding only on the small change.
///
/// The rotation keeps the energy L has at the step's start pose (keepRotationEnergy), in or out of
/// contact: the step's impulses and torques act on ω before or after this update, never during it,
/// so the turn itself is torque-free. (With collide_after, the default, the collider impulses come
/// after it and turn the pose again by h Δω — contact_solver.h moveWithVelocityChange — a turn not
/// corrected here.) (Kept for free bodies only, a thin rod spinning at 0.8 rad per step within a
/// plane's reach gained 20 times its energy in three steps without touching it: the explicit
/// midpoint alone is unstable for moments that differ by 100s.) `free`: no collider within the
/// body's reach this step — only then is the energy held from step to step (`held` as there).
template <class T>
SMASH_HD void rotateWithMomentum(Mat3<T>& rotation, Vec3<T>& omega, const Mat3<T>& inertia,
                                 const Mat3<T>& inertiaInverse, T h, bool free, T* held = nullptr) {
  const Vec3<T> L = momentumAt(rotation, omega, inertia);
  const Quat<T> q = quaternionFromRotation(rotation);
  const Vec3<T> omegaHalf = omegaOfMomentum(rotationMatrix(integrateOrientation(q, omega, h / T(2))), omega, L,
                                            inertia, inertiaInverse);
  const Mat3<T> start = rotation;
  rotation = rotationMatrix(integrateOrientation(q, omegaHalf, h));
  keepRotationEnergy(rotation, start, L, inertia, inertiaInverse, omega, h, free ? held : nullptr, free);
  omega = omegaOfMomentum(rotation, omega, L, inertia, inertiaInverse);
}

/// The rotation by the angle |ω| h about ω (the exponential map; the identity for ω = 0).
template <class T>
SMASH_HD Mat3<T> rotationBy(const Vec3<T>& omega, T h) {
  const T rate = glm::length(omega);
  if (!(rate * h > T(1e-12))) return Mat3<T>(T(1));  // a turn below rounding (and no 0/0)
  const Vec3<T> axis = omega / rate;
  const T s = same::sin(rate * h / T(2)), c = same::cos(rate * h / T(2));
  return rotationMatrix(Quat<T>(c, s * axis.x, s * axis.y, s * axis.z));
}

/// Shape matching's rotation-aware prediction (docs/solver.md, "Shape matching step"): a free
/// body's offsets turn by exp(h ω½) over the step, with ω½ the ω of the held angular momentum
/// L = I(R) ω at the half-step pose exp(h/2 ω) R (explicit midpoint, as rotateWithMomentum),
/// instead of moving along the chord h ω × r, which turned a body by atan(|ω| h) per step.
///
/// Written as a correction of the chord prediction y = r + h v (r = x − p0):
///   y = r + h v + M r,   M r = h u × r + k w × (w × r),
/// with w = ω½, θ = |w| h, u = (w − ω) + (sin θ/θ − 1) w and k = h² · 2 sin²(θ/2)/θ², which is
/// the exact rotation of r by θ about w plus h times the particle's velocity less its rigid turn
/// ω × r. The particles are rigid at the step's start (r = R r_rest), so the correction of the
/// matching sums is per body: Σ m M r = 0 and Σ m M r r_restᵀ = M R A_qq (turnCorrection). The
/// particle loops keep the chord (and their registers); the small turn keeps float's precision.
template <class T>
struct Turn {
  Vec3<T> u{T(0)};
  Vec3<T> w{T(0)};
  T k = T(0);
};

template <class T>
SMASH_HD Turn<T> predictedTurn(const Mat3<T>& rotation, const Vec3<T>& omega, const Mat3<T>& inertia,
                               const Mat3<T>& inertiaInverse, T h) {
  Turn<T> t;
  // A turn below 1e-9 rad changes y by less than rounding; and it keeps θ² clear of underflow.
  if (!(glm::length(omega) * h > T(1e-9))) return t;
  const Vec3<T> L = momentumAt(rotation, omega, inertia);
  const Mat3<T> half = rotationBy(omega, h / T(2)) * rotation;
  const Vec3<T> change = omegaCorrection(half, omega, L, inertia, inertiaInverse);
  t.w = omega + change;
  const T theta = glm::length(t.w) * h;
  const T t2 = theta * theta;
  // sin θ/θ − 1 without cancellation for small θ (series to θ⁶, exact to rounding below 0.1).
  const T sinc1 = theta < T(0.1) ? t2 * (T(-1) / T(6) + t2 * (T(1) / T(120) - t2 / T(5040)))
                                 : same::sin(theta) / theta - T(1);
  const T half2 = same::sin(theta / T(2));
  t.u = change + sinc1 * t.w;
  t.k = theta < T(1e-3) ? h * h * (T(0.5) - t2 / T(24)) : h * h * (T(2) * half2 * half2 / t2);
  return t;
}

/// The turn's correction of the matching sum Σ m y r_restᵀ: M R A_qq (see predictedTurn), with
/// `rotation` the pose at the step's start and `aqq` = Σ m r_rest r_restᵀ.
template <class T>
SMASH_HD Mat3<T> turnCorrection(const Turn<T>& t, const Mat3<T>& rotation, const Mat3<T>& aqq, T h) {
  const Mat3<T> w = skew(t.w);
  const Mat3<T> M = h * skew(t.u) + t.k * (w * w);
  return M * (rotation * aqq);
}

}  // namespace smash
