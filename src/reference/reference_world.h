// The CPU reference: serial, double precision, written to be read next to docs/physics.md.
//
// It is the oracle every fast backend is compared against, so clarity beats speed here. It shares
// with the fast path only the unit-tested math primitives of kernels/math (rotation extraction,
// SDFs, the contact response formulas), instantiated in double; each primitive has its own
// independent oracle in tests/ (an SVD, finite differences, closed forms).
//
// Both course methods keep the same body state (centre c, rotation R, linear velocity v, angular
// velocity ω); the shape-matching method additionally keeps per-particle positions and velocities,
// which are what physics.md §2 integrates.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "math/contact_solver.h"
#include "math/watchdog.h"
#include "scene/run_checks.h"
#include "scene/scene.h"
#include "world/world.h"

namespace smash {

struct BodyState {
  glm::dvec3 centre{0.0};
  glm::dmat3 rotation{1.0};
  glm::dvec3 velocity{0.0};
  glm::dvec3 angularVelocity{0.0};
  int restSteps = 0;    ///< steps supported and at rest (math/sleep.h)
  bool asleep = false;  ///< not stepped, static for the bodies that touch it
  int island = 0;       ///< while asleep: the island it fell asleep with (its least body index)
};

class ReferenceWorld {
 public:
  /// Throws InputError when plannedBytes(scene) exceeds the memory this process can use.
  explicit ReferenceWorld(Scene scene);

  /// Host bytes the world holds for `scene`: per particle x and v in double (48 B) and the float
  /// copies a run reads back (24 B); per body its state, offsets, incident and contact-list slots.
  /// Contact lists themselves (at most max_contacts_per_body per body) are not counted.
  static std::size_t plannedBytes(const Scene& scene);

  /// One solver step of length scene().stepDt().
  void step();
  /// One frame: scene().substeps steps.
  void stepFrame();

  const Scene& scene() const { return scene_; }
  std::int64_t stepCount() const { return steps_; }
  double time() const { return static_cast<double>(steps_) * scene_.stepDt(); }
  std::size_t bodyCount() const { return bodies_.size(); }
  const BodyState& body(std::size_t b) const { return bodies_[b]; }
  glm::dquat orientation(std::size_t b) const;

  /// World's read interface (world/world.h), so the tests and tools read either the same way:
  /// every body's pose and velocities, every particle's position and velocity, in float.
  std::vector<BodyPose> poses() const;
  std::vector<glm::vec3> particlePositions() const;
  std::vector<glm::vec3> particleVelocities() const;

  /// World positions / velocities of the particles of body b.
  std::vector<glm::dvec3> particlePositions(std::size_t b) const;
  std::vector<glm::dvec3> particleVelocities(std::size_t b) const;

  /// Σ ½ m_i ‖v_i‖² over all particles (equals the rigid ½Mv² + ½ωᵀIω of the bodies).
  double kineticEnergy() const;
  /// Total linear and angular momentum (about the origin).
  glm::dvec3 linearMomentum() const;
  glm::dvec3 angularMomentum() const;
  /// Deepest penetration of any particle into any static collider, ≥ 0.
  double deepestPenetration() const;
  double maxParticleSpeed() const;
  /// All positions and velocities finite.
  bool finite() const;
  /// Bodies the watchdog has flagged, each with its first incident.
  std::vector<BodyIncident> incidents() const;

  /// Collider contacts dropped by the max_contacts_per_body rule since the start (a body pair's
  /// points reduce to its manifold: nothing is dropped there).
  std::int64_t contactOverflow() const { return contactOverflow_; }
  /// Broad-phase pairs dropped by the max_pairs_per_body rule since the start.
  std::int64_t pairOverflow() const { return pairOverflow_; }
  /// Body pairs with contact points in the last step.
  std::size_t touchingPairs() const { return touchingPairs_; }
  /// Bodies asleep now (math/sleep.h).
  std::size_t sleepingBodies() const;
  /// What RunChecks needs after a step.
  StepObservation observation() const;
  /// Last step's contact points with their accumulated impulses (the warm-start state): per
  /// touching pair (a < b), and per body in a pair against the colliders (src/reference/resting_lcp.h).
  const std::map<std::pair<std::size_t, std::size_t>, std::vector<PairContact<double>>>& lastPairContacts() const {
    return previousPairs_;
  }
  const std::vector<std::vector<PairContact<double>>>& lastColliderContacts() const {
    return previousColliderContacts_;
  }

