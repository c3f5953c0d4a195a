#include "reference/reference_world.h"

#include "core/error.h"
#include "core/files.h"

#include <algorithm>
#include <cmath>

#include "core/sphere_sweep.h"
#include "math/contact.h"
#include "math/grid_sdf.h"
#include "math/pair_colors.h"
#include "math/rotation.h"
#include "math/sdf.h"

namespace smash {

std::size_t ReferenceWorld::plannedBytes(const Scene& scene) {
  std::size_t particles = 0;
  for (const Body& b : scene.bodies) particles += scene.shapes[b.shape].rest.size();
  const std::size_t perBody = sizeof(BodyState) + sizeof(std::size_t) + sizeof(long long) + sizeof(Incident) +
                              sizeof(std::vector<PairContact<double>>) + sizeof(BodyPose);
  // x and v, their double copies while a run observes them (World::particleStates), and float copies.
  return particles * (4 * sizeof(glm::dvec3) + 2 * sizeof(glm::vec3)) + scene.bodies.size() * perBody;
}

ReferenceWorld::ReferenceWorld(Scene scene)
    : scene_(std::move(scene)), sleep_(scene_.sleepSettings<double>()), origin_(workingOrigin(scene_)) {
  requireBakedShapes(scene_);
  {
    std::size_t particles = 0;
    for (const Body& b : scene_.bodies) particles += scene_.shapes[b.shape].rest.size();
    requireMemory(scene_.path.empty() ? std::string("scene") : scene_.path, plannedBytes(scene_),
                  availableHostMemory(), "reference host", scene_.bodies.size(), particles);
  }
  particleOffset_.push_back(0);
  for (const Body& body : scene_.bodies) {
    BodyState s;
    s.centre = body.position;
    s.rotation = rotationMatrix(body.rotation);
    s.velocity = body.velocity;
    s.angularVelocity = body.angularVelocity;
    bodies_.push_back(s);
    particleOffset_.push_back(particleOffset_.back() + scene_.shapes[body.shape].rest.size());
  }
  incidentStep_.assign(bodies_.size(), -1);
  incidentKind_.assign(bodies_.size(), Incident::None);
  previousColliderContacts_.assign(bodies_.size(), {});
  x_.resize(particleOffset_.back());
  v_.resize(particleOffset_.back());
  for (std::size_t b = 0; b < bodies_.size(); ++b) writeParticlesFromBody(b);
}

void ReferenceWorld::step() {
  const double h = scene_.stepDt();
  ++steps_;
  // Each body's collider contacts solved this step (none for a body that solves none), the next
  // step's warm start: previousColliderContacts_ at the step's end (the backends' KeepContacts).
  solvedColliderContacts_.assign(bodies_.size(), {});
  struct KeepContacts {
    ReferenceWorld& world;
    ~KeepContacts() { world.previousColliderContacts_.swap(world.solvedColliderContacts_); }
  } keep{*this};
  if (!scene_.bodyContactsActive()) {
    for (std::size_t b = 0; b < bodies_.size(); ++b) {
      if (bodies_[b].asleep) continue;
      const BodyState before = bodies_[b];
      if (scene_.solver.method == Method::ShapeMatching)
        stepShapeMatching(b, h, true);
      else
        stepImpulse(b, h, true);
      watchBody(b, before);
    }
    const std::vector<bool> fellAsleep = updateSleep({});
    for (std::size_t b = 0; b < bodies_.size(); ++b)
      if (fellAsleep[b]) writeParticlesFromBody(b);
    return;
  }
  // Bodies that can touch: every body moves to its predicted pose first, then all contacts are
  // found and solved together, then the particles follow their bodies.
  const std::vector<BodyState> before = bodies_;
  for (std::size_t b = 0; b < bodies_.size(); ++b) {
    if (bodies_[b].asleep) continue;
    if (scene_.solver.method == Method::ShapeMatching)
      stepShapeMatching(b, h, false);
    else
      stepImpulse(b, h, false);
  }
  const auto touching = resolveAllContacts(before);
  for (std::size_t b = 0; b < bodies_.size(); ++b) {
    if (bodies_[b].asleep) continue;  // asleep since the step's start: nothing moved
    watchBody(b, before[b]);
  }
  const std::vector<bool> fellAsleep = updateSleep(touching);
  for (std::size_t b = 0; b < bodies_.size(); ++b)
    if (!(bodies_[b].asleep && before[b].asleep) || fellAsleep[b]) writeParticlesFromBody(b);
}

// Sleeping (math/sleep.h), the backends' SleepSteps / IslandMinimum / SleepDecide (or
// SleepBodies, which is the same without pairs).
std::vector<bool> ReferenceWorld::updateSleep(const std::vector<std::pair<std::size_t, std::size_t>>& touching) {
  const std::size_t n = bodies_.size();
  std::vector<bool> fellAsleep(n, false);
  const SleepSettings<double>& s = sleep_;
  if (!s.enabled) return fellAsleep;
  std::vector<char> touches(n, 0);
  for (const auto& [a, b] : touching) touches[a] = touches[b] = 1;
  std::vector<int> island(n), next(n), label(n), nextLabel(n);
  for (std::size_t b = 0; b < n; ++b) {
    BodyState& body = bodies_[b];
    label[b] = body.asleep ? body.island : static_cast<int>(b);
    if (!body.asleep) {
      const double radius = storedRadius(b);
      bool supported = touches[b] != 0;
      for (const auto& collider : scene_.colliders)
        supported = supported ||
                    sdfCollider(collider, body.centre).phi <= radius + contactMargin() + lipschitzSlack(collider);
      body.restSteps = nextRestSteps(s, body.restSteps, body.velocity, body.angularVelocity, radius, supported);
    }
    island[b] = body.restSteps;
  }
  if (!touching.empty())
    for (int k = 0; k < kIslandPasses; ++k) {  // least steps at rest and least label, as IslandMinimum
      next = island;
      nextLabel = label;
      for (const auto& [a, b] : touching) {
        next[a] = std::min(next[a], island[b]);
        next[b] = std::min(next[b], island[a]);
        nextLabel[a] = std::min(nextLabel[a], label[b]);
        nextLabel[b] = std::min(nextLabel[b], label[a]);
      }
      island.swap(next);
      label.swap(nextLabel);
    }
  for (std::size_t b = 0; b < n; ++b) {
    BodyState& body = bodies_[b];
    switch (sleepDecision(s, body.asleep, island[b])) {
      case SleepChange::FallAsleep:
        body.asleep = true;
        body.island = label[b];
        body.velocity = glm::dvec3(0.0);
        body.angularVelocity = glm::dvec3(0.0);
        fellAsleep[b] = true;
        break;
      case SleepChange::Wake:
        body.asleep = false;
        body.restSteps = 0;
        break;
      case SleepChange::None:
        break;
    }
  }
  return fellAsleep;
}

std::int64_t ReferenceWorld::sleepingBodies() const {
  std::int64_t n = 0;
  for (const BodyState& b : bodies_) n += b.asleep ? 1 : 0;
  return n;
}

// The watchdog (scene.watchdog): record the first incident of each body; with the clamp policy
// repair the state, freezing a non-finite body at its pose from the start of the step.
void ReferenceWorld::watchBody(std::size_t b, const BodyState& before) {
  const Watchdog& w = scene_.watchdog;
  BodyState& s = bodies_[b];
  const double radius = scene_.shapes[scene_.bodies[b].shape].boundingRadius;
  // The bound is measured from the working origin, as the backends (which hold positions relative
  // to it) measure it: a scene's bound moves with the scene (docs/physics.md §10).
  glm::dvec3 relative = s.centre - origin_;
  const Incident incident = checkBody(relative, s.rotation, s.velocity, s.angularVelocity, radius,
                                      w.worldBound, w.maxSpeed);
  if (incident == Incident::None) return;
  if (incidentStep_[b] < 0) {
    incidentStep_[b] = steps_;
    incidentKind_[b] = incident;
  }
  if (w.policy != Watchdog::Policy::Clamp) return;
  if (incident == Incident::NonFinite) {
    s.centre = before.centre;
    s.rotation = before.rotation;
    s.velocity = glm::dvec3(0.0);
    s.angularVelocity = glm::dvec3(0.0);
  } else {
    clampBody(relative, s.velocity, s.angularVelocity, radius, w.worldBound, w.maxSpeed);
    s.centre = origin_ == glm::dvec3(0.0) ? relative : origin_ + relative;  // keeps a −0 as it is
  }
  writeParticlesFromBody(b);
}

std::vector<BodyIncident> ReferenceWorld::incidents() const {
  std::vector<BodyIncident> out;
  for (std::size_t b = 0; b < bodies_.size(); ++b)
    if (incidentStep_[b] >= 0) out.push_back({b, incidentStep_[b], incidentKind_[b]});
  return out;
}

ContactMaterial<double> ReferenceWorld::contactMaterial(std::size_t b) const {
  const Material& m = scene_.materials[scene_.bodies[b].material];
  return {m.restitution, m.friction, scene_.solver.restitutionThreshold};
}

glm::dmat3 ReferenceWorld::worldInverseInertia(std::size_t b) const {
  const glm::dmat3& R = bodies_[b].rotation;
  // I = R I_ref Rᵀ, so I⁻¹ = R I_ref⁻¹ Rᵀ (pseudo-inverse for degenerate shapes).
  return R * scene_.shapes[scene_.bodies[b].shape].inertiaInverse * glm::transpose(R);
}

void ReferenceWorld::writeParticlesFromBody(std::size_t b) {
  const BodyState& s = bodies_[b];
  const Shape& shape = scene_.shapes[scene_.bodies[b].shape];
  for (std::size_t i = 0; i < shape.rest.size(); ++i) {
    glm::dvec3 r = s.rotation * shape.rest[i];
    x_[particleOffset_[b] + i] = s.centre + r;
    v_[particleOffset_[b] + i] = s.velocity + glm::cross(s.angularVelocity, r);
  }
}

// physics.md §2. Per-particle state x_i, v_i; per-body c, R.
void ReferenceWorld::stepShapeMatching(std::size_t b, double h, bool contactsNow) {
  const Shape& shape = scene_.shapes[scene_.bodies[b].shape];
  const std::size_t n = shape.rest.size(), off = particleOffset_[b];
  const SolverSettings& solver = scene_.solver;
  const ContactMaterial<double> material = contactMaterial(b);
  BodyState& body = bodies_[b];
  const BodyState start = body;  // the step's start (the approach velocities: solverBodyApproach)

  // 1. Integrate: v_i ← α (v_i + h (g + f_i/m_i)); f_i are penalty contact forces, if chosen.
  for (std::size_t i = 0; i < n; ++i) {
    glm::dvec3& v = v_[off + i];
    glm::dvec3 f(0.0);
    if (solver.contact != ContactModel::Impulse)
      for (const auto& collider : scene_.colliders) {
        SdfSample<double> s = sdfCollider(collider, x_[off + i]);
        f += penaltyForce(solver.penalty, s.phi, s.gradient, v, shape.mass[i], material.friction, h);
      }
    v = (v + h * (scene_.gravity + f / shape.mass[i])) * scene_.linearDamping;
  }

  // 2. Collide before matching: per-particle impulse (physics.md §4) on v_i for φ(x_i) < 0.
  if (solver.contact == ContactModel::Impulse)
    for (std::size_t i = 0; i < n; ++i)
      for (const auto& collider : scene_.colliders) {
        SdfSample<double> s = sdfCollider(collider, x_[off + i]);
        if (s.phi < -solver.penetrationSlop)
          v_[off + i] = impulseResponse(v_[off + i], s.gradient, material);
      }

  // Momentum carried by the particles into the match (about the current centre).
  glm::dvec3 P(0.0), L(0.0);
  for (std::size_t i = 0; i < n; ++i) {
    P += shape.mass[i] * v_[off + i];
    L += shape.mass[i] * glm::cross(x_[off + i] - body.centre, v_[off + i]);
  }

  // 3. Predict: y_i = x_i + h v_i, kept relative to the reference point p0 = current centre
  //    (physics.md §2 numerics: no world-coordinate cancellation for bodies far from the origin). The
  //    prediction is rotation aware: offsets turn by the body's turn exp(h ω½) (the ω of the held
  //    angular momentum at the half-step pose) instead of moving along the chord h ω × (x − p0),
  //    which turned a body by atan(|ω| h) per step; added to A_pq below (math/rotation.h).
  const glm::dvec3 p0 = body.centre;
  std::vector<glm::dvec3> y(n);
  for (std::size_t i = 0; i < n; ++i) y[i] = (x_[off + i] - p0) + h * v_[off + i];

  // 4. Match: c = Σ m_i y_i / M, A_pq = Σ m_i (y_i − c) r_iᵀ, R = rotation part of A_pq.
  glm::dvec3 cRel(0.0);
  for (std::size_t i = 0; i < n; ++i) cRel += shape.mass[i] * y[i];
  cRel /= shape.totalMass;
  glm::dmat3 Apq(0.0);
  for (std::size_t i = 0; i < n; ++i) Apq += shape.mass[i] * outer(y[i] - cRel, shape.rest[i]);
  Apq += turnCorrection(predictedTurn(body.rotation, body.angularVelocity, shape.inertia, shape.inertiaInverse, h),
                        body.rotation, shape.Aqq, h);
  if (solver.rotation == RotationFit::Seeds) Apq = Apq * shape.AqqInverse;  // seeds' A_pq A_qq⁻¹
  body.rotation = optimalRotation(Apq, body.rotation);
  // The rotation's invariants: the energy ½ Lᵀ I(R)⁻¹ L the pose at the step's start gives
  // this step's L (|L| is kept by any rotation; math/rotation.h keepRotationEnergy), free or in
  // contact (rotateWithMomentum says why).
  // A free body's L is its own (no impulse or force reached its particles), damped as their
  // velocities are: from the body rather than the particle sum, as the backends take it.
  const bool free = awayFromColliders(b, start);
  if (free && solver.contact == ContactModel::Impulse)  // penalty forces reach past the margin
    L = scene_.linearDamping * momentumAt(start.rotation, start.angularVelocity, shape.inertia);
  keepRotationEnergy(body.rotation, start.rotation, L, shape.inertia, shape.inertiaInverse, start.angularVelocity, h,
                     static_cast<double*>(nullptr), free);
  body.centre = p0 + cRel;

  // 5. Project: x_i = c + R r_i. Velocities: the rigid field that carries the particles'
  //    linear and angular momentum, v_i = P/M + ω × R r_i with ω = I(R)⁻¹ L. physics.md §3 writes
  //    v_i = (x_i' − x_i)/h; that chord velocity loses angular momentum at O((ω h)²) per step,
  //    this one conserves P and L exactly in free flight (see docs/solver.md).
  body.velocity = P / shape.totalMass;
  body.angularVelocity = omegaOfMomentum(body.rotation, start.angularVelocity, L, shape.inertia, shape.inertiaInverse);

  // 6. Collide after matching, at the body level so the body stays rigid.
  if (!contactsNow) return;
  if (solver.collideAfter && solver.contact == ContactModel::Impulse) resolveBodyContacts(b, start, true);
  writeParticlesFromBody(b);
}

// physics.md §3. Body state only; particles are written from it for output.
void ReferenceWorld::stepImpulse(std::size_t b, double h, bool contactsNow) {
  const Shape& shape = scene_.shapes[scene_.bodies[b].shape];
  const SolverSettings& solver = scene_.solver;
  BodyState& body = bodies_[b];
  const BodyState start = body;

  // 1. Velocities. Penalty contact forces (if chosen) give F = Σ f_i and τ = Σ (R r_i) × f_i.
  glm::dvec3 F(0.0), tau(0.0);
  if (solver.contact != ContactModel::Impulse) {
    const ContactMaterial<double> material = contactMaterial(b);
    for (std::size_t i = 0; i < shape.rest.size(); ++i) {
      glm::dvec3 r = body.rotation * shape.rest[i];
      glm::dvec3 vi = body.velocity + glm::cross(body.angularVelocity, r);
      for (const auto& collider : scene_.colliders) {
        SdfSample<double> s = sdfCollider(collider, body.centre + r);
        glm::dvec3 f =
            penaltyForce(solver.penalty, s.phi, s.gradient, vi, shape.mass[i], material.friction, h);
        F += f;
        tau += glm::cross(r, f);
      }
    }
  }
  body.velocity = (body.velocity + h * (scene_.gravity + F / shape.totalMass)) * scene_.linearDamping;
  body.angularVelocity = body.angularVelocity * scene_.angularDamping + h * (worldInverseInertia(b) * tau);

  // 2. Collision: averaged impulse and push-out by the deepest point. physics.md §3 resolves contacts
  //    here, before the position update; with collide_after (the default) they are resolved once,
  //    after it instead, so that no particle ends the step inside a collider. Measured on the lab
  //    scene, the literal order leaves a resting bunny rocking (docs/solver.md).
  const bool contactsAfter = solver.collideAfter;
  if (contactsNow && solver.contact == ContactModel::Impulse && !contactsAfter) resolveBodyContacts(b, start, false);

  // 3. Positions: x ← x + h v; the orientation by physics.md §3.3's q ← normalize(q + [0, h/2 ω] ⊗ q) in
  //    angular momentum form: L = I(R) ω is held and ω = I(R)⁻¹ L follows the body (Euler's
  //    equations, the gyroscopic term; math/rotation.h rotateWithMomentum).
  body.centre += h * body.velocity;
  rotateWithMomentum(body.rotation, body.angularVelocity, shape.inertia, shape.inertiaInverse, h,
                     awayFromColliders(b, start));

  if (!contactsNow) return;
  if (solver.contact == ContactModel::Impulse && contactsAfter) resolveBodyContacts(b, start, true);
  writeParticlesFromBody(b);
}

void ReferenceWorld::resolveBodyContacts(std::size_t b, const BodyState& start, bool moved) {
  // Velocities. The sequential solver takes the contacts of all colliders together, so a body
  // in a wedge (floor and wall, floor and sphere) is solved against both at once: the one contact
  // solver (math/contact_solver.h) with the colliders as a static body. The averaged impulse of
  // physics.md §3 goes collider by collider, as the lab does per plane.
  std::vector<PairContact<double>> contacts;
  // The velocities before the collider solve, ω turned with the pose as the solve turns it
  // (limitPushWork's last stage scales the solve's change back).
  glm::dvec3 solvedFromV = bodies_[b].velocity, solvedFromW = bodies_[b].angularVelocity;
  if (scene_.solver.contactSolver == ContactSolver::Sequential) {
    for (std::size_t k = 0; k < scene_.colliders.size(); ++k)
      gatherContacts(b, start, static_cast<int>(k), contacts);
    reduceToManifold(b, contacts);
    if (!contacts.empty()) {
      BodyState& body = bodies_[b];
      SolverBody<double> self = solverBody(b, 1);
      const SolverBody<double> atStart = solverBodyApproach(b, start, body);
      // Warm-started and until settled where bodies do not touch; cold otherwise (the backends'
      // solveColliderContacts).
      const bool warm = !scene_.bodyContactsActive();
      const std::vector<PairContact<double>>& previous = previousColliderContacts_[b];
      const glm::dmat3 before = body.rotation;
      resolveAgainstStatic(body.centre, body.rotation, self, atStart, contacts.data(),
                           static_cast<int>(contacts.size()), previous.data(), static_cast<int>(previous.size()),
                           warm, contactMaterial(b), scene_.stepDt(),
                           scene_.solver.contactIterations, storedRadius(b), moved, scene_.gravity);
      body.velocity = self.v;
      body.angularVelocity = self.w;
      solvedFromW = body.rotation * (glm::transpose(before) * solvedFromW);
      if (warm) solvedColliderContacts_[b] = contacts;
    }
  } else {
    for (std::size_t k = 0; k < scene_.colliders.size(); ++k) {
      contacts.clear();
      gatherContacts(b, start, static_cast<int>(k), contacts);
      if (!contacts.empty()) averagedImpulse(b, contacts);
    }
  }
  // After the move, the push-out does no work past the step's start (math/contact_solver.h
  // limitPushWork).
  BodyState& body = bodies_[b];
  const glm::dvec3 pushFrom = body.centre;
  const int deepest = pushOut(b, start);
  if (!moved) return;
  const Shape& shape = scene_.shapes[scene_.bodies[b].shape];
  // The float backends' rounding scale: their centres are relative to the working origin (the
  // float allowance is the same here, so the reference decides as they do, and as it does for
  // the same scene at the origin: measured from the absolute centres, limitPushWork did not act
  // on a box landing on a mesh ramp 10⁴ m away where it acted at home — a collider impulse of
  // 63.5 N·s against 45.5 — and the two ended 7.3 cm apart: experiments/hostile-2026-12-07d F12).
  const glm::dvec3 c = body.centre - origin_, c0 = start.centre - origin_;
  const double far = std::max({std::abs(c.x), std::abs(c.y), std::abs(c.z), std::abs(c0.x), std::abs(c0.y), std::abs(c0.z)});
  const glm::dvec3 rest = deepest >= 0 ? shape.rest[static_cast<std::size_t>(deepest)] : glm::dvec3(0.0);
  limitPushWork(body.velocity, body.angularVelocity, body.rotation, body.centre - pushFrom, body.rotation * rest,
                start.rotation * rest, start.velocity,
                start.angularVelocity, start.rotation, body.centre - start.centre, far, shape.totalMass,
                shape.inertia, shape.inertiaInverse, scene_.gravity, scene_.stepDt(), solvedFromV, solvedFromW);
}

// ---- Bodies that touch (physics.md §6–7) ----------------------------------------------------------

// How far a body's points can move in one step at its current velocities: h (|v| + |ω| r). Pairs
// look for contacts this much farther out (speculative contacts: a pair closing fast is caught
// the step before it would meet, and its target −φ/h lets it close exactly the gap).
double ReferenceWorld::speculative(std::size_t b) const {
  const Shape& shape = scene_.shapes[scene_.bodies[b].shape];
  return scene_.stepDt() * (glm::length(bodies_[b].velocity) +
                            glm::length(bodies_[b].angularVelocity) * shape.boundingRadius);
}

std::vector<std::pair<std::size_t, std::size_t>> ReferenceWorld::broadPhase() {
  // Each body's bounding sphere (radius + margin + a step's travel), in double; the pairs whose
  // spheres overlap, found by sort and sweep.
  const std::size_t n = bodies_.size();
  const double margin = contactMargin();
  std::vector<glm::dvec3> centres(n);
  std::vector<double> reach(n);
  for (std::size_t b = 0; b < n; ++b) {
    centres[b] = bodies_[b].centre;
    reach[b] = scene_.shapes[scene_.bodies[b].shape].boundingRadius + margin + speculative(b);
  }
  // Every overlapping pair has an owner: the body of the larger reach (the smaller index on a
  // tie). Beyond the capacity (max_pairs_per_body × bodies) the pairs of the owners of the
  // smallest index are kept, each owner's in partner order, and the rest are counted — the
  // backends' grid broad phase keeps exactly these, whatever order it finds them in
  // (kernels/pipeline/step_kernels.h, "Broad phase").
  std::vector<std::vector<std::size_t>> owned(n);
  sweepSpheres(centres, reach, [&](std::size_t i, std::size_t j) {
    // Compared in float, as the backends do, so that a tie there is a tie here.
    const float ri = static_cast<float>(reach[i]), rj = static_cast<float>(reach[j]);
    const bool iOwns = ri > rj || (ri == rj && i < j);
    if (iOwns) owned[i].push_back(j); else owned[j].push_back(i);
  });
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  const std::size_t capacity = n * static_cast<std::size_t>(scene_.solver.maxPairsPerBody);
  std::size_t found = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::size_t>& partners = owned[i];
    std::sort(partners.begin(), partners.end());
    for (std::size_t j : partners)
      if (found++ < capacity) pairs.emplace_back(std::min(i, j), std::max(i, j));
  }
  if (found > capacity) pairOverflow_ += static_cast<std::int64_t>(found - capacity);
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

static_assert(kManifoldPoints == 8, "scene.cpp reads max_contacts_per_pair in [1, kManifoldPoints]");

void ReferenceWorld::gatherPairContacts(Pair& pair, const std::vector<BodyState>& start) {
  // physics.md §6: every particle of one body against φ of the other, φ_j(x) = φ_ref_j(R_jᵀ(x − c_j)),
  // first a's particles in b's field, then b's in a's. The normal points from b towards a. Of
  // the points within the margin the manifold keeps at most max_contacts_per_pair
  // (math/contact_solver.h, "Contact manifold"): ranked in the frame of the smaller body.
  const double margin = contactMargin() + speculative(pair.a) + speculative(pair.b);
  // The radii as the backends hold them (DeviceWorld's ShapeData: padded, in float).
  auto radiusOf = [&](std::size_t b) {
    return static_cast<float>(scene_.shapes[scene_.bodies[b].shape].boundingRadius * (1 + 1e-6) + 1e-6);
  };
  const float radiusA = radiusOf(pair.a), radiusB = radiusOf(pair.b);
  const bool frameIsB = radiusB < radiusA;
  const BodyState& frame = bodies_[frameIsB ? pair.b : pair.a];
  const glm::dmat3 toFrame = glm::transpose(frame.rotation);
  // The quadrants' origin (relative to a's centre) and the normal axis: the midpoint of the
  // centres, and the other body's field gradient at the frame body's centre (step_kernels.h
  // manifoldFrameOf).
  const glm::dvec3 origin = 0.5 * (bodies_[pair.b].centre - bodies_[pair.a].centre);
  const BodyState& otherBody = bodies_[frameIsB ? pair.a : pair.b];
  const GridSdfView otherField = scene_.shapes[scene_.bodies[frameIsB ? pair.a : pair.b].shape].sdf->view();
  const glm::dvec3 away = sampleGridPlaced(otherField, otherBody.centre, otherBody.rotation, frame.centre).gradient;
  const int axis = manifoldNormalAxis(glm::dvec3(toFrame * away));
  const double frameRadius = double(frameIsB ? radiusB : radiusA);
  ManifoldKey best[kManifoldCriteria] = {};
  std::vector<PairContact<double>> found;  // every point within the margin, for the winners' lookup
  auto test = [&](std::size_t self, std::size_t other, double sign, int side) {
    const Shape& mine = scene_.shapes[scene_.bodies[self].shape];
    const Shape& theirs = scene_.shapes[scene_.bodies[other].shape];
    const BodyState& s = bodies_[self];
    const BodyState& o = bodies_[other];
    const BodyState& s0 = start[self];
    const BodyState& o0 = start[other];
    const GridSdfView field = theirs.sdf->view();
    const double reach = theirs.boundingRadius + margin;
    for (std::size_t i = 0; i < mine.rest.size(); ++i) {
      const glm::dvec3 x = s.centre + s.rotation * mine.rest[i];
      const glm::dvec3 fromOther = x - o.centre;
      // Outside its sphere (the margin holds both bodies' travel this step, so a point that went
      // through the other body ends within it too).
      if (glm::dot(fromOther, fromOther) > reach * reach) continue;
      const glm::dvec3 x0 = s0.centre + s0.rotation * mine.rest[i];
      // Swept from the step's start (math/swept.h): a point that went through the other body.
      const SdfSample<double> f = sweptGridSample(field, theirs.thickness, o0.centre, o0.rotation, x0, o.centre, o.rotation, x);
      if (!(f.phi < margin)) continue;
      PairContact<double> c{};
      c.ra = x - bodies_[pair.a].centre;
      c.rb = x - bodies_[pair.b].centre;
      c.normal = sign * f.gradient;
      c.phi = f.phi;
      c.particle = static_cast<int>(i);
      c.feature = side;
      keepManifoldKeys(best, glm::dvec3(toFrame * (c.ra - origin)), axis, c.phi, frameRadius, side, c.particle);
      found.push_back(c);
    }
  };
  test(pair.a, pair.b, 1.0, 0);
  test(pair.b, pair.a, -1.0, 1);
  // The distinct winners, the deepest first, then the greedy spread of math/contact_solver.h.
  ManifoldKey winners[kManifoldCriteria] = {};
  const int n = manifoldWinners(best, winners);
  glm::dvec3 points[kManifoldCriteria];
  PairContact<double> chosen[kManifoldCriteria]{};
  for (int j = 0; j < n; ++j)
    for (const PairContact<double>& c : found)
      if (c.feature == manifoldSide(winners[j]) && c.particle == manifoldParticle(winners[j])) {
        chosen[j] = c;
        points[j] = c.ra;
        break;
      }
  int order[kManifoldCriteria] = {};
  const int kept = chooseManifold(points, n, scene_.solver.maxContactsPerPair, order);
  pair.contacts.clear();
  for (int j = 0; j < kept; ++j) pair.contacts.push_back(chosen[order[j]]);
  // The kept points' normals on an edge or a corner of their own body, within its cone, and on a
  // flat face of it, the other body's gradient where it came through (math/contact.h
  // withinPushCone, faceContactNormal; step_kernels.h writeManifold, after the ranking as here).
  unsigned undecided = 0u;
  for (std::size_t j = 0; j < pair.contacts.size(); ++j) {
    PairContact<double>& c = pair.contacts[j];
    const std::size_t self = c.feature == 0 ? pair.a : pair.b;
    const Shape& mine = scene_.shapes[scene_.bodies[self].shape];
    const std::size_t i = static_cast<std::size_t>(c.particle);
    if (i >= mine.pushCone.size() || i >= mine.pushRays.size() || !(mine.pushCone[i].w >= -1)) continue;  // no cone
    // In the body's frame, where its cone is stored (step_kernels.h normalWithinCone).
    const glm::dmat3& rotation = bodies_[self].rotation;
    const glm::dvec3 rays[3] = {mine.pushRays[i][0], mine.pushRays[i][1], mine.pushRays[i][2]};
    const double sign = c.feature == 0 ? 1.0 : -1.0;
    if (mine.pushCone[i].w > 1) {  // a flat face's particle (math/contact.h faceContactNormal)
      const std::size_t other = c.feature == 0 ? pair.b : pair.a;
      // No deeper than half the other body's thickness (step_kernels.h normalWithinCone).
      if (!(-c.phi < 0.5 * scene_.shapes[scene_.bodies[other].shape].thickness)) continue;
      const glm::dvec3 inward = rotation * glm::dvec3(mine.pushCone[i]);
      const glm::dvec3 out = bodies_[pair.a].centre + c.ra + inward * std::max(-c.phi, 0.0);
      const GridSdfView field = scene_.shapes[scene_.bodies[other].shape].sdf->view();
      const glm::dvec3 g2 = sampleGridPlaced(field, bodies_[other].centre, bodies_[other].rotation, out).gradient;
      c.normal = sign * faceContactNormal(sign * c.normal, g2);
      continue;
    }
    const glm::dvec3 within = withinPushCone(glm::transpose(rotation) * (sign * c.normal), glm::dvec3(mine.pushCone[i]),
                                             mine.pushCone[i].w, rays);
    if (within == glm::dvec3(0.0)) undecided |= 1u << j;
    c.normal = sign * (rotation * within);
  }
  // Every point undecided: the frame's normal axis, the way out of the other body (step_kernels.h
  // frameNormalOf), from b towards a.
  settleDegenerateNormals(pair.contacts.data(), undecided, static_cast<int>(pair.contacts.size()), [&] {
    const glm::dvec3 normalAxis = frame.rotation[axis];
    const glm::dvec3 out = glm::dot(normalAxis, away) < 0 ? -normalAxis : normalAxis;
    return frameIsB ? -out : out;
  });
}

SolverBody<double> ReferenceWorld::solverBody(std::size_t b, int split) const {
  SolverBody<double> s;
  s.v = bodies_[b].velocity;
  s.w = bodies_[b].angularVelocity;
  if (bodies_[b].asleep) return s;  // static for the bodies that touch it (math/sleep.h)
  s.invMass = split / scene_.shapes[scene_.bodies[b].shape].totalMass;
  s.invInertia = double(split) * worldInverseInertia(b);
  return s;
}

// physics.md §6–7 for every body at once, in the stages the backends run it (device_world.inl
// bodyContactPhase), each a member below so a parity review reads them side by side.
std::vector<std::pair<std::size_t, std::size_t>> ReferenceWorld::resolveAllContacts(const std::vector<BodyState>& start) {
  const SolverSettings& solver = scene_.solver;
  ContactSolve s;
  s.withColliders = solver.contact == ContactModel::Impulse && (solver.collideAfter || solver.method == Method::Impulse);
  const std::vector<std::pair<std::size_t, std::size_t>> candidates = broadPhase();
  narrowPhase(s, candidates, start);
  if (sleep_.enabled) wakeTouchedIslands(s, candidates, start);
  prepareBodies(s, start);
  preparePairs(s, start);
  // The rounds (physics.md §6, "Rounds"): Gauss–Seidel over colour classes first, then Jacobi with
  // mass splitting, each with its masses' responses.
  const int gaussSeidel = std::min(solver.gaussSeidelRounds, solver.contactIterations);
  if (gaussSeidel > 0) {
    colorPairs(s);
    for (int iteration = 0; iteration < gaussSeidel; ++iteration) solveRoundInPlace(s);
    if (gaussSeidel < solver.contactIterations) prepareResponses(s, true);
  }
  for (int iteration = gaussSeidel; iteration < solver.contactIterations; ++iteration) solveRound(s);
  shockVelocities(s);
  // This step's contacts with their impulses: the next step's warm start.
  previousPairs_.clear();
  for (const Pair& pair : s.pairs) previousPairs_[{pair.a, pair.b}] = pair.contacts;
  for (std::size_t b = 0; b < bodies_.size(); ++b)
    if (!s.pairsOf[b].empty()) solvedColliderContacts_[b] = s.colliderContacts[b];
  finishPairBodies(s, start);
  shockPositions(s, start);
  std::vector<std::pair<std::size_t, std::size_t>> touching;
  touching.reserve(s.pairs.size());
  for (const Pair& pair : s.pairs) touching.emplace_back(pair.a, pair.b);
  return touching;
}

bool ReferenceWorld::ContactSolve::carried(std::size_t p, std::size_t b) const {
  const bool isA = pairs[p].a == b;
  const std::size_t o = isA ? pairs[p].b : pairs[p].a;
  return level[b] != kNoLevel && support[p] == (isA ? 1 : -1) && level[o] < level[b];
}

SolverBody<double> ReferenceWorld::solverBodyMoving(std::size_t b, const BodyState& with) const {
  SolverBody<double> s = solverBody(b, 1);
  s.v = with.velocity;
  s.w = with.angularVelocity;
  return s;
}

SolverBody<double> ReferenceWorld::solverBodyApproach(std::size_t b, const BodyState& start,
                                                      const BodyState& predicted) const {
  SolverBody<double> s = solverBody(b, 1);
  s.v = start.velocity;
  // The start's angular momentum at the predicted pose: the spin the body approaches with, without
  // this step's damping and impulses (the backends' withApproachVelocities).
  const Shape& shape = scene_.shapes[scene_.bodies[b].shape];
  s.w = omegaOfMomentum(predicted.rotation, predicted.angularVelocity,
                        momentumAt(start.rotation, start.angularVelocity, shape.inertia), shape.inertia,
                        shape.inertiaInverse);
  return s;
}

// Narrow phase (PairContactsOf, or the wide NarrowChunkRanks + PairManifold): the contact points
// of each candidate pair; the pairs that touch are kept.
void ReferenceWorld::narrowPhase(ContactSolve& s, const std::vector<std::pair<std::size_t, std::size_t>>& candidates,
                                 const std::vector<BodyState>& start) {
  for (const auto& [a, b] : candidates) {
    if (bodies_[a].asleep && bodies_[b].asleep) continue;  // not tested (math/sleep.h)
    Pair pair{a, b, {}};
    gatherPairContacts(pair, start);
    if (!pair.contacts.empty()) s.pairs.push_back(std::move(pair));
  }
}

// Sleep (MarkTouchedIslands, WakeIslands, WokenPairContacts): a sleeping island touched by a body
// that wakes others (awake at the step's start and not yet at rest for the sleep time) wakes whole
// before the solve, integrated from its poses at rest as an awake body (wakeIntegrate), and the
// pairs inside it are tested now (math/sleep.h).
void ReferenceWorld::wakeTouchedIslands(ContactSolve& s,
                                        const std::vector<std::pair<std::size_t, std::size_t>>& candidates,
                                        const std::vector<BodyState>& start) {
  const double h = scene_.stepDt();
  auto wakesOthers = [&](std::size_t o) { return !start[o].asleep && start[o].restSteps < sleep_.steps; };
  std::vector<char> touchedIsland(bodies_.size(), 0);
  for (const Pair& pair : s.pairs) {
    if (bodies_[pair.a].asleep && wakesOthers(pair.b)) touchedIsland[static_cast<std::size_t>(bodies_[pair.a].island)] = 1;
    if (bodies_[pair.b].asleep && wakesOthers(pair.a)) touchedIsland[static_cast<std::size_t>(bodies_[pair.b].island)] = 1;
  }
  for (BodyState& body : bodies_)
    if (body.asleep && touchedIsland[static_cast<std::size_t>(body.island)]) {
      body.asleep = false;
      body.restSteps = 0;
      wakeIntegrate(body.velocity, body.centre, scene_.gravity, scene_.linearDamping, h);
    }
  bool added = false;
  for (const auto& [a, b] : candidates)
    if (start[a].asleep && start[b].asleep && !(bodies_[a].asleep && bodies_[b].asleep)) {
      Pair pair{a, b, {}};
      gatherPairContacts(pair, start);
      if (!pair.contacts.empty()) s.pairs.push_back(std::move(pair));
      added = true;
    }
  if (added)  // pair order, as the backends' sorted keys
    std::sort(s.pairs.begin(), s.pairs.end(),
              [](const Pair& x, const Pair& y) { return std::make_pair(x.a, x.b) < std::make_pair(y.a, y.b); });
}

// The first half of PrepareBodies (PairIncidences gives the backends the pairs of each body): a
// body no pair touches takes the single-body contact path, exactly as without body contacts; one
// in a pair gathers its collider contacts as one more "pair" against a static body, and splits
// its mass over its pairs and that one. Their targets, warm start and responses follow in
// preparePairs.
void ReferenceWorld::prepareBodies(ContactSolve& s, const std::vector<BodyState>& start) {
  const std::size_t n = bodies_.size();
  touchingPairs_ = s.pairs.size();
  s.pairsOf.assign(n, {});
  for (std::size_t p = 0; p < s.pairs.size(); ++p) {
    // A sleeping body is in no pair of its own: static for its partners (math/sleep.h).
    if (!bodies_[s.pairs[p].a].asleep) s.pairsOf[s.pairs[p].a].push_back(p);
    if (!bodies_[s.pairs[p].b].asleep) s.pairsOf[s.pairs[p].b].push_back(p);
  }
  s.colliderContacts.assign(n, {});
  s.split.assign(n, 0);
  for (std::size_t b = 0; b < n; ++b) {
    if (bodies_[b].asleep) continue;  // static for its partners, nothing of its own to solve
    if (s.pairsOf[b].empty()) {
      if (s.withColliders) resolveBodyContacts(b, start[b], true);
      continue;
    }
    if (s.withColliders)  // every collider contact: no manifold for a body in a pile (reduceToManifold)
      for (std::size_t k = 0; k < scene_.colliders.size(); ++k)
        gatherContacts(b, start[b], static_cast<int>(k), s.colliderContacts[b]);
    s.split[b] = static_cast<int>(s.pairsOf[b].size()) + (s.colliderContacts[b].empty() ? 0 : 1);
  }
}

// PreparePairs, the second half of PrepareBodies (the collider contacts of a body in a pair) and
// the warm start (SweepCollidersAndApply, warm start): targets from the velocities before the
// solve, restitution from the approach velocities (solverBodyApproach); last step's impulses of the same contacts
// applied; each contact's response for the rounds' masses (prepareResponses: split for Jacobi
// rounds, whole when they begin with Gauss–Seidel).
void ReferenceWorld::preparePairs(ContactSolve& s, const std::vector<BodyState>& start) {
  const std::size_t n = bodies_.size();
  const double h = scene_.stepDt();
  const SolverBody<double> fixed;  // a static collider
  auto materialOf = [&](std::size_t b) { return scene_.materials[scene_.bodies[b].material]; };
  s.pairMaterial.resize(s.pairs.size());
  for (std::size_t p = 0; p < s.pairs.size(); ++p) {
    Pair& pair = s.pairs[p];
    const Material& ma = materialOf(pair.a);
    const Material& mb = materialOf(pair.b);
    s.pairMaterial[p] = mixMaterials(ma.restitution, ma.friction, mb.restitution, mb.friction,
                                     scene_.solver.restitutionThreshold);
    contactTargets(solverBodyApproach(pair.a, start[pair.a], bodies_[pair.a]),
                   solverBodyApproach(pair.b, start[pair.b], bodies_[pair.b]),
                   solverBody(pair.a, 1), solverBody(pair.b, 1), pair.contacts.data(),
                   static_cast<int>(pair.contacts.size()), s.pairMaterial[p], h, true);
  }
  for (std::size_t b = 0; b < n; ++b)
    if (!s.colliderContacts[b].empty())
      contactTargets(solverBodyApproach(b, start[b], bodies_[b]), fixed, solverBody(b, 1), fixed,
                     s.colliderContacts[b].data(),
                     static_cast<int>(s.colliderContacts[b].size()), contactMaterial(b), h, true);

  s.predicted = bodies_;
  s.onA.assign(s.pairs.size(), {});
  s.onB.assign(s.pairs.size(), {});
  s.onBody.assign(n, {});
  for (std::size_t p = 0; p < s.pairs.size(); ++p) {
    auto it = previousPairs_.find({s.pairs[p].a, s.pairs[p].b});
    if (it == previousPairs_.end()) continue;
    int cursor = 0;
    for (PairContact<double>& c : s.pairs[p].contacts) {
      const glm::dvec3 j = warmStart(c, it->second.data(), static_cast<int>(it->second.size()),
                                     s.pairMaterial[p].friction, cursor);
      s.onA[p].linear += j;
      s.onA[p].angular += glm::cross(c.ra, j);
      s.onB[p].linear -= j;
      s.onB[p].angular -= glm::cross(c.rb, j);
    }
  }
  for (std::size_t b = 0; b < n; ++b) {
    const auto& previous = previousColliderContacts_[b];
    warmStartContacts(s.colliderContacts[b].data(), static_cast<int>(s.colliderContacts[b].size()), previous.data(),
                      static_cast<int>(previous.size()), contactMaterial(b).friction, s.onBody[b].linear,
                      s.onBody[b].angular);
  }
  applyRound(s);
  prepareResponses(s, scene_.solver.gaussSeidelRounds == 0);
}

// The responses of every contact of the rounds (contact_solver.h prepareResponse): for the
// masses split over a body's pairs and colliders (`split`: Jacobi rounds, PreparePairs and
// PrepareBodies, or PrepareSplitResponses between the two kinds of round) or whole (Gauss–Seidel).
void ReferenceWorld::prepareResponses(ContactSolve& s, bool split) const {
  auto masses = [&](std::size_t b) { return split ? s.split[b] : 1; };
  for (std::size_t p = 0; p < s.pairs.size(); ++p) {
    const SolverBody<double> b = solverBody(s.pairs[p].b, masses(s.pairs[p].b));
    prepareResponse(solverBody(s.pairs[p].a, masses(s.pairs[p].a)), &b, s.pairs[p].contacts.data(),
                    static_cast<int>(s.pairs[p].contacts.size()));
  }
  for (std::size_t b = 0; b < bodies_.size(); ++b)
    if (!s.colliderContacts[b].empty())
      prepareResponse<double>(solverBody(b, masses(b)), nullptr, s.colliderContacts[b].data(),
                              static_cast<int>(s.colliderContacts[b].size()));
}

// Adds each body's share of this round's pair and collider impulses to its velocities (the
// "Apply" of SweepCollidersAndApply).
void ReferenceWorld::applyRound(const ContactSolve& s) {
  for (std::size_t b = 0; b < bodies_.size(); ++b) {
    if (s.pairsOf[b].empty()) continue;
    PairImpulse<double> sum = s.onBody[b];
    for (std::size_t p : s.pairsOf[b]) {
      const PairImpulse<double>& j = s.pairs[p].a == b ? s.onA[p] : s.onB[p];
      sum.linear += j.linear;
      sum.angular += j.angular;
    }
    const SolverBody<double> unsplit = solverBody(b, 1);
    bodies_[b].velocity += unsplit.invMass * sum.linear;
    bodies_[b].angularVelocity += unsplit.invInertia * sum.angular;
  }
}

// One round (SweepPairContacts, SweepCollidersAndApply): Jacobi over pairs with mass splitting,
// Gauss–Seidel within a pair (contact_solver.h).
void ReferenceWorld::solveRound(ContactSolve& s) {
  for (std::size_t p = 0; p < s.pairs.size(); ++p) {
    SolverBody<double> a = solverBody(s.pairs[p].a, s.split[s.pairs[p].a]);
    SolverBody<double> b = solverBody(s.pairs[p].b, s.split[s.pairs[p].b]);
    s.onA[p] = s.onB[p] = PairImpulse<double>{};
    for (int sweep = 0; sweep < scene_.solver.pairSweeps; ++sweep)
      pairSweep(a, b, s.pairs[p].contacts.data(), static_cast<int>(s.pairs[p].contacts.size()),
                s.pairMaterial[p].friction, s.onA[p], s.onB[p]);
  }
  for (std::size_t b = 0; b < bodies_.size(); ++b) {
    s.onBody[b] = PairImpulse<double>{};
    if (s.colliderContacts[b].empty()) continue;
    SolverBody<double> self = solverBody(b, s.split[b]);
    sweepColliderContacts(self, s.colliderContacts[b].data(), static_cast<int>(s.colliderContacts[b].size()),
                          contactMaterial(b).friction, &s.onBody[b]);
  }
  applyRound(s);
}

// The colouring (math/pair_colors.h), pass by pass as ColorSeed, ColorTentative and ColorRepair:
// a pair's neighbours are the pairs of its awake bodies (a sleeping body has no pairs of its own).
void ReferenceWorld::colorPairs(ContactSolve& s) const {
  const std::vector<int> colour = colorPairsOnHost(
      s.pairs.size(),
      [&](std::size_t p) { return std::pair<int, int>(static_cast<int>(s.pairs[p].a), static_cast<int>(s.pairs[p].b)); },
      [&](std::size_t p, const auto& f) {
        for (std::size_t e : {s.pairs[p].a, s.pairs[p].b})
          for (std::size_t r : s.pairsOf[e])
            if (r != p) f(r);
      });
  // The sweep order: colour after colour (the overflow last), pairs in index order within each.
  s.colorOrder.clear();
  for (int c = 0; c <= kOverflowColor; ++c)
    for (std::size_t p = 0; p < s.pairs.size(); ++p)
      if (colour[p] == c) s.colorOrder.push_back(p);
}

// A Gauss–Seidel round (SweepPairColor, SweepPairOverflow, SweepCollidersInPlace): each pair swept
// with the bodies' true masses from their current velocities, colour after colour (a colour's
// pairs share no awake body, so their order within it does not matter), then the overflow in
// pair order, then every body's collider contacts.
void ReferenceWorld::solveRoundInPlace(ContactSolve& s) {
  for (std::size_t p : s.colorOrder) {
    const std::size_t ia = s.pairs[p].a, ib = s.pairs[p].b;
    SolverBody<double> a = solverBody(ia, 1), b = solverBody(ib, 1);
    PairImpulse<double> onA, onB;  // not needed: the velocities carry the impulses
    for (int sweep = 0; sweep < scene_.solver.pairSweeps; ++sweep)
      pairSweep(a, b, s.pairs[p].contacts.data(), static_cast<int>(s.pairs[p].contacts.size()),
                s.pairMaterial[p].friction, onA, onB);
    if (!bodies_[ia].asleep) {
      bodies_[ia].velocity = a.v;
      bodies_[ia].angularVelocity = a.w;
    }
    if (!bodies_[ib].asleep) {
      bodies_[ib].velocity = b.v;
      bodies_[ib].angularVelocity = b.w;
    }
  }
  for (std::size_t b = 0; b < bodies_.size(); ++b) {
    if (s.pairsOf[b].empty() || s.colliderContacts[b].empty()) continue;
    SolverBody<double> self = solverBody(b, 1);
    sweepColliderContacts(self, s.colliderContacts[b].data(), static_cast<int>(s.colliderContacts[b].size()),
                          contactMaterial(b).friction, static_cast<PairImpulse<double>*>(nullptr));
    bodies_[b].velocity = self.v;
    bodies_[b].angularVelocity = self.w;
  }
}

// Shock propagation of velocities (PairSupports, ShockLevels, ShockVelocities; contact_solver.h):
// levels by contact-graph distance from the colliders, then each level's bodies against the
// colliders (level 0) or their lower neighbours, static.
void ReferenceWorld::shockVelocities(ContactSolve& s) {
  const std::size_t n = bodies_.size();
  const double h = scene_.stepDt();
  const double g = glm::length(scene_.gravity);
  s.levels = s.withColliders && g > 0 ? scene_.solver.shockLevels : 0;
  const glm::dvec3 up = g > 0 ? -scene_.gravity / g : glm::dvec3(0.0);
  s.level.assign(n, kNoLevel);
  s.support.assign(s.pairs.size(), 0);
  for (std::size_t b = 0; b < n && s.levels > 0; ++b)
    if (bodies_[b].asleep ||
        restsOnCollider(s.colliderContacts[b].data(), static_cast<int>(s.colliderContacts[b].size()), up))
      s.level[b] = 0;
  for (std::size_t p = 0; p < s.pairs.size() && s.levels > 0; ++p)
    s.support[p] = pairSupport(s.pairs[p].contacts.data(), static_cast<int>(s.pairs[p].contacts.size()), up);
  for (int k = 1; k < s.levels; ++k)  // breadth first, one level per pass, as the backends relax
    for (std::size_t p = 0; p < s.pairs.size(); ++p) {
      const std::size_t a = s.pairs[p].a, b = s.pairs[p].b;
      if (s.support[p] == -1 && s.level[a] == k - 1 && s.level[b] == kNoLevel) s.level[b] = k;
      if (s.support[p] == 1 && s.level[b] == k - 1 && s.level[a] == kNoLevel) s.level[a] = k;
    }
  const SolverBody<double> fixed;  // a static collider
  for (int k = 0; k < s.levels; ++k)
    for (std::size_t b = 0; b < n; ++b) {
      if (s.level[b] != k || bodies_[b].asleep) continue;  // a sleeping body carries, as a collider
      SolverBody<double> self = solverBody(b, 1);
      const SolverBody<double> before = self;
      PairImpulse<double> onSelf;
      // Targets, and the responses for the body alone (its carriers static), of the contacts
      // this pass owns.
      if (k == 0) {
        const int count = static_cast<int>(s.colliderContacts[b].size());
        shockTargets(solverBodyMoving(b, s.predicted[b]), fixed, self, fixed, s.colliderContacts[b].data(), count, h,
                     true);
        prepareResponse<double>(self, nullptr, s.colliderContacts[b].data(), count);
      }
      for (std::size_t p : s.pairsOf[b])
        if (s.carried(p, b)) {
          const Pair& pair = s.pairs[p];
          const int count = static_cast<int>(pair.contacts.size());
          shockTargets(solverBodyMoving(pair.a, s.predicted[pair.a]), solverBodyMoving(pair.b, s.predicted[pair.b]),
                       solverBody(pair.a, 1), solverBody(pair.b, 1), s.pairs[p].contacts.data(), count, h, false);
          prepareResponse<double>(self, nullptr, s.pairs[p].contacts.data(), count, pair.a == b);
        }
      const double radius = scene_.shapes[scene_.bodies[b].shape].boundingRadius;
      for (int sweep = 0; sweep < scene_.solver.shockSweeps; ++sweep) {
        const SolverBody<double> last = self;
        if (k == 0)
          sweepColliderContacts(self, s.colliderContacts[b].data(), static_cast<int>(s.colliderContacts[b].size()),
                                contactMaterial(b).friction, &onSelf);
        for (std::size_t p : s.pairsOf[b]) {
          if (!s.carried(p, b)) continue;
          const std::size_t o = s.pairs[p].a == b ? s.pairs[p].b : s.pairs[p].a;
          sweepAgainstCarrier(self, solverBody(o, 1), s.pairs[p].a == b, s.pairs[p].contacts.data(),
                              static_cast<int>(s.pairs[p].contacts.size()), s.pairMaterial[p].friction, onSelf);
        }
        if (sweepSettled(last, self, radius)) break;
      }
      keepEnergyDown(before, self, onSelf);
      bodies_[b].velocity = self.v;
      bodies_[b].angularVelocity = self.w;
    }
}

// FinishPairBodies: the predicted pose moved with the velocity before the solve; it moves with the
// velocity change as well, so contacts act before the position update (semi-implicit Euler: a
// resting body's fall under gravity during the prediction is taken back here, not left as
// penetration), and a bounce on a collider places the body. Then positions: each pair separates
// its deepest point (beyond the slop) along that point's normal, shared by inverse mass; a body
// in several pairs moves by the average of its shares (mass splitting again). Then the collider
// push-out, which has the last word.
void ReferenceWorld::finishPairBodies(const ContactSolve& s, const std::vector<BodyState>& start) {
  const std::size_t n = bodies_.size();
  const double h = scene_.stepDt();
  const SolverBody<double> fixed;  // a static collider
  for (std::size_t b = 0; b < n; ++b) {
    if (s.pairsOf[b].empty()) continue;
    const double spin = twiceSpinEnergy(bodies_[b].rotation, bodies_[b].angularVelocity,
                                        scene_.shapes[scene_.bodies[b].shape].inertia);
    moveWithVelocityChange(bodies_[b].centre, bodies_[b].rotation, bodies_[b].velocity - s.predicted[b].velocity,
                           bodies_[b].angularVelocity - s.predicted[b].angularVelocity, h);
    if (!s.colliderContacts[b].empty()) {  // a bounce on a collider places the body (contact_solver.h)
      glm::dvec3 normal(0.0);
      const double bounce = bounceTranslation(solverBodyApproach(b, start[b], s.predicted[b]), fixed,
                                              solverBodyMoving(b, s.predicted[b]),
                                              fixed, solverBody(b, 1), fixed, s.colliderContacts[b].data(),
                                              static_cast<int>(s.colliderContacts[b].size()), contactMaterial(b), h,
                                              normal);
      bodies_[b].centre += bounce * normal;
    }
    // The turn adds no energy (math/contact_solver.h capTurnEnergy; the backends' finishPairBody).
    bodies_[b].angularVelocity = capTurnEnergy(spin, bodies_[b].rotation, bodies_[b].angularVelocity,
                                               scene_.shapes[scene_.bodies[b].shape].inertia);
  }
  std::vector<glm::dvec3> move(n, glm::dvec3(0.0));
  for (std::size_t p = 0; p < s.pairs.size(); ++p) {
    const Pair& pair = s.pairs[p];
    if (s.carried(p, pair.a) || s.carried(p, pair.b)) continue;  // shockPositions separates it
    const PairContact<double>* deepest = &pair.contacts.front();
    for (const PairContact<double>& c : pair.contacts)
      if (c.phi < deepest->phi) deepest = &c;
    const double depth = -deepest->phi - scene_.solver.penetrationSlop;
    if (!(depth > 0)) continue;
    const double wa = solverBody(pair.a, s.split[pair.a]).invMass;
    const double wb = solverBody(pair.b, s.split[pair.b]).invMass;
    move[pair.a] += (depth * wa / (wa + wb)) * deepest->normal;
    move[pair.b] -= (depth * wb / (wa + wb)) * deepest->normal;
  }
  for (std::size_t b = 0; b < n; ++b) {
    if (s.pairsOf[b].empty()) continue;
    bodies_[b].centre += move[b] / double(s.split[b]);
    if (s.withColliders) pushOut(b, start[b]);
  }
}

// ShockPositions: level by level upwards, each body moved out of what carries it (that body's
// pose final) by its pair's deepest separation now, beyond the slop; then out of the colliders.
void ReferenceWorld::shockPositions(const ContactSolve& s, const std::vector<BodyState>& start) {
  for (int k = 1; k < s.levels; ++k)
    for (std::size_t b = 0; b < bodies_.size(); ++b) {
      if (s.level[b] != k) continue;
      bool moved = false;
      for (std::size_t p : s.pairsOf[b]) {
        if (!s.carried(p, b)) continue;
        const std::size_t a = s.pairs[p].a, o = s.pairs[p].b;
        glm::dvec3 normal(0.0);
        const double separation = separationNow(
            s.pairs[p].contacts.data(), static_cast<int>(s.pairs[p].contacts.size()), bodies_[a].centre,
            bodies_[a].rotation, s.predicted[a].centre, s.predicted[a].rotation, bodies_[o].centre,
            bodies_[o].rotation, s.predicted[o].centre, s.predicted[o].rotation, normal);
        const double depth = -separation - scene_.solver.penetrationSlop;
        if (depth > 0) {
          bodies_[b].centre += (a == b ? depth : -depth) * normal;
          moved = true;
        }
      }
      if (moved) pushOut(b, start[b]);  // the colliders keep the last word (a body may touch a wall)
    }
}

void ReferenceWorld::gatherContacts(std::size_t b, const BodyState& start, int colliderIndex,
                                    std::vector<PairContact<double>>& contacts) {
  const Collider<double>& collider = scene_.colliders[static_cast<std::size_t>(colliderIndex)];
  // Contacts: particles within the contact margin of the surface (physics.md §4, "φ < ε with a
  // buffer"), so that all the points a resting body stands on take part, not only the one that
  // dipped below the surface this step.
  const Shape& shape = scene_.shapes[scene_.bodies[b].shape];
  const BodyState& body = bodies_[b];
  const double margin = contactMargin();
  const std::size_t capacity = static_cast<std::size_t>(scene_.solver.maxContactsPerBody);
  for (std::size_t i = 0; i < shape.rest.size(); ++i) {
    glm::dvec3 r = body.rotation * shape.rest[i];
    // Swept from the particle's place at the step's start (math/swept.h): a particle that went
    // through a thin collider this step is a contact at the surface it crossed.
    SdfSample<double> s = sweptColliderSample(collider, start.centre + start.rotation * shape.rest[i], body.centre + r);
    if (!(s.phi < margin)) continue;
    PairContact<double> point{};
    point.ra = r;
    point.normal = s.gradient;
    point.phi = s.phi;
    point.particle = static_cast<int>(i);
    point.feature = colliderIndex;
    if (contacts.size() < capacity) {
      contacts.push_back(point);
      continue;
    }
    // Full: the backends' rule (math/contact_solver.h keepDeepest: the kept contact of the lowest
    // rank gives way to a higher one); either way one contact is dropped and counted.
    ++contactOverflow_;
    int count = static_cast<int>(contacts.size());
    keepDeepest(contacts.data(), count, count, point, shape.boundingRadius);
  }
}

// The collider contact manifold (math/contact_solver.h reduceColliderContacts), as every backend.
void ReferenceWorld::reduceToManifold(std::size_t b, std::vector<PairContact<double>>& contacts) const {
  const int kept = reduceColliderContacts(contacts.data(), static_cast<int>(contacts.size()), storedRadius(b),
                                          scene_.solver.maxContactsPerCollider);
  contacts.resize(static_cast<std::size_t>(kept));
}

// Positions: "move the body out" (physics.md §3) along the normal of its deepest point, collider by
// collider. A push out of one collider can push into another (a wedge); a few passes settle
// that. Planes at right angles need one. The same passes as every backend's.
int ReferenceWorld::pushOut(std::size_t b, const BodyState& start) {
  const Shape& shape = scene_.shapes[scene_.bodies[b].shape];
  BodyState& body = bodies_[b];
  return pushOutOfColliders(scene_.colliders.data(), static_cast<int>(scene_.colliders.size()), body.centre,
                            body.rotation, [&](int i) { return shape.rest[static_cast<std::size_t>(i)]; },
                            static_cast<int>(shape.rest.size()), shape.boundingRadius,
                            PushStart<double>{start.centre, start.rotation, true});
}

// physics.md §3 step 2, literally: one virtual contact point r_c, the average of the approaching
// contacts, and the impulse that gives it the velocity of the physics.md §4 response.
void ReferenceWorld::averagedImpulse(std::size_t b, const std::vector<PairContact<double>>& contacts) {
  const Shape& shape = scene_.shapes[scene_.bodies[b].shape];
  BodyState& body = bodies_[b];
  glm::dvec3 sumR(0.0), sumN(0.0);
  int approaching = 0;
  for (const PairContact<double>& c : contacts) {
    glm::dvec3 vi = body.velocity + glm::cross(body.angularVelocity, c.ra);
    if (c.phi < -scene_.solver.penetrationSlop && glm::dot(vi, c.normal) < 0) {
      sumR += c.ra;
      sumN += c.normal;
      ++approaching;
    }
  }
  if (approaching == 0) return;
  glm::dvec3 rc = sumR / double(approaching);
  double nlen = glm::length(sumN);
  glm::dvec3 n = nlen > 1e-12 ? sumN / nlen : contacts.front().normal;
  glm::dvec3 vc = body.velocity + glm::cross(body.angularVelocity, rc);
  glm::dvec3 vWanted = impulseResponse(vc, n, contactMaterial(b));
  const glm::dmat3 Iinv = worldInverseInertia(b);
  glm::dvec3 j = impulseAtPoint(1.0 / shape.totalMass, Iinv, rc, vc, vWanted);
  body.velocity += j / shape.totalMass;
  body.angularVelocity += Iinv * glm::cross(rc, j);
}

// No collider within the body's reach this step (margin and a step's travel, from its state at
// the step's start) and no body contacts in the scene: no impulse or force reaches it, so its L is
// its own (keepRotationEnergy keeps each step's start energy free or not; near a collider it
// leaves errors below 2e-6 of it).
bool ReferenceWorld::awayFromColliders(std::size_t b, const BodyState& start) const {
  if (scene_.bodyContactsActive()) return false;  // a pair is found only after the prediction
  const double radius = storedRadius(b);
  const double reach = contactMargin() + scene_.stepDt() * (glm::length(start.velocity) +
                                                            glm::length(start.angularVelocity) * radius);
  for (const auto& collider : scene_.colliders)
    if (sdfCollider(collider, start.centre).phi <= radius + reach + lipschitzSlack(collider)) return false;
  return true;
}

double ReferenceWorld::contactMargin() const { return scene_.contactMargin(); }

// The backends' bounding radius, rounded up as they store it, so both switch at the same place.
double ReferenceWorld::storedRadius(std::size_t b) const {
  return scene_.shapes[scene_.bodies[b].shape].boundingRadius * (1 + 1e-6) + 1e-6;
}

glm::dquat ReferenceWorld::orientation(std::size_t b) const {
  return quaternionFromRotation(bodies_[b].rotation);
}

std::vector<BodyPose> ReferenceWorld::poses() const {
  std::vector<BodyPose> out;
  out.reserve(bodies_.size());
  for (std::size_t b = 0; b < bodies_.size(); ++b)
    out.push_back({bodies_[b].centre, glm::quat(orientation(b)), glm::vec3(bodies_[b].velocity),
                   glm::vec3(bodies_[b].angularVelocity)});
  return out;
}

std::vector<glm::dquat> ReferenceWorld::orientations() const {
  std::vector<glm::dquat> out;
  out.reserve(bodies_.size());
  for (std::size_t b = 0; b < bodies_.size(); ++b) out.push_back(orientation(b));
  return out;
}

void ReferenceWorld::setPoses(const std::vector<BodyPose>& poses) {
  if (poses.size() != bodies_.size())
    throw InputError("setPoses: " + std::to_string(poses.size()) + " poses for " + std::to_string(bodies_.size()) +
                     " bodies");
  for (std::size_t b = 0; b < poses.size(); ++b) {
    BodyState& s = bodies_[b];
    s.centre = poses[b].centre;
    s.rotation = rotationMatrix(glm::dquat(poses[b].rotation));
    s.velocity = glm::dvec3(poses[b].velocity);
    s.angularVelocity = glm::dvec3(poses[b].angularVelocity);
    s.restSteps = 0;  // a body given a state is awake (math/sleep.h)
    s.asleep = false;
    writeParticlesFromBody(b);
  }
}

std::vector<std::uint8_t> ReferenceWorld::saveState() const {
  throw InputError("state files: not available on the reference backend (use cpp, omp or cuda)");
}

void ReferenceWorld::loadState(const std::vector<std::uint8_t>&, const std::string& source) {
  throw InputError(source + ": state files are not available on the reference backend (use cpp, omp or cuda)");
}

std::vector<PairNormalImpulse> ReferenceWorld::lastPairImpulses() const {
  std::vector<PairNormalImpulse> totals;
  for (const auto& [pair, points] : previousPairs_) {
    PairNormalImpulse t{pair.first, pair.second, 0.0, static_cast<int>(points.size())};
    for (const PairContact<double>& p : points) t.normal += p.lambdaNormal;
    totals.push_back(t);
  }
  for (std::size_t b = 0; b < previousColliderContacts_.size(); ++b) {
    if (previousColliderContacts_[b].empty()) continue;
    PairNormalImpulse t{b, SIZE_MAX, 0.0, static_cast<int>(previousColliderContacts_[b].size())};
    for (const PairContact<double>& p : previousColliderContacts_[b]) t.normal += p.lambdaNormal;
    totals.push_back(t);
  }
  return totals;
}

std::vector<glm::vec3> ReferenceWorld::particlePositionsRelative() const {
  std::vector<glm::vec3> out;
  out.reserve(x_.size());
  for (const glm::dvec3& x : x_) out.emplace_back(x - origin_);
  return out;
}

std::vector<glm::vec3> ReferenceWorld::particlePositions() const {
  std::vector<glm::vec3> out;
  for (std::size_t b = 0; b < bodies_.size(); ++b)
    for (const glm::dvec3& x : particlePositions(b)) out.emplace_back(x);
  return out;
}

std::vector<glm::vec3> ReferenceWorld::particleVelocities() const {
  std::vector<glm::vec3> out;
  for (std::size_t b = 0; b < bodies_.size(); ++b)
    for (const glm::dvec3& v : particleVelocities(b)) out.emplace_back(v);
  return out;
}

std::vector<glm::dvec3> ReferenceWorld::particlePositions(std::size_t b) const {
  return {x_.begin() + particleOffset_[b], x_.begin() + particleOffset_[b + 1]};
}

std::vector<glm::dvec3> ReferenceWorld::particleVelocities(std::size_t b) const {
  return {v_.begin() + particleOffset_[b], v_.begin() + particleOffset_[b + 1]};
}

double ReferenceWorld::kineticEnergy() const {
  double e = 0;
  for (std::size_t b = 0; b < bodies_.size(); ++b) {
    const Shape& shape = scene_.shapes[scene_.bodies[b].shape];
    for (std::size_t i = 0; i < shape.rest.size(); ++i) {
      const glm::dvec3& v = v_[particleOffset_[b] + i];
      e += 0.5 * shape.mass[i] * glm::dot(v, v);
    }
  }
  return e;
}

glm::dvec3 ReferenceWorld::linearMomentum() const {
  glm::dvec3 p(0.0);
  for (std::size_t b = 0; b < bodies_.size(); ++b) {
    const Shape& shape = scene_.shapes[scene_.bodies[b].shape];
    for (std::size_t i = 0; i < shape.rest.size(); ++i)
      p += shape.mass[i] * v_[particleOffset_[b] + i];
  }
  return p;
}

glm::dvec3 ReferenceWorld::angularMomentum() const {
  glm::dvec3 l(0.0);
  for (std::size_t b = 0; b < bodies_.size(); ++b) {
    const Shape& shape = scene_.shapes[scene_.bodies[b].shape];
    for (std::size_t i = 0; i < shape.rest.size(); ++i) {
      std::size_t k = particleOffset_[b] + i;
      l += shape.mass[i] * glm::cross(x_[k], v_[k]);
    }
  }
  return l;
}


double ReferenceWorld::maxParticleSpeed() const {
  double s = 0;
  for (const glm::dvec3& v : v_) s = std::max(s, glm::length(v));
  return s;
}



StepObservation ReferenceWorld::observation() const {
  return observeParticles(steps_, x_, v_, scene_.colliders);
}

double ReferenceWorld::deepestPenetration() const { return observation().deepestPenetration; }

bool ReferenceWorld::finite() const { return observation().finite; }

}  // namespace smash
