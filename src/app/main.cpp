// smash — the command line: run a scene (with outputs, pictures and progress), validate a scene,
// benchmark a scene on several backends. `smash --help` and `smash <command> --help` document
// every option; docs/cli.md has examples.
//
// Exit codes: 0 success (and the scene's checks passed), 1 a check failed, 2 bad input or usage
// (the message names the file, field or option), 3 stopped by the watchdog, 4 the outputs could
// not be written.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/outputs.h"
#include "io/render.h"
#include "reference/reference_world.h"
#include "scene/run_checks.h"
#include "scene/scene.h"
#include "world/world.h"

namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

/// Thrown when outputs cannot be written (exit code 4).
struct OutputError : smash::InputError {
  using smash::InputError::InputError;
};

// The two kinds of world behind one small interface.
struct Runner {
  virtual ~Runner() = default;
  virtual void step() = 0;
  virtual void sync() {}
  virtual glm::dvec3 centre0() const = 0;
  virtual double kineticEnergy() const = 0;
  virtual smash::StepObservation observation(std::int64_t step) const = 0;
  virtual double maxParticleSpeed() const = 0;
  virtual std::vector<smash::BodyIncident> incidents() const = 0;
  virtual void poses(std::vector<glm::dvec3>& centres, std::vector<glm::dquat>& rotations) const = 0;
  virtual std::vector<glm::vec3> particles() const = 0;
  virtual Json counters() const = 0;
};

struct ReferenceRunner : Runner {
  explicit ReferenceRunner(const smash::Scene& s) : world(s) {}
  void step() override { world.step(); }
  glm::dvec3 centre0() const override { return world.bodyCount() ? world.body(0).centre : glm::dvec3(0.0); }
  double kineticEnergy() const override { return world.kineticEnergy(); }
  smash::StepObservation observation(std::int64_t) const override { return world.observation(); }
  double maxParticleSpeed() const override { return world.maxParticleSpeed(); }
  std::vector<smash::BodyIncident> incidents() const override { return world.incidents(); }
  void poses(std::vector<glm::dvec3>& c, std::vector<glm::dquat>& r) const override {
    c.clear();
    r.clear();
    for (std::size_t b = 0; b < world.bodyCount(); ++b) {
      c.push_back(world.body(b).centre);
      r.push_back(world.orientation(b));
    }
  }
  std::vector<glm::vec3> particles() const override { return world.particlePositions(); }
  Json counters() const override {
    return {{"contact_overflow", world.contactOverflow()}, {"pair_overflow", world.pairOverflow()},
            {"touching_pairs", world.touchingPairs()}};
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
  void sync() override { world->synchronize(); }
  glm::dvec3 centre0() const override {
    return world->bodyCount() ? glm::dvec3(world->poses()[0].centre) : glm::dvec3(0.0);
  }
  double kineticEnergy() const override { return smash::kineticEnergy(*world, scene); }
  smash::StepObservation observation(std::int64_t step) const override { return smash::observe(*world, scene, step); }
  double maxParticleSpeed() const override {
    double s = 0;
    for (const glm::vec3& v : world->particleVelocities()) s = std::max(s, double(glm::length(v)));
    return s;
  }
  std::vector<smash::BodyIncident> incidents() const override { return world->incidents(); }
  void poses(std::vector<glm::dvec3>& c, std::vector<glm::dquat>& r) const override {
    c.clear();
    r.clear();
    for (const smash::BodyPose& p : world->poses()) {
      c.push_back(glm::dvec3(p.centre));
      r.push_back(glm::dquat(p.rotation));
    }
  }
  std::vector<glm::vec3> particles() const override { return world->particlePositions(); }
  Json counters() const override {
    return {{"contact_overflow", world->contactOverflow()}, {"pair_overflow", world->pairOverflow()},
            {"touching_pairs", world->touchingPairs()}};
  }
  smash::Scene scene;
  std::unique_ptr<smash::World> world;
  std::int64_t steps = 0;
};

/// Progress of a long run on stderr: redrawn in place on a terminal, a plain line every 10 s
/// (and at the end) otherwise.
class Progress {
 public:
  Progress(int frames, double particles, double stepDt, int substeps, bool enabled)
      : frames_(frames), particles_(particles), stepDt_(stepDt), substeps_(substeps),
        tty_(isatty(fileno(stderr)) != 0), enabled_(enabled), start_(Clock::now()), last_(start_) {}

