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

/// The reference behind World's interface (World::create(Backend::Reference, scene)), so the
/// command, the benchmarks, the Python module and the tests read it as they read a backend; the
/// double-precision extras below are for tests of the physics itself.
class ReferenceWorld final : public World {
 public:
  /// Throws InputError when plannedBytes(scene) exceeds the memory this process can use.
  explicit ReferenceWorld(Scene scene);

  /// Host bytes the world holds for `scene`: per particle x and v in double (48 B), the copies a
  /// run observes them through (World::particleStates, 48 B) and the float copies it reads back
  /// (24 B); per body its state, offsets, incident and contact-list slots.
  /// Contact lists themselves (at most max_contacts_per_body per body) are not counted.
  static std::size_t plannedBytes(const Scene& scene);

  // ---- World (world/world.h) -----------------------------------------------------------------
  Backend backend() const override { return Backend::Reference; }
  /// One body at a time, serially (the reference has one layout).
  StepStrategy strategy() const override { return StepStrategy::PerBody; }
  std::size_t bodyCount() const override { return bodies_.size(); }
  std::size_t particleCount() const override { return x_.size(); }
  /// One solver step of length scene().stepDt().
  void step() override;
  void synchronize() override {}
  std::vector<BodyPose> poses() const override;
  void setPoses(const std::vector<BodyPose>& poses) override;
  std::vector<glm::vec3> particlePositions() const override;
  glm::dvec3 origin() const override { return origin_; }
  std::vector<glm::vec3> particlePositionsRelative() const override;
  /// Null: the reference holds its particles in double.
  const float* hostParticleState(bool) const override { return nullptr; }
  std::vector<glm::vec3> particleVelocities() const override;
  std::vector<glm::dvec3> particleStates(bool velocity) const override { return velocity ? v_ : x_; }
  std::vector<glm::dquat> orientations() const override;
  std::vector<BodyIncident> incidents() const override;
  std::int64_t stepCount() const override { return steps_; }
  /// State files are the pipeline's format: refused here (InputError naming `source`).
  std::vector<std::uint8_t> saveState() const override;
  void loadState(const std::vector<std::uint8_t>& state, const std::string& source = "state") override;
  /// Collider contacts dropped by the max_contacts_per_body rule since the start (a body pair's
  /// points reduce to its manifold: nothing is dropped there).
  std::int64_t contactOverflow() const override { return contactOverflow_; }
  /// Broad-phase pairs dropped by the max_pairs_per_body rule since the start.
  std::int64_t pairOverflow() const override { return pairOverflow_; }
  /// Body pairs with contact points in the last step.
  std::int64_t touchingPairs() const override { return static_cast<std::int64_t>(touchingPairs_); }
  /// Bodies asleep now (math/sleep.h).
  std::int64_t sleepingBodies() const override;
  /// The last step's accumulated normal impulses summed per touching pair (a < b, in order), then
  /// per body in a pair against the colliders.
  std::vector<PairNormalImpulse> lastPairImpulses() const override;
  /// No Thrust, no device, no launches, no stage timer: zeros and empty records.
  long temporaryAllocations() const override { return 0; }
  std::int64_t stepHostReads() const override { return 0; }
  std::size_t deviceBytes() const override { return 0; }
  void setCensus(bool) override {}
  Census census() const override { return {}; }
  void setProfiling(bool) override {}
  StageTimes stageTimes() const override { return {}; }
  void resetStageTimes() override {}

