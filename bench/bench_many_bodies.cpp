// Many bodies without body contact: throughput of every backend side by side.
//
//   smash_bench [--backends reference,cpp,omp,cuda] [--bodies 1,4,16,...] [--particles 3483]
//               [--seconds 1.0] [--repeats 1] [--machine NAME] [--out FILE.json] [--gpu-model h100|h200]
//
// --gpu-model adds, per configuration, the GPU model of the CUDA backend's step (gpu_model.h):
// the launches of a few steps of the per-particle layout counted on the OpenMP backend, priced
// as a roofline on the named GPU. Labelled a model; when the cuda backend ran in the same
// invocation, its measured stage times are printed beside it.
//
// Scene: N bunnies (the lab mesh, scale 0.4; --particles picks the vertices or N surface samples)
// on a grid, spaced so they never touch each other, with shape matching. --scene free: spinning
// without gravity above a ground plane (bodies provably away from it skip the per-particle
// collider tests); --scene resting: standing on the plane under gravity, contacts every step. Each
// configuration runs warm-up steps, then timed steps for at least --seconds, then the same number
// of profiled steps for the per-stage breakdown (profiling synchronises after every stage, so
// only the unprofiled time is reported as throughput). --repeats N times the steps in N blocks of
// at least --seconds / N each and reports the median block (and each block's time in the JSON):
// on a shared or virtual machine whose speed drifts within a run, the median of several blocks
// says more than one long mean.
//
// Bandwidth model (DESIGN.md): shape matching must at least read and write x and v, 64 B per
// particle-step in float4; the bound is (measured triad bandwidth) / 64 B. The pipeline as
// implemented moves about 136 B: integrate (read x, v, body, write v: 52 B), the segmented
// reduction (read x, v, body: 36 B), project (read body, write x, v: 36 B); rest data is per shape
// and stays in cache.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "core/error.h"
#include "core/mesh.h"
#include "gpu_model.h"
#include "world/world.h"

namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

constexpr double kModelBytes = 64.0;      // DESIGN's lower bound per particle-step
constexpr double kPipelineBytes = 136.0;  // what the current pipeline moves

smash::Scene benchScene(const smash::Shape& shape, int bodies, bool resting) {
  smash::Scene s;
  s.name = "many_bodies";
  s.solver.bodyContacts = false;  // spaced so they never touch: the independent-body pipeline
  s.dt = 1.0 / 120;
  s.linearDamping = 0.999;
  // Steady state for timing: no gravity, every body spinning in place above the plane, so each
  // particle still pays for its collision tests but no body ever lands (no contact phase).
  s.gravity = glm::dvec3(0.0);
  // Resting variant: gravity on, every body standing on the plane, so every step resolves its
  // ground contacts (SDF tests for all particles, the contact gather and the contact solve).
  double lowest = 0;
  for (const glm::dvec3& r : shape.rest) lowest = std::min(lowest, r.y);
  if (resting) s.gravity = glm::dvec3(0, -9.8, 0);
  // The cost of stepping awake bodies: a resting body would fall asleep after sleep_time and cost
  // nothing (physics.md §9; smash_bench_pile shows a settled pile's step).
  s.solver.sleep = false;
  s.materials.push_back({"default", 0.5, 0.3});
  smash::Collider<double> ground;
  ground.point = glm::dvec3(0.0);
  ground.normal = glm::dvec3(0, 1, 0);
  s.colliders.push_back(ground);
  s.shapes.push_back(shape);
  int side = 1;
  while (side * side < bodies) ++side;
  const double spacing = 2.5 * shape.boundingRadius;
  for (int b = 0; b < bodies; ++b) {
    smash::Body body;
    if (resting) {
      body.position = glm::dvec3((b % side) * spacing, -lowest, (b / side) * spacing);
    } else {
      body.position = glm::dvec3((b % side) * spacing, 1.0 + 0.01 * (b % 7), (b / side) * spacing);
      body.rotation = glm::angleAxis(0.1 * b, glm::normalize(glm::dvec3(1, 2, 3)));
      body.angularVelocity = glm::dvec3(0.5, 1, 0.2);
    }
    s.bodies.push_back(body);
  }
  return s;
}

/// STREAM-style triad a[i] = b[i] + s c[i] over 3 × 64 MiB, best of 5, with all OpenMP threads.
double measureTriadGBs() {
  const std::size_t n = std::size_t(16) << 20;
  std::vector<float> a(n, 0.0f), b(n, 1.0f), c(n, 2.0f);
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = Clock::now();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < long(n); ++i) a[i] = b[i] + 3.0f * c[i];
    double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::max(best, 3.0 * n * sizeof(float) / s / 1e9);
  }
  if (a[n / 2] != 7.0f) std::fprintf(stderr, "triad check failed\n");
  return best;
}