  void update(int frame, bool final = false) {
    if (!enabled_) return;
    const auto now = Clock::now();
    const double sinceDraw = std::chrono::duration<double>(now - last_).count();
    if (!final && sinceDraw < (tty_ ? 0.2 : 10.0)) return;
    last_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double rate = elapsed > 0 ? particles_ * frame * substeps_ / elapsed : 0;
    const double eta = frame > 0 ? elapsed * (frames_ - frame) / frame : 0;
    char line[200];
    std::snprintf(line, sizeof line, "frame %d/%d (%3.0f%%)  t = %.3f s  %.3g particle-steps/s  elapsed %s  ETA %s",
                  frame, frames_, frames_ ? 100.0 * frame / frames_ : 100.0, frame * substeps_ * stepDt_, rate,
                  clock(elapsed).c_str(), clock(eta).c_str());
    if (tty_)
      std::fprintf(stderr, "\r\033[K%s%s", line, final ? "\n" : "");
    else
      std::fprintf(stderr, "%s\n", line);
    std::fflush(stderr);
    drawn_ = !final;
  }
  /// Before printing to stdout on a terminal: take the progress line away.
  void clear() {
    if (enabled_ && tty_ && drawn_) {
      std::fprintf(stderr, "\r\033[K");
      std::fflush(stderr);
      drawn_ = false;
    }
  }

