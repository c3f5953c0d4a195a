// smash_bench_pile: a pile scene (bodies raining into a box, scenes/rain_*.json) run to the end
// on each backend, and optionally the same scene in Bullet (bench/peers/bullet_pile.cpp) and in
// MuJoCo (bench/peers/mujoco_pile.py, run through Python), side by side in one run. Reports ms per
// step and per simulated second, the stage breakdown, and the deepest body-in-body penetration
// measured the same way for every solver: every particle of every body against the baked SDFs of
// the bodies it overlaps (scene/run_checks.h), from poses.
//
//   smash_bench_pile --scene scenes/rain_1k.json --backends omp --peer bullet,mujoco --out result.json
//   smash_bench_pile --scene scenes/rain_64k.json --backends none --frames 3 --gpu-model h200
//
// --gpu-model prints the GPU model (gpu_model.h) of the last two steps of the run, counted on
// the OpenMP backend with the CUDA backend's layout (per particle), beside the measured stage
// times of a cuda run in the same invocation.
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <omp.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "gpu_model.h"
#include "peers/mujoco_pile.h"
#include "peers/peer_scene.h"
#include "scene/run_checks.h"
#include "scene/scene.h"
#include "world/world.h"
#if defined(SMASH_HAVE_BULLET)
#include "peers/bullet_pile.h"
#endif

namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

struct Result {
  std::string solver;
  int frames = 0;
  long steps = 0;
  double seconds = 0;  // stepping only
  double deepestLastSecond = 0, deepestLastSecondRelative = 0, deepestEver = 0, deepestEverRelative = 0;
  double finalEnergy = 0;
  long long touchingPairs = -1, sleepingBodies = -1;
  long long pairOverflow = -1, contactOverflow = -1;  // what smash's capacities dropped (smash rows)
  // Stepping time of the first and of the last simulated second (falling vs settled, with
  // sleeping: docs/solver.md "Sleeping").
  double firstSecondSeconds = 0, lastSecondSeconds = 0;
  long firstSecondSteps = 0, lastSecondSteps = 0;
  Json stages = Json::object();
  Json kernels = Json::array();  // measured per kernel (CUDA)
};

/// Adds frame `f` (1-based) of `r.frames` to `r`: its stepping time, and the body penetration of
/// the poses after it. "Last second" is the last simulated second of the solver's own run.
void tally(Result& r, const smash::Scene& scene, int f, double seconds, const std::vector<glm::dvec3>& c,
           const std::vector<glm::dquat>& q) {
  const int lastSecond = std::max(1, static_cast<int>(1.0 / scene.dt));
  r.seconds += seconds;
  r.steps += scene.substeps;
  if (f <= lastSecond) {
    r.firstSecondSeconds += seconds;
    r.firstSecondSteps += scene.substeps;
  }
  if (f > r.frames - lastSecond) {
    r.lastSecondSeconds += seconds;
    r.lastSecondSteps += scene.substeps;
  }
  const smash::BodyPenetration p = smash::deepestBodyPenetration(scene, c, q);
  r.deepestEver = std::max(r.deepestEver, p.depth);
  r.deepestEverRelative = std::max(r.deepestEverRelative, p.relative);
  if (f > r.frames - lastSecond) {
    r.deepestLastSecond = std::max(r.deepestLastSecond, p.depth);
    r.deepestLastSecondRelative = std::max(r.deepestLastSecondRelative, p.relative);
  }
}

/// Steps `frames` frames through `step`, measuring body penetration after every frame (untimed).
Result run(const std::string& name, const smash::Scene& scene, int frames,
           const std::function<void()>& step, const std::function<void()>& sync,
           const std::function<void(std::vector<glm::dvec3>&, std::vector<glm::dquat>&)>& poses) {
  Result r;
  r.solver = name;
  r.frames = frames;
  std::vector<glm::dvec3> c;
  std::vector<glm::dquat> q;
  for (int f = 1; f <= frames; ++f) {
    auto t0 = Clock::now();
    for (int s = 0; s < scene.substeps; ++s) step();
    sync();
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    poses(c, q);
    tally(r, scene, f, seconds, c, q);
    if (f % 50 == 0) {
      std::fprintf(stderr, "  %s: frame %d/%d, %.1f ms/step\n", name.c_str(), f, frames, 1e3 * r.seconds / double(r.steps));
    }
  }
  return r;
}