 private:
  // `contactsNow` false: leave the body at its predicted pose for the body–body phase.
  void stepShapeMatching(std::size_t b, double h, bool contactsNow);
  void stepImpulse(std::size_t b, double h, bool contactsNow);
  /// physics.md §6–7 for every body at once: broad phase, contact points of each pair, one solve of all
  /// pairs and colliders by mass splitting, push-out; bodies no pair touches take the
  /// single-body path (resolveBodyContacts).
  /// Returns the pairs that touched (had contact points).
  std::vector<std::pair<std::size_t, std::size_t>> resolveAllContacts(const std::vector<BodyState>& start);
  /// Sort-and-sweep along x over the bodies' bounding boxes; pairs (a < b), sorted.
  std::vector<std::pair<std::size_t, std::size_t>> broadPhase();
  struct Pair {
    std::size_t a, b;
    std::vector<PairContact<double>> contacts;
  };
  void gatherPairContacts(Pair& pair, const std::vector<BodyState>& start);
  SolverBody<double> solverBody(std::size_t b, int split) const;
  double speculative(std::size_t b) const;
  void watchBody(std::size_t b, const BodyState& before);
  /// Sleeping (math/sleep.h) after a step whose touching pairs were `touching`: steps at rest,
  /// island minima, fall asleep (velocities zeroed) or wake. True for a body that fell asleep.
  std::vector<bool> updateSleep(const std::vector<std::pair<std::size_t, std::size_t>>& touching);
  /// Body-level contact against every collider: impulses from the contact solver, then a rigid
  /// translation out of each collider along its deepest point's normal. `start`: the body at the
  /// step's start (restitution's approach speeds); `moved`: the pose has already moved this step.
  void resolveBodyContacts(std::size_t b, const BodyState& start, bool moved);
  void gatherContacts(std::size_t b, const BodyState& start, int collider,
                      std::vector<PairContact<double>>& contacts);
  /// The collider contact manifold of body b (math/contact_solver.h reduceColliderContacts).
  void reduceToManifold(std::size_t b, std::vector<PairContact<double>>& contacts) const;
  void pushOut(std::size_t b);
  void averagedImpulse(std::size_t b, const std::vector<PairContact<double>>& contacts);
  void writeParticlesFromBody(std::size_t b);
  double contactMargin() const;
  /// The backends' (float) bounding radius of body b's shape: rounded up as they store it.
  double storedRadius(std::size_t b) const;
  bool awayFromColliders(std::size_t b, const BodyState& start) const;
  glm::dmat3 worldInverseInertia(std::size_t b) const;
  ContactMaterial<double> contactMaterial(std::size_t b) const;

  Scene scene_;
  SleepSettings<double> sleep_;  // scene_.sleepSettings, once (math/sleep.h)
  glm::dvec3 origin_;            // workingOrigin(scene_): the watchdog's bound is measured from it
  std::vector<BodyState> bodies_;
  std::vector<std::size_t> particleOffset_;  // (nbody + 1): particles of b are [off[b], off[b+1])
  std::vector<glm::dvec3> x_, v_;             // (nparticle) shape matching state
  std::int64_t steps_ = 0;
  std::int64_t contactOverflow_ = 0;
  std::int64_t pairOverflow_ = 0;
  std::size_t touchingPairs_ = 0;
  // Last step's contacts with their impulses, for warm starting: per touching pair (a, b) and
  // per body against the colliders (bodies in a pair only).
  std::map<std::pair<std::size_t, std::size_t>, std::vector<PairContact<double>>> previousPairs_;
  std::vector<std::vector<PairContact<double>>> previousColliderContacts_;
  std::vector<long long> incidentStep_;  // (nbody) first incident's step, −1 if none
  std::vector<Incident> incidentKind_;   // (nbody)
};

}  // namespace smash
