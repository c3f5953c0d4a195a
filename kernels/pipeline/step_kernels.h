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
#include "math/grid_sdf.h"
#include "math/contact_lanes.h"
#include "math/contact_solver.h"
#include "math/pair_colors.h"
#include "math/rotation.h"
#include "math/sdf.h"
#include "math/sleep.h"
#include "math/watchdog.h"

#include <cfloat>
#include <cstdlib>

// x86-64 only (32-bit x86 may do scalar float in x87's wider registers); never under nvcc, whose
// host and device passes both take the scalar loops (the host copy of FusedBodyStep in the CUDA
// translation unit is then the scalar one: the same bits). The same condition as the contact
// rounds' lanes (math/contact_lanes.h, which includes the SSE header).
#if SMASH_CONTACT_LANES
#define SMASH_SSE_BODY_LOOPS 1
#include <immintrin.h>
#endif

namespace smash::pipeline {

using V3 = Vec3<float>;
using M3 = Mat3<float>;

/// A particle's position, velocity or rest offset (xyz, and w: the mass for rest offsets, unused
/// otherwise) on a 16-byte boundary, so that on the GPU each is one 128-bit load or store:
/// glm::vec4 alone has the alignment of a float. Same 16 bytes, so the state format is unchanged.
struct alignas(16) Float4 : glm::vec4 {
  Float4() = default;
  SMASH_HD Float4(const glm::vec4& v) : glm::vec4(v) {}
  SMASH_HD Float4(const V3& xyz, float fourth) : glm::vec4(xyz, fourth) {}
};
static_assert(sizeof(Float4) == 16 && alignof(Float4) == 16, "one 128-bit access per particle vector");

/// Reads a whole Float4: on the GPU through CUDA's float4, which nvcc keeps as one 128-bit load
/// even when only xyz is used (a glm read of .x, .y, .z becomes three 32-bit loads).
SMASH_HD Float4 load4(const Float4& ref) {
#if defined(__CUDA_ARCH__)
  const float4 v = *reinterpret_cast<const float4*>(&ref);
  return Float4(glm::vec4(v.x, v.y, v.z, v.w));
#else
  return ref;
#endif
}

/// A grid cell (broad phase), padded to 16 bytes: one 128-bit access.
struct alignas(16) Cell {
  int x, y, z, unused;
};

/// Particles in a narrow-phase cluster, at most (clusterMayTouch).
constexpr int kClusterSize = 16;

struct ShapeData {
  int restOffset;       // first entry of this shape in the rest array
  int count;            // particles
  float mass;           // M
  float radius;         // max ‖r_i‖
  float thickness;      // 2 volume / area of its mesh, 0 if none (swept contacts, math/swept.h)
  M3 aqq;               // A_qq = Σ m r rᵀ
  M3 aqqInverse;        // A_qq⁻¹ (zero when not invertible)
  M3 inertia;           // I_ref
  M3 inertiaInverse;    // I_ref⁺
  GridSdfView sdf;      // φ_ref (values in backend memory); null values when not baked
};

/// A shape's particle clusters for the narrow phase (clusterMayTouch), beside ShapeData (whose
/// size the per-body GPU kernels' stacks are budgeted for).
struct ShapeClusters {
  int offset;           // its first cluster in StepParams::clusterSpheres and clusterEnd
  int count;
  float sdfLipschitz;   // a Lipschitz bound of the shape's field's interpolant inside its node box
};

/// The float forms clusterMayTouch reads, rounded up so its bounds stay conservative: a cluster's
/// bounding sphere (ParticleClusters::spheres) and a field's Lipschitz bound
/// (BakedGrid::interpolantLipschitz). Host code, at the world's creation (and in its test).
inline Float4 clusterSphereOf(const glm::dvec4& s) {
  return Float4(V3(glm::dvec3(s)), static_cast<float>(s.w * (1 + 1e-6)));
}
inline float lipschitzBoundOf(double lipschitz) { return static_cast<float>(lipschitz * (1 + 1e-6) + 1e-6); }

struct BodyData {
  int shape;
  int particleOffset;
  int particleCount;
  float restitution, friction;
  V3 centre;
  M3 rotation;
  V3 velocity;
  V3 angularVelocity;
  int restSteps;  // steps supported and at rest (math/sleep.h)
  int asleep;     // not 0: not stepped, static for the bodies that touch it; kFellAsleep in the
                  // step it fell asleep (its particles are projected once more), then kAsleep
  int island;     // while asleep: the island it fell asleep with (its least body index)
  // While free (awayFromColliders, impulse contacts): E/|L|² of its rotation as it became free —
  // the energy keepRotationEnergy holds it to, for the L of each step (damping scales L and keeps
  // the ratio; math/rotation.h). 0: none held (in contact, or given a new state).
  float heldEnergy;
};

/// Sums a body's particles contribute to matching (physics.md §2.4) and to its momentum.
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

/// One contact slot of the per-body contact buffer (against colliders: rb unused).
using ContactSlot = PairContact<float>;
/// What the next step's warm start keeps of a collider contact (math/contact_solver.h).
using KeptContact = ContactImpulse<float>;

/// Everything a step's functors read, passed by value (zero-initialised, then filled).
struct StepParams {
  // particles
  Float4* position = nullptr;
  Float4* velocity = nullptr;
  const int* particleBody = nullptr;
  // shapes
  const Float4* rest = nullptr;
  // per rest particle: the cone a body–body contact may push it along (Shape::pushCone; xyz the
  // axis, w cos α; w < −1 none)
  const Float4* pushCone = nullptr;
  const Float4* pushRays = nullptr;  // three per rest particle: Shape::pushRays' columns
  const ShapeData* shapes = nullptr;
  // particle clusters of each shape (≤ kClusterSize particles, spatially close): bounding spheres
  // in the rest frame (xyz centre, w radius), each cluster's end in clusterParticles, and per
  // shape (at its restOffset) its particles' indices in cluster order
  const ShapeClusters* shapeClusters = nullptr;  // per shape
  const Float4* clusterSpheres = nullptr;
  const int* clusterEnd = nullptr;
  const int* clusterParticles = nullptr;
  // bodies
  BodyData* bodies = nullptr;
  MatchSums* sums = nullptr;
  MatchSums* chunkSums = nullptr;      // (nchunk) partial sums, see IntegrateChunkSums
  const int* chunkFirst = nullptr;     // (nchunk) first particle of each chunk
  const int* bodyFirstChunk = nullptr; // (nbody + 1) first chunk of each body
  ContactSlot* contacts = nullptr;  // (nbody × contactCapacity)
  long long* contactOverflow = nullptr;  // (nbody) cumulative
  int contactCapacity = 0;
  int colliderManifold = 0;  // max_contacts_per_collider (math/contact_solver.h reduceColliderContacts)
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
  int pairSweeps = 1;  ///< Gauss–Seidel sweeps over a pair's manifold per round
  bool seedsRotation = false;
  bool collideAfter = true;
  bool impulseContacts = true;  // false: a penalty model
  bool averagedContacts = false;
  PenaltyParams<float> penalty;
  // watchdog
  long long* step = nullptr;       // (1) the step being taken (1-based), advanced on the device
                                   // (AdvanceStep) so that a captured step replays correctly
  long long* incidentStep = nullptr;  // (nbody) first incident's step, −1 if none
  int* incidentKind = nullptr;        // (nbody) Incident of that step
  float worldBound = 0, maxSpeed = 0;
  bool clampIncidents = false;
  // collider contacts, wide (the per-particle strategy); see "Collider contacts, wide"
  int* bodyNear = nullptr;            // (nbody × ncollider) may be within the margin
  int* chunkContactCount = nullptr;   // (ncollider × nchunk + 1) contacts per chunk; last is 0
  int* chunkContactOffset = nullptr;  // (ncollider × nchunk + 1) exclusive scan of the counts
  Float4* chunkDeepest = nullptr;     // (nchunk) normal xyz, depth w of each chunk's deepest
  int* chunkDeepestAt = nullptr;      // (nchunk) its particle (of its body's shape)
  int* pushGate = nullptr;            // (nbody) tested against the pass's current collider
  int* pushDone = nullptr;            // (nbody) a pass moved nothing: push-out finished; kPushSwept: left to PushOutSweptBodies
  int* pushMoved = nullptr;           // (nbody) moved in the current pass
  Float4* pushFrom = nullptr;         // (nbody) centre when armed; w 1: a lone body (LimitPushWork), 2: one
                                      // whose collider contacts were solved (pushSolvedFrom)
  Float4* pushSolvedFrom = nullptr;   // (2 nbody) v, ω before that solve (ω turned with the pose)
  int* pushPoint = nullptr;           // (nbody) the deepest push's particle, −1 none (LimitPushWork)
  float* pushMost = nullptr;          // (nbody) its depth
  // bodies that touch (physics.md §6–7); see "Body–body contact" below
  bool deferContacts = false;      // the per-body step stops at the predicted pose
  bool colliderContacts = true;    // body-level collider contacts are part of the step
  bool bodyContacts = false;       // the scene's bodies collide with each other
  // The rounds begin with Gauss–Seidel (math/pair_colors.h, PairColors below): the contacts'
  // responses are for the true masses (roundSplit) until PrepareSplitResponses prepares them for
  // the Jacobi rounds that follow. (Here, beside the other flags: in the padding before a pointer.)
  bool pairGaussSeidel = false;
  const BodyData* bodiesStart = nullptr;      // (nbody) state at the step's start (watchdog)
  BodyData* bodiesPredicted = nullptr;        // (nbody) predicted state, before contacts
  int bodyCount = 0;
  // broad phase: a uniform grid hashed into 2^k buckets (see "Broad phase" below)
  int* cellKeys = nullptr;                    // (nbody) bucket of each body's cell, sorted
  int* sortOrder = nullptr;                   // (nbody) body of each sorted key
  int* cellStart = nullptr;                   // (buckets + 1) first sorted body of each bucket
  Float4* spheres = nullptr;                  // (nbody) centre xyz and reach w of each body
  Cell* cells = nullptr;                      // (nbody) the grid cell of each body's centre
  int cellMask = 0;                           // buckets − 1 (buckets: a power of two)
  float cellSize = 1;                         // edge of a grid cell
  int* pairsFound = nullptr;                  // (nbody + 1) pairs each body owns
  int* pairsOffset = nullptr;                 // (nbody + 1) exclusive scan of pairsFound
  long long* pairKeys = nullptr;              // (pairCapacity) pairKeyOf(a, b), a < b
  int pairCapacity = 0;                       // the pairs provisioned (pairSlots on the host)
  // On the device, so that no step reads a count back (pairCountOf): [0] this step's pairs
  // (≤ pairCapacity; between steps, the last step's), [1] last step's, [2] the most pairs found
  // (before the capacity) since the host last looked, [3] pairs dropped at the capacity, ever.
  long long* pairTally = nullptr;
  PairContact<float>* pairContacts = nullptr; // (pairCapacity × pairContactCapacity)
  int* pairContactCount = nullptr;            // (pairCapacity)
  int pairContactCapacity = 0;                // points of a pair's manifold (≤ kManifoldPoints)
  int narrowChunks = 0;                       // most chunks (≤ kMatchChunk particles) of any shape
  ManifoldKey* pairExtremes = nullptr;        // (pairCapacity × 4) the wide narrow phase's quadrant extremes
  ManifoldKey* elementDeepest = nullptr;        // (pairCapacity × 2 narrowChunks × 4) each element's four deepest
  const long long* previousPairKeys = nullptr;  // last step's pairs (sorted; pairTally[1] of them), for warm starting
  const PairContact<float>* previousPairContacts = nullptr;
  const int* previousPairContactCount = nullptr;
  // Last step's collider contacts of every body (nbody × cap), their warm start; KeepContacts
  // writes them at the step's end from this step's contacts and counts.
  KeptContact* previousContacts = nullptr;
  int* previousColliderCount = nullptr;           // (nbody)
  int* colliderContactCount = nullptr;            // (nbody) this step's collider contacts (0: none solved)
  int* incidenceBody = nullptr;               // (2 pairCapacity) sorted by body (nbody past the pairs)
  int* incidencePair = nullptr;               // (2 pairCapacity)
  int* incidenceStart = nullptr;              // (nbody + 1) first incidence of each body
  int* split = nullptr;                       // (nbody) pairs + colliders touching the body
  M3* invInertia = nullptr;                   // (nbody) world inverse inertia of a body in a pair (PrepareBodies)
  PairImpulse<float>* onA = nullptr;          // (pairCapacity) this round's impulses on a
  PairImpulse<float>* onB = nullptr;          // (pairCapacity) and on b
  PairImpulse<float>* onBody = nullptr;       // (nbody) from the colliders
  int shockLevels = 0;                        // levels of shock propagation (0: off)
  int shockSweeps = 64;                       // at most, sweeps of a body of a level (shock_sweeps)
  V3 up{0.0f};                                // −gravity, unit
  int* pairSupport = nullptr;                 // (pairCapacity) +1 a rests on b, −1 b on a, 0
  int* shockLevel = nullptr;                  // (nbody) the level each body ends with
  int* shockLevelScratch = nullptr;           // (nbody) the other buffer of the relaxation
  // sleeping (math/sleep.h)
  SleepSettings<float> sleep;
  int* islandRest = nullptr;                  // (nbody) island minimum of the steps at rest
  int* islandRestScratch = nullptr;           // (nbody) the other buffer of the relaxation
  int* islandLabel = nullptr;                 // (nbody) least body index (or sleeping island) reached
  int* islandLabelScratch = nullptr;          // (nbody) the other buffer
  long long* wakeMark = nullptr;              // (nbody) step in which island i was touched
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

/// The impulse response (physics.md §4) of a particle at x with velocity v to every collider it
/// is inside (deeper than the slop), collider by collider.
SMASH_HD V3 colliderResponses(const StepParams& p, const BodyData& b, const V3& x, V3 v) {
  for (int k = 0; k < p.colliderCount; ++k) {
    SdfSample<float> s = sdfCollider(p.colliders[k], x);
    if (s.phi < -p.penetrationSlop) v = impulseResponse(v, s.gradient, bodyMaterial(p, b));
  }
  return v;
}

/// physics.md §2 steps 1–2: integrate (gravity, penalty forces, damping), then the per-particle
/// impulse against colliders the particle is inside (colliderResponses).
SMASH_HD V3 integrateVelocity(const StepParams& p, const BodyData& b, float m, const V3& x, V3 v) {
  V3 f(0.0f);
  if (!p.impulseContacts)
    for (int k = 0; k < p.colliderCount; ++k) {
      SdfSample<float> s = sdfCollider(p.colliders[k], x);
      f += penaltyForce(p.penalty, s.phi, s.gradient, v, m, b.friction, p.h);
    }
  v = (v + p.h * (p.gravity + f / m)) * p.linearDamping;
  return p.impulseContacts ? colliderResponses(p, b, x, v) : v;
}

/// Steps 3–4 inputs: predict y = x + h v and add the particle's share to the body's sums,
/// relative to p0 = the body's centre (no cancellation far from the origin). The prediction's
/// turn (rotation-aware, math/rotation.h predictedTurn) is added per body in MatchBodies.
SMASH_HD void accumulateMatch(MatchSums& sums, float m, const V3& r, const V3& xRel, const V3& v,
                              float h) {
  const V3 my = m * (xRel + h * v);
  sums.my += my;
  sums.myr += outer(my, r);
  sums.p += m * v;
  sums.l += m * glm::cross(xRel, v);
}

/// MatchSums as the 18 floats of its columns (my, A_pq's three columns, p, l) and back: the rows
/// of a lanes sum (math/lanes.h sumRowsInOrder), whose column-by-column adds in row order are
/// AddMatchSums' (glm adds componentwise; no FMA contraction on any backend), so the bits are the
/// plain loop's.
constexpr int kMatchFloats = 18;
SMASH_HD void matchFloats(const MatchSums& s, float (&out)[kMatchFloats]) {
  // Written out: an array of the six columns indexed in a loop took 72 B of a GPU thread's stack.
  out[0] = s.my.x, out[1] = s.my.y, out[2] = s.my.z;
  out[3] = s.myr[0].x, out[4] = s.myr[0].y, out[5] = s.myr[0].z;
  out[6] = s.myr[1].x, out[7] = s.myr[1].y, out[8] = s.myr[1].z;
  out[9] = s.myr[2].x, out[10] = s.myr[2].y, out[11] = s.myr[2].z;
  out[12] = s.p.x, out[13] = s.p.y, out[14] = s.p.z;
  out[15] = s.l.x, out[16] = s.l.y, out[17] = s.l.z;
}
SMASH_HD MatchSums matchOfFloats(const float (&f)[kMatchFloats]) {
  MatchSums s;
  s.my = V3(f[0], f[1], f[2]);
  s.myr = M3(V3(f[3], f[4], f[5]), V3(f[6], f[7], f[8]), V3(f[9], f[10], f[11]));
  s.p = V3(f[12], f[13], f[14]);
  s.l = V3(f[15], f[16], f[17]);
  return s;
}

/// The segmented sum of a body's MatchSums in a fixed order, the same on every backend and in
/// both step strategies, so a run repeats to the bit (no atomics, no order that depends on
/// scheduling): a body's particles in consecutive chunks of kMatchChunk, each chunk summed in
/// particle order (IntegrateChunkSums), then the chunks' partial sums in chunk order
/// (BodyMatchSums). The per-body fused step sums in exactly this order too.
constexpr int kMatchChunk = 32;

SMASH_HD MatchSums zeroMatchSums() { return {V3(0.0f), M3(0.0f), V3(0.0f), V3(0.0f)}; }

/// Level 1, per chunk, fused with integration (physics.md §2 steps 1–4): each particle of
/// the chunk (p.chunkFirst[c] on, up to kMatchChunk or its body's end) is integrated and added to
/// the chunk's sums, in particle order. One read of x and v per particle and no write: only the
/// sums need the integrated velocity, and the projection overwrites v. With the projection's
/// write of x and v that is DESIGN's 64 B per particle-step.
///
/// Over lanes (math/lanes.h; CUDA: a warp a chunk, a lane a particle, so neighbouring lanes load
/// neighbouring particles — one thread looping over its chunk's 32 loaded addresses 512 B from its
/// neighbour's, on an H200 130 µs a step for 1,024 resting bunnies against 31 µs of traffic, H200
/// run 28): each lane integrates its particle and writes its share, and the shares are added in
/// particle order (sumRowsInOrder), the plain loop's bits.
struct IntegrateChunkSums {
  StepParams p;
  template <class Lanes>
  SMASH_HD void operator()(int c, const Lanes& lanes) const {
    const int first = p.chunkFirst[c];
    const BodyData& b = p.bodies[p.particleBody[first]];
    const int end = glm::min(first + kMatchChunk, b.particleOffset + b.particleCount);
    const Float4* rest = p.rest + p.shapes[b.shape].restOffset;
    float total[kMatchFloats] = {};
    // A sleeping body's sums are unused.
    lanes.sumRowsInOrder(b.asleep ? 0 : end - first, [&](int k, float (&row)[kMatchFloats]) {
      const int i = first + k;
      const Float4 r = load4(rest[i - b.particleOffset]);
      const V3 x = xyz(load4(p.position[i]));
      const V3 v = integrateVelocity(p, b, r.w, x, xyz(load4(p.velocity[i])));
      MatchSums share = zeroMatchSums();
      accumulateMatch(share, r.w, xyz(r), x - b.centre, v, p.h);
      matchFloats(share, row);
    }, total);
    if (lanes.leader()) p.chunkSums[c] = matchOfFloats(total);
  }
};

/// Level 2, per body: its chunks' partial sums in order (⌈count / kMatchChunk⌉ terms). Over lanes
/// (CUDA: a warp a body, its chunks' sums loaded 32 at a time, one to a lane, then added column by
/// column in chunk order — one thread a body walked ~109 chunks of 72 B, 134 µs a step for 1,024
/// resting bunnies on an H200 against 4 µs of traffic, run 28); the plain loop's bits.
struct BodyMatchSums {
  StepParams p;
  template <class Lanes>
  SMASH_HD void operator()(int bodyIndex, const Lanes& lanes) const {
    const int first = p.bodyFirstChunk[bodyIndex];
    float total[kMatchFloats] = {};
    lanes.sumRowsInOrder(p.bodyFirstChunk[bodyIndex + 1] - first,
                         [&](int k, float (&row)[kMatchFloats]) { matchFloats(p.chunkSums[first + k], row); },
                         total);
    if (lanes.leader()) p.sums[bodyIndex] = matchOfFloats(total);
  }
  SMASH_HD void operator()(int bodyIndex) const { (*this)(bodyIndex, SerialLanes{}); }
};

// ---------------------------------------------------------------------------------------------
// Body-level contact (shared by both methods): sequential impulses over the particles within the
// contact margin of any collider, then push-out along the deepest point's normal.

/// An SDF is 1-Lipschitz, so φ(centre) > radius + d proves every particle is farther than d:
/// an O(1) test that skips the per-particle loops for bodies away from a collider.
SMASH_HD bool mayTouch(const Collider<float>& collider, const BodyData& b, const ShapeData& shape,
                       float distance) {
  return sdfCollider(collider, b.centre).phi <= shape.radius + distance + lipschitzSlack(collider);
}

/// mayTouch for the body's motion this step, from `start` to its predicted pose `b` (swept
/// contacts, math/swept.h): every particle's chord stays within the bounding radius of the
/// centre's segment, and along that segment φ ≥ (φ(c0) + φ(c1) − L |c1 − c0|) / 2.
SMASH_HD bool maySweepInto(const Collider<float>& collider, const BodyData& start, const BodyData& b,
                           const ShapeData& shape, float distance) {
  const float reach = shape.radius + distance + lipschitzSlack(collider);
  const float phi1 = sdfCollider(collider, b.centre).phi;
  if (phi1 <= reach) return true;
  const float moved = glm::length(b.centre - start.centre);
  if (!(moved > 0.0f)) return false;
  const float phi0 = sdfCollider(collider, start.centre).phi;
  return 0.5f * (phi0 + phi1 - lipschitzBound(collider) * moved) <= reach;
}

/// How far any particle of body b (bounding radius `radius`) moved this step, from `start`.
SMASH_HD float travelOf(const BodyData& start, const BodyData& b, float radius) {
  return poseTravel(start.centre, start.rotation, b.centre, b.rotation, radius);
}

// The swept samples (math/swept.h) are out of line and load the start pose themselves: the rare
// swept path then stays out of the gather loops — inlined, it kept the narrow phase's loop from
// being inlined on the CPU (the 1,000-body pile took 30% longer with no trace running), and the
// start poses it reads, hoisted out of the loops, took the wide kernels from 56 to 96–128
// registers on the GPU.

/// Particle i (shape index; `rest`: its shape's rest offsets) of a body whose pose at the step's
/// start is `start`, at x1 on its predicted pose, against collider `c`. Pointers only, into
/// backend memory: a reference to the kernel's parameters or to a copy in registers makes the GPU
/// compiler copy them to the stack.
SMASH_HD_NOINLINE SdfSample<float> sweptColliderAt(const Collider<float>* c, const Float4* rest,
                                                   const BodyData* start, int i, V3 x1) {
  return sweptColliderSample(*c, start->centre + start->rotation * xyz(load4(rest[i])), x1);
}

/// Particle i (rest offset r) of a body whose pose at the step's start is `self0`, at x1 on its
/// predicted pose, against the field of a body (shape `theirs`) that moved from `other0` to
/// `other`, swept in the other body's frame (sweptGridSample). Pointers only, as above.
SMASH_HD_NOINLINE SdfSample<float> sweptPairAt(const ShapeData* theirs, const BodyData* self0, const BodyData* other0,
                                               const BodyData* other, V3 r, V3 x1) {
  return sweptGridSample(theirs->sdf, theirs->thickness, other0->centre, other0->rotation,
                         V3(self0->centre + self0->rotation * r), other->centre, other->rotation, x1);
}


/// The contact of particle i (shape index, lever arm r) with collider k, sampled as s.
SMASH_HD ContactSlot colliderContact(const V3& r, int i, int k, const SdfSample<float>& s) {
  ContactSlot c{};
  c.ra = r;
  c.particle = i;
  c.feature = k;
  c.normal = s.gradient;
  c.phi = s.phi;
  c.target = 0;
  c.lambdaNormal = 0;
  c.lambdaTangent = V3(0.0f);
  return c;
}

#if SMASH_SSE_BODY_LOOPS
// SSE helpers of the per-body particle loops (gatherContacts, sseChunkSums, projectBody): each does
// the scalar code's operations lane by lane in the same order, no FMA: the same bits.
namespace sse {
inline __m128 load(const Float4& f) { return _mm_load_ps(&f.x); }
inline __m128 set(const V3& v) { return _mm_setr_ps(v.x, v.y, v.z, 0.0f); }
template <int L>
inline __m128 broadcast(__m128 a) { return _mm_shuffle_ps(a, a, _MM_SHUFFLE(L, L, L, L)); }
inline __m128 yzx(__m128 a) { return _mm_shuffle_ps(a, a, _MM_SHUFFLE(3, 0, 2, 1)); }
inline __m128 zxy(__m128 a) { return _mm_shuffle_ps(a, a, _MM_SHUFFLE(3, 1, 0, 2)); }
/// glm::cross's lanes: x.y y.z − y.y x.z, x.z y.x − y.z x.x, x.x y.y − y.x x.y.
inline __m128 cross(__m128 x, __m128 y) {
  return _mm_sub_ps(_mm_mul_ps(yzx(x), zxy(y)), _mm_mul_ps(yzx(y), zxy(x)));
}
inline V3 xyz(__m128 a) {
  alignas(16) float f[4];
  _mm_store_ps(f, a);
  return V3(f[0], f[1], f[2]);
}
inline __m128 xyzOnly(__m128 a) { return _mm_and_ps(a, _mm_castsi128_ps(_mm_setr_epi32(-1, -1, -1, 0))); }
/// sdfPlane's φ at x (lanes x, y, z) as glm's dot computes it, (d.x n.x + d.y n.y) + d.z n.z with
/// d = x − point: the same bits.
inline float planePhi(__m128 x, __m128 point, __m128 normal) {
  const __m128 d = _mm_mul_ps(_mm_sub_ps(x, point), normal);
  return _mm_cvtss_f32(_mm_add_ss(_mm_add_ss(d, broadcast<1>(d)), _mm_movehl_ps(d, d)));
}
/// The slack of a bound on a box container's φ (Planes::mayBeDeeper, containerCandidates) against
/// sdfBox's: over the float rounding of both sides, about 15 ε/2 (|p| + |h| + reach) each, taken
/// twice over — p and h the container's centre and half extents; a point the bound keeps out is
/// inside, within |p| + |h| of the origin, and `reach` bounds what else the bound's sums hold (the
/// gather's body centre and lever arms; 0 for a particle's own position).
/// The container's quaternion is taken as unit (the scene normalises it: a unit quaternion's
/// rounding, about 2 ε, is within the slack).
inline float containerSlack(const Collider<float>& c, float reach) {
  return 32.0f * FLT_EPSILON * (glm::length(c.point) + glm::length(c.halfExtents) + reach);
}
/// The planes and box containers among `count` colliders (at most kPlanes and kBoxes of them), in
/// SSE registers: `all` when every collider is one of them (then a particle none of these may
/// hold deeper than the slop is in no collider that deep, and skips the scalar test).
struct Planes {
  static constexpr int kPlanes = 4, kBoxes = 2;
  __m128 point[kPlanes], normal[kPlanes];
  __m128 pointX[kPlanes], pointY[kPlanes], pointZ[kPlanes];  ///< each component in every lane
  __m128 normalX[kPlanes], normalY[kPlanes], normalZ[kPlanes];  ///< (mayBeDeeperFour)
  __m128 boxCentre[kBoxes], boxRow[kBoxes][3], boxHalf[kBoxes];
  float boxSlack[kBoxes];
  int count = 0, boxes = 0;
  bool all = true;
  Planes(const Collider<float>* colliders, int n) {
    for (int k = 0; k < n; ++k) {
      if (colliders[k].type == ColliderType::Plane && count < kPlanes) {
        point[count] = set(colliders[k].point);
        normal[count] = set(colliders[k].normal);
        pointX[count] = broadcast<0>(point[count]), pointY[count] = broadcast<1>(point[count]);
        pointZ[count] = broadcast<2>(point[count]);
        normalX[count] = broadcast<0>(normal[count]), normalY[count] = broadcast<1>(normal[count]);
        normalZ[count] = broadcast<2>(normal[count]);
        ++count;
      } else if (colliders[k].type == ColliderType::BoxContainer && boxes < kBoxes) {
        const M3 r = glm::transpose(rotationMatrix(colliders[k].rotation));  // world → box: its rows
        boxCentre[boxes] = set(colliders[k].point);
        for (int j = 0; j < 3; ++j) boxRow[boxes][j] = set(r[j]);
        boxHalf[boxes] = set(colliders[k].halfExtents);
        boxSlack[boxes] = containerSlack(colliders[k], 0.0f);
        ++boxes;
      } else {
        all = false;
      }
    }
  }
  /// Whether x may be deeper than `slop` (≥ 0) in some collider: a plane's φ(x) < −slop (sdfPlane's
  /// φ, as glm's dot computes it: the same bits as the scalar test), or x within a container's
  /// slack of its walls or outside them (its φ may then be anything ≤ 0), or a collider is neither:
  /// the caller tests it.
  bool mayBeDeeper(__m128 x, float slop) const {
    if (!all) return true;
    for (int k = 0; k < count; ++k)
      if (planePhi(x, point[k], normal[k]) < -slop) return true;
    for (int k = 0; k < boxes; ++k)
      if (nearBoxWalls(k, x)) return true;
    return false;
  }
  /// Whether x is within container k's slack of its walls or outside them.
  bool nearBoxWalls(int k, __m128 x) const {
    const __m128 d = _mm_sub_ps(x, boxCentre[k]);
    // The local coordinates (Rᵀ d), the wall distances h − |l|, their least (lanes x, y, z).
    const __m128 l = _mm_add_ps(_mm_add_ps(_mm_mul_ps(boxRow[k][0], broadcast<0>(d)),
                                           _mm_mul_ps(boxRow[k][1], broadcast<1>(d))),
                                _mm_mul_ps(boxRow[k][2], broadcast<2>(d)));
    const __m128 wall = _mm_sub_ps(boxHalf[k], _mm_andnot_ps(_mm_set1_ps(-0.0f), l));
    const float least = _mm_cvtss_f32(_mm_min_ss(_mm_min_ss(wall, broadcast<1>(wall)), _mm_movehl_ps(wall, wall)));
    return !(least >= boxSlack[k]);
  }
  /// mayBeDeeper of x[0], …, x[3] as bits 0–3: the planes' φ of the four in one pass, one particle
  /// to a lane (structure of arrays), each lane the scalar test's operations in its order — (d.x n.x
  /// + d.y n.y) + d.z n.z, d = x − point — so the same bits; the containers' test per particle.
  /// (Per particle, the plane test's horizontal sum and branch took 9 µs of a resting bunny's
  /// 54 µs step on one thread — perf, docs/pipeline.md.)
  int mayBeDeeperFour(const Float4* x, float slop) const {
    if (!all) return 0xF;
    int mask = 0;
    if (count > 0) {
      __m128 px = load(x[0]), py = load(x[1]), pz = load(x[2]), pw = load(x[3]);
      _MM_TRANSPOSE4_PS(px, py, pz, pw);
      const __m128 limit = _mm_set1_ps(-slop);
      for (int k = 0; k < count; ++k) {
        const __m128 dx = _mm_mul_ps(_mm_sub_ps(px, pointX[k]), normalX[k]);
        const __m128 dy = _mm_mul_ps(_mm_sub_ps(py, pointY[k]), normalY[k]);
        const __m128 dz = _mm_mul_ps(_mm_sub_ps(pz, pointZ[k]), normalZ[k]);
        mask |= _mm_movemask_ps(_mm_cmplt_ps(_mm_add_ps(_mm_add_ps(dx, dy), dz), limit));
      }
    }
    for (int k = 0; k < boxes; ++k)
      for (int j = 0; j < 4; ++j)
        if (!(mask >> j & 1) && nearBoxWalls(k, load(x[j]))) mask |= 1 << j;
    return mask;
  }
};
/// Calls visit(i), in increasing i, for each of `count` rest offsets whose lane `lanes(qx, qy, qz)`
/// sets (a movemask; the coordinates of four offsets, one to a lane), and for every offset past
/// the last four: the bounds' loop (planeCandidates, containerCandidates, reachCandidates). Offset
/// i is rest[index[i]] where `index` is given (a cluster order), else rest[i].
template <class Visit, class Lanes>
inline void visitFours(const Float4* rest, const int* index, int count, const Visit& visit, const Lanes& lanes) {
  int i = 0;
  for (; i + 4 <= count; i += 4) {
    __m128 qx, qy, qz, qw;
    if (index)
      qx = load(rest[index[i]]), qy = load(rest[index[i + 1]]), qz = load(rest[index[i + 2]]), qw = load(rest[index[i + 3]]);
    else
      qx = load(rest[i]), qy = load(rest[i + 1]), qz = load(rest[i + 2]), qw = load(rest[i + 3]);
    _MM_TRANSPOSE4_PS(qx, qy, qz, qw);
    for (int mask = lanes(qx, qy, qz); mask != 0; mask &= mask - 1) visit(i + __builtin_ctz(mask));
  }
  for (; i < count; ++i) visit(i);
}
template <class Visit, class Lanes>
inline void visitFours(const Float4* rest, int count, const Visit& visit, const Lanes& lanes) {
  visitFours(rest, nullptr, count, visit, lanes);
}
/// Calls visit(i), in increasing i, for each particle i of a body (pose b, `count` rest offsets
/// `rest`, bounding radius `radius`) that may lie below `below` from the plane `plane`, four at a
/// time: φ(c + R qᵢ) = φ(c) + (Rᵀn)·qᵢ for any matrix R, and `slack` covers the float rounding
/// of both sides (at most about 17 ε/2 (|c| + |p|) + 24 ε/2 r), so every particle the exact test
/// keeps is visited; visit's exact test decides (the same contacts, in the same order).
template <class Visit>
inline void planeCandidates(const Collider<float>& plane, const BodyData& b, const Float4* rest, int count,
                            float radius, float below, const Visit& visit) {
  const V3 m = glm::transpose(b.rotation) * plane.normal;
  const float phiCentre = glm::dot(b.centre - plane.point, plane.normal);
  const float slack = 32.0f * FLT_EPSILON * (glm::length(b.centre) + glm::length(plane.point) + 2.0f * radius);
  const __m128 limit = _mm_set1_ps(below - phiCentre + slack);
  const __m128 mx = _mm_set1_ps(m.x), my = _mm_set1_ps(m.y), mz = _mm_set1_ps(m.z);
  visitFours(rest, count, visit, [&](__m128 qx, __m128 qy, __m128 qz) {
    const __m128 d = _mm_add_ps(_mm_add_ps(_mm_mul_ps(mx, qx), _mm_mul_ps(my, qy)), _mm_mul_ps(mz, qz));
    return _mm_movemask_ps(_mm_cmplt_ps(d, limit));
  });
}
/// planeCandidates for a box container: a particle may lie below `below` (> 0) only where its
/// least wall distance min_j (h_j − |l_j|) is below it, l = Cᵀ(c + R q − p) = l₀ + (RᵀC)ᵀ q in
/// the container's frame C (inside, φ is that least distance; outside, φ < 0 and some h_j − |l_j|
/// is negative): four particles at a time, with the slack of containerSlack.
template <class Visit>
inline void containerCandidates(const Collider<float>& box, const BodyData& b, const Float4* rest, int count,
                                float radius, float below, const Visit& visit) {
  const M3 toBox = glm::transpose(rotationMatrix(box.rotation));
  const V3 l0 = toBox * (b.centre - box.point);
  const M3 m = toBox * b.rotation;  // row j: the body-frame direction of the container's axis j
  const __m128 limit =
      _mm_set1_ps(below + containerSlack(box, glm::length(b.centre) + glm::length(box.point) + 2.0f * radius));
  __m128 row[3][3], origin[3], half[3];
  for (int j = 0; j < 3; ++j) {
    for (int k = 0; k < 3; ++k) row[j][k] = _mm_set1_ps(m[k][j]);
    origin[j] = _mm_set1_ps(l0[j]);
    half[j] = _mm_set1_ps(box.halfExtents[j]);
  }
  const __m128 sign = _mm_set1_ps(-0.0f);
  visitFours(rest, count, visit, [&](__m128 qx, __m128 qy, __m128 qz) {
    __m128 least = _mm_set1_ps(FLT_MAX);
    for (int j = 0; j < 3; ++j) {
      const __m128 l = _mm_add_ps(origin[j], _mm_add_ps(_mm_add_ps(_mm_mul_ps(row[j][0], qx), _mm_mul_ps(row[j][1], qy)),
                                                        _mm_mul_ps(row[j][2], qz)));
      least = _mm_min_ps(least, _mm_sub_ps(half[j], _mm_andnot_ps(sign, l)));
    }
    // Not (least ≥ limit): a particle whose walls are NaN in every axis visits (min may pass a
    // finite wall over a NaN one; the exact test rejects a NaN pose as the scalar loop does).
    return _mm_movemask_ps(_mm_cmpnge_ps(least, limit));
  });
}
/// Calls visit(k), in increasing k < count, for each particle `index[k]` (k itself where index is
/// null) of body `self` (rest offsets `rest`) whose position may lie within `reach` of `centre`,
/// four at a time: |c + R q − centre|² against (reach + slack)², the difference c − centre taken
/// once; `slack` covers the rounding of both this and the exact test (pairContactAt's first test,
/// which decides: the same contacts in the same order). The two differ only in where the centres
/// are subtracted (R q rounds alike), by about ε/2 (2|c| + |centre| + |q| + 2 reach) before the
/// squares' few ulps; PairContactsOf passes 32 ε (|c| + |centre| + 2 r + reach), r the bounding
/// radius (a test bisects particles onto the reach sphere: without the slack it misses them).
/// Most of a pair's particles are beyond the other body's bounding sphere; each exact test was a
/// call (rain_1k: 15% of a step in it).
template <class Visit>
inline void reachCandidates(const BodyData& self, const V3& centre, const Float4* rest, const int* index, int count,
                            float reach, float slack, const Visit& visit) {
  const M3& R = self.rotation;
  const V3 d = self.centre - centre;
  const __m128 r00 = _mm_set1_ps(R[0].x), r01 = _mm_set1_ps(R[0].y), r02 = _mm_set1_ps(R[0].z);
  const __m128 r10 = _mm_set1_ps(R[1].x), r11 = _mm_set1_ps(R[1].y), r12 = _mm_set1_ps(R[1].z);
  const __m128 r20 = _mm_set1_ps(R[2].x), r21 = _mm_set1_ps(R[2].y), r22 = _mm_set1_ps(R[2].z);
  const __m128 dx = _mm_set1_ps(d.x), dy = _mm_set1_ps(d.y), dz = _mm_set1_ps(d.z);
  const float limit = reach + slack;
  const __m128 limit2 = _mm_set1_ps(limit * limit);
  visitFours(rest, index, count, visit, [&](__m128 qx, __m128 qy, __m128 qz) {
    const __m128 fx = _mm_add_ps(dx, _mm_add_ps(_mm_add_ps(_mm_mul_ps(r00, qx), _mm_mul_ps(r10, qy)), _mm_mul_ps(r20, qz)));
    const __m128 fy = _mm_add_ps(dy, _mm_add_ps(_mm_add_ps(_mm_mul_ps(r01, qx), _mm_mul_ps(r11, qy)), _mm_mul_ps(r21, qz)));
    const __m128 fz = _mm_add_ps(dz, _mm_add_ps(_mm_add_ps(_mm_mul_ps(r02, qx), _mm_mul_ps(r12, qy)), _mm_mul_ps(r22, qz)));
    const __m128 d2 = _mm_add_ps(_mm_add_ps(_mm_mul_ps(fx, fx), _mm_mul_ps(fy, fy)), _mm_mul_ps(fz, fz));
    // Not (d² > limit²): a NaN pose visits, and the exact test rejects it as before.
    return _mm_movemask_ps(_mm_cmpngt_ps(d2, limit2));
  });
}
}  // namespace sse
#endif

/// The collider contacts of body b at its predicted pose, each particle swept from its place on
/// `start`, the body at the step's start (math/swept.h).
SMASH_HD void gatherContacts(const StepParams& p, const BodyData& start, const BodyData& b,
                             ContactSlot* slots, int& count, long long& overflow) {
  const ShapeData& shape = p.shapes[b.shape];
  const float travel = travelOf(start, b, shape.radius);
  for (int k = 0; k < p.colliderCount; ++k) {
    if (!maySweepInto(p.colliders[k], start, b, shape, p.contactMargin)) continue;
    const bool swept = maySweep(travel, colliderThickness(p.colliders[k]));
    auto visit = [&](int i) {
      const V3 r = b.rotation * xyz(p.rest[shape.restOffset + i]);
      SdfSample<float> s = swept ? sweptColliderAt(p.colliders + k, p.rest + shape.restOffset, &start, i, b.centre + r)
                                 : sdfCollider(p.colliders[k], b.centre + r);
      if (!(s.phi < p.contactMargin)) return;
      // Full: keep the deepest contacts, count what was dropped.
      if (keepDeepest(slots, count, p.contactCapacity, colliderContact(r, i, k, s), shape.radius)) ++overflow;
    };
#if SMASH_SSE_BODY_LOOPS
    // A plane not swept: four particles at a time through a bound, the exact sample (visit) only
    // for those that may be within the margin — most of a resting body's particles are not.
    if (!swept && p.colliders[k].type == ColliderType::Plane) {
      sse::planeCandidates(p.colliders[k], b, p.rest + shape.restOffset, shape.count, shape.radius, p.contactMargin,
                           visit);
      continue;
    }
    if (!swept && p.colliders[k].type == ColliderType::BoxContainer && p.contactMargin > 0.0f) {
      sse::containerCandidates(p.colliders[k], b, p.rest + shape.restOffset, shape.count, shape.radius,
                               p.contactMargin, visit);
      continue;
    }
#endif
    for (int i = 0; i < shape.count; ++i) visit(i);
  }
}

/// The collider contact manifold of body b's gathered contacts (math/contact_solver.h
/// reduceColliderContacts): the new count.
SMASH_HD int colliderManifold(const StepParams& p, const BodyData& b, ContactSlot* slots, int count) {
  return reduceColliderContacts(slots, count, p.shapes[b.shape].radius, p.colliderManifold);
}

SMASH_HD V3 pointVelocity(const BodyData& b, const V3& r) {
  return b.velocity + glm::cross(b.angularVelocity, r);
}

/// A body as the contact solver sees it, with `split` its mass splitting count and `worldInvInertia()`
/// giving its world inverse inertia (called for an awake body only). A sleeping body is static for
/// the bodies that touch it: zero inverse mass and inertia (its velocities are zero).
template <class WorldInvInertia>
SMASH_HD SolverBody<float> solverBodyWith(const StepParams& p, const BodyData& b, int split,
                                          const WorldInvInertia& worldInvInertia) {
  SolverBody<float> s;
  s.v = b.velocity;
  s.w = b.angularVelocity;
  if (b.asleep) return s;
  s.invMass = float(split) / p.shapes[b.shape].mass;
  s.invInertia = float(split) * worldInvInertia();
  return s;
}
/// `s` with the approach velocities restitution is taken from: the step's start linear velocity,
/// and the start's angular momentum at the predicted pose (`predicted`; ω = I(R)⁻¹ L, as the
/// torque-free turn carries it, without this step's damping and the particle impulses shape
/// matching's L holds). The start ω itself is not the approach spin at the predicted pose of a
/// body whose ω turns within the step: a spinning rod's bounce restituted 19 m/s where it
/// approached at 0.5 (experiments/hostile-2026-11-28b). The predicted minus the approach normal
/// speed is then the step's velocity update, as closingOf takes it. Collider and pair contacts alike.
SMASH_HD SolverBody<float> withApproachVelocities(const StepParams& p, SolverBody<float> s, const BodyData& start,
                                                  const BodyData& predicted) {
  const ShapeData& shape = p.shapes[predicted.shape];
  s.v = start.velocity;
  s.w = omegaOfMomentum(predicted.rotation, predicted.angularVelocity,
                        momentumAt(start.rotation, start.angularVelocity, shape.inertia), shape.inertia,
                        shape.inertiaInverse);
  return s;
}

/// The inverse inertia from the body's rotation now.
SMASH_HD SolverBody<float> solverBodyOf(const StepParams& p, const BodyData& b, int split) {
  return solverBodyWith(p, b, split, [&] { return worldInverseInertia(p, b); });
}
/// The approach body (withApproachVelocities) of `b` at its predicted pose `predicted`, for
/// the collider solve (resolveAgainstStatic) and a pair body's collider bounce.
SMASH_HD SolverBody<float> startBodyOf(const StepParams& p, const BodyData& start, const BodyData& b,
                                       const BodyData& predicted) {
  return withApproachVelocities(p, solverBodyOf(p, b, 1), start, predicted);
}

/// solverBodyOf for body `b` in a touching pair, from PrepareBodies to ShockVelocities: its world
/// inverse inertia as PrepareBodies stored it (p.invInertia), not recomputed (R I⁻¹ Rᵀ, two 3×3
/// products) by every pair and round — the rotation holds until FinishPairBodies moves the body.
/// The same bits as solverBodyOf.
SMASH_HD SolverBody<float> pairSolverBody(const StepParams& p, int b, const BodyData& body, int split) {
  return solverBodyWith(p, body, split, [&] { return p.invInertia[b]; });
}
/// The approach body of `b` in a pair (withApproachVelocities), `body` at its predicted pose.
SMASH_HD SolverBody<float> pairStartBody(const StepParams& p, int b, const BodyData& start, const BodyData& body) {
  return withApproachVelocities(p, pairSolverBody(p, b, body, 1), start, body);
}
/// The mass split in the contact rounds of a body in `split` pairs and colliders: all of it
/// (Jacobi rounds, mass splitting), or none (Gauss–Seidel rounds, true masses).
SMASH_HD int roundSplit(const StepParams& p, int split) { return p.pairGaussSeidel ? 1 : split; }
/// The responses of a pair's contacts (bodies a and b) for the rounds' masses (contact_solver.h
/// prepareResponse): PreparePairs, and PrepareSplitResponses before Jacobi rounds that follow
/// Gauss–Seidel ones.
SMASH_HD void preparePairResponses(const StepParams& p, int a, int b, PairContact<float>* c, int count) {
  const SolverBody<float> sb = pairSolverBody(p, b, p.bodies[b], roundSplit(p, p.split[b]));
  prepareResponse(pairSolverBody(p, a, p.bodies[a], roundSplit(p, p.split[a])), &sb, c, count);
}
/// The same for body b's `count` collider contacts, the body in `split` pairs and colliders.
SMASH_HD void prepareColliderResponses(const StepParams& p, int b, const BodyData& body, int split, PairContact<float>* c,
                                       int count) {
  prepareResponse<float>(pairSolverBody(p, b, body, roundSplit(p, split)), nullptr, c, count);
}

/// Body `bodyIndex`'s collider contacts through the one contact solver (math/contact_solver.h):
/// the body alone against static colliders. `Warm` (a scene whose bodies do not touch: every
/// caller knows which it is): warm-started from its contacts of the last step and solved until
/// its velocities settle, its count recorded for the next step's warm start (KeepContacts);
/// otherwise cold and `contact_iterations` sweeps, nothing kept (docs/solver.md, "Warm starts
/// against the colliders": measured, it left piles deeper). `moved`: the pose has already moved
/// this step (contacts after the move, the default, and every deferred contact phase), and then
/// moves with the velocity change; before the move (the impulse method in physics.md §3's order)
/// the position update that follows uses the new velocities. `lanes`: the threads the solve is
/// spread over (math/lanes.h; every lane returns with the same finite `b`).
template <bool Warm, class Lanes = SerialLanes>
SMASH_HD void solveColliderContacts(const StepParams& p, int bodyIndex, const BodyData& start, BodyData& b,
                                    ContactSlot* c, int count, bool moved, const Lanes& lanes = Lanes{}) {
  SolverBody<float> body = solverBodyOf(p, b, 1);
  resolveAgainstStatic(b.centre, b.rotation, body, startBodyOf(p, start, b, b), c, count,
                       Warm ? p.previousContacts + static_cast<long long>(bodyIndex) * p.contactCapacity : nullptr,
                       Warm ? p.previousColliderCount[bodyIndex] : 0, Warm, bodyMaterial(p, b), p.h,
                       p.contactIterations, p.shapes[b.shape].radius, moved, p.gravity, lanes);
  b.velocity = body.v;
  b.angularVelocity = body.w;
  if constexpr (Warm)
    if (lanes.leader()) p.colliderContactCount[bodyIndex] = count;
}

/// A shape's rest offsets as the push-out reads them.
struct RestOffsets {
  const Float4* rest;
  SMASH_HD V3 operator()(int i) const { return xyz(load4(rest[i])); }
};

/// physics.md §3 step 2 literally, for the `count` contacts of one collider.
SMASH_HD void averagedImpulse(const StepParams& p, BodyData& b, const ContactSlot* c, int count) {
  const ShapeData& shape = p.shapes[b.shape];
  V3 sumR(0.0f), sumN(0.0f);
  int approaching = 0;
  for (int k = 0; k < count; ++k)
    if (c[k].phi < -p.penetrationSlop && glm::dot(pointVelocity(b, c[k].ra), c[k].normal) < 0.0f) {
      sumR += c[k].ra;
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

/// Whether the push-out of body b, starting at its pose now, samples any collider swept
/// (contact_solver.h pushSweeps for its travel from `start`, the step's start).
SMASH_HD bool pushSweepsAny(const StepParams& p, const BodyData& start, const BodyData& b) {
  const float travel = travelOf(start, b, p.shapes[b.shape].radius);
  for (int k = 0; k < p.colliderCount; ++k)
    if (maySweep(travel, colliderThickness(p.colliders[k]))) return true;
  return false;
}

/// pushOut's passes, out of line (pushOutOfColliders from PushStart (c0, R0): it decides per
/// collider whether to sample swept, so a body that sweeps none takes the plain passes). A kernel's
/// registers are its callees' too, so the per-body kernels that push out (the per-body layout,
/// not the CUDA default) grew with the swept samples all the same — FinishPairBodies from 80 to 128
/// registers, the stacks of MatchBodies, PrepareBodies and ShockPositions on sm_90
/// (kernels/gpu_budget.txt) — though less than with the passes inline. The wide layout keeps them
/// out of its chunk kernels (PushOutSweptBodies). Arguments by value and pointers into backend
/// memory only.
struct PushedOut {
  V3 centre;
  int deepest;
};
SMASH_HD_NOINLINE PushedOut pushOutOf(const Collider<float>* colliders, int colliderCount, const Float4* rest,
                                      int count, float radius, V3 centre, M3 rotation, V3 c0, M3 R0) {
  PushedOut r{centre, -1};
  r.deepest = pushOutOfColliders(colliders, colliderCount, r.centre, rotation, RestOffsets{rest}, count, radius,
                                 PushStart<float>{c0, R0, true});
  return r;
}

/// Push-out of body b against every collider (the same passes everywhere: math/contact_solver.h),
/// swept from its pose at the step's start `start` where it travelled far enough (pushSweeps).
/// Returns the deepest push's particle, as pushOutOfColliders.
SMASH_HD int pushOut(const StepParams& p, const BodyData& start, BodyData& b) {
  const ShapeData& shape = p.shapes[b.shape];
  const PushedOut r = pushOutOf(p.colliders, p.colliderCount, p.rest + shape.restOffset, shape.count, shape.radius,
                                b.centre, b.rotation, start.centre, start.rotation);
  b.centre = r.centre;
  return r.deepest;
}

/// Whether gatherContacts took a swept sample for any collider of body b (its conditions): the
/// contacts then are not the particles within the margin at the pose. Host code only.
inline bool gatheredSwept(const StepParams& p, const BodyData& start, const BodyData& b) {
  const ShapeData& shape = p.shapes[b.shape];
  const float travel = travelOf(start, b, shape.radius);
  for (int k = 0; k < p.colliderCount; ++k)
    if (maySweepInto(p.colliders[k], start, b, shape, p.contactMargin) && maySweep(travel, colliderThickness(p.colliders[k])))
      return true;
  return false;
}

/// A bound on how far the float φ of collider c at a particle of a body (bounding radius
/// `radius`, centre coordinates at most `far` in magnitude at either pose) may lie from the exact
/// φ at the particle's exact place c + R r, for the two evaluations pushOutGathered relies on (the
/// gather's and the push-out's) together: 3·10⁻⁶ of the sum S of the magnitudes φ works with (the
/// body's largest coordinate and reach, the collider's points, half extents and radius) plus 1.
/// One evaluation was off by at most ~4 u S (u = 2⁻²⁴; random and hill-climbed poses of every
/// analytic shape; tests/test_world.cpp asserts it stays within half of this), a crude worst case
/// for a plane ~14 u S; the allowance is 50 u S. (It was 10⁻⁵, 168 u S: a resting body with a
/// coordinate beyond ~70 m then scanned every particle each step — the resting benchmark's
/// bunnies reach 127 m, issue 13.) FusedBodyStep::sums pads its O(1) collider gate with it too.
SMASH_HD float largestCoordinate(const V3& x) { return glm::max(glm::abs(x.x), glm::max(glm::abs(x.y), glm::abs(x.z))); }
SMASH_HD float sdfRounding(const Collider<float>& c, float far, float radius) {
  return 3e-6f * (1.0f + far + radius + largestCoordinate(c.point) + largestCoordinate(c.point2) +
                  largestCoordinate(c.halfExtents) + c.radius);
}

/// pushOut after a solve of the collider contacts gathered at the pose (`atCentre`, `atRotation`):
/// the same passes, and the same bits, with each collider's deepest point looked for among the
/// `count` contacts gathered for it (`c`, in particle order) instead of over every particle, for
/// as long as that is exact. A particle not gathered had φ ≥ the contact margin; since then the
/// body moved by at most |Δc| + ‖ΔR‖_F r (r its bounding radius) plus what the push-out moved it,
/// and φ is 1-Lipschitz, so while that sum (and a rounding allowance) stays below the margin,
/// such a particle still has φ > 0 — and pushOut takes only a particle deeper than the deepest so
/// far, which starts at 0. A plane's φ is linear, so there only the body's move toward it counts:
/// φ changed by n·Δc + n·ΔR r ≥ n·Δc − ‖ΔR‖_F r (a resting body, which its solve lifts by about
/// g h², keeps the margin less its turn and the allowance). Past it, and for a mesh collider (a grid: its φ is a true distance only
/// within lipschitzSlack, two cells, more than a margin), the collider's pass scans every particle
/// (deepestInside). `complete`: every particle within the margin was gathered (no overflow, no
/// swept sample, no manifold) and the push-out samples no collider swept (pushSweepsAny);
/// otherwise pushOut. On a resting body the solve moves
/// it back up by about g h², half the default margin: its push-out reads its ~100 contacts
/// instead of its particles (issue 13).
/// Host code only (resolveBodyContacts).
inline int pushOutGathered(const StepParams& p, const BodyData& start, BodyData& b, const V3& atCentre,
                           const M3& atRotation, const ContactSlot* c, int count, bool complete) {
  if (!complete || pushSweepsAny(p, start, b)) return pushOut(p, start, b);
  const ShapeData& shape = p.shapes[b.shape];
  const RestOffsets rest{p.rest + shape.restOffset};
  const M3 turn = b.rotation - atRotation;
  const float turned =
      glm::sqrt(glm::dot(turn[0], turn[0]) + glm::dot(turn[1], turn[1]) + glm::dot(turn[2], turn[2])) * shape.radius;
  float moved = glm::length(b.centre - atCentre) + turned;
  float most = 0.0f;
  int deepest = -1;
  for (int pass = 0; pass < kPushOutPasses; ++pass) {
    bool pushed = false;
    for (int k = 0; k < p.colliderCount; ++k) {
      const Collider<float>& collider = p.colliders[k];
      V3 normal(0.0f);
      float depth = 0.0f;
      int at = -1;
      // How far a particle may have come toward the collider since the gather: for a plane the
      // centre's move along -n (this pass's centre, the pushes so far included) and the turn.
      const float toward = collider.type == ColliderType::Plane
                               ? glm::max(0.0f, -glm::dot(b.centre - atCentre, collider.normal)) + turned
                               : moved;
      // (At the larger of the two poses' coordinates: against a plane a sideways move is free.)
      const float rounding =
          sdfRounding(collider, glm::max(largestCoordinate(b.centre), largestCoordinate(atCentre)), shape.radius);
      if (collider.type != ColliderType::Mesh && toward + rounding < p.contactMargin) {
        if (!(sdfCollider(collider, b.centre).phi > shape.radius + lipschitzSlack(collider)))  // deepestInside's gate
          for (int j = 0; j < count; ++j) {
            if (c[j].feature != k) continue;
            const SdfSample<float> s = sdfCollider(collider, b.centre + b.rotation * rest(c[j].particle));
            if (-s.phi > depth) {
              depth = -s.phi;
              normal = s.gradient;
              at = c[j].particle;
            }
          }
      } else {
        depth = deepestInside(collider, b.centre, b.rotation, rest, shape.count, shape.radius, normal, at);
      }
      if (depth > 0.0f) {
        b.centre += depth * normal;
        moved += depth;
        pushed = true;
        if (depth > most) {
          most = depth;
          deepest = at;
        }
      }
    }
    if (!pushed) break;
  }
  return deepest;
}

/// A lone body's push-out against the colliders (from the centre `pushFrom`; `deepest` its deepest
/// push's particle, −1 for none) does no work past the step's start (`start`): contact_solver.h
/// limitPushWork (`solvedFromV`, `solvedFromW`: the velocities before the collider solve, ω
/// turned with the pose as the solve turned it; the current ones where nothing was solved). resolveBodyContacts after the move, and LimitPushWork after the wide passes
/// (always after the move).
SMASH_HD void limitLonePushWork(const StepParams& p, const BodyData& start, BodyData& b, const V3& pushFrom,
                                int deepest, const V3& solvedFromV, const V3& solvedFromW) {
  const ShapeData& shape = p.shapes[b.shape];
  const V3 rest = deepest >= 0 ? xyz(load4(p.rest[shape.restOffset + deepest])) : V3(0.0f);
  limitPushWork(b.velocity, b.angularVelocity, b.rotation, b.centre - pushFrom, b.rotation * rest,
                start.rotation * rest, start.velocity,
                start.angularVelocity, start.rotation, b.centre - start.centre,
                glm::max(largestCoordinate(b.centre), largestCoordinate(start.centre)), shape.mass, shape.inertia,
                shape.inertiaInverse, p.gravity, p.h, solvedFromV, solvedFromW);
}

/// Body-level contact against the colliders: `start` is the body at the step's start (its
/// approach velocities for restitution: withApproachVelocities), `b` at its predicted pose. `Warm`: solveColliderContacts'
/// (true in the per-body step of a scene whose bodies do not touch, false for a lone body of a
/// pile, PrepareBodies).
template <bool Warm>
SMASH_HD void resolveBodyContacts(const StepParams& p, int bodyIndex, const BodyData& start, BodyData& b,
                                  bool moved) {
  ContactSlot* slots = p.contacts + static_cast<long long>(bodyIndex) * p.contactCapacity;
  long long overflow = 0;
  const V3 solvedFromV = b.velocity;  // before the collider solve (limitLonePushWork)
  V3 solvedFromW = b.angularVelocity;
  if (!p.averagedContacts) {
    int count = 0;
    gatherContacts(p, start, b, slots, count, overflow);
#if !defined(__CUDA_ARCH__)
    // The push-out reads the gathered contacts (pushOutGathered). Not on a GPU, where pushOut
    // gives the same bits: the CUDA default is the wide layout, and in these per-body kernels the
    // gathered-contact push-out took MatchBodies' stack from 288 to 1,040 B and PrepareBodies' from
    // 832 to 1,976 B.
    const int gathered = count;  // every particle within the margin, unless:
    const bool complete = overflow == 0 && p.colliderManifold == 0 && !gatheredSwept(p, start, b);
    const V3 atCentre = b.centre;
    const M3 atRotation = b.rotation;
#endif
    count = colliderManifold(p, b, slots, count);
    if (count > 0) {
      const M3 before = b.rotation;
      solveColliderContacts<Warm>(p, bodyIndex, start, b, slots, count, moved);
      solvedFromW = b.rotation * (glm::transpose(before) * solvedFromW);
    }
#if !defined(__CUDA_ARCH__)
    if (overflow) p.contactOverflow[bodyIndex] += overflow;
    const V3 pushFrom = b.centre;
    const int deepest = pushOutGathered(p, start, b, atCentre, atRotation, slots, gathered, complete);
    if (moved) limitLonePushWork(p, start, b, pushFrom, deepest, solvedFromV, solvedFromW);
    return;
#endif
  } else {
    for (int k = 0; k < p.colliderCount; ++k) {
      StepParams one = p;
      one.colliders = p.colliders + k;
      one.colliderCount = 1;
      int count = 0;
      gatherContacts(one, start, b, slots, count, overflow);
      if (count > 0) averagedImpulse(p, b, slots, count);
    }
  }
  if (overflow) p.contactOverflow[bodyIndex] += overflow;
  const V3 pushFrom = b.centre;
  const int deepest = pushOut(p, start, b);
  if (moved) limitLonePushWork(p, start, b, pushFrom, deepest, solvedFromV, solvedFromW);
}

// ---------------------------------------------------------------------------------------------
// Collider contacts, wide: the per-particle strategy's form of resolveBodyContacts (sequential
// impulses), with the same result to the bit. Work is split by chunk — the same runs of at most
// kMatchChunk particles of one body as the matching sums — so no thread walks a body's
// particles: the gather counts each chunk's contacts, a scan places them, the chunk writes them;
// push-out takes each chunk's deepest point and then, per body, the deepest of its chunks in
// order, pass after pass. What stays per body is the contact solve over the body's gathered
// contacts (at most max_contacts_per_body) and O(chunks) reductions. Counts are numbered so that
// the scan gives each body its contacts in resolveBodyContacts' order (collider by collider,
// particles in order): body b's block starts at K·firstChunk_b, collider k's run at k·chunks_b.

SMASH_HD int chunkCountIndex(const StepParams& p, int bodyIndex, int k, int c) {
  const int firstChunk = p.bodyFirstChunk[bodyIndex];
  const int chunks = p.bodyFirstChunk[bodyIndex + 1] - firstChunk;
  return p.colliderCount * firstChunk + k * chunks + (c - firstChunk);
}

/// The particles [first, end) of chunk c and their body.
struct ChunkRange {
  int body, first, end;
};
SMASH_HD ChunkRange chunkRange(const StepParams& p, int c) {
  const int first = p.chunkFirst[c];
  const int bodyIndex = p.particleBody[first];
  const BodyData& b = p.bodies[bodyIndex];
  return {bodyIndex, first, glm::min(first + kMatchChunk, b.particleOffset + b.particleCount)};
}

/// Particle i's (global index) lever arm R r_i on body b at its current pose; `rest` is the
/// body's shape's rest offsets.
SMASH_HD V3 leverArm(const BodyData& b, const Float4* rest, int i) {
  return b.rotation * xyz(load4(rest[i - b.particleOffset]));
}

/// Per body, at the matched pose: which colliders its particles may be within the margin of, or
/// have swept into this step.
struct NearColliders {
  StepParams p;
  SMASH_HD void operator()(int bodyIndex) const {
    const BodyData& b = p.bodies[bodyIndex];
    for (int k = 0; k < p.colliderCount; ++k)
      p.bodyNear[bodyIndex * p.colliderCount + k] =
          !b.asleep && maySweepInto(p.colliders[k], p.bodiesStart[bodyIndex], b, p.shapes[b.shape], p.contactMargin) ? 1 : 0;
  }
};

// The wide gathers run as two kernels each: the plain one takes the colliders (or pair sides)
// a body cannot have swept into this step (maySweep false: by far the most), the "Swept" one the
// others. Each count and each slot is written by exactly one of them, so the result is the
// single pass's to the bit; the plain kernel keeps its 56 registers (with the swept sample in the
// same kernel, 80–128: kernels/gpu_budget.txt). The collider contacts of a body with a swept
// collider are written by SolveColliderContacts' gather, as for a body past its capacity.

/// Whether collider k is the swept kernel's (Swept) or the plain one's, for the body of `range`.
SMASH_HD bool sweptCollider(const StepParams& p, int body, int k) {
  const BodyData& b = p.bodies[body];
  return maySweep(travelOf(p.bodiesStart[body], b, p.shapes[b.shape].radius), colliderThickness(p.colliders[k]));
}

/// Per chunk: how many of its particles are contacts with each collider (the scan of these
/// counts places every contact). Over lanes (CUDA: a warp a chunk, a lane a particle, so that
/// neighbouring lanes load neighbouring particles; the count a ballot's).
template <bool Swept, class Lanes>
SMASH_HD void chunkContactCounts(const StepParams& p, int c, const Lanes& lanes) {
  const ChunkRange range = chunkRange(p, c);
  const BodyData& b = p.bodies[range.body];
  const Float4* rest = p.rest + p.shapes[b.shape].restOffset;
  for (int k = 0; k < p.colliderCount; ++k) {
    if (sweptCollider(p, range.body, k) != Swept) continue;
    int count = 0;
    if (p.bodyNear[range.body * p.colliderCount + k])
      count = lanes.template compactInOrder<int>(
          range.end - range.first,
          [&](int j, int&) {
            const int i = range.first + j;
            const V3 x1 = b.centre + leverArm(b, rest, i);
            SdfSample<float> s;
            if constexpr (Swept)
              s = sweptColliderAt(p.colliders + k, rest, p.bodiesStart + range.body, i - b.particleOffset, x1);
            else
              s = sdfCollider(p.colliders[k], x1);
            return s.phi < p.contactMargin;
          },
          [](int, int, int) {});
    if (lanes.leader()) p.chunkContactCount[chunkCountIndex(p, range.body, k, c)] = count;
  }
}
struct ChunkContactCounts {
  StepParams p;
  template <class Lanes>
  SMASH_HD void operator()(int c, const Lanes& lanes) const { chunkContactCounts<false>(p, c, lanes); }
};
struct SweptChunkContactCounts {
  StepParams p;
  template <class Lanes>
  SMASH_HD void operator()(int c, const Lanes& lanes) const { chunkContactCounts<true>(p, c, lanes); }
};

/// Per chunk: writes its contacts into its body's slots at the scanned positions (those past the
/// body's capacity are left to SolveColliderContacts). A body with a collider it may have swept
/// into is gathered again whole by SolveColliderContacts (as one past its capacity), so this
/// kernel never runs the swept sample. Over lanes (CUDA: a warp a chunk, a lane a particle, its
/// slot the ballot's rank: the plain loop's slots).
struct ChunkContactsScatter {
  StepParams p;
  struct Found {
    V3 r;
    SdfSample<float> s;
  };
  template <class Lanes>
  SMASH_HD void operator()(int c, const Lanes& lanes) const {
    const ChunkRange range = chunkRange(p, c);
    const BodyData& b = p.bodies[range.body];
    const Float4* rest = p.rest + p.shapes[b.shape].restOffset;
    const int base = p.chunkContactOffset[p.colliderCount * p.bodyFirstChunk[range.body]];
    ContactSlot* slots = p.contacts + static_cast<long long>(range.body) * p.contactCapacity;
    for (int k = 0; k < p.colliderCount; ++k) {
      const int at = chunkCountIndex(p, range.body, k, c);
      if (p.chunkContactCount[at] == 0 || sweptCollider(p, range.body, k)) continue;
      const int slot = p.chunkContactOffset[at] - base;
      if (slot >= p.contactCapacity) continue;
      lanes.template compactInOrder<Found>(
          range.end - range.first,
          [&](int j, Found& f) {
            f.r = leverArm(b, rest, range.first + j);
            f.s = sdfCollider(p.colliders[k], b.centre + f.r);
            return f.s.phi < p.contactMargin;
          },
          [&](int j, int rank, const Found& f) {
            if (slot + rank < p.contactCapacity)
              slots[slot + rank] = colliderContact(f.r, range.first + j - b.particleOffset, k, f.s);
          });
    }
  }
};

SMASH_HD int touchingPairsOf(const StepParams& p, int b);

/// Per body, after the scatter: a body with more contacts than its capacity, or with a collider it
/// may have swept into, gathers again the way resolveBodyContacts does (keep the deepest, in its
/// order: the chunks' order when they fit) and counts the rest as overflow; then the collider
/// contact manifold (colliderManifold) and the count to solve. A kernel of its own, so that the
/// solve's registers do not carry the sampling's (in one kernel: 128 registers and 636 B of
/// spills, kernels/gpu_budget.txt). With body contacts (PrepareBodies, wide), only a body in no
/// touching pair takes the manifold: a body in a pile keeps every collider contact.
struct ColliderManifold {
  StepParams p;
  SMASH_HD void operator()(int bodyIndex) const {
    const BodyData b = p.bodies[bodyIndex];
    const int total = p.chunkContactOffset[p.colliderCount * p.bodyFirstChunk[bodyIndex + 1]] -
                      p.chunkContactOffset[p.colliderCount * p.bodyFirstChunk[bodyIndex]];
    ContactSlot* slots = p.contacts + static_cast<long long>(bodyIndex) * p.contactCapacity;
    int count = total;
    bool swept = false;  // a collider it may have swept into: ChunkContactsScatter left it out
    for (int k = 0; k < p.colliderCount; ++k)
      swept = swept || (p.bodyNear[bodyIndex * p.colliderCount + k] && sweptCollider(p, bodyIndex, k));
    if (total > p.contactCapacity || swept) {
      long long overflow = 0;
      count = 0;
      gatherContacts(p, p.bodiesStart[bodyIndex], b, slots, count, overflow);
      p.contactOverflow[bodyIndex] += overflow;
    }
    const bool alone = !p.bodyContacts || touchingPairsOf(p, bodyIndex) == 0;
    p.colliderContactCount[bodyIndex] = alone ? colliderManifold(p, b, slots, count) : count;
  }
};

/// pushDone of a body armed for the wide push-out that sweeps a collider (pushSweepsAny): its
/// passes are pushOut's, in its own thread (PushOutSweptBodies), and the wide passes skip it.
constexpr int kPushSwept = 2;

/// Arms the wide push-out (ChunkDeepest, PushOutApply) for body b at its pose now: `push` false
/// leaves it out of this round of passes. `lone`: a body in no touching pair, whose push-out's
/// work LimitPushWork bounds after the passes (resolveBodyContacts' limitLonePushWork). A body that
/// sweeps a collider (pushSweepsAny: rare — it moved half a thin collider's thickness this step)
/// is left to PushOutSweptBodies.
SMASH_HD void armPushOut(const StepParams& p, int bodyIndex, const BodyData& b, bool push, bool lone = false) {
  p.pushFrom[bodyIndex] = Float4(b.centre, lone ? 1.0f : 0.0f);
  p.pushPoint[bodyIndex] = -1;
  p.pushMost[bodyIndex] = 0.0f;
  p.pushMoved[bodyIndex] = 0;
  const bool swept = push && pushSweepsAny(p, p.bodiesStart[bodyIndex], b);
  p.pushDone[bodyIndex] = !push ? 1 : swept ? kPushSwept : 0;
  p.pushGate[bodyIndex] = push && !swept && mayTouch(p.colliders[0], b, p.shapes[b.shape], 0.0f) ? 1 : 0;
}

/// Per body, before the wide passes: the push-out of a body armed as swept (kPushSwept), pushOut's
/// passes in its thread (out of line: pushOutOf), its deepest push's particle kept for
/// LimitPushWork; then done. Every other body returns at once.
struct PushOutSweptBodies {
  StepParams p;
  SMASH_HD void operator()(int bodyIndex) const {
    if (p.pushDone[bodyIndex] != kPushSwept) return;
    BodyData b = p.bodies[bodyIndex];
    p.pushPoint[bodyIndex] = pushOut(p, p.bodiesStart[bodyIndex], b);
    p.bodies[bodyIndex] = b;
    p.pushDone[bodyIndex] = 1;
  }
};

/// After armPushOut of a lone body whose collider contacts were solved: the velocities before the
/// solve (`fromV`, `fromW`; ω turned with the pose from `before` to b's), for LimitPushWork's
/// limitLonePushWork as resolveBodyContacts keeps them.
SMASH_HD void keepSolvedFrom(const StepParams& p, int bodyIndex, const BodyData& b, const V3& fromV, const V3& fromW,
                             const M3& before) {
  p.pushFrom[bodyIndex].w = 2.0f;
  p.pushSolvedFrom[2 * bodyIndex] = Float4(fromV, 0.0f);
  p.pushSolvedFrom[2 * bodyIndex + 1] = Float4(b.rotation * (glm::transpose(before) * fromW), 0.0f);
}

/// Per body, over the system's lanes (math/lanes.h: a warp on CUDA, one thread in order on a
/// CPU): sequential impulses over its contacts (ColliderManifold's). Then arms the first push-out
/// pass.
struct SolveColliderContacts {
  StepParams p;
  template <class Lanes>
  SMASH_HD void operator()(int bodyIndex, const Lanes& lanes) const {
    BodyData b = p.bodies[bodyIndex];
    ContactSlot* slots = p.contacts + static_cast<long long>(bodyIndex) * p.contactCapacity;
    const int count = p.colliderContactCount[bodyIndex];
    const V3 solvedFromV = b.velocity, solvedFromW = b.angularVelocity;
    const M3 before = b.rotation;
    if (count > 0) solveColliderContacts<true>(p, bodyIndex, p.bodiesStart[bodyIndex], b, slots, count, true, lanes);
    if (!lanes.leader()) return;
    p.bodies[bodyIndex] = b;
    armPushOut(p, bodyIndex, b, !b.asleep, !b.asleep);  // a sleeping body is not pushed
    if (count > 0 && !b.asleep) keepSolvedFrom(p, bodyIndex, b, solvedFromV, solvedFromW, before);
  }
};

/// Push-out against collider k, part 1, per chunk: its deepest point (−φ, the first on ties) and
/// normal, as pushOut finds it; nothing when its body is not tested against k in this pass
/// (pushOut's mayTouch gate, or the body is done).
///
/// Over lanes (CUDA: a warp a chunk, a lane a particle; math/lanes.h firstLargestOf: the plain
/// loop's first deepest, to the bit).
struct ChunkDeepest {
  StepParams p;
  int collider;
  template <class Lanes>
  SMASH_HD void operator()(int c, const Lanes& lanes) const {
    // The gate first: a gated-off body's data is not read (PushOutApply reads no chunk of it).
    if (!p.pushGate[p.particleBody[p.chunkFirst[c]]]) return;
    const ChunkRange range = chunkRange(p, c);
    const BodyData& b = p.bodies[range.body];
    const Float4* rest = p.rest + p.shapes[b.shape].restOffset;
    float depth = 0.0f;
    V3 normal(0.0f);
    const int winner = lanes.firstLargestOf(range.end - range.first, depth, normal, [&](int k, V3& gradient) {
      const SdfSample<float> s =
          sdfCollider(p.colliders[collider], b.centre + leverArm(b, rest, range.first + k));
      gradient = s.gradient;
      return -s.phi;
    });
    if (!lanes.leader()) return;
    p.chunkDeepest[c] = Float4(normal, depth);
    if (depth > 0.0f) p.chunkDeepestAt[c] = range.first + winner - b.particleOffset;
  }
};

/// Part 2, per body: the deepest over its chunks in order moves the body out along its normal;
/// after the last collider of a pass, a body that did not move is done (pushOut's passes stop);
/// arms the next collider's gate.
///
/// Over lanes (CUDA: a warp a body, its chunks' deepest points read 32 at a time; firstLargestOf:
/// the plain loop's first deepest, to the bit); the leader stores.
struct PushOutApply {
  StepParams p;
  int collider;
  template <class Lanes>
  SMASH_HD void operator()(int bodyIndex, const Lanes& lanes) const {
    // A body that is done (or not armed) stays so: its gate and moved flag are 0 already, and its
    // data is not read (most bodies, most passes).
    if (p.pushDone[bodyIndex]) return;
    float depth = 0.0f;
    V3 normal(0.0f);
    int chunk = -1;
    if (p.pushGate[bodyIndex]) {
      const int first = p.bodyFirstChunk[bodyIndex];
      chunk = first + lanes.firstLargestOf(p.bodyFirstChunk[bodyIndex + 1] - first, depth, normal, [&](int k, V3& n) {
        const Float4 d = load4(p.chunkDeepest[first + k]);
        n = xyz(d);
        return d.w;
      });
    }
    lanes.sync();  // every lane has read pushDone and pushGate before the leader stores into them
    if (!lanes.leader()) return;
    BodyData b = p.bodies[bodyIndex];
    if (depth > 0) {
      b.centre += depth * normal;
      p.bodies[bodyIndex] = b;
      p.pushMoved[bodyIndex] = 1;
      if (depth > p.pushMost[bodyIndex]) {  // the deepest push's particle (pushOutOfColliders')
        p.pushMost[bodyIndex] = depth;
        p.pushPoint[bodyIndex] = p.chunkDeepestAt[chunk];
      }
    }
    int next = collider + 1;
    if (next == p.colliderCount) {
      next = 0;
      if (!p.pushMoved[bodyIndex]) p.pushDone[bodyIndex] = 1;
      p.pushMoved[bodyIndex] = 0;
    }
    p.pushGate[bodyIndex] =
        !p.pushDone[bodyIndex] && mayTouch(p.colliders[next], b, p.shapes[b.shape], 0.0f) ? 1 : 0;
  }
};

/// The first launch of a step (one thread): the device's step index, for the watchdog.
struct AdvanceStep {
  StepParams p;
  SMASH_HD void operator()(int) const { ++*p.step; }
};

/// The watchdog at the end of a body's step: record the first incident of each body; with the
/// clamp policy repair the state (a non-finite body is frozen at `before`, its pose at the start).
SMASH_HD void watchBody(const StepParams& p, int bodyIndex, const BodyData& before, BodyData& b) {
  const float radius = p.shapes[b.shape].radius;
  const Incident incident = checkBody(b.centre, b.rotation, b.velocity, b.angularVelocity, radius,
                                      p.worldBound, p.maxSpeed);
  if (incident == Incident::None) return;
  if (p.incidentStep[bodyIndex] < 0) {
    p.incidentStep[bodyIndex] = *p.step;
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
// Body–body contact (physics.md §6–7), the twin of ReferenceWorld::resolveAllContacts: every body is
// at its predicted pose; broad phase, narrow phase, one solve over all pairs and colliders by
// mass splitting with warm starting, pose correction and push-out. Each functor is one pass over
// bodies or pairs; device_world.inl strings them together.

/// h (|v| + |ω| r): how far the body's points can move in a step (speculative contact margin).
SMASH_HD float speculativeOf(const StepParams& p, const BodyData& b) {
  return p.h * (glm::length(b.velocity) + glm::length(b.angularVelocity) * p.shapes[b.shape].radius);
}

/// No collider within the body's reach this step (margin and a step's travel), and no other body
/// that could touch it (scenes with body contacts are left alone: a pair is found only after the
/// prediction): no impulse or force reaches it, so its L is its own and its rotation's energy is
/// held from step to step (math/rotation.h keepRotationEnergy, which keeps the energy of every
/// step's start pose in any case).
SMASH_HD bool awayFromColliders(const StepParams& p, const BodyData& b) {
  if (p.bodyContacts) return false;
  const float reach = p.contactMargin + speculativeOf(p, b);
  for (int k = 0; k < p.colliderCount; ++k)
    if (mayTouch(p.colliders[k], b, p.shapes[b.shape], reach)) return false;
  return true;
}

/// The angular momentum a free body's particles carry into the match (awayFromColliders: no
/// impulse or penalty force reaches them): the rigid field of its pose, L = I(R) ω, scaled by the
/// linear damping their velocities get (gravity adds Σ m ρ × h g = 0).
SMASH_HD V3 freeMomentum(const StepParams& p, const BodyData& b, const ShapeData& shape) {
  return p.linearDamping * momentumAt(b.rotation, b.angularVelocity, shape.inertia);
}

SMASH_HD float reachOf(const StepParams& p, const BodyData& b) {
  return p.shapes[b.shape].radius + p.contactMargin + speculativeOf(p, b);
}

// Broad phase: a uniform grid of cells of edge p.cellSize (twice the largest bounding radius
// plus the margin), hashed into 2^k buckets with 32-bit keys. A pair (i, j) of bodies whose
// bounding spheres (radius + margin + a step's travel: reachOf) overlap has one owner: the body of
// the larger reach (the smaller index on a tie). Since |c_i − c_j| ≤ r_i + r_j ≤ 2 r_owner, the
// owner finds the pair among the bodies whose centres lie in the cells its sphere of radius
// 2 r_owner touches: each body walks only those cells (27 for a body at rest). Pairs are counted
// per owner, scanned, and written by their owners in body order up to the capacity; the owner
// that straddles the capacity keeps its partners of the smallest index. The kept set does not
// depend on the order of the walk, so the reference (src/reference) keeps exactly the same pairs.

/// The integer cell of a point (clamped so that the conversion is defined far away or for a
/// non-finite centre, which the watchdog reports).
SMASH_HD int cellCoordinate(float x, float cell) {
  const float c = floorf(x / cell);
  if (!(c > -1048576.0f)) return -1048576;  // also NaN
  if (c > 1048576.0f) return 1048576;
  return static_cast<int>(c);
}

SMASH_HD int cellBucket(int x, int y, int z, int mask) {
  const unsigned h = static_cast<unsigned>(x) * 73856093u ^ static_cast<unsigned>(y) * 19349663u ^
                     static_cast<unsigned>(z) * 83492791u;
  return static_cast<int>(h & static_cast<unsigned>(mask));
}

/// Body i owns its pair with j (see above).
SMASH_HD bool ownsPair(float reachI, int i, float reachJ, int j) {
  return reachI > reachJ || (reachI == reachJ && i < j);
}

/// Broad phase 1, per body: its bounding sphere, the bucket of its centre's cell (the sort key),
/// and the identity order.
struct GridKeys {
  StepParams p;
  SMASH_HD void operator()(int b) const {
    const BodyData& body = p.bodies[b];
    const V3 c = body.centre;
    p.spheres[b] = Float4(c, reachOf(p, body));
    const Cell cell{cellCoordinate(c.x, p.cellSize), cellCoordinate(c.y, p.cellSize), cellCoordinate(c.z, p.cellSize), 0};
    p.cells[b] = cell;
    p.cellKeys[b] = cellBucket(cell.x, cell.y, cell.z, p.cellMask);
    p.sortOrder[b] = b;
  }
};

/// A pair's key: its bodies a < b as (a << 32) | b, so keys sort as (a, b) and decode by a shift
/// and a mask (a·nbody + b sorted the same, but every decode was a 64-bit division — a
/// subroutine of some 70 instructions on the GPU, a 40-cycle divide on the CPU — and the pair
/// kernels decode their keys in every round). The state file keeps a·nbody + b (saveState).
SMASH_HD long long pairKeyOf(int a, int b) {
  return static_cast<long long>((static_cast<unsigned long long>(static_cast<unsigned>(a)) << 32) |
                                static_cast<unsigned>(b));
}
SMASH_HD int pairA(long long key) { return static_cast<int>(key >> 32); }
SMASH_HD int pairB(long long key) { return static_cast<int>(key & 0xffffffffLL); }

/// Broad phase 2, per body i (after the sort by bucket and the bucket starts): the pairs i owns,
/// found in the cells within 2 r_i of its centre. Counts them, or (`write`) writes their keys from
/// pairsOffset[i]; past the capacity, the smallest partners in order. A body so fast that its
/// cells outnumber the bodies walks the bodies instead. Thread s takes the body sorted s-th, so
/// neighbouring threads walk neighbouring cells (cached reads).
struct GridPairs {
  StepParams p;
  bool write;

  SMASH_HD void operator()(int s) const {
    const int i = p.sortOrder[s];
    const Float4 si = load4(p.spheres[i]);
    const V3 ci = xyz(si);
    const float ri = si.w;
    const long long first = write ? p.pairsOffset[i] : 0;
    const long long room = write ? p.pairCapacity - first : 0;
    const bool choose = write && first + p.pairsFound[i] > p.pairCapacity;  // straddles the capacity
    long long* keys = p.pairKeys + first;
    int found = 0;
    auto consider = [&](int j, const Float4& sj) {
      if (j == i) return;
      const float rj = sj.w;
      if (!ownsPair(ri, i, rj, j)) return;
      const float d = ri + rj;
      const V3 gap = ci - xyz(sj);
      if (!(glm::dot(gap, gap) <= d * d)) return;  // (a NaN centre pairs with nothing)
      const long long key = pairKeyOf(i < j ? i : j, i < j ? j : i);
      if (!write) {
        ++found;
      } else if (!choose) {
        keys[found++] = key;
      } else if (room > 0) {  // keep the `room` smallest partners, in order (a few: the rare overflow)
        // For a fixed owner i the key of (min(i, j), max(i, j)) grows with j: compare keys.
        long long at = found;
        if (found < room) {
          ++found;
        } else {
          if (!(key < keys[room - 1])) return;
          at = room - 1;  // j displaces the largest kept
        }
        while (at > 0 && keys[at - 1] > key) {
          keys[at] = keys[at - 1];
          --at;
        }
        keys[at] = key;
      }
    };
    // The cells of the box c ± 2 r (a hair wider for the rounding of c ± 2 r).
    const float query = 2.0f * ri * 1.0001f + 1e-6f * p.cellSize;
    const int x0 = cellCoordinate(ci.x - query, p.cellSize), x1 = cellCoordinate(ci.x + query, p.cellSize);
    const int y0 = cellCoordinate(ci.y - query, p.cellSize), y1 = cellCoordinate(ci.y + query, p.cellSize);
    const int z0 = cellCoordinate(ci.z - query, p.cellSize), z1 = cellCoordinate(ci.z + query, p.cellSize);
    const double cells = (double(x1) - x0 + 1) * (double(y1) - y0 + 1) * (double(z1) - z0 + 1);
    // One loop for both walks (one call site of `consider`, so it inlines: no stack on the GPU):
    // the cells' buckets, or, for a body with more cells than there are bodies, every body once.
    const bool everyBody = !(cells <= double(p.bodyCount));
    const int xEnd = everyBody ? x0 : x1, yEnd = everyBody ? y0 : y1, zEnd = everyBody ? z0 : z1;
    for (int x = x0; x <= xEnd; ++x)
      for (int y = y0; y <= yEnd; ++y)
        for (int z = z0; z <= zEnd; ++z) {
          const int bucket = everyBody ? 0 : cellBucket(x, y, z, p.cellMask);
          const int begin = everyBody ? 0 : p.cellStart[bucket];
          const int end = everyBody ? p.bodyCount : p.cellStart[bucket + 1];
          for (int t = begin; t < end; ++t) {
            const int j = everyBody ? t : p.sortOrder[t];
            if (!everyBody) {
              // Buckets are shared by cells: only bodies of this very cell (each found once).
              const Cell cj = p.cells[j];
              if (cj.x != x || cj.y != y || cj.z != z) continue;
            }
            consider(j, load4(p.spheres[j]));
          }
        }
    if (!write) p.pairsFound[i] = found;
  }
};

/// This step's pairs (after CountPairs). The per-pair passes are launched over the pairs
/// provisioned (p.pairCapacity) and the threads past the count do nothing: the host never needs
/// the count to size a launch.
SMASH_HD int pairCountOf(const StepParams& p) { return static_cast<int>(p.pairTally[0]); }

/// Broad phase 3, one thread: this step's pair count from the scan, kept on the device (last
/// step's moves to [1]); the most found since the host looked and the pairs past the capacity.
struct CountPairs {
  StepParams p;
  SMASH_HD void operator()(int) const {
    const long long found = p.pairsOffset[p.bodyCount];
    const long long kept = found < p.pairCapacity ? found : p.pairCapacity;
    p.pairTally[1] = p.pairTally[0];
    p.pairTally[0] = kept;
    if (found > p.pairTally[2]) p.pairTally[2] = found;
    p.pairTally[3] += found - kept;
  }
};

/// Broad phase 4, per provisioned pair: the slots past the count get the largest key, so the
/// sort over all of them leaves this step's pairs first, in order.
struct PadPairKeys {
  StepParams p;
  SMASH_HD void operator()(int q) const {
    if (q >= pairCountOf(p)) p.pairKeys[q] = 0x7fffffffffffffffLL;
  }
};

/// The contact slots of pair q.
SMASH_HD PairContact<float>* slotsOf(const StepParams& p, int q) {
  return p.pairContacts + static_cast<long long>(q) * p.pairContactCapacity;
}

/// Both bodies of pair q sleep: the pair is not tested (math/sleep.h).
SMASH_HD bool bothAsleep(const StepParams& p, int q) {
  return p.bodies[pairA(p.pairKeys[q])].asleep && p.bodies[pairB(p.pairKeys[q])].asleep;
}

/// A pair of two sleeping bodies gets its manifold, empty, at once (PairContactsOf, PairManifold:
/// it has no points, and its manifold frame would cost a field sample): true when it did.
SMASH_HD bool emptyIfBothAsleep(const StepParams& p, int q) {
  if (!bothAsleep(p, q)) return false;
  p.pairContactCount[q] = 0;
  return true;
}

/// Narrow phase, one candidate: particle i of side `side` (0: a's particle in b's field, 1: b's in
/// a's; the normal points from b towards a). False when it is not within the margin.
/// The point is swept over the step (math/swept.h) from the bodies' poses at the step's start,
/// A0 and B0, so a point that went through a thin body is still found.
/// `CanSweep` false compiles the swept sample out (the plain narrow kernels).
template <bool CanSweep = true>
SMASH_HD bool pairContactAt(const StepParams& p, const BodyData& A, const BodyData& B, int a, int b, int side,
                            int i, float margin, bool swept, PairContact<float>& c) {
  const BodyData& self = side == 0 ? A : B;
  const BodyData& other = side == 0 ? B : A;
  const ShapeData& mine = p.shapes[self.shape];
  const ShapeData& theirs = p.shapes[other.shape];
  const float reach = theirs.radius + margin;
  const V3 r = xyz(p.rest[mine.restOffset + i]);
  const V3 x = self.centre + self.rotation * r;
  const V3 fromOther = x - other.centre;
  // The margin holds both bodies' travel this step, so a point that went through the other body
  // ends within it too.
  if (glm::dot(fromOther, fromOther) > reach * reach) return false;
  SdfSample<float> f;
  if (CanSweep && swept) {
    f = sweptPairAt(&theirs, p.bodiesStart + (side == 0 ? a : b), p.bodiesStart + (side == 0 ? b : a), &other, r, x);
  } else {
#if !defined(__CUDA_ARCH__)
    // φ alone first (sampleGridPhi: sampleGrid's φ to the bit, without the gradient and its
    // normalisation): in rain_1k 94% of the points within the other's bounding sphere are not
    // within the margin. Host only: in NarrowChunkRanks it took ptxas from 104 registers to 108.
    const V3 local = glm::transpose(other.rotation) * fromOther;
    if (!(sampleGridPhi(theirs.sdf, local) < margin)) return false;
    const SdfSample<float> s = sampleGrid(theirs.sdf, local);
    f = {s.phi, other.rotation * s.gradient};
#else
    f = sampleGridPlaced(theirs.sdf, other.centre, other.rotation, x);
#endif
  }
  if (!(f.phi < margin)) return false;
  c = PairContact<float>{};
  c.ra = x - A.centre;
  c.rb = x - B.centre;
  c.normal = (side == 0 ? 1.0f : -1.0f) * f.gradient;
  c.phi = f.phi;
  c.particle = i;
  c.feature = side;
  return true;
}

SMASH_HD float pairMargin(const StepParams& p, const BodyData& A, const BodyData& B) {
  return p.contactMargin + speculativeOf(p, A) + speculativeOf(p, B);
}

/// Whether side `side` of a pair may be swept (maySweep): a bound on how far its points moved in
/// the other body's frame, m + chord(other) (reach + m) with m = |Δc_self − Δc_other| +
/// chord(self) r_self, against the other body's thickness.
SMASH_HD float speculativeRn(const StepParams& p, const BodyData& x) {
  return mulRn(p.h, addRn(lengthRn(x.velocity), mulRn(lengthRn(x.angularVelocity), p.shapes[x.shape].radius)));
}
SMASH_HD bool pairSideSwept(const StepParams& p, const BodyData& A, const BodyData& B, const BodyData& A0,
                            const BodyData& B0, int side) {
  const BodyData& self = side == 0 ? A : B;
  const BodyData& other = side == 0 ? B : A;
  const BodyData& self0 = side == 0 ? A0 : B0;
  const BodyData& other0 = side == 0 ? B0 : A0;
  const ShapeData& theirs = p.shapes[other.shape];
  // Without contractions (mulRn, addRn): four kernels decide this and must agree. The margin is
  // the pair's, recomputed the same way.
  const float reach = addRn(theirs.radius, addRn(addRn(p.contactMargin, speculativeRn(p, A)), speculativeRn(p, B)));
  const float m = addRn(lengthRn(V3((self.centre - self0.centre) - (other.centre - other0.centre))),
                        mulRn(turnChord(self0.rotation, self.rotation), p.shapes[self.shape].radius));
  const float travel = addRn(m, mulRn(turnChord(other0.rotation, other.rotation), addRn(reach, m)));
  return maySweep(travel, theirs.thickness);
}

/// Last step's contacts of pair (a, b), by binary search over last step's sorted keys.
SMASH_HD int previousPair(const StepParams& p, long long key) {
  const int count = static_cast<int>(p.pairTally[1]);
  int lo = 0, hi = count;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (p.previousPairKeys[mid] < key) lo = mid + 1; else hi = mid;
  }
  return lo < count && p.previousPairKeys[lo] == key ? lo : -1;
}

/// The frame pair (A, B)'s manifold is ranked in (math/contact_solver.h, "Contact manifold"):
/// the smaller body's (A's on a tie; the reference decides the same way on the same float radii),
/// its axis nearest the other body's field gradient at its centre, the midpoint of the centres.
/// Poses and one field sample, so it moves as smoothly as the bodies do.
struct ManifoldFrame {
  M3 toFrame;  // the frame body's Rᵀ
  V3 origin;   // the quadrants' origin relative to A's centre: a point's offset is r_a − origin
  int axis;
  float radius;
};
SMASH_HD ManifoldFrame manifoldFrameOf(const StepParams& p, const BodyData& A, const BodyData& B) {
  const bool frameIsB = p.shapes[B.shape].radius < p.shapes[A.shape].radius;
  const BodyData& frame = frameIsB ? B : A;
  const BodyData& other = frameIsB ? A : B;
  ManifoldFrame f;
  f.toFrame = glm::transpose(frame.rotation);
  f.origin = 0.5f * (B.centre - A.centre);
  // The normal axis: the frame body's axis nearest the other body's field gradient at the frame
  // body's centre (the way out of the other body, towards the frame body: up for a box at the end
  // of a plank, where the line between the centres is nearly horizontal).
  const V3 away = sampleGridPlaced(p.shapes[other.shape].sdf, other.centre, other.rotation, frame.centre).gradient;
  f.axis = manifoldNormalAxis(V3(f.toFrame * away));
  f.radius = p.shapes[frame.shape].radius;
  return f;
}

/// The pair's normal (from b towards a) its manifold frame gives: the frame body's normal axis
/// (manifoldFrameOf), pointing the way out of the other body. The last resort of a manifold whose
/// every normal withinPushCone left undecided (settleDegenerateNormals).
SMASH_HD V3 frameNormalOf(const StepParams& p, const BodyData& A, const BodyData& B) {
  const bool frameIsB = p.shapes[B.shape].radius < p.shapes[A.shape].radius;
  const BodyData& frame = frameIsB ? B : A;
  const BodyData& other = frameIsB ? A : B;
  const V3 away = sampleGridPlaced(p.shapes[other.shape].sdf, other.centre, other.rotation, frame.centre).gradient;
  const V3 axis = frame.rotation[manifoldNormalAxis(V3(glm::transpose(frame.rotation) * away))];
  const V3 out = glm::dot(axis, away) < 0.0f ? -axis : axis;
  return frameIsB ? -out : out;
}

/// Ranks contact point c for the manifold.
SMASH_HD void rankManifoldPoint(const ManifoldFrame& f, const PairContact<float>& c, ManifoldKey (&best)[kManifoldCriteria]) {
  keepManifoldKeys(best, V3(f.toFrame * (c.ra - f.origin)), f.axis, c.phi, f.radius, c.feature, c.particle);
}

/// A manifold point's normal (from b towards a), found at particle i of side `side`'s body
/// `self`, kept within that particle's cone (math/contact.h withinPushCone, after the points are
/// ranked: the cone does not rank them). `undecided`: withinPushCone left it to the pair's other
/// points (settleDegenerateNormals).
/// A particle on a flat face of its body may take the other body's gradient where it came through
/// that body's surface (math/contact.h faceContactNormal): `other` is the pair's other body,
/// `point` the particle (world), `phi` its depth.
SMASH_HD V3 normalWithinCone(const StepParams& p, const BodyData& self, const BodyData& other, int side, int i,
                             const V3& normal, const V3& point, float phi, bool& undecided) {
  undecided = false;
  const int k = p.shapes[self.shape].restOffset + i;
  const Float4 cone = load4(p.pushCone[k]);
  if (!(cone.w >= -1.0f)) return normal;  // no cone: the gradient as it is (withinPushCone's answer)
  const float sign = side == 0 ? 1.0f : -1.0f;
  if (cone.w > 1.0f) {  // a flat face's particle
    // No deeper than half the other body's thickness: deeper, it may have gone past its middle,
    // and the swept sample (math/swept.h) has the say.
    if (!(-phi < 0.5f * p.shapes[other.shape].thickness)) return normal;
    const V3 inward = V3(self.rotation * xyz(cone));
    const V3 out = point + inward * glm::max(-phi, 0.0f);
    const V3 g2 = sampleGridPlaced(p.shapes[other.shape].sdf, other.centre, other.rotation, out).gradient;
    return sign * faceContactNormal(V3(sign * normal), g2);
  }
  // In the body's frame, where its cone is stored: the gradient turned there, the answer back.
  const V3 rays[3] = {xyz(load4(p.pushRays[3 * k])), xyz(load4(p.pushRays[3 * k + 1])), xyz(load4(p.pushRays[3 * k + 2]))};
  const V3 n = withinPushCone(V3(glm::transpose(self.rotation) * (sign * normal)), xyz(cone), cone.w, rays);
  undecided = n == V3(0.0f);
  return sign * V3(self.rotation * n);
}

/// Writes pair q's manifold from its criteria's winners `best`: the distinct winners (the
/// deepest first; if max_contacts_per_pair is below 8, those chosen for spread by chooseManifold
/// on their positions), then their contact points computed again — the same function on the same
/// inputs as when they were ranked.
SMASH_HD void writeManifold(const StepParams& p, int q, const ManifoldKey (&best)[kManifoldCriteria]) {
  const int a = pairA(p.pairKeys[q]), b = pairB(p.pairKeys[q]);
  const BodyData& A = p.bodies[a];
  const BodyData& B = p.bodies[b];
  ManifoldKey winners[kManifoldCriteria] = {};
  const int n = manifoldWinners(best, winners);
  V3 points[kManifoldCriteria];
  for (int j = 0; j < n; ++j) {
    const BodyData& self = manifoldSide(winners[j]) == 0 ? A : B;
    const V3 r = xyz(p.rest[p.shapes[self.shape].restOffset + manifoldParticle(winners[j])]);
    points[j] = (self.centre - A.centre) + self.rotation * r;
  }
  int order[kManifoldCriteria] = {};
  const int kept = chooseManifold(points, n, p.pairContactCapacity, order);
  const float margin = pairMargin(p, A, B);
  const bool swept[2] = {pairSideSwept(p, A, B, p.bodiesStart[a], p.bodiesStart[b], 0),
                         pairSideSwept(p, A, B, p.bodiesStart[a], p.bodiesStart[b], 1)};
  PairContact<float>* slots = slotsOf(p, q);
  int count = 0;
  unsigned undecided = 0u;  // settleDegenerateNormals' mask
  for (int j = 0; j < kept; ++j) {
    const ManifoldKey key = winners[order[j]];
    const int side = manifoldSide(key);
    // Found within the margin when ranked; computed again the same way it is again (nvcc may
    // contract two kernels' arithmetic differently: a point no longer within is left out).
    PairContact<float> c;
    if (!pairContactAt(p, A, B, a, b, side, manifoldParticle(key), margin, swept[side], c)) continue;
    bool open = false;
    c.normal = normalWithinCone(p, side == 0 ? A : B, side == 0 ? B : A, side, manifoldParticle(key), c.normal,
                                V3(A.centre + c.ra), c.phi, open);
    if (open) undecided |= 1u << count;
    slots[count++] = c;
  }
  settleDegenerateNormals(slots, undecided, count, [&] { return frameNormalOf(p, A, B); });
  p.pairContactCount[q] = count;
}

/// Whether a particle of cluster k of `self`'s shape may be a contact with `other` (pairContactAt
/// within `margin`, not swept): false when the cluster's bounding sphere (centre x_k, radius ρ) is
/// beyond the other's reach, or when φ_other(x_k) − L ρ ≥ margin, L a Lipschitz bound of the
/// other's field there (its interpolant's inside its node box, one more outside it: φ there is
/// the box point's value plus the distance to the box) — then no particle of the cluster is
/// within the margin, and pairContactAt would find none. `slack` covers float rounding (the
/// particle's world position is rounded at the bodies' coordinates). In rain_1k 6% of the points
/// the narrow phase sampled were contacts.
SMASH_HD bool clusterMayTouch(const StepParams& p, const BodyData& self, const BodyData& other, const ShapeData& theirs,
                              const ShapeClusters& mine, float theirLipschitz, int k, float margin) {
  const Float4 sphere = load4(p.clusterSpheres[mine.offset + k]);
  const float rho = sphere.w;
  const V3 fromOther = self.centre + self.rotation * xyz(sphere) - other.centre;
  const float slack = 1e-5f * (1.0f + largestCoordinate(self.centre) + largestCoordinate(other.centre) +
                                p.shapes[self.shape].radius + theirs.radius + rho);
  if (glm::length(fromOther) - rho - slack > theirs.radius + margin) return false;
  const GridSdfView& g = theirs.sdf;
  const V3 local = glm::transpose(other.rotation) * fromOther;
  const float phi = sampleGridPhi(g, local);
  const float reach = rho + slack;
  const V3 lower(g.originX, g.originY, g.originZ);
  const V3 upper = lower + g.cell * V3(float(g.nx - 1), float(g.ny - 1), float(g.nz - 1));
  const bool inBox = glm::all(glm::greaterThanEqual(local - reach, lower)) && glm::all(glm::lessThanEqual(local + reach, upper));
  const float lipschitz = theirLipschitz + (inBox ? 0.0f : 1.0f);
  return phi - lipschitz * reach - slack < margin;
}

/// Narrow phase of pair q in one thread (the per-body layout, pairs of more elements than 32-bit
/// indices, pairs whose island woke): every particle of a, then of b (on a CPU cluster by cluster,
/// those that cannot touch skipped), ranked for the manifold. Two sleeping bodies are not tested
/// (math/sleep.h).
struct PairContactsOf {
  StepParams p;
  SMASH_HD void operator()(int q) const {
    if (q >= pairCountOf(p) || emptyIfBothAsleep(p, q)) return;
    const int a = pairA(p.pairKeys[q]), b = pairB(p.pairKeys[q]);
    const BodyData& A = p.bodies[a];
    const BodyData& B = p.bodies[b];
    const ManifoldFrame frame = manifoldFrameOf(p, A, B);
    ManifoldKey best[kManifoldCriteria] = {};
    const float margin = pairMargin(p, A, B);
    for (int side = 0; side < 2; ++side) {
      const ShapeData& mine = p.shapes[(side == 0 ? A : B).shape];
      const bool swept = pairSideSwept(p, A, B, p.bodiesStart[a], p.bodiesStart[b], side);
      auto test = [&](int i) {
        PairContact<float> c;
        if (pairContactAt(p, A, B, a, b, side, i, margin, swept, c)) rankManifoldPoint(frame, c, best);
      };
#if !defined(__CUDA_ARCH__)
      // Cluster by cluster, skipping those that cannot touch (the manifold's ranking does not
      // depend on the order the points come in: the same manifold to the bit), and on x86-64 the
      // particles four at a time through pairContactAt's reach test, bounded (sse::reachCandidates).
      // Host only: on a GPU the loop took this kernel's stack from 240 to 368 B (the wide narrow
      // phase is CUDA's).
      const ShapeData& theirs = p.shapes[(side == 0 ? B : A).shape];
#if SMASH_SSE_BODY_LOOPS
      const BodyData& self = side == 0 ? A : B;
      const BodyData& other = side == 0 ? B : A;
      const Float4* rest = p.rest + mine.restOffset;
      const float reach = theirs.radius + margin;  // pairContactAt's
      const float slack =
          32.0f * FLT_EPSILON * (glm::length(self.centre) + glm::length(other.centre) + 2.0f * mine.radius + reach);
#endif
      if (!swept && theirs.sdf.values) {
        const ShapeClusters& clusters = p.shapeClusters[(side == 0 ? A : B).shape];
        const float lipschitz = p.shapeClusters[(side == 0 ? B : A).shape].sdfLipschitz;
        const int* order = p.clusterParticles + mine.restOffset;
        for (int k = 0, first = 0; k < clusters.count; ++k) {
          const int end = p.clusterEnd[clusters.offset + k];
          if (clusterMayTouch(p, side == 0 ? A : B, side == 0 ? B : A, theirs, clusters, lipschitz, k, margin)) {
#if SMASH_SSE_BODY_LOOPS
            const int* indices = order + first;
            sse::reachCandidates(self, other.centre, rest, indices, end - first, reach, slack,
                                 [&](int j) { test(indices[j]); });
#else
            for (int j = first; j < end; ++j) test(order[j]);
#endif
          }
          first = end;
        }
        continue;
      }
#if SMASH_SSE_BODY_LOOPS
      sse::reachCandidates(self, other.centre, rest, nullptr, mine.count, reach, slack, test);
      continue;
#endif
#endif
      for (int i = 0; i < mine.count; ++i) test(i);  // every particle (the swept sample has no cluster bound)
    }
    writeManifold(p, q, best);
  }
};

// Narrow phase, wide (the per-particle layout): one element per (pair, side, chunk of at most
// kMatchChunk particles) — element e is pair e / (2 K), side (e mod 2 K) / K, chunk e mod K, with
// K = p.narrowChunks the most chunks of any shape (elements past a body's chunks do nothing). Each
// ranks its points within the margin: its four deepest keys go to its own slots, its quadrant
// extremes are merged into the pair's by atomic maxima (integers: the result does not depend on
// the order). Then one thread per pair merges its elements' deepest (2 K lists of 4 keys, a
// segmented top-4) and writes the manifold. The keys are those PairContactsOf keeps, so the
// manifold is the same to the bit.

/// Element e's pair, side and first particle; false past the end of its body's particles.
SMASH_HD bool narrowElement(const StepParams& p, long long e, int& q, int& side, int& first, int& end) {
  const int k = p.narrowChunks;
  q = static_cast<int>(e / (2 * k));
  if (q >= pairCountOf(p)) return false;
  const int r = static_cast<int>(e % (2 * k));
  side = r / k;
  first = (r % k) * kMatchChunk;
  const BodyData& self = p.bodies[side == 0 ? pairA(p.pairKeys[q]) : pairB(p.pairKeys[q])];
  const int n = p.shapes[self.shape].count;
  end = first + kMatchChunk < n ? first + kMatchChunk : n;
  return first < n && !bothAsleep(p, q);
}

/// The larger of *at and value, stored by any number of threads at once: an atomic maximum of
/// integers (the same result in any order).
SMASH_HD void maxShared(ManifoldKey* at, ManifoldKey value) {
#if defined(__CUDA_ARCH__)
  atomicMax(at, value);
#else
  ManifoldKey current = __atomic_load_n(at, __ATOMIC_RELAXED);
  while (current < value &&
         !__atomic_compare_exchange_n(at, &current, value, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
#endif
}

/// Per element, before the ranking: no winners yet (the first element of a pair clears the
/// pair's extremes).
struct ClearManifoldKeys {
  StepParams p;
  SMASH_HD void operator()(int e) const {
    if (e / (2 * p.narrowChunks) >= pairCountOf(p)) return;
    for (int k = 0; k < kManifoldDeepest; ++k) p.elementDeepest[static_cast<long long>(e) * kManifoldDeepest + k] = 0;
    if (e % (2 * p.narrowChunks) == 0) {
      const long long q = e / (2 * p.narrowChunks);
      for (int k = 0; k < kManifoldCriteria - kManifoldDeepest; ++k)
        p.pairExtremes[q * (kManifoldCriteria - kManifoldDeepest) + k] = 0;
    }
  }
};

/// Per element: ranks its points; writes its four deepest, merges its extremes into the pair's.
/// Two kernels, as the collider gathers: the plain one takes the sides that cannot have swept
/// into the other body this step, the "Swept" one the others.
template <bool Swept>
SMASH_HD void narrowChunkRanks(const StepParams& p, int e) {
  int q, side, first, end;
  if (!narrowElement(p, e, q, side, first, end)) return;
  const int a = pairA(p.pairKeys[q]), b = pairB(p.pairKeys[q]);
  const BodyData& A = p.bodies[a];
  const BodyData& B = p.bodies[b];
  const float margin = pairMargin(p, A, B);
  if (pairSideSwept(p, A, B, p.bodiesStart[a], p.bodiesStart[b], side) != Swept) return;
  const ManifoldFrame frame = manifoldFrameOf(p, A, B);
  ManifoldKey best[kManifoldCriteria] = {};
  bool any = false;
  for (int i = first; i < end; ++i) {
    PairContact<float> c;
    if (pairContactAt<Swept>(p, A, B, a, b, side, i, margin, Swept, c)) {
      rankManifoldPoint(frame, c, best);
      any = true;
    }
  }
  if (!any) return;
  for (int k = 0; k < kManifoldDeepest; ++k) p.elementDeepest[static_cast<long long>(e) * kManifoldDeepest + k] = best[k];
  ManifoldKey* extremes = p.pairExtremes + static_cast<long long>(q) * (kManifoldCriteria - kManifoldDeepest);
  for (int k = kManifoldDeepest; k < kManifoldCriteria; ++k)
    if (best[k]) maxShared(extremes + (k - kManifoldDeepest), best[k]);
}
struct NarrowChunkRanks {
  StepParams p;
  SMASH_HD void operator()(int e) const { narrowChunkRanks<false>(p, e); }
};
struct SweptNarrowChunkRanks {
  StepParams p;
  SMASH_HD void operator()(int e) const { narrowChunkRanks<true>(p, e); }
};

/// Per pair, after the elements: the manifold from the merged keys.
struct PairManifold {
  StepParams p;
  SMASH_HD void operator()(int q) const {
    if (q >= pairCountOf(p) || emptyIfBothAsleep(p, q)) return;  // (narrowElement ranked nothing)
    ManifoldKey best[kManifoldCriteria] = {};
    const long long elements = 2LL * p.narrowChunks, first = q * elements;
    for (long long e = first; e < first + elements; ++e)
      for (int k = 0; k < kManifoldDeepest && p.elementDeepest[e * kManifoldDeepest + k] != 0; ++k)
        insertDeepest(best, p.elementDeepest[e * kManifoldDeepest + k]);
    for (int k = kManifoldDeepest; k < kManifoldCriteria; ++k)
      best[k] = p.pairExtremes[static_cast<long long>(q) * (kManifoldCriteria - kManifoldDeepest) + (k - kManifoldDeepest)];
    writeManifold(p, q, best);
  }
};

/// Two incidence records per pair, (a, q) and (b, q), sorted by body afterwards; a slot past
/// the pairs gets the body count, so it sorts after every body's records.
struct PairIncidences {
  StepParams p;
  SMASH_HD void operator()(int q) const {
    const bool pair = q < pairCountOf(p);
    p.incidenceBody[2 * q] = pair ? pairA(p.pairKeys[q]) : p.bodyCount;
    p.incidenceBody[2 * q + 1] = pair ? pairB(p.pairKeys[q]) : p.bodyCount;
    p.incidencePair[2 * q] = q;
    p.incidencePair[2 * q + 1] = q;
  }
};

SMASH_HD ContactMaterial<float> pairMaterial(const StepParams& p, const BodyData& a, const BodyData& b) {
  return mixMaterials(a.restitution, a.friction, b.restitution, b.friction, p.restitutionThreshold);
}

SMASH_HD int touchingPairsOf(const StepParams& p, int b) {
  int n = 0;
  for (int k = p.incidenceStart[b]; k < p.incidenceStart[b + 1]; ++k)
    n += p.pairContactCount[p.incidencePair[k]] > 0 ? 1 : 0;
  return n;
}

/// Per body: a body in no touching pair takes the single-body contact path (as without body
/// contacts); a body in a pair gathers its collider contacts as one more pair against a static
/// body, sets its split count, targets and warm start.
///
/// Wide (PrepareBodiesWide: the per-particle strategy with sequential impulses after the move): the collider
/// contacts were gathered by chunk before this pass (the wide gather, ColliderManifold's count in
/// colliderContactCount), and the push-out is left to the wide passes — armed here for a body in
/// no touching pair, by FinishPairBodiesWide for a body in one. The same contacts in the same order,
/// so the same result to the bit as the per-body form.
template <bool Wide>
SMASH_HD void prepareBody(const StepParams& p, int b) {
  BodyData body = p.bodies[b];
  p.bodiesPredicted[b] = body;
  p.onBody[b] = PairImpulse<float>{};
  const int gathered = Wide ? p.colliderContactCount[b] : 0;
  p.colliderContactCount[b] = 0;
  if constexpr (Wide) armPushOut(p, b, body, false);
  if (body.asleep) {  // static for its partners, nothing of its own to solve
    p.split[b] = 0;
    return;
  }
  const int touching = touchingPairsOf(p, b);
  if (touching == 0) {
    p.split[b] = 0;
    if constexpr (Wide) {  // resolveBodyContacts from the wide gather
      if (p.colliderContacts) {
        if (gathered > 0)
          solveColliderContacts<false>(p, b, p.bodiesStart[b], body,
                                       p.contacts + static_cast<long long>(b) * p.contactCapacity, gathered, true);
        p.bodies[b] = body;
        armPushOut(p, b, body, true, true);
        if (gathered > 0) {  // the velocities before the solve: bodiesPredicted, stored above
          const BodyData& from = p.bodiesPredicted[b];
          keepSolvedFrom(p, b, body, from.velocity, from.angularVelocity, from.rotation);
        }
      }
    } else if (p.colliderContacts) {
      resolveBodyContacts<false>(p, b, p.bodiesStart[b], body, true);
      p.bodies[b] = body;
    }
    return;
  }
  p.invInertia[b] = worldInverseInertia(p, body);  // for the solve (pairSolverBody)
  int count = gathered;
  if (p.colliderContacts) {
    ContactSlot* slots = p.contacts + static_cast<long long>(b) * p.contactCapacity;
    if constexpr (!Wide) {
      long long overflow = 0;
      gatherContacts(p, p.bodiesStart[b], body, slots, count, overflow);
      if (overflow) p.contactOverflow[b] += overflow;
    }
    // No manifold here (colliderManifold): a body in a pile keeps every collider contact.
    const SolverBody<float> fixed;
    const ContactMaterial<float> mat = bodyMaterial(p, body);
    contactTargets(pairStartBody(p, b, p.bodiesStart[b], body), fixed, pairSolverBody(p, b, body, 1), fixed, slots,
                   count, mat, p.h, true);
    if (count > 0)  // (without colliders there is no last step's buffer)
      warmStartContacts(slots, count, p.previousContacts + static_cast<long long>(b) * p.contactCapacity,
                        p.previousColliderCount[b], mat.friction, p.onBody[b].linear, p.onBody[b].angular);
    prepareColliderResponses(p, b, body, touching + (count > 0 ? 1 : 0), slots, count);
  }
  p.colliderContactCount[b] = count;
  p.split[b] = touching + (count > 0 ? 1 : 0);
}
/// At the step's end, per body: the collider contacts it solved this step (colliderContactCount
/// of them, with the impulses the solve left in them) become the next step's warm start, and the
/// count is cleared for the next step's solve to set (a body that solves none keeps none).
/// Over lanes (CUDA: a warp a body, a contact to a lane; one thread a body copied up to 84
/// contacts of 96 B in a row, 68 µs a step for 1,024 resting bunnies on an H200, run 28).
struct KeepContacts {
  StepParams p;
  template <class Lanes>
  SMASH_HD void operator()(int b, const Lanes& lanes) const {
    const int count = p.colliderContactCount[b];
    const ContactSlot* from = p.contacts + static_cast<long long>(b) * p.contactCapacity;
    KeptContact* to = p.previousContacts + static_cast<long long>(b) * p.contactCapacity;
    lanes.forEach(count, [&](int k) { to[k] = impulseOf(from[k]); });  // every lane has read count
    if (!lanes.leader()) return;
    p.previousColliderCount[b] = count;
    p.colliderContactCount[b] = 0;
  }
};

struct PrepareBodies {
  StepParams p;
  SMASH_HD void operator()(int b) const { prepareBody<false>(p, b); }
};
struct PrepareBodiesWide {  // the collider contacts from the wide gather, the push-out armed
  StepParams p;
  SMASH_HD void operator()(int b) const { prepareBody<true>(p, b); }
};

/// Per pair, before the iterations: targets from the velocities before the solve, warm start.
/// Clears pair q's impulses for a round; returns its contact count (0: nothing to solve).
SMASH_HD int beginPairRound(const StepParams& p, int q) {
  if (q >= pairCountOf(p)) return 0;
  p.onA[q] = PairImpulse<float>{};
  p.onB[q] = PairImpulse<float>{};
  return p.pairContactCount[q];
}

struct PreparePairs {
  StepParams p;
  SMASH_HD void operator()(int q) const {
    const int count = beginPairRound(p, q);
    if (count == 0) return;
    const BodyData& A = p.bodies[pairA(p.pairKeys[q])];
    const BodyData& B = p.bodies[pairB(p.pairKeys[q])];
    PairContact<float>* c = slotsOf(p, q);
    const ContactMaterial<float> mat = pairMaterial(p, A, B);
    const int a = pairA(p.pairKeys[q]), b = pairB(p.pairKeys[q]);
    contactTargets(pairStartBody(p, a, p.bodiesStart[a], A), pairStartBody(p, b, p.bodiesStart[b], B),
                   pairSolverBody(p, a, A, 1), pairSolverBody(p, b, B, 1), c, count, mat, p.h, true);
    preparePairResponses(p, a, b, c, count);
    const int previous = previousPair(p, p.pairKeys[q]);
    if (previous < 0) return;
    const PairContact<float>* old =
        p.previousPairContacts + static_cast<long long>(previous) * p.pairContactCapacity;
    int cursor = 0;
    for (int k = 0; k < count; ++k) {
      const V3 j = warmStart(c[k], old, p.previousPairContactCount[previous], mat.friction, cursor);
      p.onA[q].linear += j;
      p.onA[q].angular += glm::cross(c[k].ra, j);
      p.onB[q].linear -= j;
      p.onB[q].angular -= glm::cross(c[k].rb, j);
    }
  }
};

/// One Jacobi round, part 1: every touching pair sweeps its contacts with split masses from the
/// velocities at the round's start. One pair slot to a thread (the GPU's kernel).
struct SweepPairContacts {
  StepParams p;
  SMASH_HD void operator()(int q) const {
    const int count = beginPairRound(p, q);
    if (count == 0) return;
    const int a = pairA(p.pairKeys[q]), b = pairB(p.pairKeys[q]);
    const BodyData& A = p.bodies[a];
    const BodyData& B = p.bodies[b];
    SolverBody<float> sa = pairSolverBody(p, a, A, p.split[a]), sb = pairSolverBody(p, b, B, p.split[b]);
    const float friction = pairMaterial(p, A, B).friction;
    for (int sweep = 0; sweep < p.pairSweeps; ++sweep)  // bounded by the scene (≤ 64), over ≤ 8 points
      pairSweep(sa, sb, slotsOf(p, q), count, friction, p.onA[q], p.onB[q]);
  }
};

#if SMASH_CONTACT_LANES
/// SweepPairContacts on x86-64 CPUs: a call takes kPairSpan pair slots and sweeps their touching
/// pairs four at a time, one to an SSE lane (math/contact_lanes.h: the same bits as one at a time;
/// a pile's rounds were ~40% of its step on one thread, a dependent chain per pair). Most slots
/// hold no touching pair (rain_1k: 1.4 in 4), so the lanes are packed from the span. A type of
/// its own (not an #if inside SweepPairContacts): nvcc's host pass and g++ would otherwise compile
/// two different bodies for one inline function.
struct SweepPairSpans {
  StepParams p;
  /// Pair slots kPairSpan × g … kPairSpan × (g + 1) − 1 (device_world.inl launchSpans).
  void operator()(int g) const;
};
constexpr int kPairSpan = 32;
using SweepPairKernel = SweepPairSpans;

/// Up to four pairs packed for lanes::pairSweeps (SweepPairSpans, SweepPairColorSpans): each
/// pair's bodies with their split masses (the Jacobi rounds) or true masses (the Gauss–Seidel
/// colours), their indices and the pair's contacts; sweep() sweeps them, the lanes past the
/// packed ones idle.
struct LanePairs {
  SolverBody<float> sa[4], sb[4];
  PairContact<float>* c[4];
  int count[4], pair[4], a[4], b[4];
  float friction[4];
  PairImpulse<float> onA[4], onB[4];
  int used = 0;
  /// Packs pair q (count n); returns whether all four lanes are full.
  bool add(const StepParams& p, int q, int n, bool trueMasses) {
    a[used] = pairA(p.pairKeys[q]);
    b[used] = pairB(p.pairKeys[q]);
    const BodyData& A = p.bodies[a[used]];
    const BodyData& B = p.bodies[b[used]];
    sa[used] = pairSolverBody(p, a[used], A, trueMasses ? 1 : p.split[a[used]]);
    sb[used] = pairSolverBody(p, b[used], B, trueMasses ? 1 : p.split[b[used]]);
    friction[used] = pairMaterial(p, A, B).friction;
    c[used] = slotsOf(p, q);
    count[used] = n;
    pair[used] = q;
    return ++used == 4;
  }
  /// The sweeps, the velocities after them to aOut, bOut where given.
  void sweep(const StepParams& p, SolverBody<float>* aOut = nullptr, SolverBody<float>* bOut = nullptr) {
    for (int l = used; l < 4; ++l) {  // idle lanes
      count[l] = 0;
      c[l] = nullptr;
      friction[l] = 0.0f;
      sa[l] = sb[l] = SolverBody<float>{};
    }
    for (int l = 0; l < 4; ++l) onA[l] = onB[l] = PairImpulse<float>{};
    lanes::pairSweeps(sa, sb, c, count, friction, p.pairSweeps, onA, onB, aOut, bOut);
  }
};

inline void SweepPairSpans::operator()(int g) const {
  LanePairs packed;
  auto sweep = [&] {
    packed.sweep(p);
    for (int l = 0; l < packed.used; ++l) {
      p.onA[packed.pair[l]] = packed.onA[l];
      p.onB[packed.pair[l]] = packed.onB[l];
    }
    packed.used = 0;
  };
  for (int q = kPairSpan * g; q < kPairSpan * (g + 1); ++q) {
    const int n = beginPairRound(p, q);
    if (n > 0 && packed.add(p, q, n, false)) sweep();
  }
  if (packed.used > 0) sweep();
}
#else
constexpr int kPairSpan = 1;
using SweepPairKernel = SweepPairContacts;
#endif

// Gauss–Seidel rounds (math/pair_colors.h): the colouring, then each round's colours one after
// another, the overflow pairs in order, and every body's collider contacts.

/// The colouring's buffers (not in StepParams: only these kernels read them, and every other
/// kernel would carry the pointers; PrepareBodies' stack grew by 64 B with them there).
struct PairColors {
  int* color = nullptr;        // (pairCapacity) colours as a pass starts
  int* next = nullptr;         // (pairCapacity) the other buffer
  int* tentative = nullptr;    // (pairCapacity) a pass's tentative colours
  int* key = nullptr;          // (pairCapacity) colours, sorted
  int* order = nullptr;        // (pairCapacity) the pair slot of each sorted colour
  int* start = nullptr;        // (kPairColors + 2) each colour's first position, the overflow's, the end
  long long* count = nullptr;  // (kPairColors + 1) each colour's size and the overflow's (a CPU launch's width)
};

/// Calls f(c, d, q') for every touching pair q' = (c, d) other than q that shares an awake body
/// with pair q = (a, b) (a sleeping body is static: pairs through it do not conflict).
template <class F>
SMASH_HD void forPairNeighbours(const StepParams& p, int q, int a, int b, const F& f) {
  const int ends[2] = {a, b};
  for (int e : ends) {
    if (p.bodies[e].asleep) continue;
    for (int k = p.incidenceStart[e]; k < p.incidenceStart[e + 1]; ++k) {
      const int r = p.incidencePair[k];
      if (r == q || p.pairContactCount[r] == 0) continue;
      f(pairA(p.pairKeys[r]), pairB(p.pairKeys[r]), r);
    }
  }
}

/// The colouring's seed: a touching pair uncoloured, any other slot not solved.
struct ColorSeed {
  StepParams p;
  PairColors colors;
  SMASH_HD void operator()(int q) const {
    colors.color[q] = q < pairCountOf(p) && p.pairContactCount[q] > 0 ? kUncolored : kNotSolved;
  }
};

/// A pass, part 1: an uncoloured pair's tentative colour (from `from`, as the pass starts).
struct ColorTentative {
  StepParams p;
  PairColors colors;
  const int* from;
  SMASH_HD void operator()(int q) const {
    const int now = from[q];
    if (now != kUncolored) {
      colors.tentative[q] = now;
      return;
    }
    const int a = pairA(p.pairKeys[q]), b = pairB(p.pairKeys[q]);
    colors.tentative[q] = tentativeColor([&](const auto& f) {
      forPairNeighbours(p, q, a, b, [&](int c, int d, int r) { f(c, d, from[r]); });
    });
  }
};

/// A pass, part 2: of two neighbours with the same new colour, the one that outranks keeps it.
struct ColorRepair {
  StepParams p;
  PairColors colors;
  const int* from;
  int* to;
  SMASH_HD void operator()(int q) const {
    const int now = from[q];
    if (now != kUncolored) {
      to[q] = now;
      return;
    }
    const int a = pairA(p.pairKeys[q]), b = pairB(p.pairKeys[q]);
    to[q] = repairedColor(a, b, colors.tentative[q], [&](const auto& f) {
      forPairNeighbours(p, q, a, b,
                        [&](int c, int d, int r) { f(c, d, colors.tentative[r], from[r] == kUncolored); });
    });
  }
};

/// Sort keys of the colouring: the colour, a pair still uncoloured swept with the overflow.
struct ColorKeys {
  PairColors colors;
  const int* colour;  // the last pass's
  SMASH_HD void operator()(int q) const {
    const int c = colour[q];
    colors.key[q] = c == kUncolored ? kOverflowColor : c;
    colors.order[q] = q;
  }
};

/// Each colour's size (and the overflow's), where a CPU launch reads its width.
struct ColorCounts {
  PairColors colors;
  SMASH_HD void operator()(int c) const {
    colors.count[c] = static_cast<long long>(colors.start[c + 1] - colors.start[c]);
  }
};

/// Gauss–Seidel over pair q: its pair_sweeps sweeps with the bodies' true masses from their
/// current velocities, written back (a sleeping body is static and keeps its zero velocities).
/// Over `lanes` (math/lanes.h): each sweep a scan over the pair's ≤ 8 points (pairSweep), every
/// lane holding both bodies; the leader writes them.
template <class Lanes = SerialLanes>
SMASH_HD void sweepPairInPlace(const StepParams& p, int q, const Lanes& lanes = Lanes{}) {
  const int count = p.pairContactCount[q];
  const int a = pairA(p.pairKeys[q]), b = pairB(p.pairKeys[q]);
  const BodyData& A = p.bodies[a];
  const BodyData& B = p.bodies[b];
  SolverBody<float> sa = pairSolverBody(p, a, A, 1), sb = pairSolverBody(p, b, B, 1);
  const float friction = pairMaterial(p, A, B).friction;
  PairImpulse<float> onA, onB;  // not needed: the velocities carry the impulses
  for (int sweep = 0; sweep < p.pairSweeps; ++sweep)  // bounded by the scene (≤ 64), over ≤ 8 points
    pairSweep(sa, sb, slotsOf(p, q), count, friction, onA, onB, lanes);
  lanes.sync();  // every lane has read the bodies before the leader stores into them
  if (!lanes.leader()) return;
  if (!A.asleep) {
    p.bodies[a].velocity = sa.v;
    p.bodies[a].angularVelocity = sa.w;
  }
  if (!B.asleep) {
    p.bodies[b].velocity = sb.v;
    p.bodies[b].angularVelocity = sb.w;
  }
}

/// One colour of a Gauss–Seidel round: its pairs share no awake body, one to an element (CUDA: a
/// warp, its lanes over the pair's points; device_world.inl launchLanes); element i sweeps the
/// colour's pairs i, i + stride, … (stride: the launch's width). A colour's touching pairs each
/// hold an awake body no other pair of the colour holds (two sleeping bodies have no contacts:
/// PairContactsOf), so a colour has at most as many pairs as there are bodies: a launch of
/// min(pair slots, bodies) elements sweeps each pair in its own (device_world.inl
/// gaussSeidelRounds), the loop only guarding that bound — except on CUDA past 16 warps an SM
/// (System::stridingWidth), where a warp sweeps several.
/// The pairs of a colour are independent, so who sweeps which changes no bit.
struct SweepPairColor {
  StepParams p;
  const int* start;
  const int* order;
  int color;
  int stride;
  template <class Lanes>
  SMASH_HD void operator()(int i, const Lanes& lanes) const {
    // The colour's bounds read again each time round: kept in registers across the sweep they
    // took the kernel to 8 B of stack and 16 B of spills (ptxas, sm_90).
    for (; i < start[color + 1] - start[color]; i += stride) sweepPairInPlace(p, order[start[color] + i], lanes);
  }
};

#if SMASH_CONTACT_LANES
/// SweepPairColor on x86-64 CPUs: a call takes kColorSpan of the colour's pairs and sweeps them
/// four at a time, one to an SSE lane (math/contact_lanes.h: the same bits as sweepPairInPlace one
/// pair at a time — the colour's pairs share no awake body, so no lane reads what another writes).
/// A type of its own, as SweepPairSpans.
struct SweepPairColorSpans {
  StepParams p;
  const int* start;
  const int* order;
  int color;
  /// The colour's pairs kColorSpan × g … kColorSpan × (g + 1) − 1 (device_world.inl launchSpans).
  void operator()(int g) const;
};
constexpr int kColorSpan = 16;

inline void SweepPairColorSpans::operator()(int g) const {
  const int first = start[color], end = start[color + 1];
  LanePairs packed;  // its impulses are not needed: the velocities carry them
  SolverBody<float> aOut[4], bOut[4];
  auto sweep = [&] {
    packed.sweep(p, aOut, bOut);
    for (int l = 0; l < packed.used; ++l) {  // as sweepPairInPlace: a sleeping body keeps its zeros
      const int a = packed.a[l], b = packed.b[l];
      if (!p.bodies[a].asleep) {
        p.bodies[a].velocity = aOut[l].v;
        p.bodies[a].angularVelocity = aOut[l].w;
      }
      if (!p.bodies[b].asleep) {
        p.bodies[b].velocity = bOut[l].v;
        p.bodies[b].angularVelocity = bOut[l].w;
      }
    }
    packed.used = 0;
  };
  const int from = first + kColorSpan * g, to = glm::min(first + kColorSpan * (g + 1), end);
  for (int i = from; i < to; ++i)
    if (packed.add(p, order[i], p.pairContactCount[order[i]], true)) sweep();
  if (packed.used > 0) sweep();
}
#endif

/// Between Gauss–Seidel and Jacobi rounds, per pair: the responses again, for the split masses.
struct PrepareSplitResponses {
  StepParams p;  // pairGaussSeidel off: roundSplit is the split
  SMASH_HD void operator()(int q) const {
    if (q >= pairCountOf(p) || p.pairContactCount[q] == 0) return;
    preparePairResponses(p, pairA(p.pairKeys[q]), pairB(p.pairKeys[q]), slotsOf(p, q), p.pairContactCount[q]);
  }
};
/// The same, per body in a pair, for its collider contacts.
struct PrepareSplitColliderResponses {
  StepParams p;
  SMASH_HD void operator()(int b) const {
    if (p.split[b] == 0 || p.colliderContactCount[b] == 0) return;
    prepareColliderResponses(p, b, p.bodies[b], p.split[b], p.contacts + static_cast<long long>(b) * p.contactCapacity,
                             p.colliderContactCount[b]);
  }
};

/// The overflow of a Gauss–Seidel round: its pairs one after another, in slot order (one thread).
struct SweepPairOverflow {
  StepParams p;
  const int* start;
  const int* order;
  SMASH_HD void operator()(int) const {
    for (int i = start[kOverflowColor]; i < start[kOverflowColor + 1]; ++i) sweepPairInPlace(p, order[i]);
  }
};

/// The end of a Gauss–Seidel round, per body in a pair: a sweep of its collider contacts with
/// its true mass from its current velocities.
struct SweepCollidersInPlace {
  StepParams p;
  SMASH_HD void operator()(int b) const {
    if (p.split[b] == 0 || p.colliderContactCount[b] == 0) return;
    const BodyData& body = p.bodies[b];
    SolverBody<float> self = pairSolverBody(p, b, body, 1);
    sweepColliderContacts(self, p.contacts + static_cast<long long>(b) * p.contactCapacity, p.colliderContactCount[b],
                          body.friction, static_cast<PairImpulse<float>*>(nullptr));
    p.bodies[b].velocity = self.v;
    p.bodies[b].angularVelocity = self.w;
  }
};

/// One Jacobi round, part 2, per body in a pair: (unless `applyOnly`) sweep its collider contacts
/// from the round's starting velocities, then apply the sum of its impulses with its true mass.
struct SweepCollidersAndApply {
  StepParams p;
  bool applyOnly;
  SMASH_HD void operator()(int b) const {
    if (p.split[b] == 0) return;
    const BodyData& body = p.bodies[b];  // only its velocities are written back
    if (!applyOnly) {
      p.onBody[b] = PairImpulse<float>{};
      if (p.colliderContactCount[b] > 0) {
        SolverBody<float> self = pairSolverBody(p, b, body, p.split[b]);
        sweepColliderContacts(self, p.contacts + static_cast<long long>(b) * p.contactCapacity,
                              p.colliderContactCount[b], body.friction, &p.onBody[b]);
      }
    }
    PairImpulse<float> sum = p.onBody[b];
    for (int k = p.incidenceStart[b]; k < p.incidenceStart[b + 1]; ++k) {
      const int q = p.incidencePair[k];
      if (p.pairContactCount[q] == 0) continue;
      const PairImpulse<float>& j = pairA(p.pairKeys[q]) == b ? p.onA[q] : p.onB[q];
      sum.linear += j.linear;
      sum.angular += j.angular;
    }
    const SolverBody<float> unsplit = pairSolverBody(p, b, body, 1);
    const V3 v = body.velocity + unsplit.invMass * sum.linear;
    const V3 w = body.angularVelocity + unsplit.invInertia * sum.angular;
    p.bodies[b].velocity = v;
    p.bodies[b].angularVelocity = w;
  }
};

// Shock propagation (math/contact_solver.h): levels, then one pass per level for velocities
// and, after FinishPairBodies, one per level for positions. Each pass writes only the bodies of
// its level and reads only those below, whose state is final.

SMASH_HD int partnerOf(const StepParams& p, int q, int b) {
  const int a = pairA(p.pairKeys[q]);
  return a == b ? pairB(p.pairKeys[q]) : a;
}

/// Body b rests on its partner in pair q (math/contact_solver.h, pairSupport).
SMASH_HD bool restsOn(const StepParams& p, int q, int b) {
  return p.pairSupport[q] == (pairA(p.pairKeys[q]) == b ? 1 : -1);
}

/// Pair q carries body b: b rests on its partner, which lies on a lower level.
SMASH_HD bool carries(const StepParams& p, const int* level, int q, int b) {
  return level[b] != kNoLevel && restsOn(p, q, b) && level[partnerOf(p, q, b)] < level[b];
}

/// Per pair: which body rests on the other (0 for a pair with no contacts).
struct PairSupports {
  StepParams p;
  SMASH_HD void operator()(int q) const {
    if (q >= pairCountOf(p)) return;
    p.pairSupport[q] = pairSupport(slotsOf(p, q), p.pairContactCount[q], p.up);
  }
};

/// Levels by relaxation: the seed pass puts bodies touching a collider on level 0, each further
/// pass (double-buffered, so the same on every backend) one more level: a body goes one above the
/// lowest of its touching partners.
struct ShockLevels {
  StepParams p;
  const int* from;
  int* to;
  SMASH_HD void operator()(int b) const {
    if (from == nullptr) {
      // A sleeping body carries like a collider (static); ShockVelocities leaves it alone.
      to[b] = p.bodies[b].asleep || (p.split[b] > 0 && restsOnCollider(p.contacts + static_cast<long long>(b) * p.contactCapacity,
                                                                       p.colliderContactCount[b], p.up))
                  ? 0
                  : kNoLevel;
      return;
    }
    int level = from[b];
    for (int k = p.incidenceStart[b]; k < p.incidenceStart[b + 1]; ++k) {
      const int q = p.incidencePair[k];
      if (p.pairContactCount[q] == 0 || !restsOn(p, q, b)) continue;
      const int below = from[partnerOf(p, q, b)];
      if (below != kNoLevel && below + 1 < level) level = below + 1;
    }
    to[b] = level;
  }
};

/// Velocities of the bodies on one level: against the colliders (level 0) or against the pairs
/// that carry them, whose bodies are static here. Over the system's lanes (math/lanes.h: a warp a
/// body on CUDA): the targets and responses one contact to a lane, each sweep a scan.
struct ShockVelocities {
  StepParams p;
  int level;
  template <class Lanes>
  SMASH_HD void operator()(int b, const Lanes& lanes) const {
    if (p.shockLevel[b] != level || p.bodies[b].asleep) return;
    BodyData body = p.bodies[b];
    SolverBody<float> self = pairSolverBody(p, b, body, 1);
    const SolverBody<float> before = self;
    PairImpulse<float> onSelf;
    // Non-penetration, and bounces only as far as the rounds achieved them (contact_solver.h,
    // shockTargets): this pass owns the body's collider contacts and the pairs that carry it (a
    // pair carries one of its bodies).
    // Their responses too, for the body alone (its carriers static: prepareResponse with no b).
    const SolverBody<float> wall;
    if (level == 0) {
      ContactSlot* own = p.contacts + static_cast<long long>(b) * p.contactCapacity;
      shockTargets(pairSolverBody(p, b, p.bodiesPredicted[b], 1), wall, self, wall, own, p.colliderContactCount[b], p.h,
                   true, lanes);
      prepareResponse<float>(self, nullptr, own, p.colliderContactCount[b], true, lanes);
    }
    for (int k = p.incidenceStart[b]; k < p.incidenceStart[b + 1]; ++k) {
      const int q = p.incidencePair[k];
      if (p.pairContactCount[q] == 0 || !carries(p, p.shockLevel, q, b)) continue;
      const int a = pairA(p.pairKeys[q]), o = partnerOf(p, q, b);
      const int bq = pairB(p.pairKeys[q]);
      // The velocities as the pass starts, selected vector by vector (the targets read nothing
      // else): selecting whole SolverBody values took ShockVelocities from 96 to 224 B of stack.
      const BodyData& other = p.bodies[o];
      SolverBody<float> aNow, bNow;
      aNow.v = a == b ? self.v : other.velocity;
      aNow.w = a == b ? self.w : other.angularVelocity;
      bNow.v = a == b ? other.velocity : self.v;
      bNow.w = a == b ? other.angularVelocity : self.w;
      shockTargets(pairSolverBody(p, a, p.bodiesPredicted[a], 1), pairSolverBody(p, bq, p.bodiesPredicted[bq], 1),
                   aNow, bNow, slotsOf(p, q), p.pairContactCount[q], p.h, false, lanes);
      prepareResponse<float>(self, nullptr, slotsOf(p, q), p.pairContactCount[q], a == b, lanes);
    }
    const float radius = p.shapes[body.shape].radius;
    for (int sweep = 0; sweep < p.shockSweeps; ++sweep) {
      const SolverBody<float> last = self;
      if (level == 0)
        sweepColliderContacts(self, p.contacts + static_cast<long long>(b) * p.contactCapacity,
                              p.colliderContactCount[b], body.friction, &onSelf, lanes);
      for (int k = p.incidenceStart[b]; k < p.incidenceStart[b + 1]; ++k) {
        const int q = p.incidencePair[k];
        if (p.pairContactCount[q] == 0 || !carries(p, p.shockLevel, q, b)) continue;
        const int o = partnerOf(p, q, b);
        const BodyData& other = p.bodies[o];
        sweepAgainstCarrier(self, pairSolverBody(p, o, other, 1), pairA(p.pairKeys[q]) == b, slotsOf(p, q),
                            p.pairContactCount[q], pairMaterial(p, body, other).friction, onSelf, lanes);
      }
      if (sweepSettled(last, self, radius)) break;
    }
    keepEnergyDown(before, self, onSelf);
    if (!lanes.leader()) return;
    body.velocity = self.v;
    body.angularVelocity = self.w;
    p.bodies[b] = body;
  }
};

/// Positions of the bodies on one level (≥ 1): moved out of each pair that carries them by its
/// deepest separation now, beyond the slop (math/contact_solver.h, separationNow). Wide
/// (ShockPositionsWide): the collider push-out of the bodies it moved is left to the wide passes
/// that follow it.
template <bool Wide>
SMASH_HD void shockPosition(const StepParams& p, int level, int b) {
  if (p.shockLevel[b] != level) {
    if constexpr (Wide) armPushOut(p, b, p.bodies[b], false);
    return;
  }
  BodyData body = p.bodies[b];
  bool moved = false;
  for (int k = p.incidenceStart[b]; k < p.incidenceStart[b + 1]; ++k) {
    const int q = p.incidencePair[k];
    if (p.pairContactCount[q] == 0 || !carries(p, p.shockLevel, q, b)) continue;
    const int o = partnerOf(p, q, b);
    const bool selfIsA = pairA(p.pairKeys[q]) == b;
    const BodyData& A = selfIsA ? body : p.bodies[o];
    const BodyData& B = selfIsA ? p.bodies[o] : body;
    const BodyData& A0 = p.bodiesPredicted[selfIsA ? b : o];
    const BodyData& B0 = p.bodiesPredicted[selfIsA ? o : b];
    V3 normal(0.0f);
    const float separation = separationNow(slotsOf(p, q), p.pairContactCount[q], A.centre, A.rotation, A0.centre,
                                           A0.rotation, B.centre, B.rotation, B0.centre, B0.rotation, normal);
    const float depth = -separation - p.penetrationSlop;
    if (depth > 0.0f) {
      body.centre += (selfIsA ? depth : -depth) * normal;
      moved = true;
    }
  }
  // The colliders keep the last word (a body may touch a wall).
  if constexpr (Wide) armPushOut(p, b, body, moved);
  else if (moved) pushOut(p, p.bodiesStart[b], body);
  p.bodies[b] = body;
}
struct ShockPositions {
  StepParams p;
  int level;
  SMASH_HD void operator()(int b) const { shockPosition<false>(p, level, b); }
};
struct ShockPositionsWide {  // the push-out armed for the wide passes
  StepParams p;
  int level;
  SMASH_HD void operator()(int b) const { shockPosition<true>(p, level, b); }
};

/// After the rounds, per body in a pair: move the predicted pose with the velocity change
/// (contacts act before the position update), separate each pair's deepest point shared by
/// split inverse mass and averaged over the body's pairs, then the collider push-out (Wide,
/// FinishPairBodiesWide: armed for the wide passes that follow).
template <bool Wide>
SMASH_HD void finishPairBody(const StepParams& p, int b) {
  if (p.split[b] == 0) return;
  BodyData body = p.bodies[b];
  const BodyData& predicted = p.bodiesPredicted[b];
  const float spin = twiceSpinEnergy(body.rotation, body.angularVelocity, p.shapes[body.shape].inertia);
  moveWithVelocityChange(body.centre, body.rotation, body.velocity - predicted.velocity,
                         body.angularVelocity - predicted.angularVelocity, p.h);
  if (p.colliderContactCount[b] > 0) {  // a bounce on a collider places the body (contact_solver.h)
    const SolverBody<float> wall;
    V3 normal(0.0f);
    const float bounce = bounceTranslation(startBodyOf(p, p.bodiesStart[b], body, predicted), wall,
                                           solverBodyOf(p, predicted, 1), wall, solverBodyOf(p, body, 1), wall,
                                           p.contacts + static_cast<long long>(b) * p.contactCapacity,
                                           p.colliderContactCount[b], bodyMaterial(p, body), p.h, normal);
    body.centre += bounce * normal;
  }
  // The turn adds no energy (math/contact_solver.h capTurnEnergy; a lone body's ω turns with it).
  body.angularVelocity = capTurnEnergy(spin, body.rotation, body.angularVelocity, p.shapes[body.shape].inertia);
  V3 move(0.0f);
  for (int k = p.incidenceStart[b]; k < p.incidenceStart[b + 1]; ++k) {
    const int q = p.incidencePair[k];
    const int count = p.pairContactCount[q];
    if (count == 0) continue;
    if (p.shockLevels > 0 && (carries(p, p.shockLevel, q, pairA(p.pairKeys[q])) ||
                              carries(p, p.shockLevel, q, pairB(p.pairKeys[q]))))
      continue;  // separated by ShockPositions
    const PairContact<float>* c = slotsOf(p, q);
    int deepest = 0;
    for (int j = 1; j < count; ++j)
      if (c[j].phi < c[deepest].phi) deepest = j;
    const float depth = -c[deepest].phi - p.penetrationSlop;
    if (!(depth > 0.0f)) continue;
    const int a = pairA(p.pairKeys[q]), o = pairB(p.pairKeys[q]);
    const float wa = float(p.split[a]) / p.shapes[p.bodiesPredicted[a].shape].mass;
    const float wb = float(p.split[o]) / p.shapes[p.bodiesPredicted[o].shape].mass;
    if (a == b)
      move += (depth * wa / (wa + wb)) * c[deepest].normal;
    else
      move -= (depth * wb / (wa + wb)) * c[deepest].normal;
  }
  body.centre += move / float(p.split[b]);
  if constexpr (Wide) {
    if (p.colliderContacts) armPushOut(p, b, body, true);
  } else if (p.colliderContacts) {
    pushOut(p, p.bodiesStart[b], body);
  }
  p.bodies[b] = body;
}
struct FinishPairBodies {
  StepParams p;
  SMASH_HD void operator()(int b) const { finishPairBody<false>(p, b); }
};
struct FinishPairBodiesWide {  // the push-out armed for the wide passes
  StepParams p;
  SMASH_HD void operator()(int b) const { finishPairBody<true>(p, b); }
};

/// After the wide push-out passes, per body: a lone body's push-out does no work past the step's
/// start (limitLonePushWork, where resolveBodyContacts calls it: the same bits).
SMASH_HD void limitArmedPushWork(const StepParams& p, int b, BodyData& body) {
  const Float4 from = load4(p.pushFrom[b]);
  if (from.w == 0.0f) return;
  V3 solvedFromV = body.velocity, solvedFromW = body.angularVelocity;
  if (from.w == 2.0f) {
    solvedFromV = xyz(load4(p.pushSolvedFrom[2 * b]));
    solvedFromW = xyz(load4(p.pushSolvedFrom[2 * b + 1]));
  }
  limitLonePushWork(p, p.bodiesStart[b], body, xyz(from), p.pushPoint[b], solvedFromV, solvedFromW);
}
struct LimitPushWork {
  StepParams p;
  SMASH_HD void operator()(int b) const {
    BodyData body = p.bodies[b];
    limitArmedPushWork(p, b, body);
    p.bodies[b] = body;
  }
};
/// The end of the collider contact phase (the per-particle strategy without body contacts), per
/// body: LimitPushWork, then the watchdog against the step's start (MatchBodies' order).
struct LimitPushWorkAndWatch {
  StepParams p;
  SMASH_HD void operator()(int b) const {
    BodyData body = p.bodies[b];
    limitArmedPushWork(p, b, body);
    watchBody(p, b, p.bodiesStart[b], body);
    p.bodies[b] = body;
  }
};

/// The end of a deferred step, per body: the watchdog against the step's starting state.
struct WatchBodies {
  StepParams p;
  SMASH_HD void operator()(int b) const {
    BodyData body = p.bodies[b];
    watchBody(p, b, p.bodiesStart[b], body);
    p.bodies[b] = body;
  }
};

// ---------------------------------------------------------------------------------------------
// Sleeping (math/sleep.h), per body at the end of a step, before the projection.

/// A collider within the body's reach (an O(1) bound through its centre).
SMASH_HD bool nearCollider(const StepParams& p, const BodyData& b) {
  for (int k = 0; k < p.colliderCount; ++k)
    if (mayTouch(p.colliders[k], b, p.shapes[b.shape], p.contactMargin)) return true;
  return false;
}

constexpr int kAsleep = 1, kFellAsleep = 2;

/// Applies a decision; true when the body changed. A body that fell asleep in the last step is
/// asleep from now on.
SMASH_HD bool applySleep(BodyData& b, SleepChange change) {
  if (change == SleepChange::None && b.asleep == kFellAsleep) {
    b.asleep = kAsleep;
    return true;
  }
  if (change == SleepChange::FallAsleep) {
    b.asleep = kFellAsleep;
    b.velocity = V3(0.0f);
    b.angularVelocity = V3(0.0f);
  } else if (change == SleepChange::Wake) {
    b.asleep = 0;
    b.restSteps = 0;
  }
  return change != SleepChange::None;
}

/// The body's steps at rest after this step (a sleeping body keeps its count, ≥ p.sleep.steps).
SMASH_HD int restStepsAfter(const StepParams& p, const BodyData& b, bool touching) {
  if (b.asleep) return b.restSteps;
  return nextRestSteps(p.sleep, b.restSteps, b.velocity, b.angularVelocity, p.shapes[b.shape].radius,
                       touching || nearCollider(p, b));
}

/// Bodies that do not touch each other: each is its own island (a sleeping one stays asleep:
/// nothing can touch it). True when the body changed.
SMASH_HD bool sleepAlone(const StepParams& p, BodyData& b) {
  if (!p.sleep.enabled) return false;
  if (b.asleep) return applySleep(b, SleepChange::None);
  const int rest = restStepsAfter(p, b, false);
  const bool changed = rest != b.restSteps;
  b.restSteps = rest;
  return applySleep(b, sleepDecision(p.sleep, false, rest)) || changed;
}
struct SleepBodies {
  StepParams p;
  SMASH_HD void operator()(int bodyIndex) const {
    BodyData b = p.bodies[bodyIndex];
    if (sleepAlone(p, b)) p.bodies[bodyIndex] = b;
  }
};

/// A store of the same value that several threads may make at once (a flag): relaxed atomic on
/// the host (OpenMP threads; ThreadSanitizer), a plain store on the device.
SMASH_HD void storeShared(long long* at, long long value) {
#if defined(__CUDA_ARCH__)
  *at = value;
#else
  __atomic_store_n(at, value, __ATOMIC_RELAXED);
#endif
}

/// The step's last launch where the system skips a world at rest (DeviceWorld::lookAtRest):
/// raises `seen` if the body is awake.
struct NoteAwake {
  const BodyData* bodies;
  long long* seen;
  SMASH_HD void operator()(int b) const {
    if (!bodies[b].asleep) storeShared(seen, 1);
  }
};

/// Whether body o, as it was at the step's start, wakes a sleeping body it touches: it was awake
/// and had not yet been at rest for the sleep time (math/sleep.h). A body at rest that waits for
/// the rest of its island does not wake its neighbours.
SMASH_HD bool wakesOthers(const StepParams& p, int o) {
  const BodyData& start = p.bodiesStart[o];
  return !start.asleep && start.restSteps < p.sleep.steps;
}

/// Bodies that touch, before the solve (after the narrow phase), 1: a sleeping body touched by a
/// body that wakes others marks its island for this step. Reads the step's starting state, so
/// the order of the bodies does not matter.
struct MarkTouchedIslands {
  StepParams p;
  SMASH_HD void operator()(int b) const {
    const BodyData& body = p.bodies[b];
    if (!body.asleep) return;
    for (int k = p.incidenceStart[b]; k < p.incidenceStart[b + 1]; ++k) {
      const int q = p.incidencePair[k];
      if (p.pairContactCount[q] == 0 || !wakesOthers(p, partnerOf(p, q, b))) continue;
      storeShared(p.wakeMark + body.island, *p.step);
      return;
    }
  }
};

/// 2: every body of a marked island wakes now, so the impact is solved with the island's masses
/// and weights — not against static bodies that would wake only after the step. Each is
/// integrated as an awake body at rest would have been this step (wakeIntegrate): without the
/// step's gravity a woken stack weighs nothing on its supports in the impact step, and a box hit
/// under it slid 70–85% farther than under the same stack awake.
struct WakeIslands {
  StepParams p;
  SMASH_HD void operator()(int b) const {
    BodyData body = p.bodies[b];
    if (body.asleep && p.wakeMark[body.island] == *p.step && applySleep(body, SleepChange::Wake)) {
      wakeIntegrate(body.velocity, body.centre, p.gravity, p.linearDamping, p.h);
      p.bodies[b] = body;
    }
  }
};

/// 3, per pair: a pair of two bodies asleep at the step's start was not tested; if one of them
/// woke, its contact points are gathered now, so the woken island is solved with its inner
/// contacts (the per-pair narrow phase, for these pairs only).
struct WokenPairContacts {
  StepParams p;
  SMASH_HD void operator()(int q) const {
    if (q >= pairCountOf(p)) return;
    const int a = pairA(p.pairKeys[q]), b = pairB(p.pairKeys[q]);
    if (p.bodiesStart[a].asleep && p.bodiesStart[b].asleep && !bothAsleep(p, q)) PairContactsOf{p}(q);
  }
};

/// After the solve, 1: each body's steps at rest, the seed of its island's minimum, and its label
/// (its index, or a sleeping body's island).
struct SleepSteps {
  StepParams p;
  SMASH_HD void operator()(int b) const {
    BodyData body = p.bodies[b];
    body.restSteps = restStepsAfter(p, body, touchingPairsOf(p, b) > 0);
    p.bodies[b] = body;
    p.islandRest[b] = body.restSteps;
    p.islandLabel[b] = body.asleep ? body.island : b;
  }
};

/// 2: one relaxation pass — the least steps at rest and the least label over the body and its
/// touching partners, double-buffered: pass k reads the scratch buffers when k is odd.
struct IslandMinimum {
  StepParams p;
  int pass;
  SMASH_HD void operator()(int b) const {
    const bool odd = pass % 2 == 1;
    const int* restFrom = odd ? p.islandRestScratch : p.islandRest;
    const int* labelFrom = odd ? p.islandLabelScratch : p.islandLabel;
    int* restTo = odd ? p.islandRest : p.islandRestScratch;
    int* labelTo = odd ? p.islandLabel : p.islandLabelScratch;
    int rest = restFrom[b], label = labelFrom[b];
    for (int k = p.incidenceStart[b]; k < p.incidenceStart[b + 1]; ++k) {
      const int q = p.incidencePair[k];
      if (p.pairContactCount[q] == 0) continue;
      const int o = partnerOf(p, q, b);
      rest = restFrom[o] < rest ? restFrom[o] : rest;
      label = labelFrom[o] < label ? labelFrom[o] : label;
    }
    restTo[b] = rest;
    labelTo[b] = label;
  }
};

/// 3: the island falls asleep (each body keeping its label as its island), or a sleeping body
/// wakes. After kIslandPasses passes (even), the result is in islandRest / islandLabel.
struct SleepDecide {
  StepParams p;
  SMASH_HD void operator()(int b) const {
    static_assert(kIslandPasses % 2 == 0, "the last relaxation pass writes islandRest");
    BodyData body = p.bodies[b];
    const SleepChange change = sleepDecision(p.sleep, body.asleep != 0, p.islandRest[b]);
    if (change == SleepChange::FallAsleep) body.island = p.islandLabel[b];
    if (applySleep(body, change)) p.bodies[b] = body;
  }
};

// ---------------------------------------------------------------------------------------------
// Per body.

/// Shape matching, physics.md §2 steps 4–6: centre, rotation, momentum-carrying velocities, contacts.
/// A sleeping body keeps its pose (math/sleep.h).
struct MatchBodies {
  StepParams p;
  SMASH_HD void operator()(int bodyIndex) const {
    BodyData b = p.bodies[bodyIndex];
    if (b.asleep) return;
    const BodyData before = b;
    const ShapeData& shape = p.shapes[b.shape];
    const MatchSums& s = p.sums[bodyIndex];
    // The rotation-aware prediction's turn, per body (math/rotation.h predictedTurn).
    const Turn<float> turn = predictedTurn(b.rotation, b.angularVelocity, shape.inertia, shape.inertiaInverse, p.h);
    M3 A = s.myr + turnCorrection(turn, b.rotation, shape.aqq, p.h);
    if (p.seedsRotation) A = A * shape.aqqInverse;
    b.rotation = optimalRotation(A, b.rotation);
    // The rotation's invariants (math/rotation.h): energy at the step's start, given L. A
    // body no collider can reach has no torque this step, and its particles carry the rigid
    // field of its pose (projection), so their L is the body's own, damped as their velocities
    // are: taken from the body, not summed from the particles, whose float rounding along a
    // periodic spin added up to a drift of |L| (22% over 10,000 steps; physics.md §10).
    const bool free = awayFromColliders(p, before);
    // (With a penalty model forces reach past the contact margin: the particle sum stays.)
    const V3 L = free && p.impulseContacts ? freeMomentum(p, before, shape) : s.l;
    // The energy of L at the start pose is kept in every step, free or not (a spinning rod within
    // a plane's reach gained 20 times its energy without touching it; math/rotation.h
    // rotateWithMomentum). It is held from step to step only while the body stays free
    // (BodyData::heldEnergy): in float each step's own start pose carries a rounding of it, which
    // added up over a run.
    const bool holds = free && p.impulseContacts;
    keepRotationEnergy(b.rotation, before.rotation, L, shape.inertia, shape.inertiaInverse, before.angularVelocity,
                       p.h, holds ? &b.heldEnergy : nullptr, free);
    if (!holds) b.heldEnergy = 0.0f;
    const V3 xToNew = s.my / shape.mass;  // new centre relative to the old
    b.velocity = s.p / shape.mass;
    // L was summed about the old centre; the momentum is the same about any point moving with
    // the centre of mass (Σ m (x − c) = 0), so it is the body's angular momentum.
    b.centre += xToNew;
    // ω of L at the new pose, as a correction of the step's ω (math/rotation.h omegaOfMomentum:
    // in float, ω = I⁻¹ L compounded I⁻¹ I ≠ 1 into a drift of |L| and the energy).
    b.angularVelocity = omegaOfMomentum(b.rotation, before.angularVelocity, L, shape.inertia, shape.inertiaInverse);
    if (!p.deferContacts) {
      if (p.collideAfter && p.impulseContacts) resolveBodyContacts<true>(p, bodyIndex, before, b, true);
      watchBody(p, bodyIndex, before, b);
    }
    p.bodies[bodyIndex] = b;
  }
};

/// The rigid-body impulse method, physics.md §3, entirely per body.
struct ImpulseBodies {
  StepParams p;
  SMASH_HD void operator()(int bodyIndex) const {
    BodyData b = p.bodies[bodyIndex];
    if (b.asleep) return;
    const BodyData before = b;
    const ShapeData& shape = p.shapes[b.shape];
    V3 F(0.0f), tau(0.0f);
    if (!p.impulseContacts)
      for (int i = 0; i < shape.count; ++i) {
        const Float4 rest = p.rest[shape.restOffset + i];
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
    if (!p.deferContacts && p.impulseContacts && !p.collideAfter) resolveBodyContacts<true>(p, bodyIndex, before, b, false);
    b.centre += p.h * b.velocity;
    const bool free = awayFromColliders(p, before), holds = free && p.impulseContacts;  // as MatchBodies
    rotateWithMomentum(b.rotation, b.angularVelocity, shape.inertia, shape.inertiaInverse, p.h, free,
                       holds ? &b.heldEnergy : nullptr);
    if (!holds) b.heldEnergy = 0.0f;
    if (!p.deferContacts) {
      if (p.impulseContacts && p.collideAfter) resolveBodyContacts<true>(p, bodyIndex, before, b, true);
      watchBody(p, bodyIndex, before, b);
    }
    p.bodies[bodyIndex] = b;
  }
};

/// physics.md §2 step 5 for every method: particles onto the rigid pose, rigid velocity field.
SMASH_HD void projectParticle(const BodyData& b, const V3& rest, Float4& x, Float4& v) {
  const V3 r = b.rotation * rest;
  x = Float4(b.centre + r, 0.0f);
  v = Float4(b.velocity + glm::cross(b.angularVelocity, r), 0.0f);
}

/// A sleeping body's particles already are on its pose, at rest (projected when it fell asleep).
struct ProjectParticles {
  StepParams p;
  SMASH_HD void operator()(int i) const {
    const BodyData& b = p.bodies[p.particleBody[i]];
    if (b.asleep == kAsleep) return;
    projectParticle(b, xyz(load4(p.rest[p.shapes[b.shape].restOffset + (i - b.particleOffset)])),
                    p.position[i], p.velocity[i]);
  }
};

struct ProjectBodies {
  StepParams p;
  SMASH_HD void operator()(int bodyIndex) const {
    const BodyData b = p.bodies[bodyIndex];
    if (b.asleep == kAsleep) return;
    const Float4* rest = p.rest + p.shapes[b.shape].restOffset;
    for (int i = 0; i < b.particleCount; ++i)
      projectParticle(b, xyz(rest[i]), p.position[b.particleOffset + i], p.velocity[b.particleOffset + i]);
  }
};

/// FusedBodyStep's matching sums of a body's particles [first, end) (first at a chunk's start):
/// integrate each particle (the velocity only feeds the sums: the projection overwrites v) and sum
/// each chunk of kMatchChunk in particle order, handing the chunks to sink in order —
/// IntegrateChunkSums' order, so the strategies agree to the bit.
template <class Sink>
SMASH_HD void fusedChunkSums(const StepParams& p, const BodyData& b, const Float4* rest, const Float4* x,
                             const Float4* v, int first, int end, Sink&& sink) {
  for (int c = first; c < end; c += kMatchChunk) {
    MatchSums chunk = zeroMatchSums();
    const int stop = glm::min(c + kMatchChunk, end);
    for (int i = c; i < stop; ++i) {
      const V3 xi = xyz(x[i]);
      const V3 vi = integrateVelocity(p, b, rest[i].w, xi, xyz(v[i]));
      accumulateMatch(chunk, rest[i].w, xyz(rest[i]), xi - b.centre, vi, p.h);
    }
    sink(chunk);
  }
}

#if SMASH_SSE_BODY_LOOPS
// FusedBodyStep's two loops over a body's particles, four floats to an SSE register (CPU builds
// on x86-64, where SSE2 is always there; the GPU and other CPUs run the scalar loops). Each lane
// does the scalar code's operations on one component, in the same order, with no FMA, so the
// bits are the same (tests/test_determinism.cpp: the golden hashes; the strategies' bitwise
// parity and the SSE test in tests/test_world.cpp; the CPU builds compile with
// -ffp-contract=off). Measured (perf annotate, docs/pipeline.md): the scalar loops kept 17 running
// sums on the stack and did every component with its own instruction.

/// Bit i − c for each particle i of the chunk [c, stop) that may be deeper than the slop in some
/// collider (sse::Planes: the planes four particles at a time, mayBeDeeperFour); none without
/// colliders.
inline unsigned chunkMayBeIn(const StepParams& p, const sse::Planes& planes, const Float4* x, int c, int stop) {
  static_assert(kMatchChunk <= 32, "a chunk's particles are bits of one unsigned");
  unsigned mayBeIn = 0u;
  if (p.colliderCount == 0) return mayBeIn;
  int i = c;
  for (; i + 4 <= stop; i += 4)
    mayBeIn |= static_cast<unsigned>(planes.mayBeDeeperFour(x + i, p.penetrationSlop)) << (i - c);
  for (; i < stop; ++i)
    if (planes.mayBeDeeper(sse::load(x[i]), p.penetrationSlop)) mayBeIn |= 1u << (i - c);
  return mayBeIn;
}

/// A chunk's matching sums, one column to a register (sseChunkSums, avxChunkSums), and one
/// particle's share as accumulateMatch computes it: my = m (xRel + h v), added with my ⊗ r, m v and
/// m (xRel × v), each column in particle order.
struct SseMatchColumns {
  __m128 my = _mm_setzero_ps(), myrX = _mm_setzero_ps(), myrY = _mm_setzero_ps(), myrZ = _mm_setzero_ps();
  __m128 mom = _mm_setzero_ps(), ang = _mm_setzero_ps();
  void add(__m128 myi, __m128 rx, __m128 ry, __m128 rz, __m128 momi, __m128 angi) {
    my = _mm_add_ps(my, myi);
    myrX = _mm_add_ps(myrX, rx);
    myrY = _mm_add_ps(myrY, ry);
    myrZ = _mm_add_ps(myrZ, rz);
    mom = _mm_add_ps(mom, momi);
    ang = _mm_add_ps(ang, angi);
  }
  /// The share of a particle with rest offset and mass r (w), position relative to the centre
  /// xRel and integrated velocity vi.
  void addParticle(__m128 r, __m128 xRel, __m128 vi, __m128 h) {
    const __m128 m = sse::broadcast<3>(r);
    const __m128 myi = _mm_mul_ps(m, _mm_add_ps(xRel, _mm_mul_ps(h, vi)));
    add(myi, _mm_mul_ps(myi, sse::broadcast<0>(r)), _mm_mul_ps(myi, sse::broadcast<1>(r)),
        _mm_mul_ps(myi, sse::broadcast<2>(r)), _mm_mul_ps(m, vi), _mm_mul_ps(m, sse::cross(xRel, vi)));
  }
  MatchSums sums() const {
    MatchSums chunk;
    chunk.my = sse::xyz(my);
    chunk.myr = M3(sse::xyz(myrX), sse::xyz(myrY), sse::xyz(myrZ));
    chunk.p = sse::xyz(mom);
    chunk.l = sse::xyz(ang);
    return chunk;
  }
};

/// integrateVelocity with impulse contacts in SSE: (v + h g) · damping (`hg` = h g, the force
/// term +0: sseChunkSums), then the scalar colliderResponses where the particle may be inside one.
inline __m128 sseIntegratedVelocity(const StepParams& p, const BodyData& b, const Float4& x, const Float4& v,
                                    __m128 hg, __m128 damping, bool mayBeIn) {
  const __m128 vi = _mm_mul_ps(_mm_add_ps(sse::load(v), hg), damping);
  return mayBeIn ? sse::set(colliderResponses(p, b, xyz(x), sse::xyz(vi))) : vi;
}

/// fusedChunkSums with impulse contacts (or no collider within reach), chunk by chunk as the
/// scalar loop sums them: integrateVelocity's v ← (v + h (g + 0/m)) · damping in SSE, then, per
/// collider, its impulse response where the particle is inside (scalar: an SDF).
template <class Sink>
inline void sseChunkSums(const StepParams& p, const BodyData& b, const Float4* rest, const Float4* x,
                         const Float4* v, int first, int end, Sink&& sink) {
  const __m128 h = _mm_set1_ps(p.h), zero = _mm_setzero_ps();
  const __m128 damping = _mm_set1_ps(p.linearDamping), centre = sse::set(b.centre);
  // h (g + f/m) with no force: f/m is +0 for every particle whose float mass is > 0, so the term
  // is the same for all of them, once per call instead of a division per particle. (Shapes
  // refuse masses ≤ 0; one below float's least subnormal would round to 0, where the scalar
  // loop's 0/0 gives NaN and this a finite value — World::create refuses such masses.)
  const __m128 hg = _mm_mul_ps(h, _mm_add_ps(sse::set(p.gravity), zero));
  const sse::Planes planes(p.colliders, p.colliderCount);
  for (int c = first; c < end; c += kMatchChunk) {
    SseMatchColumns columns;
    const int stop = c + kMatchChunk < end ? c + kMatchChunk : end;
    // colliderResponses changes nothing where the particle is in no collider deeper than the
    // slop: the scalar responses only where one may be (bit i − c of `mayBeIn`).
    const unsigned mayBeIn = chunkMayBeIn(p, planes, x, c, stop);
    for (int i = c; i < stop; ++i) {
      const __m128 vi = sseIntegratedVelocity(p, b, x[i], v[i], hg, damping, mayBeIn >> (i - c) & 1u);
      columns.addParticle(sse::load(rest[i]), _mm_sub_ps(sse::load(x[i]), centre), vi, h);
    }
    sink(columns.sums());
  }
}

/// sseChunkSums two particles at a time, one to each 128-bit half of an AVX register, on CPUs
/// that have AVX (chosen at run time: `hasAvx`; the build stays x86-64's baseline). Each half does
/// what sseChunkSums' register does for its particle, operation for operation (AVX's 256-bit mul
/// and add round as the 128-bit ones; no FMA: the function's target is "avx" alone), and the two
/// particles' shares are added to the chunk's sums one after the other, the lower first — the
/// particle order — so the bits are sseChunkSums' (the SSE test in tests/test_world.cpp, the golden
/// hashes). The arithmetic per particle halves; the in-order sums stay one particle a register.
template <class Sink>
__attribute__((target("avx"))) inline void avxChunkSums(const StepParams& p, const BodyData& b, const Float4* rest,
                                                        const Float4* x, const Float4* v, int first, int end,
                                                        Sink&& sink) {
  const __m128 h = _mm_set1_ps(p.h), zero = _mm_setzero_ps();
  const __m128 damping = _mm_set1_ps(p.linearDamping), centre = sse::set(b.centre);
  const __m128 hg = _mm_mul_ps(h, _mm_add_ps(sse::set(p.gravity), zero));  // as sseChunkSums
  const __m256 h2 = _mm256_set1_ps(p.h), damping2 = _mm256_set1_ps(p.linearDamping);
  const __m256 hg2 = _mm256_set_m128(hg, hg), centre2 = _mm256_set_m128(centre, centre);
  const sse::Planes planes(p.colliders, p.colliderCount);
  for (int c = first; c < end; c += kMatchChunk) {
    SseMatchColumns columns;
    const int stop = c + kMatchChunk < end ? c + kMatchChunk : end;
    const unsigned mayBeIn = chunkMayBeIn(p, planes, x, c, stop);
    int i = c;
    for (; i + 2 <= stop; i += 2) {
      const __m256 r = _mm256_loadu_ps(&rest[i].x);
      const __m256 m = _mm256_permute_ps(r, _MM_SHUFFLE(3, 3, 3, 3));
      __m256 vi = _mm256_mul_ps(_mm256_add_ps(_mm256_loadu_ps(&v[i].x), hg2), damping2);
      const unsigned two = mayBeIn >> (i - c) & 3u;
      if (two) {  // colliderResponses for the particle(s) that may be inside, as sseChunkSums
        __m128 lo = _mm256_castps256_ps128(vi), hi = _mm256_extractf128_ps(vi, 1);
        if (two & 1u) lo = sse::set(colliderResponses(p, b, xyz(x[i]), sse::xyz(lo)));
        if (two & 2u) hi = sse::set(colliderResponses(p, b, xyz(x[i + 1]), sse::xyz(hi)));
        vi = _mm256_set_m128(hi, lo);
      }
      const __m256 xRel = _mm256_sub_ps(_mm256_loadu_ps(&x[i].x), centre2);
      const __m256 myi = _mm256_mul_ps(m, _mm256_add_ps(xRel, _mm256_mul_ps(h2, vi)));
      const __m256 rx = _mm256_mul_ps(myi, _mm256_permute_ps(r, _MM_SHUFFLE(0, 0, 0, 0)));
      const __m256 ry = _mm256_mul_ps(myi, _mm256_permute_ps(r, _MM_SHUFFLE(1, 1, 1, 1)));
      const __m256 rz = _mm256_mul_ps(myi, _mm256_permute_ps(r, _MM_SHUFFLE(2, 2, 2, 2)));
      const __m256 momi = _mm256_mul_ps(m, vi);
      // sse::cross(xRel, vi) in each half: yzx(x) zxy(y) − yzx(y) zxy(x).
      const __m256 cr = _mm256_sub_ps(
          _mm256_mul_ps(_mm256_permute_ps(xRel, _MM_SHUFFLE(3, 0, 2, 1)), _mm256_permute_ps(vi, _MM_SHUFFLE(3, 1, 0, 2))),
          _mm256_mul_ps(_mm256_permute_ps(vi, _MM_SHUFFLE(3, 0, 2, 1)), _mm256_permute_ps(xRel, _MM_SHUFFLE(3, 1, 0, 2))));
      const __m256 angi = _mm256_mul_ps(m, cr);
      columns.add(_mm256_castps256_ps128(myi), _mm256_castps256_ps128(rx), _mm256_castps256_ps128(ry),
                  _mm256_castps256_ps128(rz), _mm256_castps256_ps128(momi), _mm256_castps256_ps128(angi));
      columns.add(_mm256_extractf128_ps(myi, 1), _mm256_extractf128_ps(rx, 1), _mm256_extractf128_ps(ry, 1),
                  _mm256_extractf128_ps(rz, 1), _mm256_extractf128_ps(momi, 1), _mm256_extractf128_ps(angi, 1));
    }
    for (; i < stop; ++i) {  // a chunk's odd last particle: sseChunkSums' operations
      const __m128 vi = sseIntegratedVelocity(p, b, x[i], v[i], hg, damping, mayBeIn >> (i - c) & 1u);
      columns.addParticle(sse::load(rest[i]), _mm_sub_ps(sse::load(x[i]), centre), vi, h);
    }
    sink(columns.sums());
  }
}

/// Whether this CPU runs AVX (avxChunkSums); SMASH_NO_AVX set in the environment says no (to time
/// or test the SSE loop on the same machine).
inline bool hasAvx() {
  static const bool avx = __builtin_cpu_supports("avx") && std::getenv("SMASH_NO_AVX") == nullptr;
  return avx;
}

/// FusedBodyStep's projection (projectParticle) of a body's particles: four at a time, one to a
/// lane (the rest offsets transposed in, the positions and velocities out), the rest one by one.
/// Every lane does projectParticle's operations on one component in its order — r = (R₀ q.x +
/// R₁ q.y) + R₂ q.z, x = c + r, v = v_c + ω × r as glm::cross — so the bits are the same. (One
/// particle to a register used three lanes and broadcast each offset's components: 25
/// instructions a particle, compute-bound; perf annotate, docs/pipeline.md.)
inline void projectBody(const BodyData& b, const Float4* rest, Float4* x, Float4* v, int count) {
  const __m128 c0 = sse::set(b.rotation[0]), c1 = sse::set(b.rotation[1]), c2 = sse::set(b.rotation[2]);
  const __m128 centre = sse::set(b.centre), velocity = sse::set(b.velocity), omega = sse::set(b.angularVelocity);
  int i = 0;
  {
    const M3& R = b.rotation;
    const __m128 r00 = _mm_set1_ps(R[0].x), r01 = _mm_set1_ps(R[0].y), r02 = _mm_set1_ps(R[0].z);
    const __m128 r10 = _mm_set1_ps(R[1].x), r11 = _mm_set1_ps(R[1].y), r12 = _mm_set1_ps(R[1].z);
    const __m128 r20 = _mm_set1_ps(R[2].x), r21 = _mm_set1_ps(R[2].y), r22 = _mm_set1_ps(R[2].z);
    const __m128 cx = _mm_set1_ps(b.centre.x), cy = _mm_set1_ps(b.centre.y), cz = _mm_set1_ps(b.centre.z);
    const __m128 vx = _mm_set1_ps(b.velocity.x), vy = _mm_set1_ps(b.velocity.y), vz = _mm_set1_ps(b.velocity.z);
    const __m128 wx = _mm_set1_ps(b.angularVelocity.x), wy = _mm_set1_ps(b.angularVelocity.y),
                 wz = _mm_set1_ps(b.angularVelocity.z);
    for (; i + 4 <= count; i += 4) {
      __m128 qx = sse::load(rest[i]), qy = sse::load(rest[i + 1]), qz = sse::load(rest[i + 2]), qw = sse::load(rest[i + 3]);
      _MM_TRANSPOSE4_PS(qx, qy, qz, qw);
      const __m128 rx = _mm_add_ps(_mm_add_ps(_mm_mul_ps(r00, qx), _mm_mul_ps(r10, qy)), _mm_mul_ps(r20, qz));
      const __m128 ry = _mm_add_ps(_mm_add_ps(_mm_mul_ps(r01, qx), _mm_mul_ps(r11, qy)), _mm_mul_ps(r21, qz));
      const __m128 rz = _mm_add_ps(_mm_add_ps(_mm_mul_ps(r02, qx), _mm_mul_ps(r12, qy)), _mm_mul_ps(r22, qz));
      __m128 px = _mm_add_ps(cx, rx), py = _mm_add_ps(cy, ry), pz = _mm_add_ps(cz, rz), pw = _mm_setzero_ps();
      // glm::cross(ω, r): (ω.y r.z − r.y ω.z, ω.z r.x − r.z ω.x, ω.x r.y − r.x ω.y).
      __m128 ux = _mm_add_ps(vx, _mm_sub_ps(_mm_mul_ps(wy, rz), _mm_mul_ps(ry, wz)));
      __m128 uy = _mm_add_ps(vy, _mm_sub_ps(_mm_mul_ps(wz, rx), _mm_mul_ps(rz, wx)));
      __m128 uz = _mm_add_ps(vz, _mm_sub_ps(_mm_mul_ps(wx, ry), _mm_mul_ps(rx, wy)));
      __m128 uw = _mm_setzero_ps();
      _MM_TRANSPOSE4_PS(px, py, pz, pw);
      _MM_TRANSPOSE4_PS(ux, uy, uz, uw);
      _mm_store_ps(&x[i].x, px);
      _mm_store_ps(&x[i + 1].x, py);
      _mm_store_ps(&x[i + 2].x, pz);
      _mm_store_ps(&x[i + 3].x, pw);
      _mm_store_ps(&v[i].x, ux);
      _mm_store_ps(&v[i + 1].x, uy);
      _mm_store_ps(&v[i + 2].x, uz);
      _mm_store_ps(&v[i + 3].x, uw);
    }
  }
  for (; i < count; ++i) {
    const __m128 q = sse::load(rest[i]);
    // glm's R q: (R₀ q.x + R₁ q.y) + R₂ q.z per row.
    const __m128 r = sse::xyzOnly(_mm_add_ps(_mm_add_ps(_mm_mul_ps(c0, sse::broadcast<0>(q)),
                                                        _mm_mul_ps(c1, sse::broadcast<1>(q))),
                                             _mm_mul_ps(c2, sse::broadcast<2>(q))));
    _mm_store_ps(&x[i].x, sse::xyzOnly(_mm_add_ps(centre, r)));
    _mm_store_ps(&v[i].x, sse::xyzOnly(_mm_add_ps(velocity, sse::cross(omega, r))));
  }
}
#endif

/// The whole step of one body in one pass over its particles, which stay in cache between the
/// loops: the CPU strategy (one body per thread). The per-particle strategy runs the same
/// functors as separate parallel passes with a segmented reduction in between.
struct FusedBodyStep {
  StepParams p;
  bool shapeMatching;

  /// The matching sums of an awake body's particles [first, end) (first at a chunk's start), its
  /// chunks' sums handed to sink in order. With impulse contacts, a body none of whose particles
  /// can be inside a collider (bounded through the centre: an SDF is 1-Lipschitz) skips the
  /// per-particle tests; they would all be false, so the result is the same to the bit.
  template <class Sink>
  SMASH_HD void sums(int bodyIndex, int first, int end, Sink&& sink) const {
    const BodyData b = p.bodies[bodyIndex];
    const Float4* rest = p.rest + p.shapes[b.shape].restOffset;
    const Float4* x = p.position + b.particleOffset;
    const Float4* v = p.velocity + b.particleOffset;
    StepParams local = p;
    if (p.impulseContacts) {
      bool anyInside = false;
      for (int k = 0; k < p.colliderCount; ++k)
        // Within φ's float rounding (sdfRounding): the particles' own tests round too, and the
        // per-particle layout makes them all (a 10⁵ m sphere collider rounds φ by ~8 mm).
        anyInside = anyInside || mayTouch(p.colliders[k], b, p.shapes[b.shape],
                                          sdfRounding(p.colliders[k], largestCoordinate(b.centre), p.shapes[b.shape].radius));
      if (!anyInside) local.colliderCount = 0;
    }
#if SMASH_SSE_BODY_LOOPS
    if (local.impulseContacts || local.colliderCount == 0) {
      if (hasAvx())
        avxChunkSums(local, b, rest, x, v, first, end, sink);
      else
        sseChunkSums(local, b, rest, x, v, first, end, sink);
      return;
    }
#endif
    fusedChunkSums(local, b, rest, x, v, first, end, sink);
  }

  /// The body's step once its sums are in p.sums (shape matching): its pose (MatchBodies or
  /// ImpulseBodies), its contacts against the colliders, sleep. False when its particles are not
  /// projected now: it was asleep at the step's start (its particles were projected when it fell
  /// asleep), or the body–body phase comes first.
  SMASH_HD bool settle(int bodyIndex) const {
    if (p.bodies[bodyIndex].asleep) {  // math/sleep.h
      BodyData b = p.bodies[bodyIndex];
      if (!p.deferContacts && sleepAlone(p, b)) p.bodies[bodyIndex] = b;
      return false;
    }
    if (shapeMatching)
      MatchBodies{p}(bodyIndex);
    else
      ImpulseBodies{p}(bodyIndex);
    if (p.deferContacts) return false;  // projected after the body–body phase
    BodyData b = p.bodies[bodyIndex];
    if (sleepAlone(p, b)) p.bodies[bodyIndex] = b;
    return true;
  }

  /// The projection (projectParticle) of the body's particles [first, end).
  SMASH_HD void project(int bodyIndex, int first, int end) const {
    const BodyData b = p.bodies[bodyIndex];
    const Float4* rest = p.rest + p.shapes[b.shape].restOffset + first;
    Float4* x = p.position + b.particleOffset + first;
    Float4* v = p.velocity + b.particleOffset + first;
#if SMASH_SSE_BODY_LOOPS
    projectBody(b, rest, x, v, end - first);
#else
    for (int i = 0; i < end - first; ++i) projectParticle(b, xyz(rest[i]), x[i], v[i]);
#endif
  }

  SMASH_HD void operator()(int bodyIndex) const {
    const int count = p.bodies[bodyIndex].particleCount;
    if (shapeMatching && !p.bodies[bodyIndex].asleep) {
      MatchSums total = zeroMatchSums();
      sums(bodyIndex, 0, count, [&total](const MatchSums& chunk) { total = AddMatchSums()(total, chunk); });
      p.sums[bodyIndex] = total;
    }
    if (settle(bodyIndex)) project(bodyIndex, 0, count);
  }
};

// FusedBodyStep split over a body's particles, for fewer bodies than the system has threads (a
// lone body would keep one thread busy and the others idle): its particle loops run over blocks
// of kBlockChunks chunks, its O(1)-per-body part (FusedBodyStep::settle) per body in between.
// Each chunk's sums are kept (p.chunkSums) and added in chunk order, as FusedBodyStep adds them,
// so the split step gives the same bits as the whole one (tests/test_world.cpp).
constexpr int kBlockChunks = 8;

/// Calls f(body, first, end, firstChunk) for each run of block `block`'s chunks that belong to
/// one body (particles [first, end) of it, chunk firstChunk on): a block may span bodies.
template <class F>
SMASH_HD void forBlockRuns(const StepParams& p, int chunks, int block, F&& f) {
  int c = block * kBlockChunks;
  const int stop = glm::min(c + kBlockChunks, chunks);
  while (c < stop) {
    const int body = p.particleBody[p.chunkFirst[c]];
    const int last = glm::min(stop, p.bodyFirstChunk[body + 1]);  // past the run
    const BodyData& b = p.bodies[body];
    const int first = p.chunkFirst[c] - b.particleOffset;
    f(body, first, glm::min(first + (last - c) * kMatchChunk, b.particleCount), c);
    c = last;
  }
}

/// 1. Each awake body's chunk sums, a block of chunks per thread.
struct FusedBlockSums {
  FusedBodyStep step;
  int chunks;
  SMASH_HD void operator()(int block) const {
    forBlockRuns(step.p, chunks, block, [this](int body, int first, int end, int chunk) {
      if (step.p.bodies[body].asleep) return;
      MatchSums* out = step.p.chunkSums + chunk;
      step.sums(body, first, end, [&out](const MatchSums& sums) { *out++ = sums; });
    });
  }
};

/// 2. Per body: its chunks' sums in order (BodyMatchSums), then FusedBodyStep::settle.
struct FusedBodySettle {
  FusedBodyStep step;
  SMASH_HD void operator()(int bodyIndex) const {
    if (step.shapeMatching && !step.p.bodies[bodyIndex].asleep) BodyMatchSums{step.p}(bodyIndex);
    step.settle(bodyIndex);
  }
};

/// 3. The projection of the bodies settle projects (every body but one asleep since before this
/// step: ProjectParticles' rule), a block of chunks per thread; with body contacts, after them.
struct FusedBlockProject {
  FusedBodyStep step;
  int chunks;
  SMASH_HD void operator()(int block) const {
    forBlockRuns(step.p, chunks, block, [this](int body, int first, int end, int) {
      if (step.p.bodies[body].asleep != kAsleep) step.project(body, first, end);
    });
  }
};

}  // namespace smash::pipeline
