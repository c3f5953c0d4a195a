// The peer in bench/bench_pile.cpp: the same scene in Bullet (Debian's libbullet-dev), each shape
// as the convex hull of its mesh, the colliders as static planes and boxes, one Bullet step per
// smash step. Optional: built when CMake finds Bullet.
#pragma once

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>
#include <memory>
#include <vector>

#include "scene/scene.h"

namespace smash::peers {

class BulletPile {
 public:
  /// Throws InputError for colliders it cannot represent (mesh colliders, capsules are fine).
  explicit BulletPile(const Scene& scene);
  ~BulletPile();
  void step();  ///< one step of scene.stepDt()
  void poses(std::vector<glm::dvec3>& centres, std::vector<glm::dquat>& rotations) const;
  double kineticEnergy() const;
  /// Vertices of each shape's reduced hull.
  const std::vector<int>& hullVertices() const { return hullVertices_; }
  int solverIterations() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<int> hullVertices_;
};

}  // namespace smash::peers