struct Measurement {
  int steps = 0;
  std::vector<double> blockSeconds;  // per timed block: seconds per step
  smash::StageTimes stages;
  /// Seconds per step: the median block's (the mean of the middle two for an even count).
  double perStep() const {
    std::vector<double> sorted = blockSeconds;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  }
};

/// Steps for at least `minSeconds` in `repeats` timed blocks, then the same steps again profiled
/// for the stage times (not for the reference: it has no stage timer); on CUDA, then as many again
/// with every kernel timed (its waits would inflate the stage times, so a pass of its own).
Measurement runWorld(smash::World& world, double minSeconds, int repeats) {
  for (int s = 0; s < 3; ++s) world.step();
  world.synchronize();
  Measurement m;
  for (int block = 0; block < repeats; ++block) {
    int steps = 0;
    double seconds = 0;
    auto t0 = Clock::now();
    do {
      world.step();
      ++steps;
      if (steps % 4 == 0) world.synchronize();
      seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    } while (seconds < minSeconds / repeats || steps < 3);
    world.synchronize();
    seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    m.steps += steps;
    m.blockSeconds.push_back(seconds / steps);
  }
  if (world.backend() == smash::Backend::Reference) return m;
  world.setProfiling(true);
  world.resetStageTimes();
  for (int s = 0; s < m.steps; ++s) world.step();
  m.stages = world.stageTimes();
  if (world.backend() == smash::Backend::Cuda) {
    const smash::StageTimes kernels = smash::bench::timeKernels(world, m.steps);
    m.stages.kernels = kernels.kernels;
    m.stages.kernelSeconds = kernels.kernelSeconds;
  }
  world.setProfiling(false);
  return m;
}

