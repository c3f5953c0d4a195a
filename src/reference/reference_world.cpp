#include "reference/reference_world.h"

#include <algorithm>
#include <cmath>

#include "math/contact.h"
#include "math/rotation.h"
#include "math/sdf.h"

namespace smash {

ReferenceWorld::ReferenceWorld(Scene scene) : scene_(std::move(scene)) {
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
  x_.resize(particleOffset_.back());
  v_.resize(particleOffset_.back());
  for (std::size_t b = 0; b < bodies_.size(); ++b) writeParticlesFromBody(b);
}

void ReferenceWorld::stepFrame() {
  for (int s = 0; s < scene_.substeps; ++s) step();
}

void ReferenceWorld::step() {
  const double h = scene_.stepDt();
  ++steps_;
  for (std::size_t b = 0; b < bodies_.size(); ++b) {
    const BodyState before = bodies_[b];
    if (scene_.solver.method == Method::ShapeMatching)
      stepShapeMatching(b, h);
    else
      stepImpulse(b, h);
    watchBody(b, before);
  }
}

// The watchdog (scene.watchdog): record the first incident of each body; with the clamp policy
// repair the state, freezing a non-finite body at its pose from the start of the step.
void ReferenceWorld::watchBody(std::size_t b, const BodyState& before) {
  const Watchdog& w = scene_.watchdog;
  BodyState& s = bodies_[b];
  const double radius = scene_.shapes[scene_.bodies[b].shape].boundingRadius;
  const Incident incident = checkBody(s.centre, s.rotation, s.velocity, s.angularVelocity, radius,
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
    clampBody(s.centre, s.velocity, s.angularVelocity, radius, w.worldBound, w.maxSpeed);
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

// SPEC §2. Per-particle state x_i, v_i; per-body c, R.
void ReferenceWorld::stepShapeMatching(std::size_t b, double h) {
  const Shape& shape = scene_.shapes[scene_.bodies[b].shape];
  const std::size_t n = shape.rest.size(), off = particleOffset_[b];
  const SolverSettings& solver = scene_.solver;
  const ContactMaterial<double> material = contactMaterial(b);
  BodyState& body = bodies_[b];

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

  // 2. Collide before matching: per-particle impulse (SPEC §4) on v_i for φ(x_i) < 0.
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
  //    (SPEC §2 numerics: no world-coordinate cancellation for bodies far from the origin).
  const glm::dvec3 p0 = body.centre;
  std::vector<glm::dvec3> y(n);
  for (std::size_t i = 0; i < n; ++i) y[i] = (x_[off + i] - p0) + h * v_[off + i];

  // 4. Match: c = Σ m_i y_i / M, A_pq = Σ m_i (y_i − c) r_iᵀ, R = rotation part of A_pq.
  glm::dvec3 cRel(0.0);
  for (std::size_t i = 0; i < n; ++i) cRel += shape.mass[i] * y[i];
  cRel /= shape.totalMass;
  glm::dmat3 Apq(0.0);
  for (std::size_t i = 0; i < n; ++i) Apq += shape.mass[i] * outer(y[i] - cRel, shape.rest[i]);
  if (solver.rotation == RotationFit::Seeds) Apq = Apq * shape.AqqInverse;  // seeds' A_pq A_qq⁻¹
  body.rotation = optimalRotation(Apq, body.rotation);
  body.centre = p0 + cRel;

  // 5. Project: x_i = c + R r_i. Velocities: the rigid field that carries the particles'
  //    linear and angular momentum, v_i = P/M + ω × R r_i with ω = I(R)⁻¹ L. SPEC writes
  //    v_i = (x_i' − x_i)/h; that chord velocity loses angular momentum at O((ω h)²) per step,
  //    this one conserves P and L exactly in free flight (see docs/solver.md).
  body.velocity = P / shape.totalMass;
  body.angularVelocity = worldInverseInertia(b) * L;

  // 6. Collide after matching, at the body level so the body stays rigid.
  if (solver.collideAfter && solver.contact == ContactModel::Impulse) resolveBodyContacts(b);
  writeParticlesFromBody(b);
}

// SPEC §3. Body state only; particles are written from it for output.
void ReferenceWorld::stepImpulse(std::size_t b, double h) {
  const Shape& shape = scene_.shapes[scene_.bodies[b].shape];
  const SolverSettings& solver = scene_.solver;
  BodyState& body = bodies_[b];

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

  // 2. Collision: averaged impulse and push-out by the deepest point. SPEC §3 resolves contacts
  //    here, before the position update; with collide_after (the default) they are resolved once,
  //    after it instead, so that no particle ends the step inside a collider. Measured on the lab
  //    scene, the literal order leaves a resting bunny rocking (docs/solver.md).
  const bool contactsAfter = solver.collideAfter;
  if (solver.contact == ContactModel::Impulse && !contactsAfter) resolveBodyContacts(b);

  // 3. Positions: x ← x + h v; q ← normalize(q + [0, h/2 ω] ⊗ q).
  body.centre += h * body.velocity;
  glm::dquat q = integrateOrientation(quaternionFromRotation(body.rotation), body.angularVelocity, h);
  body.rotation = rotationMatrix(q);

  if (solver.contact == ContactModel::Impulse && contactsAfter) resolveBodyContacts(b);
  writeParticlesFromBody(b);
}

void ReferenceWorld::resolveBodyContacts(std::size_t b) {
  // Velocities. The sequential solver takes the contacts of all colliders together, so a body
  // in a wedge (floor and wall, floor and sphere) is solved against both at once; the averaged
  // impulse of SPEC §3 goes collider by collider, as the lab does per plane.
  std::vector<ContactPoint> contacts;
  if (scene_.solver.contactSolver == ContactSolver::Sequential) {
    for (const auto& collider : scene_.colliders) gatherContacts(b, collider, contacts);
    if (!contacts.empty()) sequentialImpulses(b, contacts);
  } else {
    for (const auto& collider : scene_.colliders) {
      contacts.clear();
      gatherContacts(b, collider, contacts);
      if (!contacts.empty()) averagedImpulse(b, contacts);
    }
  }
  // Positions: "move the body out" (SPEC §3) along the normal of its deepest point, collider by
  // collider. A push out of one collider can push into another (a wedge); a few passes settle
  // that. Planes at right angles need one.
  for (int pass = 0; pass < 5; ++pass) {
    bool moved = false;
    for (const auto& collider : scene_.colliders) moved |= pushOut(b, collider);
    if (!moved) break;
  }
}

void ReferenceWorld::gatherContacts(std::size_t b, const Collider<double>& collider,
                                    std::vector<ContactPoint>& contacts) {
  // Contacts: particles within the contact margin of the surface (SPEC §4, "φ < ε with a
  // buffer"), so that all the points a resting body stands on take part, not only the one that
  // dipped below the surface this step.
  const Shape& shape = scene_.shapes[scene_.bodies[b].shape];
  const BodyState& body = bodies_[b];
  const double margin = contactMargin();
  const std::size_t capacity = static_cast<std::size_t>(scene_.solver.maxContactsPerBody);
  for (const glm::dvec3& rest : shape.rest) {
    glm::dvec3 r = body.rotation * rest;
    SdfSample<double> s = sdfCollider(collider, body.centre + r);
    if (!(s.phi < margin)) continue;
    if (contacts.size() < capacity) {
      contacts.push_back({r, s.gradient, s.phi});
      continue;
    }
    // Full: the new contact replaces the shallowest kept one if it is deeper; either way one
    // contact is dropped and counted.
    ++contactOverflow_;
    std::size_t shallowest = 0;
    for (std::size_t j = 1; j < contacts.size(); ++j)
      if (contacts[j].phi > contacts[shallowest].phi) shallowest = j;
    if (s.phi < contacts[shallowest].phi) contacts[shallowest] = {r, s.gradient, s.phi};
  }
}

bool ReferenceWorld::pushOut(std::size_t b, const Collider<double>& collider) {
  const Shape& shape = scene_.shapes[scene_.bodies[b].shape];
  BodyState& body = bodies_[b];
  double deepest = 0;
  glm::dvec3 normal(0.0);
  for (const glm::dvec3& rest : shape.rest) {
    SdfSample<double> s = sdfCollider(collider, body.centre + body.rotation * rest);
    if (-s.phi > deepest) {
      deepest = -s.phi;
      normal = s.gradient;
    }
  }
  if (deepest > 0) body.centre += deepest * normal;
  return deepest > 1e-12 * std::max(1.0, shape.boundingRadius);
}

// SPEC §3 step 2, literally: one virtual contact point r_c, the average of the approaching
// contacts, and the impulse that gives it the velocity of the SPEC §4 response.
void ReferenceWorld::averagedImpulse(std::size_t b, const std::vector<ContactPoint>& contacts) {
  const Shape& shape = scene_.shapes[scene_.bodies[b].shape];
  BodyState& body = bodies_[b];
  glm::dvec3 sumR(0.0), sumN(0.0);
  int approaching = 0;
  for (const ContactPoint& c : contacts) {
    glm::dvec3 vi = body.velocity + glm::cross(body.angularVelocity, c.r);
    if (c.phi < -scene_.solver.penetrationSlop && glm::dot(vi, c.normal) < 0) {
      sumR += c.r;
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

// Sequential impulses (Catto 2005, as in Box2D): every contact point gets its own normal impulse
// λ_N ≥ 0 and friction impulse |λ_T| ≤ μ λ_N, solved by Gauss–Seidel sweeps over the points.
// Because accumulated impulses are clamped, not each increment, a later sweep can take back an
// earlier push, so the total normal impulse is what the contacts need (no over-counted friction)
// and several resting points share the load (no rocking). The targets follow SPEC §4: a contact
// approaching faster than the restitution threshold rebounds at −μ_N v_N; one still above the
// surface may approach by φ/h (it reaches the surface in one step, no earlier).
void ReferenceWorld::sequentialImpulses(std::size_t b, std::vector<ContactPoint>& contacts) {
  const Shape& shape = scene_.shapes[scene_.bodies[b].shape];
  BodyState& body = bodies_[b];
  const ContactMaterial<double> material = contactMaterial(b);
  const double invMass = 1.0 / shape.totalMass, h = scene_.stepDt();
  const glm::dmat3 Iinv = worldInverseInertia(b);
  auto pointVelocity = [&](const glm::dvec3& r) {
    return body.velocity + glm::cross(body.angularVelocity, r);
  };
  auto applyImpulse = [&](const glm::dvec3& r, const glm::dvec3& j) {
    body.velocity += invMass * j;
    body.angularVelocity += Iinv * glm::cross(r, j);
  };
  for (ContactPoint& c : contacts) {
    glm::dmat3 rx = skew(c.r);
    c.K = glm::dmat3(invMass) - rx * Iinv * rx;  // velocity change at r per unit impulse
    double vn = glm::dot(pointVelocity(c.r), c.normal);
    c.targetNormalVelocity = c.phi > 0 ? -c.phi / h : 0.0;
    if (vn < -material.restitutionThreshold) c.targetNormalVelocity = std::max(c.targetNormalVelocity, -material.restitution * vn);
  }
  for (int iteration = 0; iteration < scene_.solver.contactIterations; ++iteration) {
    for (ContactPoint& c : contacts) {
      // Normal: drive v·n to the target, keeping the accumulated impulse non-negative.
      double vn = glm::dot(pointVelocity(c.r), c.normal);
      double kn = glm::dot(c.normal, c.K * c.normal);
      double lambda = std::max(c.lambdaNormal + (c.targetNormalVelocity - vn) / kn, 0.0);
      applyImpulse(c.r, (lambda - c.lambdaNormal) * c.normal);
      c.lambdaNormal = lambda;
      // Friction: remove the sliding velocity, within the Coulomb cone |λ_T| ≤ μ λ_N.
      glm::dvec3 v = pointVelocity(c.r);
      glm::dvec3 vt = v - glm::dot(v, c.normal) * c.normal;
      double vtLen = glm::length(vt);
      glm::dvec3 lambdaT = c.lambdaTangent;
      if (vtLen > 1e-14) {
        glm::dvec3 t = vt / vtLen;
        lambdaT -= (vtLen / glm::dot(t, c.K * t)) * t;
      }
      double limit = material.friction * c.lambdaNormal, len = glm::length(lambdaT);
      if (len > limit) lambdaT *= limit / len;
      applyImpulse(c.r, lambdaT - c.lambdaTangent);
      c.lambdaTangent = lambdaT;
    }
  }
}

double ReferenceWorld::contactMargin() const {
  if (scene_.solver.contactMargin >= 0) return scene_.solver.contactMargin;
  // Auto: two steps of free fall from rest, 2|g|h², the depth a resting body sinks per step.
  const double h = scene_.stepDt();
  return 2.0 * glm::length(scene_.gravity) * h * h;
}

glm::dquat ReferenceWorld::orientation(std::size_t b) const {
  return quaternionFromRotation(bodies_[b].rotation);
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