 private:
  static std::string clock(double s) {
    char buf[32];
    const long t = std::lround(s);
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
    return buf;
  }
  int frames_;
  double particles_, stepDt_;
  int substeps_;
  bool tty_, enabled_, drawn_ = false;
  Clock::time_point start_, last_;
};

struct RunOptions {
  std::string scene, backend = "auto", method = "scene", out, progress = "auto", size = "960x540";
  int frames = -1, substeps = -1, every = 10, exportEvery = 1, particlesEvery = 0, renderEvery = 1;
  int samples = 2;
  bool render = false, noGltf = false, noCsv = false, quiet = false;
};

std::string resolveBackend(const std::string& name) {
  if (name != "auto") return name;
  return smash::backendAvailable(smash::Backend::Cuda) ? "cuda" : "omp";
}

smash::Scene loadForRun(const std::string& path, const std::string& method, int frames, int substeps) {
  smash::Scene scene = smash::loadScene(path);
  if (method == "shape_matching") scene.solver.method = smash::Method::ShapeMatching;
  if (method == "impulse") scene.solver.method = smash::Method::Impulse;
  if (frames >= 0) scene.frames = frames;
  if (substeps > 0) scene.substeps = substeps;
  return scene;
}

std::unique_ptr<Runner> makeRunner(const std::string& backend, const smash::Scene& scene, std::string& label,
                                   std::string& device) {
  if (backend == "reference") {
    label = "reference (CPU, double)";
    device = smash::backendDevice(smash::Backend::Cpp);
    return std::make_unique<ReferenceRunner>(scene);
  }
  const smash::Backend b = smash::parseBackend(backend);
  if (!smash::backendAvailable(b))
    throw smash::InputError("--backend: '" + backend + "' is not available on this machine (no CUDA device); use auto, omp or cpp");
  label = backend + " (float)";
  device = smash::backendDevice(b);
  return std::make_unique<WorldRunner>(b, scene);
}

void parseSize(const std::string& size, int& w, int& h) {
  const auto x = size.find('x');
  try {
    if (x == std::string::npos) throw std::invalid_argument("no x");
    std::size_t used = 0;
    w = std::stoi(size.substr(0, x), &used);
    if (used != x) throw std::invalid_argument("width");
    h = std::stoi(size.substr(x + 1), &used);
    if (used != size.size() - x - 1) throw std::invalid_argument("height");
  } catch (const std::exception&) {
    throw smash::InputError("--size: '" + size + "' is not WIDTHxHEIGHT (for example 960x540)");
  }
}

int runCommand(const RunOptions& o) {
  smash::Scene scene = loadForRun(o.scene, o.method, o.frames, o.substeps);
  const std::string backend = resolveBackend(o.backend);
  int width = 0, height = 0;
  parseSize(o.size, width, height);
  if (o.render) smash::io::checkRenderOptions({width, height, o.samples});
  std::size_t particles = 0;
  for (const auto& b : scene.bodies) particles += scene.shapes[b.shape].rest.size();
  std::string label, device;
  std::unique_ptr<Runner> runner = makeRunner(backend, scene, label, device);
  std::unique_ptr<smash::io::RunOutputs> outputs;
  if (!o.out.empty()) {
    smash::io::OutputOptions oo;
    oo.folder = o.out;
    oo.gltf = !o.noGltf;
    oo.csv = !o.noCsv;
    oo.exportEvery = o.exportEvery;
    oo.particlesEvery = o.particlesEvery;
    try {
      outputs = std::make_unique<smash::io::RunOutputs>(scene, oo);
    } catch (const smash::InputError& e) {
      throw OutputError(e.what());
    }
  } else if (o.render) {
    throw smash::InputError("--render: needs --out FOLDER to write the pictures into");
  }
  auto say = [&](const char* fmt, auto... args) {
    if (!o.quiet) std::printf(fmt, args...);
  };
  say("scene %s: %zu bodies, %zu particles, method %s, backend %s on %s\n", scene.name.c_str(),
      scene.bodies.size(), particles, smash::methodName(scene.solver.method), label.c_str(), device.c_str());
  say("dt %g s per frame, %d substeps, %d frames (%.3f s)\n", scene.dt, scene.substeps, scene.frames,
      scene.dt * scene.frames);
  const bool bodies = scene.bodyContactsActive();
  say("%7s %9s  %-34s %12s %12s%s\n", "frame", "time", "centre (body 0)", "kinetic", "penetration",
      bodies ? "   body-body" : "");
  const bool showProgress = o.progress == "always" || (o.progress == "auto" && !o.quiet);
  Progress progress(scene.frames, double(particles), scene.stepDt(), scene.substeps, showProgress);
  smash::RunChecks checks(scene.checks);
  std::vector<glm::dvec3> centres;
  std::vector<glm::dquat> rotations;
  auto record = [&](int frame) {
    if (!outputs) return;
    smash::io::FramePoses f;
    f.frame = frame;
    f.time = frame * scene.dt;
    runner->poses(f.centres, f.rotations);
    try {
      outputs->addFrame(f, frame == scene.frames);
      if (outputs->wantsParticles(frame)) outputs->addParticles(frame, runner->particles());
    } catch (const smash::InputError& e) {
      throw OutputError(e.what());
    }
  };
  record(0);
  std::int64_t steps = 0;
  double stepSeconds = 0;
  std::set<unsigned long long> reported;
  int stoppedAt = -1;
  // Observations copy every particle to the host: after every step only when the scene checks
  // per-step quantities (max_penetration, bounds), else once per frame. The body–body
  // penetration (a pass over every overlapping pair) likewise runs every frame only when the
  // scene checks it, else on the frames the table prints.
  const bool observeEveryStep = scene.checks.maxPenetration.has_value() || scene.checks.boundsMin.has_value();
  const bool bodiesEveryFrame = scene.checks.maxBodyPenetration.has_value();
  for (int f = 1; f <= scene.frames; ++f) {
    smash::StepObservation last;
    for (int s = 0; s < scene.substeps; ++s) {
      auto t0 = Clock::now();
      runner->step();
      runner->sync();
      stepSeconds += std::chrono::duration<double>(Clock::now() - t0).count();
      ++steps;
      if (observeEveryStep || s + 1 == scene.substeps) {
        last = runner->observation(steps);
        checks.observe(last);
      }
    }
    // The watchdog: report each flagged body once; with the "stop" policy, stop here.
    std::vector<smash::BodyIncident> incidents = runner->incidents();
    for (const smash::BodyIncident& incident : incidents)
      if (reported.insert(incident.body).second) {
        progress.clear();
        std::printf("watchdog: body %llu: %s at step %lld\n", incident.body, smash::incidentName(incident.what),
                    incident.step);
      }
    if (!incidents.empty() && scene.watchdog.policy == smash::Watchdog::Policy::Stop) {
      progress.clear();
      std::printf("stopped by the watchdog at frame %d (policy \"stop\"); results after this are not valid\n", f);
      stoppedAt = f;
      break;
    }
    const bool printing = !o.quiet && (f % o.every == 0 || f == scene.frames);
    smash::BodyPenetration bp;
    if (bodies && (bodiesEveryFrame || printing || f == scene.frames)) {
      runner->poses(centres, rotations);
      bp = smash::deepestBodyPenetration(scene, centres, rotations);
      checks.observeBodies(bp, steps);
    }
    record(f);
    if (printing) {
      progress.clear();
      glm::dvec3 c = runner->centre0();
      char centre[64];
      std::snprintf(centre, sizeof centre, "(%9.4f, %9.4f, %9.4f)", c.x, c.y, c.z);
      std::printf("%7d %9.3f  %-34s %12.5g %12.3g", f, f * scene.dt, centre, runner->kineticEnergy(),
                  last.deepestPenetration);
      if (bodies) std::printf("  %10.3g", bp.depth);
      std::printf("\n");
      std::fflush(stdout);
    }
    progress.update(f);
  }
  progress.update(stoppedAt > 0 ? stoppedAt : scene.frames, true);
  if (stoppedAt > 0) {
    if (outputs) outputs->abandon();
    return 3;
  }
  const double finalEnergy = runner->kineticEnergy();
  checks.finalKineticEnergy(finalEnergy);
  smash::Verdict verdict = checks.finish(runner->maxParticleSpeed());
  std::printf("verdict: %s\n", verdict.pass ? "PASS" : "FAIL");
  for (const auto& line : verdict.lines) std::printf("  %s\n", line.c_str());
  if (outputs) {
    Json summary = {
        {"smash_version", "0.1.0"},
        {"scene", {{"name", scene.name}, {"file", o.scene}, {"bodies", scene.bodies.size()},
                   {"particles", particles}, {"shapes", scene.shapes.size()}}},
        {"backend", backend},
        {"precision", backend == "reference" ? "double" : "float"},
        {"device", device},
        {"method", smash::methodName(scene.solver.method)},
        {"dt", scene.dt},
        {"substeps", scene.substeps},
        {"frames", scene.frames},
        {"steps", steps},
        {"simulated_seconds", scene.frames * scene.dt},
        {"timing", {{"step_seconds", stepSeconds},
                    {"ms_per_step", steps ? 1e3 * stepSeconds / double(steps) : 0.0},
                    {"particle_steps_per_second", stepSeconds > 0 ? double(particles) * double(steps) / stepSeconds : 0.0}}},
        {"deepest_collider_penetration_m", checks.deepestPenetration()},
        {"deepest_body_penetration", {{"m", checks.deepestBody().depth}, {"relative", checks.deepestBody().relative}}},
        {"final_kinetic_energy_J", finalEnergy},
        {"counters", runner->counters()},
        {"verdict", {{"pass", verdict.pass}, {"checks", verdict.lines}}}};
    try {
      if (o.render) {
        // Pictures from the recorded poses: frames/frame_NNNNN.png, preview.png (the last
        // frame) and animation.mp4 when ffmpeg is installed.
        const auto& frames = outputs->frames();
        smash::io::RenderOptions ro;
        ro.width = width;
        ro.height = height;
        ro.samples = o.samples;
        smash::io::Renderer renderer(scene, frames, ro);
        const std::string folder = (std::filesystem::path(o.out) / "frames").string();
        std::filesystem::create_directories(folder);
        int written = 0;
        auto t0 = Clock::now();
        for (std::size_t k = 0; k < frames.size(); k += static_cast<std::size_t>(o.renderEvery)) {
          char name[32];
          std::snprintf(name, sizeof name, "/frame_%05d.png", written++);
          smash::io::writePng(folder + name, width, height, renderer.render(frames[k]));
          if (!o.quiet && isatty(fileno(stderr)))
            std::fprintf(stderr, "\r\033[Krendering %d/%zu", written, (frames.size() + o.renderEvery - 1) / o.renderEvery);
        }
        if (!o.quiet && isatty(fileno(stderr))) std::fprintf(stderr, "\r\033[K");
        const std::string preview = (std::filesystem::path(o.out) / "preview.png").string();
        smash::io::writePng(preview, width, height, renderer.render(frames.back()));
        summary["render"] = {{"frames", written}, {"size", o.size}, {"seconds", std::chrono::duration<double>(Clock::now() - t0).count()},
                             {"preview", preview}};
        if (smash::io::haveFfmpeg()) {
          const std::string mp4 = (std::filesystem::path(o.out) / "animation.mp4").string();
          const double fps = 1.0 / (scene.dt * o.exportEvery * o.renderEvery);
          smash::io::encodeMp4(folder, fps, mp4);
          summary["render"]["mp4"] = mp4;
        } else {
          summary["render"]["mp4"] = nullptr;
          std::printf("note: ffmpeg not found, no animation.mp4 (the PNG frames are in %s)\n", folder.c_str());
        }
      }
      for (const std::string& file : outputs->finish(summary)) say("wrote %s\n", file.c_str());
    } catch (const smash::InputError& e) {
      throw OutputError(e.what());
    } catch (const std::filesystem::filesystem_error& e) {
      throw OutputError(e.what());
    }
  }
  return verdict.pass ? 0 : 1;
}

struct BenchOptions {
  std::string scene, backends = "auto", out;
  int frames = -1;
};

int benchmarkCommand(const BenchOptions& o) {
  smash::Scene scene = loadForRun(o.scene, "scene", o.frames, -1);
  std::size_t particles = 0;
  for (const auto& b : scene.bodies) particles += scene.shapes[b.shape].rest.size();
  std::printf("scene %s: %zu bodies, %zu particles, %d frames x %d substeps\n", scene.name.c_str(),
              scene.bodies.size(), particles, scene.frames, scene.substeps);
  std::printf("%-10s %-40s %10s %12s %16s\n", "backend", "device", "ms/step", "ms/sim-s", "particle-steps/s");
  Json results = Json::array();
  std::stringstream list(o.backends);
  for (std::string name; std::getline(list, name, ',');) {
    name = resolveBackend(name);
    if (name != "reference" && !smash::backendAvailable(smash::parseBackend(name))) {
      std::printf("%-10s not available on this machine, skipped\n", name.c_str());
      continue;
    }
    std::string label, device;
    std::unique_ptr<Runner> runner = makeRunner(name, scene, label, device);
    const int steps = scene.frames * scene.substeps;
    runner->step();  // warm-up: first-step allocations
    runner->sync();
    auto t0 = Clock::now();
    for (int s = 1; s < steps; ++s) runner->step();
    runner->sync();
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    const int timed = std::max(1, steps - 1);
    const double perStep = seconds / timed;
    const double perSim = perStep / scene.stepDt();
    std::printf("%-10s %-40s %10.3f %12.1f %16.4g\n", name.c_str(), device.substr(0, 40).c_str(), 1e3 * perStep,
                1e3 * perSim, double(particles) / perStep);
    results.push_back({{"backend", name}, {"device", device}, {"steps", timed}, {"seconds", seconds},
                       {"ms_per_step", 1e3 * perStep}, {"ms_per_simulated_second", 1e3 * perSim},
                       {"particle_steps_per_second", double(particles) / perStep}});
  }
  if (!o.out.empty()) {
    Json j = {{"scene", o.scene}, {"bodies", scene.bodies.size()}, {"particles", particles}, {"results", results}};
    try {
      smash::io::writeFileAtomically(o.out, j.dump(2) + "\n");
    } catch (const smash::InputError& e) {
      throw OutputError(e.what());
    }
    std::printf("wrote %s\n", o.out.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"smash: a particle / shape-matching rigid-body solver (CUDA, OpenMP, serial, and a "
               "double-precision CPU reference)\n\nExit codes: 0 ok, 1 a scene check failed, 2 bad input or usage, "
               "3 stopped by the watchdog, 4 outputs could not be written."};
  app.require_subcommand(1);
  RunOptions ro;
  auto* run = app.add_subcommand("run", "run a scene: per-frame table, progress, verdict; with --out, files too");
  run->add_option("scene", ro.scene, "scene file (JSON; docs/scene-format.md)")->required();
  run->add_option("--backend", ro.backend, "where to run: auto (cuda if a GPU is present, else omp), cuda, omp, cpp, "
                                           "or the double-precision reference")
      ->check(CLI::IsMember({"auto", "reference", "cpp", "omp", "cuda"}));
  run->add_option("--method", ro.method, "solver method, overriding the scene's")
      ->check(CLI::IsMember({"scene", "shape_matching", "impulse"}));
  run->add_option("--frames", ro.frames, "number of frames, overriding the scene's")->check(CLI::NonNegativeNumber);
  run->add_option("--substeps", ro.substeps, "solver steps per frame, overriding the scene's")
      ->check(CLI::Range(1, 100000));
  run->add_option("--out", ro.out, "output folder: animation.glb, poses.csv, summary.json (created if missing)");
  run->add_option("--export-every", ro.exportEvery, "keep every K-th frame in animation.glb and poses.csv")
      ->check(CLI::PositiveNumber);
  run->add_option("--particles", ro.particlesEvery, "also write particles/frame_NNNNNN.ply every K frames (debugging)")
      ->check(CLI::NonNegativeNumber);
  run->add_flag("--no-gltf", ro.noGltf, "do not write animation.glb");
  run->add_flag("--no-csv", ro.noCsv, "do not write poses.csv");
  run->add_flag("--render", ro.render, "render frames/frame_NNNNN.png, preview.png and (with ffmpeg) animation.mp4 "
                                       "with Embree on the CPU");
  run->add_option("--render-every", ro.renderEvery, "render every K-th exported frame")->check(CLI::PositiveNumber);
  run->add_option("--size", ro.size, "picture size WIDTHxHEIGHT");
  run->add_option("--samples", ro.samples, "rays per pixel side (2 = 4 rays per pixel)")->check(CLI::Range(1, 8));
  run->add_option("--every", ro.every, "print every K-th frame in the table")->check(CLI::PositiveNumber);
  run->add_option("--progress", ro.progress, "progress on stderr: auto (unless --quiet), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  run->add_flag("--quiet", ro.quiet, "print only the verdict (and errors)");

  std::string validatePath;
  auto* validate = app.add_subcommand("validate", "load and check a scene (meshes, fields, SDF bakes), then exit");
  validate->add_option("scene", validatePath, "scene file (JSON)")->required();

  BenchOptions bo;
  auto* bench = app.add_subcommand("benchmark", "time a scene on one or more backends (ms per step, per simulated second)");
  bench->add_option("scene", bo.scene, "scene file (JSON)")->required();
  bench->add_option("--backends", bo.backends, "comma-separated: auto, cuda, omp, cpp, reference");
  bench->add_option("--frames", bo.frames, "frames to time, overriding the scene's")->check(CLI::PositiveNumber);
  bench->add_option("--out", bo.out, "write the results as JSON");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    if (*validate) {
      smash::Scene scene = smash::loadScene(validatePath);
      std::printf("%s: ok (%zu shapes, %zu bodies, %zu colliders%s)\n", validatePath.c_str(), scene.shapes.size(),
                  scene.bodies.size(), scene.colliders.size(),
                  scene.bodyContactsActive() ? ", body contacts on" : "");
      return 0;
    }
    if (*bench) {
      std::stringstream list(bo.backends);
      for (std::string name; std::getline(list, name, ',');)
        if (name != "auto" && name != "reference") smash::parseBackend(name);
      return benchmarkCommand(bo);
    }
    return runCommand(ro);
  } catch (const OutputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 4;
  } catch (const smash::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
