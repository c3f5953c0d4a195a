// The resting-contact oracle (issue 11 item 3; course notes, seed 001 §9 "resting contact"): the
// contact impulses of one step as the solution of the linear complementarity problem
//
//   v_n = W λ + v_n,free ≥ target,   λ_N ≥ 0,   λ_N (v_n − target) = 0,   |λ_T| ≤ μ λ_N
//
// solved to convergence by projected Gauss–Seidel in double over every contact of the scene at
// once, with the bodies' true masses — no mass splitting, no fixed round count, no shock pass, no
// warm start. It is written apart from the iterative solver (kernels/math/contact_solver.h) so
// that tests can compare what that solver's impulses settle to on a resting stack with what they
// should be (docs/solver.md, "The resting-contact oracle").
#pragma once

#include <cstddef>
#include <vector>

#include <glm/glm.hpp>

#include "world/world.h"

namespace smash {

class ReferenceWorld;

/// A body as the contacts see it; a static body has invMass 0 and invInertia 0.
struct LcpBody {
  double invMass = 0;
  glm::dmat3 invInertia{0.0};
  glm::dvec3 v{0.0};  ///< velocity before the contact impulses
  glm::dvec3 w{0.0};
};

/// One contact point between body a and body b (−1: a static collider).
struct LcpContact {
  int a = -1, b = -1;
  glm::dvec3 ra{0.0}, rb{0.0};  ///< point minus each body's centre
  glm::dvec3 normal{0.0};       ///< unit, from b towards a
  double friction = 0;
  double target = 0;            ///< the normal relative velocity may not be below this
};

struct LcpResult {
  std::vector<double> normal;       ///< λ_N per contact
  std::vector<glm::dvec3> tangent;  ///< λ_T per contact
  int sweeps = 0;
  bool converged = false;
  double worstViolation = 0;        ///< max over contacts of target − v_n, after the solve (≤ 0 ideally)
  double worstComplementarity = 0;  ///< max over contacts of λ_N |v_n − target| (0 ideally)
};

/// Projected Gauss–Seidel until the normal LCP's natural residual, max |min(λ_N k, v_n − target)|
/// (k the contact's effective inverse mass), and friction's (no sliding inside the Coulomb disc,
/// on its rim sliding only against λ_T) are below `tolerance` m/s after a sweep (or `maxSweeps`).
/// A light body between heavy ones converges slowly (the conditioning heavy-on-light is about):
/// the 1:10:100 stack reaches 10⁻⁶ m/s in about 40,000 sweeps; the report says how far it got.
LcpResult solveContactLcp(std::vector<LcpBody> bodies, const std::vector<LcpContact>& contacts,
                          double tolerance = 1e-10, int maxSweeps = 40000);

/// The oracle for `world`'s next step: its last step's contact points (pairs and collider
/// contacts of bodies in pairs), its bodies' velocities after the next step's gravity and
/// damping, targets 0 for touching points and −φ/h for speculative ones; solved by
/// solveContactLcp and summed per pair. `result` (optional) receives the solver's report;
/// `supports` (optional), per pair, the part of its whole impulse (normal and friction) along −g
/// that holds up b (a against a collider): at rest, the weight above it times h, whatever the
/// normals — Σ λ_N is that only where every normal is vertical.
std::vector<PairNormalImpulse> restingOracle(const ReferenceWorld& world, LcpResult* result = nullptr,
                                             std::vector<double>* supports = nullptr);

}  // namespace smash
