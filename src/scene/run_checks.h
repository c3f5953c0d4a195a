// The verdict of a run: the scene's own `checks` plus "everything stayed finite", evaluated from
// observations taken after every step. Backend-agnostic: any world that can report these numbers
// can be judged, so the runner and the tests share one definition of "the scene worked".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scene/scene.h"

namespace smash {

struct StepObservation {
  std::int64_t step = 0;
  bool finite = true;
  double deepestPenetration = 0;
  glm::dvec3 particleMin{0.0}, particleMax{0.0};  ///< bounds of all particles
};

struct Verdict {
  bool pass = true;
  std::vector<std::string> lines;  ///< one per check: "ok ..." or "FAIL ..."
};

/// The observation of a set of particles against the scene's colliders: finiteness of positions
/// and velocities, the bounds of the positions, the deepest penetration (≥ 0).
StepObservation observeParticles(std::int64_t step, const std::vector<glm::dvec3>& positions,
                                 const std::vector<glm::dvec3>& velocities,
                                 const std::vector<Collider<double>>& colliders);

/// The deepest point of any body inside another (physics.md §6): every particle of every body against
/// the baked field of every other body whose bounding sphere it is in (sort and sweep over the
/// bodies' spheres; double arithmetic on the float grids). Bodies are given by pose; any solver's
/// poses can be measured, smash's or a peer's. `relative` is depth over the diameter (twice the
/// bounding radius) of the smaller body of that pair. Zero when shapes are not baked.
struct BodyPenetration {
  double depth = 0;
  double relative = 0;
  std::int64_t pairs = 0;  ///< overlapping bounding spheres examined
};
BodyPenetration deepestBodyPenetration(const Scene& scene, const std::vector<glm::dvec3>& centres,
                                       const std::vector<glm::dquat>& rotations);

class RunChecks {
 public:
  explicit RunChecks(const SceneChecks& checks) : checks_(checks) {}
  void observe(const StepObservation& o);
  /// Body–body penetration (at the end of a frame: it costs a pass over all particles).
  void observeBodies(const BodyPenetration& b, std::int64_t step);
  /// Kinetic energy at the end of the run (for checks.max_final_kinetic_energy).
  void finalKineticEnergy(double e) { finalEnergy_ = e; }
  /// finalMaxSpeed: largest particle speed at the end of the run.
  Verdict finish(double finalMaxSpeed) const;

  double deepestPenetration() const { return deepest_; }
  std::int64_t deepestStep() const { return deepestStep_; }
  const BodyPenetration& deepestBody() const { return deepestBody_; }

 private:
  SceneChecks checks_;
  double deepest_ = 0;
  BodyPenetration deepestBody_;
  std::int64_t deepestBodyStep_ = 0;
  double finalEnergy_ = -1;
  std::int64_t deepestStep_ = 0, observed_ = 0;
  std::int64_t firstNonFinite_ = -1, firstOutOfBounds_ = -1;
  glm::dvec3 worstMin_{1e300}, worstMax_{-1e300};
};

}  // namespace smash
