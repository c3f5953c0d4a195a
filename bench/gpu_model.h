// The GPU model: what a step of the CUDA backend would cost on an H100 or H200, from the launch
// census (World::census) of the same steps run on a CPU backend with the CUDA backend's layout.
// Always labelled a model: no GPU has run it. scripts/gpu-check.sh puts measured stage times
// next to it on a machine with a GPU.
//
// Per kernel:  time = launch cost + max(bytes / sustained bandwidth, serial steps × step latency)
// Per step:    Σ kernels + host reads × host round trip
// Assumptions (docs/profiling.md): sustained bandwidth H200 4.3 TB/s, H100 3.0 TB/s (DESIGN.md's
// device-to-device figures); a kernel launch costs 2.5 µs in a stream and 1.0 µs in a CUDA graph;
// a host read (copy + wait) costs 10 µs. A kernel whose threads loop over a body's or a pair's
// particles or contacts is priced by its longest loop too (LaunchRecord::serialSteps): one
// iteration — an SDF sample or one contact's impulse update — at 0.8 µs, as measured on an H200
// (bench/results/nvidia-h200: one resting bunny's SolveColliderContacts, 2.26 ms for about 2,900
// dependent contact updates; the first price, 0.1 µs for ~200 dependent cycles, was 8 times too
// cheap; the H100 has not run: it gets the H200's price, the two clock alike); the table marks a stage [serial loops] where such a loop, not the bytes, sets a kernel's price,
// and always where a per-body kernel of the CPU's shape runs (serialKernel).
#pragma once

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "world/world.h"

