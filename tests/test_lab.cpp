// The lab scene (physics.md §8) with both methods: it flies, hits the wall and the ground, bounces with
// decreasing height and comes to rest on the ground without sinking or passing the wall.
#include <catch2/catch.hpp>

#include "reference/reference_world.h"
#include "scene/run_checks.h"
#include "test_util.h"

using namespace smash;

TEST_CASE("lab bunny: both methods come to rest on the ground", "[reference][lab]") {
  for (Method method : {Method::ShapeMatching, Method::Impulse}) {
    INFO(methodName(method));
    Scene scene = loadScene(test::sourcePath("scenes/lab_bunny.json"));
    scene.solver.method = method;
    // The scene's own checks: penetration <= 1 mm, final particle speed <= 5 cm/s, and every
    // particle inside x <= 2.001 (the wall) and y >= 0.009 (the ground) at every step.
    REQUIRE(scene.checks.maxPenetration);
    REQUIRE(scene.checks.restSpeed);
    REQUIRE(scene.checks.boundsMax);
    ReferenceWorld world(scene);
    RunChecks checks(world.scene().checks);
    double maxX = -1e9, firstGroundStep = -1, wallStep = -1;
    std::vector<double> apexes;  // heights of the centre between ground contacts
    double prevY = world.body(0).centre.y, prevVy = world.body(0).velocity.y;
    for (int n = 0; n < world.scene().frames; ++n) {
      world.step();
      StepObservation o = world.observation();
      checks.observe(o);
      maxX = std::max(maxX, o.particleMax.x);
      // At the wall: the x velocity turned back while the particles were within a step's travel
      // of it (a bounce is placed at its moment within the step, so it can fall between samples).
      const double h = world.scene().stepDt();
      if (wallStep < 0 && world.body(0).velocity.x < 0 && o.particleMax.x > 2.0 - 6.0 * h) wallStep = n;
      if (firstGroundStep < 0 && o.particleMin.y < 0.01 + 1e-6) firstGroundStep = n;
      double vy = world.body(0).velocity.y;
      if (prevVy > 0 && vy <= 0 && n > 0) apexes.push_back(prevY);
      prevY = world.body(0).centre.y;
      prevVy = vy;
    }
    Verdict v = checks.finish(world.maxParticleSpeed());
    for (const auto& line : v.lines) INFO(line);
    REQUIRE(v.pass);
    REQUIRE(wallStep > 0);           // it bounced off the wall
    REQUIRE(maxX <= 2.001);
    REQUIRE(firstGroundStep > 0);    // and the ground
    REQUIRE(checks.deepestPenetration() < 1e-3);
    REQUIRE(apexes.size() >= 2);     // it bounced after the first flight
    // Resting on the ground: the lowest particle touches it, the centre is above it.
    REQUIRE(world.observation().particleMin.y == Approx(0.01).margin(5e-3));
    REQUIRE(world.body(0).centre.y > 0.1);
  }
}

TEST_CASE("lab bunny: the literal physics.md section 3 averaged impulse", "[reference][lab]") {
  // One impulse per collider at the average of the approaching contact points, as the course
  // lab does. It flies, hits the wall, bounces and loses most of its energy without sinking or
  // crossing the wall, but a single averaged point cannot hold a resting body on several points,
  // so it keeps rocking; that is why the sequential solver is the default (docs/solver.md).
  for (Method method : {Method::ShapeMatching, Method::Impulse}) {
    INFO(methodName(method));
    Scene scene = loadScene(test::sourcePath("scenes/lab_bunny.json"));
    scene.solver.method = method;
    scene.solver.contactSolver = ContactSolver::Averaged;
    ReferenceWorld world(scene);
    RunChecks checks(world.scene().checks);
    const double initialEnergy = world.kineticEnergy();
    double maxX = -1e9;
    for (int n = 0; n < world.scene().frames; ++n) {
      world.step();
      StepObservation o = world.observation();
      checks.observe(o);
      maxX = std::max(maxX, o.particleMax.x);
    }
    Verdict v = checks.finish(world.maxParticleSpeed());
    REQUIRE(v.lines.size() == 4);
    REQUIRE(v.lines[0].rfind("ok", 0) == 0);  // finite
    REQUIRE(v.lines[1].rfind("ok", 0) == 0);  // penetration within 1 mm
    REQUIRE(v.lines[3].rfind("ok", 0) == 0);  // never through the wall or the ground
    REQUIRE(maxX > 2.0 - 1e-6);
    REQUIRE(world.kineticEnergy() < 0.05 * initialEnergy);
  }
}

TEST_CASE("bunny grid: ten bodies settle in a container", "[reference][scene]") {
  // Surface-sampled bunnies from a seeded grid generator and a cow, dropped into an inside-out
  // box with a sphere on its floor; spaced so that they do not meet (no body-body contact yet).
  for (Method method : {Method::ShapeMatching, Method::Impulse}) {
    INFO(methodName(method));
    Scene scene = loadScene(test::sourcePath("scenes/bunny_grid.json"));
    scene.solver.method = method;
    REQUIRE(scene.bodies.size() == 10);
    ReferenceWorld world(scene);
    RunChecks checks(world.scene().checks);
    for (int f = 0; f < world.scene().frames; ++f)
      for (int s = 0; s < world.scene().substeps; ++s) {
        world.step();
        checks.observe(world.observation());
      }
    Verdict v = checks.finish(world.maxParticleSpeed());
    for (const auto& line : v.lines) INFO(line);
    REQUIRE(v.pass);
  }
}
