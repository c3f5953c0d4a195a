// smash — the first runner: run a scene on the CPU reference and print what happened.
//
//   smash run SCENE [--method shape_matching|impulse] [--frames N] [--every K]
//   smash validate SCENE
//
// Exit codes: 0 success (and the scene's checks passed), 1 a check failed, 2 bad input or usage.
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "core/error.h"
#include "reference/reference_world.h"
#include "scene/run_checks.h"
#include "scene/scene.h"

namespace {

int runScene(const std::string& path, const std::string& method, int frames, int every) {
  smash::Scene scene = smash::loadScene(path);
  if (method == "shape_matching") scene.solver.method = smash::Method::ShapeMatching;
  if (method == "impulse") scene.solver.method = smash::Method::Impulse;
  if (frames >= 0) scene.frames = frames;
  std::size_t particles = 0;
  for (const auto& b : scene.bodies) particles += scene.shapes[b.shape].rest.size();
  std::printf("scene %s: %zu bodies, %zu particles, method %s, backend reference (CPU, double)\n",
              scene.name.c_str(), scene.bodies.size(), particles,
              smash::methodName(scene.solver.method));
  std::printf("dt %g s per frame, %d substeps, %d frames (%.3f s)\n", scene.dt, scene.substeps,
              scene.frames, scene.dt * scene.frames);
  smash::ReferenceWorld world(std::move(scene));
  smash::RunChecks checks(world.scene().checks);
  std::printf("%7s %9s  %-34s %12s %12s\n", "frame", "time", "centre (body 0)", "kinetic",
              "penetration");
  for (int f = 1; f <= world.scene().frames; ++f) {
    for (int s = 0; s < world.scene().substeps; ++s) {
      world.step();
      checks.observe(world.observation());
    }
    if (f % every == 0 || f == world.scene().frames) {
      glm::dvec3 c = world.bodyCount() ? world.body(0).centre : glm::dvec3(0.0);
      char centre[64];
      std::snprintf(centre, sizeof centre, "(%9.4f, %9.4f, %9.4f)", c.x, c.y, c.z);
      std::printf("%7d %9.3f  %-34s %12.5g %12.3g\n", f, world.time(), centre,
                  world.kineticEnergy(), world.deepestPenetration());
    }
  }
  smash::Verdict verdict = checks.finish(world.maxParticleSpeed());
  std::printf("verdict: %s\n", verdict.pass ? "PASS" : "FAIL");
  for (const auto& line : verdict.lines) std::printf("  %s\n", line.c_str());
  return verdict.pass ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"smash: particle / shape-matching rigid-body solver (CPU reference runner)"};
  app.require_subcommand(1);
  std::string scenePath, method = "scene";
  int frames = -1, every = 10;
  auto* run = app.add_subcommand("run", "run a scene and print a per-frame summary and a verdict");
  run->add_option("scene", scenePath, "scene file (JSON)")->required();
  run->add_option("--method", method, "solver method, overriding the scene's")
      ->check(CLI::IsMember({"scene", "shape_matching", "impulse"}));
  run->add_option("--frames", frames, "number of frames, overriding the scene's")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--every", every, "print every K-th frame")->check(CLI::PositiveNumber);
  auto* validate = app.add_subcommand("validate", "load and check a scene, then exit");
  validate->add_option("scene", scenePath, "scene file (JSON)")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    if (*validate) {
      smash::Scene scene = smash::loadScene(scenePath);
      std::printf("%s: ok (%zu shapes, %zu bodies, %zu colliders)\n", scenePath.c_str(),
                  scene.shapes.size(), scene.bodies.size(), scene.colliders.size());
      return 0;
    }
    return runScene(scenePath, method, frames, every);
  } catch (const smash::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