  // ---- The reference's own, in double ---------------------------------------------------------
  const Scene& scene() const { return scene_; }
  const BodyState& body(std::size_t b) const { return bodies_[b]; }
  glm::dquat orientation(std::size_t b) const;

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
  /// What RunChecks needs after a step.
  StepObservation observation() const;
  /// Last step's contact points with their accumulated impulses (the warm-start state): per
  /// touching pair (a < b), and per body against the colliders — every body where bodies do not
  /// touch, the bodies in pairs where they do (src/reference/resting_lcp.h).
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
  /// single-body path (resolveBodyContacts). The stages below, in the backends' order; each
  /// names the kernels it stands for (kernels/pipeline/device_world.inl bodyContactPhase).
  /// Returns the pairs that touched (had contact points).
  std::vector<std::pair<std::size_t, std::size_t>> resolveAllContacts(const std::vector<BodyState>& start);
  /// Sort-and-sweep along x over the bodies' bounding boxes; pairs (a < b), sorted.
  std::vector<std::pair<std::size_t, std::size_t>> broadPhase();
  struct Pair {
    std::size_t a, b;
    std::vector<PairContact<double>> contacts;
  };
  /// What the stages of one step's contact solve share.
  struct ContactSolve {
    bool withColliders = false;  ///< collider contacts are solved with the pairs (impulse contact model)
    std::vector<Pair> pairs;     ///< the touching pairs, in (a, b) order
    std::vector<std::vector<std::size_t>> pairsOf;                   ///< (n) a body's pairs, in pair order
    std::vector<std::vector<PairContact<double>>> colliderContacts;  ///< (n) of the bodies in pairs
    std::vector<int> split;                                          ///< (n) pairs + 1 if it has collider contacts
    std::vector<ContactMaterial<double>> pairMaterial;               ///< (pairs)
    std::vector<BodyState> predicted;                                ///< (n) the bodies before the solve
    std::vector<PairImpulse<double>> onA, onB, onBody;               ///< this round's impulses
    /// Gauss–Seidel rounds (math/pair_colors.h): the pairs in sweep order, by colour (the
    /// overflow last, in pair order).
    std::vector<std::size_t> colorOrder;
    int levels = 0;                       ///< shock propagation levels (0: none)
    std::vector<int> level, support;      ///< (n) a body's level, (pairs) which side a pair holds up
    /// Pair p carries body b: b rests on the other body, of a lower level.
    bool carried(std::size_t p, std::size_t b) const;
  };
  void narrowPhase(ContactSolve& s, const std::vector<std::pair<std::size_t, std::size_t>>& candidates,
                   const std::vector<BodyState>& start);
  void wakeTouchedIslands(ContactSolve& s, const std::vector<std::pair<std::size_t, std::size_t>>& candidates,
                          const std::vector<BodyState>& start);
  void prepareBodies(ContactSolve& s, const std::vector<BodyState>& start);
  void preparePairs(ContactSolve& s, const std::vector<BodyState>& start);
  void applyRound(const ContactSolve& s);
  void solveRound(ContactSolve& s);
  /// Every contact's response for the rounds' masses: split (Jacobi) or whole (Gauss–Seidel).
  void prepareResponses(ContactSolve& s, bool split) const;
  /// The Gauss–Seidel rounds' colouring, as the backends' ColorSeed, ColorTentative, ColorRepair.
  void colorPairs(ContactSolve& s) const;
  /// One Gauss–Seidel round: the colours in order, the overflow, every body's collider contacts.
  void solveRoundInPlace(ContactSolve& s);
  void shockVelocities(ContactSolve& s);
  void finishPairBodies(const ContactSolve& s, const std::vector<BodyState>& start);
  void shockPositions(const ContactSolve& s, const std::vector<BodyState>& start);
  /// solverBody(b, 1) with the velocities of `with` (the state before the solve).
  SolverBody<double> solverBodyMoving(std::size_t b, const BodyState& with) const;
  /// solverBody(b, 1) with the approach velocities restitution is taken from: `start`'s linear
  /// velocity and its angular momentum at `predicted`'s pose (the backends' withApproachVelocities).
  SolverBody<double> solverBodyApproach(std::size_t b, const BodyState& start, const BodyState& predicted) const;
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
  /// Out of the colliders, swept from the step's start where the body travelled far (contact_solver.h
  /// PushStart); returns the deepest push's particle (−1: none).
  int pushOut(std::size_t b, const BodyState& start);
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
  // per body against the colliders; and this step's collider contacts, as each body solves them.
  std::map<std::pair<std::size_t, std::size_t>, std::vector<PairContact<double>>> previousPairs_;
  std::vector<std::vector<PairContact<double>>> previousColliderContacts_, solvedColliderContacts_;
  std::vector<long long> incidentStep_;  // (nbody) first incident's step, −1 if none
  std::vector<Incident> incidentKind_;   // (nbody)
};

}  // namespace smash