namespace smash::bench {

struct GpuSpec {
  std::string name;
  double bandwidth = 0;         // bytes per second, sustained
  double launchSeconds = 2.5e-6;
  double graphLaunchSeconds = 1.0e-6;
  double hostReadSeconds = 10e-6;
  double serialStepSeconds = 0.8e-6;
  int smCount = 0;
};

inline GpuSpec gpuSpec(const std::string& name) {
  if (name == "h200") return {"H200 (model)", 4.3e12, 2.5e-6, 1.0e-6, 10e-6, 0.8e-6, 132};
  if (name == "h100") return {"H100 (model)", 3.0e12, 2.5e-6, 1.0e-6, 10e-6, 0.8e-6, 132};
  throw InputError("--gpu-model: unknown GPU '" + name + "' (h100 or h200)");
}

/// Kernels whose threads loop over a body's or a pair's particles or contacts (see
/// kernels/gpu_budget.txt): the roofline is a lower bound there, not an estimate.
inline bool serialKernel(const std::string& kernel) {
  static const char* names[] = {"FusedBodyStep", "ProjectBodies", "MatchBodies+contacts", "ImpulseBodies+contacts",
                                "SolveColliderContacts", "PairContactsOf", "PreparePairs",
                                "SweepPairContacts", "PrepareBodies", "SweepCollidersAndApply",
                                "FinishPairBodies", "PairSupports", "ShockVelocities", "ShockPositions"};
  for (const char* n : names)
    if (kernel.rfind(n, 0) == 0) return true;
  return false;
}

/// Prints the model of one configuration and returns it as JSON. `particles` sizes the 64 B bound;
/// `measuredStageMs` (stage name → measured ms per step on a GPU, may be empty) adds a column.
inline nlohmann::json printGpuModel(const Census& census, const GpuSpec& gpu, double particles,
                                    const std::string& label,
                                    const std::map<std::string, double>& measuredStageMs = {}) {
  using Json = nlohmann::json;
  if (!(particles > 0) || census.launches.empty()) {
    std::printf("\nGPU MODEL — %s, %s: nothing to model (no particles, no launches)\n", gpu.name.c_str(), label.c_str());
    return {{"label", "model (not measured): " + gpu.name}, {"configuration", label}, {"particles", particles},
            {"launches_per_step", 0}};
  }
  const double steps = census.steps > 0 ? static_cast<double>(census.steps) : 1.0;
  struct StageSum {
    double launches = 0, bytes = 0, seconds = 0, graphSeconds = 0;
    bool serial = false;
  };
  std::map<std::string, StageSum> stages;
  std::vector<std::string> order;
  Json kernels = Json::array();
  double launches = 0, bytes = 0;
  for (const LaunchRecord& r : census.launches) {
    const double l = static_cast<double>(r.launches) / steps, b = r.bytes / steps;
    const double work = std::max(b / gpu.bandwidth, r.serialSteps / steps * gpu.serialStepSeconds);
    const double t = l * gpu.launchSeconds + work;
    const double tg = l * gpu.graphLaunchSeconds + work;
    if (!stages.count(r.stage)) order.push_back(r.stage);
    StageSum& s = stages[r.stage];
    s.launches += l;
    s.bytes += b;
    s.seconds += t;
    s.graphSeconds += tg;
    // Marked where a loop, not the bytes, sets the kernel's price (a warp's short chain over a
    // chunk, a few steps beside its traffic, is not), and always for the per-body kernels of the
    // CPU's shape (serialKernel: their loops over particles are not all counted).
    const bool loopPriced = serialKernel(r.kernel) || r.serialSteps / steps * gpu.serialStepSeconds > b / gpu.bandwidth;
    s.serial = s.serial || loopPriced;
    launches += l;
    bytes += b;
    kernels.push_back({{"stage", r.stage},
                       {"kernel", r.kernel},
                       {"launches_per_step", l},
                       {"elements_per_step", r.elements / steps},
                       {"bytes_per_step", b},
                       {"serial_steps_per_step", r.serialSteps / steps},
                       {"model_us_per_step", t * 1e6},
                       {"serial_loops", loopPriced}});
  }
  const double waits = static_cast<double>(census.hostReads) / steps;
  double total = waits * gpu.hostReadSeconds, totalGraph = total;
  for (const auto& [name, s] : stages) {
    total += s.seconds;
    totalGraph += s.graphSeconds;
  }
  const double bound = particles * 64.0 / gpu.bandwidth;
  std::printf("\nGPU MODEL (not a measurement) — %s, %s: %.0f particles, %g steps censused on a CPU backend\n",
              gpu.name.c_str(), label.c_str(), particles, steps);
  std::printf("  %-58s %8s %10s %11s %11s%s\n", "stage", "launches", "MB/step", "model µs", "graph µs",
              measuredStageMs.empty() ? "" : "  measured µs");
  Json stageJson = Json::array();
  for (const std::string& name : order) {
    const StageSum& s = stages[name];
    std::string shown = name + (s.serial ? " [serial loops]" : "");
    std::printf("  %-58s %8.0f %10.3f %11.1f %11.1f", shown.c_str(), s.launches, s.bytes / 1e6,
                s.seconds * 1e6, s.graphSeconds * 1e6);
    Json j = {{"stage", name}, {"launches_per_step", s.launches}, {"bytes_per_step", s.bytes},
              {"model_us_per_step", s.seconds * 1e6}, {"model_graph_us_per_step", s.graphSeconds * 1e6},
              {"serial_loops", s.serial}};
    auto m = measuredStageMs.find(name);
    if (m != measuredStageMs.end()) {
      std::printf("  %11.1f", m->second * 1e3);
      j["measured_us_per_step"] = m->second * 1e3;
    }
    std::printf("\n");
    stageJson.push_back(j);
  }
  std::printf("  host reads per step: %.2f (%.0f µs)\n", waits, waits * gpu.hostReadSeconds * 1e6);
  std::printf("  total: %.0f launches, %.2f MB (%.1f B/particle), model %.3f ms/step in a stream, %.3f ms in a CUDA graph\n",
              launches, bytes / 1e6, bytes / particles, total * 1e3, totalGraph * 1e3);
  // The CUDA backend replays a step as a CUDA graph (CudaSystem) when its launch sequence is
  // fixed; a read once per frame (pair provisioning) follows the graph and is in both totals.
  const bool graphed = census.graphed;
  const double modelled = graphed ? totalGraph : total;
  std::printf("  64 B/particle-step bound %.3f ms: model at %.0f%% of it (stream), %.0f%% (graph)\n", bound * 1e3,
              100 * bound / total, 100 * bound / totalGraph);
  std::printf("  the CUDA backend runs this step %s: model %.3f ms/step, %.0f%% of the bound, %.3g particle-steps/s\n",
              graphed ? "as a CUDA graph" : "as plain launches",
              modelled * 1e3, 100 * bound / modelled, particles / modelled);
  return {{"label", "model (not measured): " + gpu.name},
          {"configuration", label},
          {"particles", particles},
          {"steps_censused", census.steps},
          {"assumptions",
           {{"bandwidth_Bps", gpu.bandwidth},
            {"launch_s", gpu.launchSeconds},
            {"graph_launch_s", gpu.graphLaunchSeconds},
            {"host_read_s", gpu.hostReadSeconds},
            {"serial_step_s", gpu.serialStepSeconds}}},
          {"host_reads_per_step", waits},
          {"launches_per_step", launches},
          {"bytes_per_step", bytes},
          {"bytes_per_particle_step", bytes / particles},
          {"model_ms_per_step", total * 1e3},
          {"model_graph_ms_per_step", totalGraph * 1e3},
          {"bound_ms_per_step", bound * 1e3},
          {"fraction_of_64B_bound", bound / total},
          {"fraction_of_64B_bound_graph", bound / totalGraph},
          {"cuda_graph", graphed},
          {"model_ms_per_step_as_run", modelled * 1e3},
          {"fraction_of_64B_bound_as_run", bound / modelled},
          {"stages", stageJson},
          {"kernels", kernels}};
}

/// `steps` more steps of a profiled world with every kernel timed (World::setKernelTiming): a pass
/// of its own, since its waits would inflate the stage times of the pass they share. Profiling
/// stays as it was; the world's stage times are reset.
inline StageTimes timeKernels(World& world, long steps) {
  world.setKernelTiming(true);
  world.resetStageTimes();
  for (long s = 0; s < steps; ++s) world.step();
  StageTimes t = world.stageTimes();
  world.setKernelTiming(false);
  return t;
}

/// The measured time of each kernel (or collective) of a pass with kernel timing on
/// (StageTimes::kernels: the device waited for before and after each, so each time holds its
/// launch), per step, slowest
/// first: which kernel a stage's time is. Printed (the `rows` slowest) and returned as JSON (all).
inline nlohmann::json printMeasuredKernels(const StageTimes& t, double steps, const std::string& label,
                                           std::size_t rows = 12) {
  nlohmann::json out = nlohmann::json::array();
  if (t.kernels.empty() || !(steps > 0)) return out;
  std::vector<std::size_t> order(t.kernels.size());
  double total = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    order[k] = k;
    total += t.kernelSeconds[k];
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return t.kernelSeconds[a] > t.kernelSeconds[b]; });
  std::printf("\nMEASURED per kernel — %s (each waited for before and after; µs per step, slowest first)\n",
              label.c_str());
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t i = order[k];
    const double us = t.kernelSeconds[i] / steps * 1e6;
    if (k < rows)
      std::printf("  %-84s %11.1f %5.1f%%\n", t.kernels[i].c_str(), us, total > 0 ? 100 * t.kernelSeconds[i] / total : 0);
    out.push_back({{"kernel", t.kernels[i]}, {"measured_us_per_step", us}});
  }
  if (order.size() > rows) std::printf("  (%zu more)\n", order.size() - rows);
  return out;
}

}  // namespace smash::bench
