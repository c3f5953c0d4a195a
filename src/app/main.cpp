// smash — the first runner: run a scene on the CPU reference or a pipeline backend and print what
// happened.
//
//   smash run SCENE [--backend reference|cpp|omp|cuda] [--method shape_matching|impulse]
//                   [--frames N] [--every K]
//   smash validate SCENE
//
// Exit codes: 0 success (and the scene's checks passed), 1 a check failed, 2 bad input or usage,
// 3 stopped by the watchdog (a body went non-finite, left the world bound or exceeded the speed
// limit, with the scene's watchdog policy "stop").
#include <cstdio>
#include <memory>
#include <set>
#include <string>

#include <CLI/CLI.hpp>

#include "core/error.h"
#include "reference/reference_world.h"
#include "scene/run_checks.h"
#include "scene/scene.h"
#include "world/world.h"

namespace {

// The two kinds of world behind one small interface for the runner.
struct Runner {
  virtual ~Runner() = default;
  virtual void step() = 0;
  virtual glm::dvec3 centre0() const = 0;
  virtual double kineticEnergy() const = 0;
  virtual smash::StepObservation observation(std::int64_t step) const = 0;
  virtual double maxParticleSpeed() const = 0;
  virtual double time() const = 0;
  virtual std::vector<smash::BodyIncident> incidents() const = 0;
  virtual void poses(std::vector<glm::dvec3>& centres, std::vector<glm::dquat>& rotations) const = 0;
};

struct ReferenceRunner : Runner {
  explicit ReferenceRunner(const smash::Scene& s) : world(s) {}
  void step() override { world.step(); }
  glm::dvec3 centre0() const override { return world.bodyCount() ? world.body(0).centre : glm::dvec3(0.0); }
  double kineticEnergy() const override { return world.kineticEnergy(); }
  smash::StepObservation observation(std::int64_t) const override { return world.observation(); }
  double maxParticleSpeed() const override { return world.maxParticleSpeed(); }
  double time() const override { return world.time(); }
  std::vector<smash::BodyIncident> incidents() const override { return world.incidents(); }
  void poses(std::vector<glm::dvec3>& c, std::vector<glm::dquat>& r) const override {
    c.clear();
    r.clear();
    for (std::size_t b = 0; b < world.bodyCount(); ++b) {
      c.push_back(world.body(b).centre);
      r.push_back(world.orientation(b));
    }
  }
  smash::ReferenceWorld world;
};

struct WorldRunner : Runner {
  WorldRunner(smash::Backend backend, const smash::Scene& s)
      : scene(s), world(smash::World::create(backend, s)) {}
  void step() override {
    world->step();
    ++steps;
  }
  glm::dvec3 centre0() const override {
    return world->bodyCount() ? glm::dvec3(world->poses()[0].centre) : glm::dvec3(0.0);
  }
  double kineticEnergy() const override { return smash::kineticEnergy(*world, scene); }
  smash::StepObservation observation(std::int64_t step) const override {
    return smash::observe(*world, scene, step);
  }
  double maxParticleSpeed() const override {
    double s = 0;
    for (const glm::vec3& v : world->particleVelocities()) s = std::max(s, double(glm::length(v)));
    return s;
  }
  double time() const override { return double(steps) * scene.stepDt(); }
  std::vector<smash::BodyIncident> incidents() const override { return world->incidents(); }
  void poses(std::vector<glm::dvec3>& c, std::vector<glm::dquat>& r) const override {
    c.clear();
    r.clear();
    for (const smash::BodyPose& p : world->poses()) {
      c.push_back(glm::dvec3(p.centre));
      r.push_back(glm::dquat(p.rotation));
    }
  }
  smash::Scene scene;
  std::unique_ptr<smash::World> world;
  std::int64_t steps = 0;
};

int runScene(const std::string& path, const std::string& backendName, const std::string& method,
             int frames, int every) {
  smash::Scene scene = smash::loadScene(path);
  if (method == "shape_matching") scene.solver.method = smash::Method::ShapeMatching;
  if (method == "impulse") scene.solver.method = smash::Method::Impulse;
  if (frames >= 0) scene.frames = frames;
  std::size_t particles = 0;
  for (const auto& b : scene.bodies) particles += scene.shapes[b.shape].rest.size();
  std::unique_ptr<Runner> runner;
  std::string backendLabel;
  if (backendName == "reference") {
    runner = std::make_unique<ReferenceRunner>(scene);
    backendLabel = "reference (CPU, double)";
  } else {
    smash::Backend backend = smash::parseBackend(backendName);
    runner = std::make_unique<WorldRunner>(backend, scene);
    backendLabel = backendName + " (float)";
  }
  std::printf("scene %s: %zu bodies, %zu particles, method %s, backend %s\n", scene.name.c_str(),
              scene.bodies.size(), particles, smash::methodName(scene.solver.method),
              backendLabel.c_str());
  std::printf("dt %g s per frame, %d substeps, %d frames (%.3f s)\n", scene.dt, scene.substeps,
              scene.frames, scene.dt * scene.frames);
  smash::RunChecks checks(scene.checks);
  const bool bodies = scene.bodyContactsActive();
  std::printf("%7s %9s  %-34s %12s %12s%s\n", "frame", "time", "centre (body 0)", "kinetic",
              "penetration", bodies ? "   body-body" : "");
  std::vector<glm::dvec3> centres;
  std::vector<glm::dquat> rotations;
  std::int64_t steps = 0;
  std::set<unsigned long long> reported;
  for (int f = 1; f <= scene.frames; ++f) {
    smash::StepObservation last;
    for (int s = 0; s < scene.substeps; ++s) {
      runner->step();
      last = runner->observation(++steps);
      checks.observe(last);
    }
    // The watchdog: report each flagged body once; with the "stop" policy, stop here.
    std::vector<smash::BodyIncident> incidents = runner->incidents();
    for (const smash::BodyIncident& incident : incidents)
      if (reported.insert(incident.body).second)
        std::printf("watchdog: body %llu: %s at step %lld\n", incident.body,
                    smash::incidentName(incident.what), incident.step);
    if (!incidents.empty() && scene.watchdog.policy == smash::Watchdog::Policy::Stop) {
      std::printf("stopped by the watchdog at frame %d (policy \"stop\"); results after this are not valid\n", f);
      return 3;
    }
    smash::BodyPenetration bp;
    if (bodies) {
      runner->poses(centres, rotations);
      bp = smash::deepestBodyPenetration(scene, centres, rotations);
      checks.observeBodies(bp, steps);
    }
    if (f % every == 0 || f == scene.frames) {
      glm::dvec3 c = runner->centre0();
      char centre[64];
      std::snprintf(centre, sizeof centre, "(%9.4f, %9.4f, %9.4f)", c.x, c.y, c.z);
      std::printf("%7d %9.3f  %-34s %12.5g %12.3g", f, runner->time(), centre,
                  runner->kineticEnergy(), last.deepestPenetration);
      if (bodies) std::printf("  %10.3g", bp.depth);
      std::printf("\n");
    }
  }
  checks.finalKineticEnergy(runner->kineticEnergy());
  smash::Verdict verdict = checks.finish(runner->maxParticleSpeed());
  std::printf("verdict: %s\n", verdict.pass ? "PASS" : "FAIL");
  for (const auto& line : verdict.lines) std::printf("  %s\n", line.c_str());
  return verdict.pass ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"smash: particle / shape-matching rigid-body solver (first runner)"};
  app.require_subcommand(1);
  std::string scenePath, method = "scene", backend = "reference";
  int frames = -1, every = 10;
  auto* run = app.add_subcommand("run", "run a scene and print a per-frame summary and a verdict");
  run->add_option("scene", scenePath, "scene file (JSON)")->required();
  run->add_option("--backend", backend, "where to run: the double-precision CPU reference, or a pipeline backend")
      ->check(CLI::IsMember({"reference", "cpp", "omp", "cuda"}));
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
    return runScene(scenePath, backend, method, frames, every);
  } catch (const smash::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