std::vector<double> blockMs(const Measurement& m) {
  std::vector<double> ms;
  for (double s : m.blockSeconds) ms.push_back(s * 1e3);
  return ms;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"smash_bench: many bodies without body contact, every backend side by side"};
  std::string backends = "reference,cpp,omp,cuda", bodiesList = "1,4,16,64,256,1024", out, machine;
  std::string strategyName = "auto", sceneKind = "free", gpuModel;
  int particles = 0, colliderManifold = 0;
  double seconds = 1.0, referenceMaxParticles = 1.0e6;
  int repeats = 1;
  app.add_option("--backends", backends, "comma-separated: reference, cpp, omp, cuda (unavailable ones are skipped)");
  app.add_option("--bodies", bodiesList, "comma-separated body counts");
  app.add_option("--particles", particles, "particles per bunny: 0 = the mesh's 3483 vertices, else surface samples")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--seconds", seconds, "minimum timed seconds per configuration")->check(CLI::PositiveNumber);
  app.add_option("--repeats", repeats, "timed blocks per configuration (at least seconds / repeats each): ms/step is the median block's")
      ->check(CLI::Range(1, 1000));
  app.add_option("--reference-max-particles", referenceMaxParticles, "skip the reference above this many particles");
  app.add_option("--strategy", strategyName, "step layout of the pipeline backends")
      ->check(CLI::IsMember({"auto", "per-body", "per-particle"}));
  app.add_option("--scene", sceneKind, "free: spinning without gravity above the plane; resting: standing on it")
      ->check(CLI::IsMember({"free", "resting"}));
  app.add_option("--max-contacts-per-collider", colliderManifold,
                 "the scene's solver.max_contacts_per_collider: 0 (default) every collider contact, 1-8 the manifold")
      ->check(CLI::Range(0, 8));
  app.add_option("--machine", machine, "machine name recorded in the results");
  app.add_option("--gpu-model", gpuModel, "also print the GPU model of each configuration (h100 or h200)")
      ->check(CLI::IsMember({"h100", "h200"}));
  app.add_option("--out", out, "write results as JSON (Google-Benchmark-like: context + benchmarks)");
  CLI11_PARSE(app, argc, argv);

  try {
    // $SMASH_SOURCE_DIR when set: the binary carried to another machine (scripts/gpu-offline.sh).
    const char* moved = std::getenv("SMASH_SOURCE_DIR");
    smash::Mesh mesh = smash::loadObj(std::string(moved && *moved ? moved : SMASH_SOURCE_DIR) + "/scenes/meshes/bunny.obj");
    smash::ShapeOptions options;
    options.scale = glm::dvec3(0.4);
    if (particles > 0) {
      options.sampling = smash::Sampling::Surface;
      options.sampleCount = particles;
    }
    smash::Shape bunny = smash::buildShape("bunny", mesh, options, "bench");
    const double triad = measureTriadGBs();
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    if (machine.empty()) machine = host;
    std::time_t now = std::time(nullptr);
    char date[64];
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    Json results;
    results["context"] = {{"date", date},
                          {"machine", machine},
                          {"host_name", host},
                          {"cpu", cpuModel()},
                          {"num_cpus", omp_get_num_procs()},
                          {"omp_threads", omp_get_max_threads()},
                          {"cuda_available", smash::backendAvailable(smash::Backend::Cuda)},
                          {"stream_triad_GBps", triad},
                          {"model_bytes_per_particle_step", kModelBytes},
                          {"pipeline_bytes_per_particle_step", kPipelineBytes},
                          {"particles_per_body", bunny.rest.size()},
                          {"scene", sceneKind},
                          {"repeats", repeats},
                          {"max_contacts_per_collider", colliderManifold},
                          {"library_build_type", SMASH_BUILD_TYPE}};
    results["benchmarks"] = Json::array();
    std::printf("machine %s (%s, %d threads), triad %.1f GB/s, %zu particles per bunny, max_contacts_per_collider %d\n",
                machine.c_str(), cpuModel().c_str(), omp_get_max_threads(), triad, bunny.rest.size(), colliderManifold);
    std::printf("%-10s %8s %11s %10s %14s %13s %9s  stages (ms/step)\n", "backend", "bodies",
                "particles", "ms/step", "particle-st/s", "body-steps/s", "bw frac");
    for (const std::string& count : split(bodiesList)) {
      const int n = std::stoi(count);
      smash::Scene scene = benchScene(bunny, n, sceneKind == "resting");
      scene.solver.maxContactsPerCollider = colliderManifold;
      const double np = double(n) * double(bunny.rest.size());
      std::map<std::string, double> cudaStageMs;
      for (const std::string& name : split(backends)) {
        if (name == "none") continue;  // the GPU model alone
        smash::Backend backend = smash::parseBackend(name);
        if (!smash::backendAvailable(backend)) continue;
        if (backend == smash::Backend::Reference && np > referenceMaxParticles) continue;
        const smash::StepStrategy strategy = strategyName == "per-body" ? smash::StepStrategy::PerBody
                                             : strategyName == "per-particle" ? smash::StepStrategy::PerParticle
                                                                              : smash::StepStrategy::Auto;
        auto world = smash::World::create(backend, scene, strategy);
        const std::string layout = backend == smash::Backend::Reference ? "-" : smash::strategyName(world->strategy());
        const Measurement m = runWorld(*world, seconds, repeats);
        if (world->contactOverflow() != 0) std::fprintf(stderr, "warning: contact overflow\n");
        const double perStep = m.perStep();
        const double pps = np / perStep;
        // The bound uses the host triad for CPU backends; a CUDA run records its own device.
        const double fraction = pps * kModelBytes / (triad * 1e9);
        Json entry = {{"name", "many_bodies/" + sceneKind + "/" + name + "/bodies:" + count},
                      {"backend", name},
                      {"strategy", layout},
                      {"bodies", n},
                      {"particles", np},
                      {"steps", m.steps},
                      {"real_time", perStep * 1e3},
                      {"block_ms_per_step", blockMs(m)},
                      {"time_unit", "ms"},
                      {"particle_steps_per_second", pps},
                      {"body_steps_per_second", n / perStep}};
        std::string stages;
        if (name != "cuda") entry["bandwidth_bound_fraction"] = fraction;
        for (std::size_t k = 0; k < m.stages.names.size(); ++k) {
          double ms = m.stages.seconds[k] / m.steps * 1e3;
          if (name == "cuda") cudaStageMs[m.stages.names[k]] = ms;
          entry["stages_ms_per_step"][m.stages.names[k]] = ms;
          char buf[64];
          std::snprintf(buf, sizeof buf, "%s%.3g", stages.empty() ? "" : " / ", ms);
          stages += buf;
        }
        std::printf("%-10s %8d %11.0f %10.3f %14.4g %13.4g %9s  %s\n", name.c_str(), n, np,
                    perStep * 1e3, pps, n / perStep,
                    name == "cuda" ? "-" : (std::to_string(fraction).substr(0, 5)).c_str(),
                    stages.c_str());
        if (name == "cuda" && !m.stages.kernels.empty())
          entry["measured_kernels"] = smash::bench::printMeasuredKernels(
              m.stages, m.steps, name + ", " + sceneKind + ", " + std::to_string(n) + " bunnies");
        results["benchmarks"].push_back(entry);
        std::fflush(stdout);
      }
      if (!gpuModel.empty()) {
        // The CUDA backend's layout (per particle), run on the OpenMP backend for its launches.
        auto world = smash::World::create(smash::Backend::Omp, scene, smash::StepStrategy::PerParticle);
        for (int s = 0; s < 3; ++s) world->step();
        world->setCensus(true);
        for (int s = 0; s < 4; ++s) world->step();
        Json model = smash::bench::printGpuModel(world->census(), smash::bench::gpuSpec(gpuModel), np,
                                                 sceneKind + ", " + count + " bunnies", cudaStageMs);
        model["bodies"] = n;
        results["gpu_model"].push_back(model);
      }
    }
    if (!out.empty()) {
      std::string tmp = out + ".tmp";
      std::ofstream(tmp) << results.dump(2) << "\n";
      std::rename(tmp.c_str(), out.c_str());
      std::printf("wrote %s\n", out.c_str());
    }
  } catch (const smash::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
