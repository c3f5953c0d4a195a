// The per-element work of a step: small SMASH_HD functions and functors, each a bounds-free
// body of one Thrust algorithm call in device_world.inl. Float precision; the double-precision
// twin is src/reference (written separately on purpose: it is the oracle).
//
// Layout (all arrays are device pointers, shapes in comments):
//   particles  position (n × float4: xyz, w unused), velocity (n × float4), body (n × int)
//   shapes     rest (Σ shape sizes × float4: r_i xyz, m_i in w), per-shape mass properties
//   bodies     shape, particle offset/count, material, pose (centre, rotation), velocities
#pragma once

#include "math/contact.h"
#include "math/rotation.h"
#include "math/sdf.h"
#include "math/watchdog.h"

namespace smash::pipeline {

using V3 = Vec3<float>;
using M3 = Mat3<float>;

struct ShapeData {
  int restOffset;       // first entry of this shape in the rest array
  int count;            // particles
  float mass;           // M
  float radius;         // max ‖r_i‖
  M3 aqqInverse;        // A_qq⁻¹ (zero when not invertible)
  M3 inertiaInverse;    // I_ref⁺
};

struct BodyData {
  int shape;
  int particleOffset;
  int particleCount;
  float restitution, friction;
  V3 centre;
  M3 rotation;
  V3 velocity;
  V3 angularVelocity;
};

/// Sums a body's particles contribute to matching (SPEC §2.4) and to its momentum.
struct MatchSums {
  V3 my;   // Σ m (y − p0), p0 = the body's centre at the start of the step
  M3 myr;  // Σ m (y − p0) rᵀ  (= A_pq, since Σ m r = 0)
  V3 p;    // Σ m v
  V3 l;    // Σ m (x − p0) × v
};

struct AddMatchSums {
  SMASH_HD MatchSums operator()(const MatchSums& a, const MatchSums& b) const {
    return {a.my + b.my, a.myr + b.myr, a.p + b.p, a.l + b.l};
  }
};

/// One contact slot of the per-body contact buffer.
struct ContactSlot {
  V3 r;       // world offset from the centre
  V3 normal;
  float phi;
  float target;  // wanted normal velocity
  float lambdaNormal;
  V3 lambdaTangent;
};

/// Everything a step's functors read, passed by value (zero-initialised, then filled).
struct StepParams {
  // particles
  glm::vec4* position = nullptr;
  glm::vec4* velocity = nullptr;
  const int* particleBody = nullptr;
  // shapes
  const glm::vec4* rest = nullptr;
  const ShapeData* shapes = nullptr;
  // bodies
  BodyData* bodies = nullptr;
  MatchSums* sums = nullptr;
  ContactSlot* contacts = nullptr;  // (nbody × contactCapacity)
  long long* contactOverflow = nullptr;  // (nbody) cumulative
  int contactCapacity = 0;
  // scene
  const Collider<float>* colliders = nullptr;
  int colliderCount = 0;
  V3 gravity{0.0f};
  float h = 0;
  float linearDamping = 1, angularDamping = 1;
  float restitutionThreshold = 0;
  float contactMargin = 0;
  float penetrationSlop = 0;
  int contactIterations = 0;
  bool seedsRotation = false;
  bool collideAfter = true;
  bool impulseContacts = true;  // false: a penalty model
  bool averagedContacts = false;
  PenaltyParams<float> penalty;
  // watchdog
  long long step = 0;              // the step being taken (1-based)
  long long* incidentStep = nullptr;  // (nbody) first incident's step, −1 if none
  int* incidentKind = nullptr;        // (nbody) Incident of that step
  float worldBound = 0, maxSpeed = 0;
  bool clampIncidents = false;
};

SMASH_HD V3 xyz(const glm::vec4& v) { return V3(v.x, v.y, v.z); }

SMASH_HD ContactMaterial<float> bodyMaterial(const StepParams& p, const BodyData& b) {
  return {b.restitution, b.friction, p.restitutionThreshold};
}

SMASH_HD M3 worldInverseInertia(const StepParams& p, const BodyData& b) {
  return b.rotation * p.shapes[b.shape].inertiaInverse * glm::transpose(b.rotation);
}

// ---------------------------------------------------------------------------------------------
// Shape matching, per particle. The arithmetic lives in plain functions of one particle's data,
// called both by the per-particle functors (lookups from the particle index) and by the fused
// per-body loop (lookups hoisted out of the loop), so both strategies compute the same bits.

/// SPEC §2 steps 1–2: integrate (gravity, penalty forces, damping), then the per-particle
/// impulse against colliders the particle is inside (deeper than the slop).
SMASH_HD V3 integrateVelocity(const StepParams& p, const BodyData& b, float m, const V3& x, V3 v) {
  V3 f(0.0f);
  if (!p.impulseContacts)
    for (int k = 0; k < p.colliderCount; ++k) {
      SdfSample<float> s = sdfCollider(p.colliders[k], x);
      f += penaltyForce(p.penalty, s.phi, s.gradient, v, m, b.friction, p.h);
    }
  v = (v + p.h * (p.gravity + f / m)) * p.linearDamping;
  if (p.impulseContacts)
    for (int k = 0; k < p.colliderCount; ++k) {
      SdfSample<float> s = sdfCollider(p.colliders[k], x);
      if (s.phi < -p.penetrationSlop) v = impulseResponse(v, s.gradient, bodyMaterial(p, b));
    }
  return v;
}

/// Steps 3–4 inputs: predict y = x + h v and add the particle's share to the body's sums,
/// relative to p0 = the body's centre (no cancellation far from the origin).
SMASH_HD void accumulateMatch(MatchSums& sums, float m, const V3& r, const V3& xRel, const V3& v,
                              float h) {
  const V3 my = m * (xRel + h * v);
  sums.my += my;
  sums.myr += outer(my, r);
  sums.p += m * v;
  sums.l += m * glm::cross(xRel, v);
}

struct IntegrateParticles {
  StepParams p;
  SMASH_HD void operator()(int i) const {
    const BodyData& b = p.bodies[p.particleBody[i]];
    const float m = p.rest[p.shapes[b.shape].restOffset + (i - b.particleOffset)].w;
    p.velocity[i] = glm::vec4(integrateVelocity(p, b, m, xyz(p.position[i]), xyz(p.velocity[i])), 0.0f);
  }
};

struct ParticleMatchSums {
  StepParams p;
  SMASH_HD MatchSums operator()(int i) const {
    const BodyData& b = p.bodies[p.particleBody[i]];
    const glm::vec4 rest = p.rest[p.shapes[b.shape].restOffset + (i - b.particleOffset)];
    MatchSums sums = {V3(0.0f), M3(0.0f), V3(0.0f), V3(0.0f)};
    accumulateMatch(sums, rest.w, xyz(rest), xyz(p.position[i]) - b.centre, xyz(p.velocity[i]), p.h);
    return sums;
  }
};

/// The segmented reduction as one body per thread, summing its particles in order: the OpenMP
/// backend's per-particle layout uses it instead of reduce_by_key (see device_world.inl).
struct SumBodyParticles {
  StepParams p;
  SMASH_HD void operator()(int bodyIndex) const {
    const BodyData& b = p.bodies[bodyIndex];
    const glm::vec4* rest = p.rest + p.shapes[b.shape].restOffset;
    MatchSums sums = {V3(0.0f), M3(0.0f), V3(0.0f), V3(0.0f)};
    for (int k = 0; k < b.particleCount; ++k) {
      const int i = b.particleOffset + k;
      accumulateMatch(sums, rest[k].w, xyz(rest[k]), xyz(p.position[i]) - b.centre,
                      xyz(p.velocity[i]), p.h);
    }
    p.sums[bodyIndex] = sums;
  }
};

// ---------------------------------------------------------------------------------------------
// Body-level contact (shared by both methods): sequential impulses over the particles within the
// contact margin of any collider, then push-out along the deepest point's normal.

/// An SDF is 1-Lipschitz, so φ(centre) > radius + d proves every particle is farther than d:
/// an O(1) test that skips the per-particle loops for bodies away from a collider.
SMASH_HD bool mayTouch(const Collider<float>& collider, const BodyData& b, const ShapeData& shape,
                       float distance) {
  return sdfCollider(collider, b.centre).phi <= shape.radius + distance;
}

SMASH_HD void gatherContacts(const StepParams& p, const BodyData& b, ContactSlot* slots,
                             int& count, long long& overflow) {
  const ShapeData& shape = p.shapes[b.shape];
  for (int k = 0; k < p.colliderCount; ++k) {
    if (!mayTouch(p.colliders[k], b, shape, p.contactMargin)) continue;
    for (int i = 0; i < shape.count; ++i) {
      const V3 r = b.rotation * xyz(p.rest[shape.restOffset + i]);
      SdfSample<float> s = sdfCollider(p.colliders[k], b.centre + r);
      if (!(s.phi < p.contactMargin)) continue;
      ContactSlot c;
      c.r = r;
      c.normal = s.gradient;
      c.phi = s.phi;
      c.target = 0;
      c.lambdaNormal = 0;
      c.lambdaTangent = V3(0.0f);
      if (count < p.contactCapacity) {
        slots[count++] = c;
        continue;
      }
      // Full: keep the deepest contacts, count what was dropped.
      ++overflow;
      int shallowest = 0;
      for (int j = 1; j < count; ++j)
        if (slots[j].phi > slots[shallowest].phi) shallowest = j;
      if (c.phi < slots[shallowest].phi) slots[shallowest] = c;
    }
  }
}

SMASH_HD V3 pointVelocity(const BodyData& b, const V3& r) {
  return b.velocity + glm::cross(b.angularVelocity, r);
}

/// K·d for K = (1/M)·1 − [r]× I⁻¹ [r]× (velocity change at r per unit impulse along d).
SMASH_HD V3 responseTimes(float invMass, const M3& Iinv, const V3& r, const V3& d) {
  return invMass * d - glm::cross(r, Iinv * glm::cross(r, d));
}

SMASH_HD void sequentialImpulses(const StepParams& p, BodyData& b, ContactSlot* c, int count) {
  const ShapeData& shape = p.shapes[b.shape];
  const float invMass = 1.0f / shape.mass;
  const M3 Iinv = worldInverseInertia(p, b);
  const ContactMaterial<float> mat = bodyMaterial(p, b);
  for (int k = 0; k < count; ++k) {
    float vn = glm::dot(pointVelocity(b, c[k].r), c[k].normal);
    c[k].target = c[k].phi > 0.0f ? -c[k].phi / p.h : 0.0f;
    if (vn < -mat.restitutionThreshold) c[k].target = glm::max(c[k].target, -mat.restitution * vn);
  }
  for (int it = 0; it < p.contactIterations; ++it)
    for (int k = 0; k < count; ++k) {
      ContactSlot& s = c[k];
      float vn = glm::dot(pointVelocity(b, s.r), s.normal);
      float kn = glm::dot(s.normal, responseTimes(invMass, Iinv, s.r, s.normal));
      float lambda = glm::max(s.lambdaNormal + (s.target - vn) / kn, 0.0f);
      V3 j = (lambda - s.lambdaNormal) * s.normal;
      b.velocity += invMass * j;
      b.angularVelocity += Iinv * glm::cross(s.r, j);
      s.lambdaNormal = lambda;
      V3 v = pointVelocity(b, s.r);
      V3 vt = v - glm::dot(v, s.normal) * s.normal;
      float vtLen = glm::length(vt);
      V3 lambdaT = s.lambdaTangent;
      if (vtLen > 1e-12f) {
        V3 t = vt / vtLen;
        lambdaT -= (vtLen / glm::dot(t, responseTimes(invMass, Iinv, s.r, t))) * t;
      }
      float limit = mat.friction * s.lambdaNormal, len = glm::length(lambdaT);
      if (len > limit) lambdaT *= limit / len;
      j = lambdaT - s.lambdaTangent;
      b.velocity += invMass * j;
      b.angularVelocity += Iinv * glm::cross(s.r, j);
      s.lambdaTangent = lambdaT;
    }
}

/// SPEC §3 step 2 literally, for the `count` contacts of one collider.
SMASH_HD void averagedImpulse(const StepParams& p, BodyData& b, const ContactSlot* c, int count) {
  const ShapeData& shape = p.shapes[b.shape];
  V3 sumR(0.0f), sumN(0.0f);
  int approaching = 0;
  for (int k = 0; k < count; ++k)
    if (c[k].phi < -p.penetrationSlop && glm::dot(pointVelocity(b, c[k].r), c[k].normal) < 0.0f) {
      sumR += c[k].r;
      sumN += c[k].normal;
      ++approaching;
    }
  if (approaching == 0) return;
  V3 rc = sumR / float(approaching);
  float nlen = glm::length(sumN);
  V3 n = nlen > 1e-12f ? sumN / nlen : c[0].normal;
  V3 vc = pointVelocity(b, rc);
  V3 want = impulseResponse(vc, n, bodyMaterial(p, b));
  M3 Iinv = worldInverseInertia(p, b);
  V3 j = impulseAtPoint(1.0f / shape.mass, Iinv, rc, vc, want);
  b.velocity += j / shape.mass;
  b.angularVelocity += Iinv * glm::cross(rc, j);
}

SMASH_HD bool pushOut(const StepParams& p, BodyData& b, const Collider<float>& collider) {
  const ShapeData& shape = p.shapes[b.shape];
  float deepest = 0;
  V3 normal(0.0f);
  if (!mayTouch(collider, b, shape, 0.0f)) return false;
  for (int i = 0; i < shape.count; ++i) {
    SdfSample<float> s = sdfCollider(collider, b.centre + b.rotation * xyz(p.rest[shape.restOffset + i]));
    if (-s.phi > deepest) {
      deepest = -s.phi;
      normal = s.gradient;
    }
  }
  if (deepest > 0) b.centre += deepest * normal;
  return deepest > 0;
}

SMASH_HD void resolveBodyContacts(const StepParams& p, int bodyIndex, BodyData& b) {
  ContactSlot* slots = p.contacts + static_cast<long long>(bodyIndex) * p.contactCapacity;
  long long overflow = 0;
  if (!p.averagedContacts) {
    int count = 0;
    gatherContacts(p, b, slots, count, overflow);
    if (count > 0) sequentialImpulses(p, b, slots, count);
  } else {
    for (int k = 0; k < p.colliderCount; ++k) {
      StepParams one = p;
      one.colliders = p.colliders + k;
      one.colliderCount = 1;
      int count = 0;
      gatherContacts(one, b, slots, count, overflow);
      if (count > 0) averagedImpulse(p, b, slots, count);
    }
  }
  if (overflow) p.contactOverflow[bodyIndex] += overflow;
  for (int pass = 0; pass < 5; ++pass) {
    bool moved = false;
    for (int k = 0; k < p.colliderCount; ++k) moved = pushOut(p, b, p.colliders[k]) || moved;
    if (!moved) break;
  }
}

/// The watchdog at the end of a body's step: record the first incident of each body; with the
/// clamp policy repair the state (a non-finite body is frozen at `before`, its pose at the start).
SMASH_HD void watchBody(const StepParams& p, int bodyIndex, const BodyData& before, BodyData& b) {
  const float radius = p.shapes[b.shape].radius;
  const Incident incident = checkBody(b.centre, b.rotation, b.velocity, b.angularVelocity, radius,
                                      p.worldBound, p.maxSpeed);
  if (incident == Incident::None) return;
  if (p.incidentStep[bodyIndex] < 0) {
    p.incidentStep[bodyIndex] = p.step;
    p.incidentKind[bodyIndex] = static_cast<int>(incident);
  }
  if (!p.clampIncidents) return;
  if (incident == Incident::NonFinite) {
    b.centre = before.centre;
    b.rotation = before.rotation;
    b.velocity = V3(0.0f);
    b.angularVelocity = V3(0.0f);
  } else {
    clampBody(b.centre, b.velocity, b.angularVelocity, radius, p.worldBound, p.maxSpeed);
  }
}

// ---------------------------------------------------------------------------------------------
// Per body.

/// Shape matching, SPEC §2 steps 4–6: centre, rotation, momentum-carrying velocities, contacts.
struct MatchBodies {
  StepParams p;
  SMASH_HD void operator()(int bodyIndex) const {
    BodyData b = p.bodies[bodyIndex];
    const BodyData before = b;
    const ShapeData& shape = p.shapes[b.shape];
    const MatchSums& s = p.sums[bodyIndex];
    M3 A = s.myr;
    if (p.seedsRotation) A = A * shape.aqqInverse;
    b.rotation = optimalRotation(A, b.rotation);
    const V3 xToNew = s.my / shape.mass;  // new centre relative to the old
    b.velocity = s.p / shape.mass;
    // L was summed about the old centre; the momentum is the same about any point moving with
    // the centre of mass (Σ m (x − c) = 0), so it is the body's angular momentum.
    b.centre += xToNew;
    b.angularVelocity = worldInverseInertia(p, b) * s.l;
    if (p.collideAfter && p.impulseContacts) resolveBodyContacts(p, bodyIndex, b);
    watchBody(p, bodyIndex, before, b);
    p.bodies[bodyIndex] = b;
  }
};

/// The rigid-body impulse method, SPEC §3, entirely per body.
struct ImpulseBodies {
  StepParams p;
  SMASH_HD void operator()(int bodyIndex) const {
    BodyData b = p.bodies[bodyIndex];
    const BodyData before = b;
    const ShapeData& shape = p.shapes[b.shape];
    V3 F(0.0f), tau(0.0f);
    if (!p.impulseContacts)
      for (int i = 0; i < shape.count; ++i) {
        const glm::vec4 rest = p.rest[shape.restOffset + i];
        V3 r = b.rotation * xyz(rest);
        V3 vi = pointVelocity(b, r);
        for (int k = 0; k < p.colliderCount; ++k) {
          SdfSample<float> s = sdfCollider(p.colliders[k], b.centre + r);
          V3 f = penaltyForce(p.penalty, s.phi, s.gradient, vi, rest.w, b.friction, p.h);
          F += f;
          tau += glm::cross(r, f);
        }
      }
    b.velocity = (b.velocity + p.h * (p.gravity + F / shape.mass)) * p.linearDamping;
    b.angularVelocity = b.angularVelocity * p.angularDamping + p.h * (worldInverseInertia(p, b) * tau);
    if (p.impulseContacts && !p.collideAfter) resolveBodyContacts(p, bodyIndex, b);
    b.centre += p.h * b.velocity;
    Quat<float> q = integrateOrientation(quaternionFromRotation(b.rotation), b.angularVelocity, p.h);
    b.rotation = rotationMatrix(q);
    if (p.impulseContacts && p.collideAfter) resolveBodyContacts(p, bodyIndex, b);
    watchBody(p, bodyIndex, before, b);
    p.bodies[bodyIndex] = b;
  }
};

/// SPEC §2 step 5 for every method: particles onto the rigid pose, rigid velocity field.
SMASH_HD void projectParticle(const BodyData& b, const V3& rest, glm::vec4& x, glm::vec4& v) {
  const V3 r = b.rotation * rest;
  x = glm::vec4(b.centre + r, 0.0f);
  v = glm::vec4(b.velocity + glm::cross(b.angularVelocity, r), 0.0f);
}

struct ProjectParticles {
  StepParams p;
  SMASH_HD void operator()(int i) const {
    const BodyData& b = p.bodies[p.particleBody[i]];
    projectParticle(b, xyz(p.rest[p.shapes[b.shape].restOffset + (i - b.particleOffset)]),
                    p.position[i], p.velocity[i]);
  }
};

/// The whole step of one body in one pass over its particles, which stay in cache between the
/// loops: the CPU strategy (one body per thread). The per-particle strategy runs the same
/// functors as separate parallel passes with a segmented reduction in between.
struct FusedBodyStep {
  StepParams p;
  bool shapeMatching;
  SMASH_HD void operator()(int bodyIndex) const {
    const int offset = p.bodies[bodyIndex].particleOffset;
    const int count = p.bodies[bodyIndex].particleCount;
    const glm::vec4* rest = p.rest + p.shapes[p.bodies[bodyIndex].shape].restOffset;
    glm::vec4* x = p.position + offset;
    glm::vec4* v = p.velocity + offset;
    if (shapeMatching) {
      const BodyData b = p.bodies[bodyIndex];
      // With impulse contacts, a body none of whose particles can be inside a collider (bounded
      // through the centre: an SDF is 1-Lipschitz) skips the per-particle tests; they would all
      // be false, so the result is the same to the bit.
      StepParams local = p;
      if (p.impulseContacts) {
        bool anyInside = false;
        for (int k = 0; k < p.colliderCount; ++k)
          anyInside = anyInside || mayTouch(p.colliders[k], b, p.shapes[b.shape], 0.0f);
        if (!anyInside) local.colliderCount = 0;
      }
      MatchSums sums = {V3(0.0f), M3(0.0f), V3(0.0f), V3(0.0f)};
      for (int i = 0; i < count; ++i) {
        const V3 xi = xyz(x[i]);
        const V3 vi = integrateVelocity(local, b, rest[i].w, xi, xyz(v[i]));
        v[i] = glm::vec4(vi, 0.0f);
        accumulateMatch(sums, rest[i].w, xyz(rest[i]), xi - b.centre, vi, p.h);
      }
      p.sums[bodyIndex] = sums;
      MatchBodies{p}(bodyIndex);
    } else {
      ImpulseBodies{p}(bodyIndex);
    }
    const BodyData b = p.bodies[bodyIndex];
    for (int i = 0; i < count; ++i) projectParticle(b, xyz(rest[i]), x[i], v[i]);
  }
};

}  // namespace smash::pipeline
