// Scenes built in code for the backend-parity tests and the benchmark.
#pragma once

#include <string>
#include <vector>

#include "core/random.h"
#include "core/shape.h"
#include "scene/scene.h"

namespace smash::test {

/// A seeded cloud of `count` particles (count ≥ 1) inside a box of half-size `size`.
inline Shape randomShape(int count, double size, std::uint64_t seed) {
  Random rng(seed);
  std::vector<glm::dvec3> p;
  std::vector<double> m;
  for (int i = 0; i < count; ++i) {
    p.push_back(rng.uniform3(glm::dvec3(-size, -0.6 * size, -0.8 * size), glm::dvec3(size, 0.6 * size, 0.8 * size)));
    m.push_back(rng.uniform(0.5, 2.0));
  }
  return shapeFromParticles("cloud" + std::to_string(count), p, m);
}

/// `bodies` bodies cycling through `shapes`, on a grid above a ground plane with a wall, thrown
/// with seeded velocities and spins so that they fly, tumble and hit both.
inline Scene parityScene(std::vector<Shape> shapes, int bodies, std::uint64_t seed, Method method,
                         double spacing = 1.5) {
  Scene s;
  s.name = "parity";
  s.dt = 0.01;
  s.substeps = 1;
  s.solver.method = method;
  s.linearDamping = 0.999;
  s.angularDamping = 0.98;
  s.solver.restitutionThreshold = 0.3;
  // These scenes test the pipeline of independent bodies (their random clouds have no mesh).
  s.solver.bodyContacts = false;
  // Compared one step at a time from the reference's state (setPoses wakes every body): sleeping
  // is compared by its own tests (test_body_contacts.cpp, "sleeping: ...").
  s.solver.sleep = false;
  s.materials.push_back(Material{"default", 0.5, 0.3});
  Collider<double> ground;
  ground.type = ColliderType::Plane;
  ground.point = glm::dvec3(0, 0, 0);
  ground.normal = glm::dvec3(0, 1, 0);
  s.colliders.push_back(ground);
  Collider<double> wall;
  wall.type = ColliderType::Plane;
  wall.point = glm::dvec3(-2.0, 0, 0);
  wall.normal = glm::dvec3(1, 0, 0);
  s.colliders.push_back(wall);
  s.shapes = std::move(shapes);
  Random rng(seed);
  int side = 1;
  while (side * side < bodies) ++side;
  for (int b = 0; b < bodies; ++b) {
    Body body;
    body.shape = b % static_cast<int>(s.shapes.size());
    body.position = glm::dvec3((b % side) * spacing, 1.0 + rng.uniform(0, 1.0), (b / side) * spacing);
    // Draws in a fixed order (Random::uniform3): the axis's y, its x, then the angle.
    const double axisY = rng.uniform(-1, 1);
    const double axisX = rng.uniform(-1, 1);
    const double angle = rng.uniform(0, 6.28);
    body.rotation = glm::angleAxis(angle, glm::normalize(glm::dvec3(axisX, axisY, 0.3)));
    body.velocity = rng.uniform3(glm::dvec3(-4, -1, -0.5), glm::dvec3(0, 2, 0.5));
    body.angularVelocity = rng.uniform3(-3, 3);
    s.bodies.push_back(body);
  }
  return s;
}

}  // namespace smash::test
