// The peer in bench/bench_pile.cpp: the same scene in Bullet (Debian's libbullet-dev), as
// bench/peers/peer_scene.h prepares it for every peer: each shape as the convex hull of its mesh
// in the shape's principal frame with its principal moments, smash's per-step damping converted to
// Bullet's per-second coefficients, smash's material mixing, and the colliders as static planes,
// boxes and spheres; one Bullet step per smash step. Optional: built when CMake finds Bullet.
#pragma once

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>
#include <memory>
#include <string>
#include <vector>

#include "scene/scene.h"

namespace smash::peers {

class BulletPile {
 public:
  /// Throws InputError for colliders it cannot represent (meshes, capsules).
  explicit BulletPile(const Scene& scene);
  ~BulletPile();
  void step();  ///< one step of scene.stepDt()
  /// Centres of mass and rotations in smash's body frame (converted from the principal frame).
  void poses(std::vector<glm::dvec3>& centres, std::vector<glm::dquat>& rotations) const;
  double kineticEnergy() const;
  /// Vertices of each shape's reduced hull.
  const std::vector<int>& hullVertices() const { return hullVertices_; }
  int solverIterations() const;
  std::string version() const;  ///< of the Bullet linked, e.g. "3.24"
  /// Bullet's damping coefficients (per second) that reproduce smash's per-step factors.
  double linearDamping() const;
  double angularDamping() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<int> hullVertices_;
};

}  // namespace smash::peers