/// The default interpreter for the MuJoCo peer: scripts/bench-pile.sh's environment when there
/// is one, else python3 from PATH.
std::string defaultPython() {
  const std::string venv = std::string(SMASH_SOURCE_DIR) + "/build/venv-bench/bin/python";
  return access(venv.c_str(), X_OK) == 0 ? venv : "python3";
}

/// Removes the MuJoCo peer's exchange folder after a complete run (kept after a failure, for a look).
void removeExchange(const std::string& dir) {
  for (const char* name : {"peer.json", "poses.bin", "summary.json"}) std::remove((dir + "/" + name).c_str());
  rmdir(dir.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"smash_bench_pile: a pile scene on smash's backends and, optionally, in Bullet and MuJoCo"};
  std::string scenePath, backends = "omp", peer = "none", out, machine, gpuModel, python = defaultPython(), mujocoDir;
  int frames = -1, peerFrames = -1;
  app.add_option("--scene", scenePath, "scene file (JSON), e.g. scenes/rain_1k.json")->required();
  app.add_option("--backends", backends, "comma-separated smash backends: cpp, omp, cuda, reference (unavailable ones are skipped)");
  app.add_option("--peer", peer, "also run the scene in peer engines: none, bullet, mujoco or bullet,mujoco")
      ->check(CLI::IsMember({"none", "bullet", "mujoco", "bullet,mujoco", "mujoco,bullet"}));
  app.add_option("--python", python, "Python with the mujoco module, for the MuJoCo peer (default: "
                                     "build/venv-bench/bin/python when it exists, else python3)");
  app.add_option("--mujoco-dir", mujocoDir, "keep the MuJoCo peer's input and output (peer.json, poses.bin, "
                                           "summary.json) in this folder (default: a temporary one, removed)");
  app.add_option("--frames", frames, "frames to run, overriding the scene's")->check(CLI::PositiveNumber);
  app.add_option("--peer-frames", peerFrames, "frames the peers run (default: as many as smash)")
      ->check(CLI::PositiveNumber);
  app.add_option("--machine", machine, "machine name recorded in the results");
  app.add_option("--out", out, "write results as JSON");
  app.add_option("--gpu-model", gpuModel, "also print the GPU model of the run's last steps (h100 or h200)")
      ->check(CLI::IsMember({"h100", "h200"}));
  CLI11_PARSE(app, argc, argv);
  try {
    const smash::Scene scene = smash::loadScene(scenePath);
    if (frames < 0) frames = scene.frames;
    if (peerFrames < 0) peerFrames = frames;
    const double simulated = frames * scene.dt;
    const bool withBullet = peer.find("bullet") != std::string::npos;
    const bool withMujoco = peer.find("mujoco") != std::string::npos;
    // Checked before smash runs, so a collider a peer cannot take, or a missing interpreter or
    // module, costs nothing.
    if (withBullet) smash::peers::peerScene(scene, "bullet peer");
    std::unique_ptr<smash::peers::MujocoPile> mujoco;
    if (withMujoco)
      mujoco = std::make_unique<smash::peers::MujocoPile>(scene, python,
                                                          std::string(SMASH_SOURCE_DIR) + "/bench/peers/mujoco_pile.py");
    std::size_t particles = 0;
    double mass = 0;
    for (const smash::Body& b : scene.bodies) {
      particles += scene.shapes[b.shape].rest.size();
      mass += scene.shapes[b.shape].totalMass;
    }
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    if (machine.empty()) machine = host;
    std::printf("scene %s: %zu bodies, %zu particles, %d frames of %g s x %d substeps (%.2f s simulated)\n",
                scene.name.c_str(), scene.bodies.size(), particles, frames, scene.dt, scene.substeps, simulated);
    const std::string cpu = smash::backendDevice(smash::Backend::Omp);
    std::printf("machine %s (%s; %d OpenMP threads)\n", machine.c_str(), cpu.c_str(), omp_get_max_threads());
    if ((withBullet || withMujoco) && peerFrames != frames)
      std::printf("peers run %d frames (%.2f s simulated), smash %d: a peer's \"last second\" is the last second of "
                  "its own run\n", peerFrames, peerFrames * scene.dt, frames);
    Json peerSettings = Json::object();
    std::vector<Result> results;
    std::stringstream list(backends);
    for (std::string name; std::getline(list, name, ',');) {
      if (name == "none") continue;
      const smash::Backend backend = smash::parseBackend(name);
      if (!smash::backendAvailable(backend)) {
        std::printf("%s: not available here, skipped\n", name.c_str());
        continue;
      }
      auto world = smash::World::create(backend, scene);
      Result r = run("smash-" + name, scene, frames, [&] { world->step(); }, [&] { world->synchronize(); },
                     [&](std::vector<glm::dvec3>& c, std::vector<glm::dquat>& q) {
                       c.clear();
                       for (const smash::BodyPose& p : world->poses()) c.push_back(p.centre);
                       q = world->orientations();
                     });
      r.finalEnergy = smash::kineticEnergy(*world, scene);
      r.touchingPairs = world->touchingPairs();
      r.pairOverflow = world->pairOverflow();
      r.contactOverflow = world->contactOverflow();
      r.sleepingBodies = world->sleepingBodies();
      if (world->pairOverflow() || world->contactOverflow())
        std::printf("note: %s dropped %lld candidate pairs and %lld contact points (buffers full)\n", name.c_str(),
                    static_cast<long long>(world->pairOverflow()), static_cast<long long>(world->contactOverflow()));
      // Stage breakdown over 20 more steps (timed with synchronisation, so not part of the total);
      // the reference has no stage timer.
      if (backend != smash::Backend::Reference) {
        world->setProfiling(true);
        world->resetStageTimes();
        for (int s = 0; s < 20; ++s) world->step();
        const smash::StageTimes t = world->stageTimes();
        for (std::size_t k = 0; k < t.names.size(); ++k)
          if (t.seconds[k] > 0) r.stages[t.names[k]] = t.seconds[k] / 20 * 1e3;
        if (backend == smash::Backend::Cuda)  // 20 more with every kernel timed
          r.kernels = smash::bench::printMeasuredKernels(smash::bench::timeKernels(*world, 20), 20,
                                                         name + ", " + scene.name + ", 20 steps after the run");
        world->setProfiling(false);
      }
      results.push_back(r);
    }
    const smash::peers::StepDamping damping = smash::peers::stepDamping(scene);
    if (withBullet) {
#if defined(SMASH_HAVE_BULLET)
      smash::peers::BulletPile bullet(scene);
      std::string hulls;
      for (int v : bullet.hullVertices()) hulls += (hulls.empty() ? "" : ", ") + std::to_string(v);
      std::printf("bullet %s: convex hulls of %s vertices in the principal frames, sequential impulse with %d "
                  "iterations (Bullet's defaults), damping %.4g /s linear and %.4g /s angular (smash's %.4g and "
                  "%.4g per step), one thread\n",
                  bullet.version().c_str(), hulls.c_str(), bullet.solverIterations(),
                  bullet.linearDamping(), bullet.angularDamping(), damping.linear, damping.angular);
      Result r = run("bullet", scene, peerFrames, [&] { bullet.step(); }, [] {},
                     [&](std::vector<glm::dvec3>& c, std::vector<glm::dquat>& q) { bullet.poses(c, q); });
      r.finalEnergy = bullet.kineticEnergy();
      results.push_back(r);
      peerSettings["bullet"] = {
          {"version", bullet.version()},
          {"threads", 1},
          {"frames", peerFrames},
          {"solver", "sequential impulse"},
          {"iterations", bullet.solverIterations()},
          {"hull_vertices", bullet.hullVertices()},
          {"hull", "btShapeHull reduction of the mesh's convex hull, margin 0.002 m"},
          {"inertia", "principal moments, hull in the principal frame"},
          {"damping_per_second", {{"linear", bullet.linearDamping()}, {"angular", bullet.angularDamping()}}},
          {"damping_per_step", {{"linear", damping.linear}, {"angular", damping.angular}}},
          {"restitution_threshold_m_per_s", scene.solver.restitutionThreshold},
          {"material_mixing", "body's own against colliders; larger restitution, geometric-mean friction between bodies"}};
#else
      std::printf("bullet: this build has no Bullet (install libbullet-dev and reconfigure), skipped\n");
#endif
    }
    if (withMujoco) {
      char dirTemplate[] = "/tmp/smash_mujoco_XXXXXX";
      if (mujocoDir.empty() && !mkdtemp(dirTemplate))
        throw smash::InputError("mujoco peer: cannot make a folder under /tmp");
      if (!mujocoDir.empty() && mkdir(mujocoDir.c_str(), 0777) != 0 && errno != EEXIST)
        throw smash::InputError("mujoco peer: cannot make " + mujocoDir);
      const std::string dir = mujocoDir.empty() ? std::string(dirTemplate) : mujocoDir;
      std::printf("mujoco %s: running %s with %s\n", mujoco->version().c_str(),
                  "bench/peers/mujoco_pile.py", python.c_str());
      mujoco->run(peerFrames, dir);
      Result r;
      r.solver = "mujoco";
      r.frames = peerFrames;
      std::vector<glm::dvec3> c;
      std::vector<glm::dquat> q;
      for (int f = 1; f <= peerFrames; ++f) {
        mujoco->poses(f - 1, c, q);
        tally(r, scene, f, mujoco->frameSeconds()[f - 1], c, q);
      }
      const Json& summary = mujoco->summary();
      r.finalEnergy = summary.at("final_kinetic_energy_J").get<double>();
      r.stages = summary.value("stages_ms_per_step", Json::object());
      results.push_back(r);
      const Json& s = summary.at("settings");
      std::string hulls, meshes;
      for (const Json& v : s.at("hull_vertices")) hulls += (hulls.empty() ? "" : ", ") + std::to_string(v.get<int>());
      for (const Json& v : s.at("mesh_vertices")) meshes += (meshes.empty() ? "" : ", ") + std::to_string(v.get<int>());
      std::printf("mujoco %s: convex hulls of %s vertices (of meshes of %s) in the principal frames, %s solver "
                  "(at most %d iterations; mean %.1f, max %d per step), %s integrator, %s cone, damping %.4g "
                  "linear and %.4g angular per step, contacts mean %.0f max %d, one thread\n",
                  s.at("mujoco_version").get<std::string>().c_str(), hulls.c_str(), meshes.c_str(),
                  s.at("solver").get<std::string>().c_str(), s.at("iterations_limit").get<int>(),
                  summary.at("solver_iterations").at("mean").get<double>(),
                  summary.at("solver_iterations").at("max").get<int>(), s.at("integrator").get<std::string>().c_str(),
                  s.at("cone").get<std::string>().c_str(), damping.linear, damping.angular,
                  summary.at("contacts").at("mean").get<double>(), summary.at("contacts").at("max").get<int>());
      peerSettings["mujoco"] = s;
      peerSettings["mujoco"]["frames"] = peerFrames;
      peerSettings["mujoco"]["contacts"] = summary.at("contacts");
      peerSettings["mujoco"]["solver_iterations"] = summary.at("solver_iterations");
      if (mujocoDir.empty()) removeExchange(dir);
    }
    std::printf("\n%-12s %9s %12s %14s %16s %16s %12s %12s %12s %9s\n", "solver", "ms/step", "ms/sim-s", "deepest (m)",
                "last second (m)", "of body size", "final KE (J)", "first s ms/st", "last s ms/st", "asleep");
    Json json;
    std::time_t now = std::time(nullptr);
    char date[64];
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    json["context"] = {{"date", date}, {"machine", machine}, {"cpu", cpu},
                       {"omp_threads", omp_get_max_threads()}, {"scene", scenePath},
                       {"bodies", scene.bodies.size()}, {"particles", particles}, {"frames", frames},
                       {"simulated_seconds", simulated}, {"peer_frames", peerFrames}, {"total_mass_kg", mass},
                       {"penetration_metric", "deepest particle of a body inside another body's baked SDF, from poses"}};
    if (!peerSettings.empty()) json["peer_settings"] = peerSettings;
    json["results"] = Json::array();
    for (const Result& r : results) {
      const double perStep = 1e3 * r.seconds / double(r.steps), perSim = 1e3 * r.seconds / (r.frames * scene.dt);
      const double firstPerStep = r.firstSecondSteps ? 1e3 * r.firstSecondSeconds / double(r.firstSecondSteps) : 0;
      const double lastPerStep = r.lastSecondSteps ? 1e3 * r.lastSecondSeconds / double(r.lastSecondSteps) : 0;
      std::printf("%-12s %9.2f %12.0f %14.4f %16.4f %16.4f %12.4g %12.3f %12.3f %9s\n", r.solver.c_str(), perStep, perSim,
                  r.deepestEver, r.deepestLastSecond, r.deepestLastSecondRelative, r.finalEnergy, firstPerStep,
                  lastPerStep, r.sleepingBodies >= 0 ? std::to_string(r.sleepingBodies).c_str() : "-");
      Json j = {{"solver", r.solver}, {"frames", r.frames}, {"steps", r.steps}, {"seconds", r.seconds},
                {"ms_per_step", perStep}, {"ms_per_simulated_second", perSim},
                {"deepest_penetration_m", r.deepestEver}, {"deepest_penetration_relative", r.deepestEverRelative},
                {"deepest_penetration_last_second_m", r.deepestLastSecond},
                {"deepest_penetration_last_second_relative", r.deepestLastSecondRelative},
                {"final_kinetic_energy_J", r.finalEnergy}};
      if (r.touchingPairs >= 0) j["touching_pairs"] = r.touchingPairs;
      if (r.pairOverflow >= 0) j["pair_overflow"] = r.pairOverflow;
      if (r.contactOverflow >= 0) j["contact_overflow"] = r.contactOverflow;
      if (r.sleepingBodies >= 0) j["sleeping_bodies"] = r.sleepingBodies;
      j["first_second_ms_per_step"] = firstPerStep;
      j["last_second_ms_per_step"] = lastPerStep;
      if (!r.stages.empty()) j["stages_ms_per_step"] = r.stages;
      if (!r.kernels.empty()) j["measured_kernels"] = r.kernels;
      json["results"].push_back(j);
    }
    if (!gpuModel.empty()) {
      // The CUDA backend's layout, run on the OpenMP backend to the same frame; the last two
      // steps are counted.
      auto world = smash::World::create(smash::Backend::Omp, scene, smash::StepStrategy::PerParticle);
      const long steps = static_cast<long>(frames) * scene.substeps;
      for (long s = 0; s + 2 < steps; ++s) world->step();
      world->setCensus(true);
      world->step();
      world->step();
      std::map<std::string, double> measured;
      for (const Result& r : results)
        if (r.solver == "smash-cuda")
          for (const auto& [stage, ms] : r.stages.items()) measured[stage] = ms.get<double>();
      char label[160];
      std::snprintf(label, sizeof label, "%s, steps %ld-%ld of the run", scene.name.c_str(), steps - 1, steps);
      json["gpu_model"] = smash::bench::printGpuModel(world->census(), smash::bench::gpuSpec(gpuModel),
                                                      static_cast<double>(particles), label, measured);
      json["gpu_model"]["touching_pairs"] = world->touchingPairs();
    }
    if (!out.empty()) {
      const std::string tmp = out + ".partial";
      std::ofstream(tmp) << json.dump(2) << "\n";
      if (std::rename(tmp.c_str(), out.c_str()) != 0) throw smash::InputError(out + ": cannot write");
      std::printf("wrote %s\n", out.c_str());
    }
  } catch (const smash::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
