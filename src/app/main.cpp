// smash — the command line: run a scene (with outputs, pictures and progress), validate a scene,
// benchmark a scene on several backends. `smash --help` and `smash <command> --help` document
// every option; docs/cli.md has examples.
//
// Exit codes (docs/cli.md): 0 success (and the scene's checks passed), 1 a check failed, 2 bad
// input or usage (the message names the file, field or option), 3 stopped by the watchdog, 4 the
// outputs could not be written, 5 out of memory or a device (CUDA) failure, 6 an internal error,
// 129 / 130 / 143 interrupted by SIGHUP / SIGINT / SIGTERM.
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <csignal>
#include <limits>
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
#include "core/files.h"
#include "io/outputs.h"
#include "io/run_state.h"
#include "io/render.h"
#include "scene/run_checks.h"
#include "scene/scene.h"
#include "world/world.h"

namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

/// What the capacities dropped and what the world does now (summary.json "counters").
Json countersOf(const smash::World& world) {
  return {{"contact_overflow", world.contactOverflow()}, {"pair_overflow", world.pairOverflow()},
          {"touching_pairs", world.touchingPairs()}, {"sleeping_bodies", world.sleepingBodies()}};
}

/// Progress of a long run on stderr: redrawn in place on a terminal, a plain line every 10 s
/// (and at the end) otherwise.
class Progress {
 public:
  Progress(int first, int frames, double particles, double stepDt, int substeps, bool enabled)
      : first_(first), frames_(frames), particles_(particles), stepDt_(stepDt), substeps_(substeps),
        tty_(isatty(fileno(stderr)) != 0), enabled_(enabled), start_(Clock::now()), last_(start_) {}

  void update(int frame, bool final = false) {
    if (!enabled_) return;
    const auto now = Clock::now();
    const double sinceDraw = std::chrono::duration<double>(now - last_).count();
    if (!final && sinceDraw < (tty_ ? 0.2 : 10.0)) return;
    last_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double rate = elapsed > 0 ? particles_ * double(frame - first_) * substeps_ / elapsed : 0;
    const double eta = frame > first_ ? elapsed * (frames_ - frame) / (frame - first_) : 0;
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
  int first_, frames_;
  double particles_, stepDt_;
  int substeps_;
  bool tty_, enabled_, drawn_ = false;
  Clock::time_point start_, last_;
};

struct RunOptions {
  std::string scene, backend = "auto", method = "scene", out, progress = "auto", size = "960x540";
  std::string saveState, resume;
  int frames = -1, substeps = -1, every = 10, exportEvery = 1, particlesEvery = 0, renderEvery = 1, saveEvery = 0;
  int samples = 2;
  bool render = false, noGltf = false, noCsv = false, quiet = false;
  bool outGiven = false;  ///< --out was on the command line (even as "")
  bool saveStateGiven = false, resumeGiven = false;
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

/// The world a run or benchmark steps: a pipeline backend in float, or the reference in double.
std::unique_ptr<smash::World> makeWorld(const std::string& backend, const smash::Scene& scene, std::string& label,
                                        std::string& device) {
  const smash::Backend b = smash::parseBackend(backend);
  if (!smash::backendAvailable(b))
    throw smash::InputError("--backend: '" + backend + "' is not available on this machine (no CUDA device); use auto, omp or cpp");
  label = b == smash::Backend::Reference ? "reference (CPU, double)" : backend + " (float)";
  device = smash::backendDevice(b);
  return smash::World::create(b, scene);
}

void parseSize(const std::string& size, int& w, int& h) {
  const auto x = size.find('x');
  try {
    if (x == std::string::npos) throw std::invalid_argument("no x");
    std::size_t used = 0;
    for (std::size_t i = 0; i < size.size(); ++i)
      if (i != x && !std::isdigit(static_cast<unsigned char>(size[i]))) throw std::invalid_argument("digits");
    w = std::stoi(size.substr(0, x), &used);
    if (used != x) throw std::invalid_argument("width");
    h = std::stoi(size.substr(x + 1), &used);
    if (used != size.size() - x - 1) throw std::invalid_argument("height");
  } catch (const std::exception&) {
    throw smash::InputError("--size: '" + size + "' is not WIDTHxHEIGHT (for example 960x540)");
  }
}

// ---- Signals -------------------------------------------------------------------------------
// SIGINT / SIGTERM set a flag that the run reads at every frame boundary (and between rendered
// pictures): it stops there and publishes a consistent result marked "interrupted". A second
// signal ends the process at once (its staging folder is removed by the next run into --out).

// Lock-free, so safe to touch from a signal handler (and read from any thread).
std::atomic<int> gSignalValue{0};
static_assert(std::atomic<int>::is_always_lock_free);
struct SignalFlag {
  operator int() const { return gSignalValue.load(std::memory_order_relaxed); }
} gSignal;

extern "C" void onSignal(int sig) {
  if (gSignalValue.load(std::memory_order_relaxed) != 0) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  gSignalValue.store(sig, std::memory_order_relaxed);
}

void catchSignals() {
  struct sigaction action {};
  action.sa_handler = onSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  // A signal the parent set to be ignored (nohup, a background job) stays ignored.
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {  // SIGHUP: the terminal closed, as SIGTERM
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(sig, &action, nullptr);
  }
  // A closed stdout (`smash run ... | head`) must not kill the run mid-write: writes to it fail
  // quietly (EPIPE) and the run goes on to write its outputs.
  std::signal(SIGPIPE, SIG_IGN);
}

const char* signalName(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
}

// ---- smash run, in named steps ---------------------------------------------------------------

/// What the frame loop ended with.
struct LoopEnd {
  int frames = 0;          ///< frames completed (and recorded)
  int watchdogFrame = -1;  ///< the frame the watchdog stopped at (policy "stop"), or -1
  int signal = 0;          ///< the signal that interrupted the run, or 0
};

class RunSession {
 public:
  explicit RunSession(const RunOptions& o) : o_(o) {}

  int run() {
    validateOptions();
    scene_ = loadForRun(o_.scene, o_.method, o_.frames, o_.substeps);
    for (const auto& b : scene_.bodies) particles_ += scene_.shapes[b.shape].rest.size();
    backend_ = resolveBackend(o_.backend);
    if (backend_ == "reference" && !o_.saveState.empty())
      throw smash::InputError("--save-state: not available on the reference backend (use cpp, omp or cuda)");
    catchSignals();  // from here a signal stops the run at a frame boundary (before: nothing to clean)
    prepareOutputs();
    if (!o_.saveState.empty()) smash::io::checkStateWritable(o_.saveState);  // --out may hold it
    world_ = makeWorld(backend_, scene_, label_, device_);
    if (!o_.saveState.empty() || !o_.resume.empty()) fingerprint_ = fingerprint();
    if (!o_.resume.empty()) resume();
    checks_ = std::make_unique<smash::RunChecks>(scene_.checks);
    printHeader();
    const LoopEnd end = runFrames();
    if (end.watchdogFrame > 0) {
      // A watchdog stop publishes nothing: the output folder stays as it was before the run.
      if (outputs_) outputs_->abandon();
      return 3;
    }
    smash::Verdict verdict;
    if (!end.signal) verdict = printVerdict();
    if (outputs_) writeOutputs(end, verdict);
    if (const int sig = end.signal ? end.signal : int(gSignal)) {
      const bool picturesCut = !end.signal && o_.render && renderSkipped_;
      std::fprintf(stderr, "smash: stopped by %s after frame %d of %d%s\n", signalName(sig), end.frames,
                   scene_.frames,
                   !outputs_ ? ""
                   : end.signal ? "; the outputs hold the frames done (summary.json: \"interrupted\": true)"
                   : picturesCut ? "; the outputs hold every frame but no pictures (summary.json: \"interrupted\": true)"
                                 : "; the outputs are complete");
      return 128 + sig;
    }
    return verdict.pass ? 0 : 1;
  }

 private:
  /// Every option that can be wrong is checked before the scene is loaded or a step runs.
  void validateOptions() {
    parseSize(o_.size, width_, height_);
    if (o_.render) smash::io::checkRenderOptions({width_, height_, o_.samples});
    if (o_.outGiven && o_.out.empty()) throw smash::InputError("--out: the output folder must not be empty");
    if (o_.render && o_.out.empty()) throw smash::InputError("--render: needs --out FOLDER to write the pictures into");
    auto atLeast = [](const char* option, int value, int least) {
      if (value < least)
        throw smash::InputError(std::string(option) + ": must be a whole number >= " + std::to_string(least) +
                                ", got " + std::to_string(value));
    };
    atLeast("--export-every", o_.exportEvery, 1);
    atLeast("--render-every", o_.renderEvery, 1);
    atLeast("--every", o_.every, 1);
    atLeast("--particles", o_.particlesEvery, 0);
    atLeast("--save-every", o_.saveEvery, 0);
    if (o_.saveStateGiven && o_.saveState.empty()) throw smash::InputError("--save-state: the file name must not be empty");
    if (o_.resumeGiven && o_.resume.empty()) throw smash::InputError("--resume: the file name must not be empty");
    if (o_.frames > 1000000000) throw smash::InputError("--frames: at most 1000000000, got " + std::to_string(o_.frames));
    if (!o_.saveState.empty()) checkStatePath();
    if (o_.saveEvery > 0 && o_.saveState.empty())
      throw smash::InputError("--save-every: needs --save-state FILE to write the state to");
    if (o_.frames != -1) atLeast("--frames", o_.frames, 0);
    if (o_.substeps != -1) atLeast("--substeps", o_.substeps, 1);
  }

  /// The output folder is created, locked and staged before anything runs; the frames kept in
  /// memory for the glTF and the pictures are bounded against the memory this process can use.
  void prepareOutputs() {
    if (o_.out.empty()) return;
    smash::io::OutputOptions oo;
    oo.folder = o_.out;
    oo.gltf = !o_.noGltf;
    oo.csv = !o_.noCsv;
    oo.exportEvery = o_.exportEvery;
    oo.particlesEvery = o_.particlesEvery;
    oo.keepFrames = oo.gltf || o_.render;
    if (oo.keepFrames) {
      const double kept = double(scene_.frames) / o_.exportEvery + 2;
      const double need = kept * double(smash::io::keptFrameBytes(scene_.bodies.size()));
      const double have = double(smash::availableHostMemory()) / 2;
      if (need > have) {
        char text[400];
        std::snprintf(text, sizeof text,
                      "--out: %s keeps %.0f frames of %zu bodies in memory until the run ends (about %.2f GiB; "
                      "%.2f GiB can be used); use --export-every K, fewer --frames%s",
                      o_.render ? "animation.glb and the pictures" : "animation.glb", kept, scene_.bodies.size(),
                      need / (1u << 30), have / (1u << 30), o_.render ? "" : ", or --no-gltf (poses.csv is streamed)");
        throw smash::InputError(text);
      }
    }
    outputs_ = std::make_unique<smash::io::RunOutputs>(scene_, oo);
  }

  template <class... Args>
  void say(const char* fmt, Args... args) {
    if (!o_.quiet) std::printf(fmt, args...);
  }

  void printHeader() {
    say("scene %s: %zu bodies, %zu particles, method %s, backend %s on %s\n", scene_.name.c_str(),
        scene_.bodies.size(), particles_, smash::methodName(scene_.solver.method), label_.c_str(), device_.c_str());
    say("dt %g s per frame, %d substeps, %d frames (%.3f s)\n", scene_.dt, scene_.substeps, scene_.frames,
        scene_.dt * scene_.frames);
    for (const std::string& note : scene_.advice()) say("note: %s\n", note.c_str());
    say("%7s %9s  %-34s %12s %12s%s\n", "frame", "time", "centre (body 0)", "kinetic", "penetration",
        scene_.bodyContactsActive() ? "   body-body" : "");
  }

  /// --save-state replaces its file by a rename: it must not be something else the run reads or
  /// writes (the scene, an output of the set, the folder's lock) or a file that is not a regular
  /// file (a device, a FIFO).
  void checkStatePath() const {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path state(o_.saveState);
    const fs::file_status st = fs::symlink_status(state, ec);
    if (fs::exists(st) && !fs::is_regular_file(st) && !fs::is_symlink(st))
      throw smash::InputError("--save-state: '" + o_.saveState + "' exists and is not a regular file");
    if (fs::exists(st) && fs::equivalent(state, fs::path(o_.scene), ec))
      throw smash::InputError("--save-state: '" + o_.saveState + "' is the scene file");
    if (o_.out.empty()) return;
    const fs::path parent = state.parent_path().empty() ? fs::path(".") : state.parent_path();
    if (fs::weakly_canonical(parent, ec) != fs::weakly_canonical(fs::path(o_.out), ec)) return;
    const std::string name = state.filename().string();
    bool taken = name == ".smash.lock" || name.rfind(".smash-", 0) == 0;
    for (const char* output : smash::io::kRunOutputNames) taken = taken || name == output;
    if (taken)
      throw smash::InputError("--save-state: '" + o_.saveState + "' is one of the names the run writes in --out");
  }

  /// This run's scene and settings, as a state file records them.
  std::uint64_t fingerprint() const {
    return smash::io::sceneFingerprint(smash::readRegularFile(o_.scene, smash::kMaxSceneBytes, "scene file"), o_.scene,
                                       static_cast<std::uint32_t>(scene_.solver.method),
                                       static_cast<std::uint32_t>(scene_.substeps), scene_);
  }

  /// --resume: the world takes the state's bodies, particles and warm-start contacts (checked
  /// first: a state of another scene or settings, or a damaged file, leaves the world as built).
  void resume() {
    const smash::io::RunState state = smash::io::readRunState(o_.resume);
    if (state.fingerprint != fingerprint_)
      throw smash::InputError(o_.resume + ": the state was saved from another scene or other settings (the scene "
                              "file apart from \"frames\", the method and the substeps must be the same)");
    if (state.frame >= scene_.frames)
      throw smash::InputError(o_.resume + ": the state is at frame " + std::to_string(state.frame) +
                              " and the run ends at frame " + std::to_string(scene_.frames) +
                              ": nothing to run (ask for more with --frames)");
    world_->loadState(state.world, o_.resume);
    startFrame_ = static_cast<int>(state.frame);
  }

  /// --save-state: the state after frame `frame`, replacing the file as a whole.
  void saveState(int frame) {
    if (o_.saveState.empty()) return;
    smash::io::RunState state;
    state.fingerprint = fingerprint_;
    state.frame = frame;
    state.substeps = static_cast<std::uint32_t>(scene_.substeps);
    state.method = static_cast<std::uint32_t>(scene_.solver.method);
    state.world = world_->saveState();
    smash::io::writeRunState(o_.saveState, state);
    savedFrame_ = frame;
  }

  /// The poses of frame `frame` (and, on its stride, the particles) into the outputs.
  void recordFrame(int frame, bool last, bool particles = true) {
    if (!outputs_) return;
    smash::io::FramePoses f;
    f.frame = frame;
    f.time = frame * scene_.dt;
    for (const smash::BodyPose& p : world_->poses()) f.centres.push_back(p.centre);
    f.rotations = world_->orientations();
    outputs_->addFrame(f, last);
    if (particles && outputs_->wantsParticles(frame)) outputs_->addParticles(frame, world_->particlePositions());
  }

  /// Steps one frame's substeps, observing what the scene's checks need.
  smash::StepObservation stepFrame() {
    // Observations copy every particle to the host: after every step only when the scene checks
    // per-step quantities (max_penetration, bounds), else once per frame.
    const bool observeEveryStep = scene_.checks.maxPenetration.has_value() || scene_.checks.boundsMin.has_value();
    smash::StepObservation last;
    for (int s = 0; s < scene_.substeps; ++s) {
      const auto t0 = Clock::now();
      world_->step();
      world_->synchronize();
      stepSeconds_ += std::chrono::duration<double>(Clock::now() - t0).count();
      ++steps_;
      if (observeEveryStep || s + 1 == scene_.substeps) {
        last = smash::observe(*world_, scene_, steps_);
        checks_->observe(last);
      }
    }
    return last;
  }

  /// The watchdog: each flagged body reported once; true when the policy says stop.
  bool reportIncidents(int frame, Progress& progress) {
    const std::vector<smash::BodyIncident> incidents = world_->incidents();
    for (const smash::BodyIncident& incident : incidents)
      if (reported_.insert(incident.body).second) {
        progress.clear();
        std::printf("watchdog: body %llu: %s at step %lld\n", incident.body, smash::incidentName(incident.what),
                    incident.step);
      }
    if (incidents.empty() || scene_.watchdog.policy != smash::Watchdog::Policy::Stop) return false;
    progress.clear();
    std::printf("stopped by the watchdog at frame %d (policy \"stop\"); results after this are not valid\n", frame);
    return true;
  }

  void printRow(int frame, const smash::StepObservation& last, const smash::BodyPenetration& bp) {
    const glm::dvec3 c = world_->bodyCount() ? world_->poses()[0].centre : glm::dvec3(0.0);
    char centre[64];
    std::snprintf(centre, sizeof centre, "(%9.4f, %9.4f, %9.4f)", c.x, c.y, c.z);
    std::printf("%7d %9.3f  %-34s %12.5g %12.3g", frame, frame * scene_.dt, centre, smash::kineticEnergy(*world_, scene_),
                last.deepestPenetration);
    if (scene_.bodyContactsActive()) std::printf("  %10.3g", bp.depth);
    std::printf("\n");
    std::fflush(stdout);
  }

  LoopEnd runFrames() {
    const bool showProgress = o_.progress == "always" || (o_.progress == "auto" && !o_.quiet);
    Progress progress(startFrame_, scene_.frames, double(particles_), scene_.stepDt(), scene_.substeps, showProgress);
    // The body–body penetration (a pass over every overlapping pair) runs every frame only when
    // the scene checks it, else on the frames the table prints.
    const bool bodies = scene_.bodyContactsActive();
    const bool bodiesEveryFrame = scene_.checks.maxBodyPenetration.has_value();
    LoopEnd end;
    end.frames = startFrame_;
    recordFrame(startFrame_, scene_.frames == startFrame_);
    for (int f = startFrame_ + 1; f <= scene_.frames; ++f) {
      if (gSignal) {
        end.signal = gSignal;
        break;
      }
      const smash::StepObservation last = stepFrame();
      if (reportIncidents(f, progress)) {
        end.watchdogFrame = f;
        break;
      }
      const bool printing = !o_.quiet && (f % o_.every == 0 || f == scene_.frames);
      smash::BodyPenetration bp;
      if (bodies && (bodiesEveryFrame || printing || f == scene_.frames)) {
        bp = smash::deepestBodyPenetration(scene_, *world_);
        checks_->observeBodies(bp, steps_);
      }
      recordFrame(f, f == scene_.frames);
      end.frames = f;
      if (o_.saveEvery > 0 && f % o_.saveEvery == 0 && f != scene_.frames) saveState(f);
      if (printing) {
        progress.clear();
        printRow(f, last, bp);
      }
      progress.update(f);
    }
    if (end.signal && outputs_ && end.frames < scene_.frames) recordFrame(end.frames, true, false);  // keep the last one
    // The state at the end, or where a signal stopped the run (it resumes from there); a
    // watchdog stop saves nothing (the state is not valid).
    if (end.watchdogFrame < 0 && savedFrame_ != end.frames) saveState(end.frames);
    progress.update(end.watchdogFrame > 0 ? end.watchdogFrame : end.frames, true);
    return end;
  }

  smash::Verdict printVerdict() {
    finalEnergy_ = smash::kineticEnergy(*world_, scene_);
    checks_->finalKineticEnergy(finalEnergy_);
    smash::Verdict verdict = checks_->finish(smash::maxParticleSpeed(*world_));
    std::printf("verdict: %s\n", verdict.pass ? "PASS" : "FAIL");
    for (const auto& line : verdict.lines) std::printf("  %s\n", line.c_str());
    // What the capacities dropped is part of the result (summary.json "counters" too): never silent.
    const Json counters = countersOf(*world_);
    const long long pairs = counters.value("pair_overflow", 0LL), points = counters.value("contact_overflow", 0LL);
    if (pairs > 0)
      std::printf("note: %lld candidate body pairs were dropped over the run (solver.max_pairs_per_body, or pairs "
                  "more than doubling within a frame past solver.pair_memory_mb)\n", pairs);
    if (points > 0)
      std::printf("note: %lld collider contact points past solver.max_contacts_per_body were dropped over the run "
                  "(the deepest were kept)\n", points);
    return verdict;
  }

  Json summary(const LoopEnd& end, const smash::Verdict& verdict) const {
    Json j = {
        {"smash_version", "0.1.0"},
        {"scene", {{"name", scene_.name}, {"file", o_.scene}, {"bodies", scene_.bodies.size()},
                   {"particles", particles_}, {"shapes", scene_.shapes.size()}}},
        {"backend", backend_},
        {"precision", backend_ == "reference" ? "double" : "float"},
        {"device", device_},
        {"method", smash::methodName(scene_.solver.method)},
        {"dt", scene_.dt},
        {"substeps", scene_.substeps},
        {"frames", scene_.frames},
        {"frames_completed", end.frames},
        {"resumed_from", o_.resume.empty() ? Json(nullptr) : Json{{"file", o_.resume}, {"frame", startFrame_}}},
        {"state_saved", o_.saveState.empty() ? Json(nullptr) : Json{{"file", o_.saveState}, {"frame", savedFrame_}}},
        {"interrupted", end.signal != 0},
        {"steps", steps_},
        {"simulated_seconds", end.frames * scene_.dt},
        {"timing", {{"step_seconds", stepSeconds_},
                    {"ms_per_step", steps_ ? 1e3 * stepSeconds_ / double(steps_) : 0.0},
                    {"particle_steps_per_second",
                     stepSeconds_ > 0 ? double(particles_) * double(steps_) / stepSeconds_ : 0.0}}},
        {"deepest_collider_penetration_m", checks_->deepestPenetration()},
        {"deepest_body_penetration", {{"m", checks_->deepestBody().depth}, {"relative", checks_->deepestBody().relative}}},
        {"counters", countersOf(*world_)},
        {"memory", {{"planned_host_bytes", plannedHostBytes()}, {"peak_rss_bytes", peakRssBytes()}}}};
    if (end.signal) {
      j["interrupted_by"] = signalName(end.signal);
      j["final_kinetic_energy_J"] = smash::kineticEnergy(*world_, scene_);
      j["verdict"] = {{"pass", nullptr}, {"checks", Json::array({"not evaluated: the run was interrupted"})}};
    } else {
      j["final_kinetic_energy_J"] = finalEnergy_;
      j["verdict"] = {{"pass", verdict.pass}, {"checks", verdict.lines}};
    }
    return j;
  }

  /// The host memory the world was planned to need (the estimate World::create checks against
  /// the memory this process can use).
  std::size_t plannedHostBytes() const {
    return smash::planMemory(smash::parseBackend(backend_), scene_).host;
  }
  static std::size_t peakRssBytes() {
    struct rusage usage {};
    return ::getrusage(RUSAGE_SELF, &usage) == 0 ? static_cast<std::size_t>(usage.ru_maxrss) * 1024 : 0;
  }

  /// Pictures from the recorded poses into the staging folder: frames/frame_NNNNN.png,
  /// preview.png (the last frame) and animation.mp4 when ffmpeg is installed. A signal between
  /// pictures drops the pictures (the rest of the outputs is still published).
  Json render() {
    const auto& frames = outputs_->frames();
    smash::io::RenderOptions ro;
    ro.width = width_;
    ro.height = height_;
    ro.samples = o_.samples;
    smash::io::Renderer renderer(scene_, frames, ro);
    const std::string folder = outputs_->staged("frames");
    std::error_code ec;
    if (!std::filesystem::create_directory(folder, ec))
      throw smash::OutputError(outputs_->published("frames") + ": cannot create: " + ec.message());
    int written = 0;
    const auto t0 = Clock::now();
    const bool tty = !o_.quiet && isatty(fileno(stderr));
    const std::size_t total = (frames.size() + o_.renderEvery - 1) / o_.renderEvery;
    for (std::size_t k = 0; k < frames.size(); k += static_cast<std::size_t>(o_.renderEvery)) {
      if (gSignal) {
        if (tty) std::fprintf(stderr, "\r\033[K");
        std::filesystem::remove_all(folder, ec);
        return {{"skipped", std::string("interrupted by ") + signalName(gSignal)}};
      }
      char name[32];
      std::snprintf(name, sizeof name, "/frame_%05d.png", written++);
      smash::io::writePng(folder + name, width_, height_, renderer.render(frames[k]));
      if (tty) std::fprintf(stderr, "\r\033[Krendering %d/%zu", written, total);
    }
    if (tty) std::fprintf(stderr, "\r\033[K");
    smash::io::writePng(outputs_->staged("preview.png"), width_, height_, renderer.render(frames.back()));
    auto dropPictures = [&] {
      std::filesystem::remove_all(folder, ec);
      std::filesystem::remove(outputs_->staged("preview.png"), ec);
      return Json{{"skipped", std::string("interrupted by ") + signalName(gSignal)}};
    };
    if (gSignal) return dropPictures();
    Json r = {{"frames", written}, {"size", o_.size},
              {"seconds", std::chrono::duration<double>(Clock::now() - t0).count()},
              {"preview", outputs_->published("preview.png")}};
    if (smash::io::haveFfmpeg()) {
      const double fps = 1.0 / (scene_.dt * o_.exportEvery * o_.renderEvery);
      try {
        smash::io::encodeMp4(folder, fps, outputs_->staged("animation.mp4"), [] { return gSignal != 0; });
      } catch (const smash::OutputError&) {
        if (!gSignal) throw;
        // Stopped for a signal (or ffmpeg got it too): the pictures go, the rest is published.
        return dropPictures();
      }
      r["mp4"] = outputs_->published("animation.mp4");
    } else {
      r["mp4"] = nullptr;
      std::printf("note: ffmpeg not found, no animation.mp4 (the PNG frames are in %s)\n",
                  outputs_->published("frames").c_str());
    }
    return r;
  }

  /// The summary, the pictures and the files, published together (RunOutputs::finish).
  void writeOutputs(const LoopEnd& end, const smash::Verdict& verdict) {
    Json j = summary(end, verdict);
    if (o_.render) {
      if (end.signal) {
        j["render"] = {{"skipped", std::string("interrupted by ") + signalName(end.signal)}};
      } else {
        j["render"] = render();
        renderSkipped_ = j["render"].contains("skipped");
        if (renderSkipped_) {
          // The pictures were cut short: the result is not the complete one.
          j["interrupted"] = true;
          j["interrupted_by"] = signalName(gSignal);
        }
      }
    }
    for (const std::string& file : outputs_->finish(j)) say("wrote %s\n", file.c_str());
  }

  const RunOptions& o_;
  smash::Scene scene_;
  std::string backend_, label_, device_;
  std::size_t particles_ = 0;
  int width_ = 0, height_ = 0;
  std::unique_ptr<smash::io::RunOutputs> outputs_;
  std::unique_ptr<smash::World> world_;
  std::unique_ptr<smash::RunChecks> checks_;
  std::set<unsigned long long> reported_;
  std::int64_t steps_ = 0;
  double stepSeconds_ = 0, finalEnergy_ = 0;
  int startFrame_ = 0, savedFrame_ = -1;
  bool renderSkipped_ = false;
  std::uint64_t fingerprint_ = 0;
};

int runCommand(const RunOptions& o) { return RunSession(o).run(); }

struct BenchOptions {
  std::string scene, backends = "auto", out;
  int frames = -1;
  bool outGiven = false;
};

int benchmarkCommand(const BenchOptions& o) {
  smash::Scene scene = loadForRun(o.scene, "scene", o.frames, -1);
  catchSignals();
  // The results file is created (as a temporary) before anything is timed: a path that cannot
  // be written fails at once.
  std::unique_ptr<smash::io::PendingFile> out;
  if (o.outGiven) out = std::make_unique<smash::io::PendingFile>(o.out);
  const std::int64_t totalSteps = std::int64_t(scene.frames) * scene.substeps;
  if (totalSteps > std::numeric_limits<int>::max())
    throw smash::InputError("--frames: " + std::to_string(scene.frames) + " frames x " +
                            std::to_string(scene.substeps) + " substeps is more steps than a benchmark counts (2^31 - 1)");
  std::size_t particles = 0;
  for (const auto& b : scene.bodies) particles += scene.shapes[b.shape].rest.size();
  std::printf("scene %s: %zu bodies, %zu particles, %d frames x %d substeps\n", scene.name.c_str(),
              scene.bodies.size(), particles, scene.frames, scene.substeps);
  std::printf("%-10s %-40s %10s %12s %16s\n", "backend", "device", "ms/step", "ms/sim-s", "particle-steps/s");
  Json results = Json::array();
  std::stringstream list(o.backends);
  for (std::string name; std::getline(list, name, ',');) {
    name = resolveBackend(name);
    if (!smash::backendAvailable(smash::parseBackend(name))) {
      std::printf("%-10s not available on this machine, skipped\n", name.c_str());
      continue;
    }
    std::string label, device;
    std::unique_ptr<smash::World> world = makeWorld(name, scene, label, device);
    const int steps = static_cast<int>(totalSteps);
    world->step();  // warm-up: first-step allocations
    world->synchronize();
    auto t0 = Clock::now();
    for (int s = 1; s < steps; ++s) {
      if (gSignal) {
        // Nothing is written: the results file's temporary goes with `out`.
        std::fprintf(stderr, "smash: benchmark stopped by %s; no results written\n", signalName(gSignal));
        return 128 + gSignal;
      }
      world->step();
    }
    world->synchronize();
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    const int timed = std::max(1, steps - 1);
    const double perStep = seconds / timed;
    const double perSim = perStep / scene.stepDt();
    std::printf("%-10s %-40s %10.3f %12.1f %16.4g\n", name.c_str(), device.substr(0, 40).c_str(), 1e3 * perStep,
                1e3 * perSim, double(particles) / perStep);
    // What the capacities dropped: the timed steps did this work, not more (never silent).
    const Json counters = countersOf(*world);
    const long long pairsDropped = counters.value("pair_overflow", 0LL), pointsDropped = counters.value("contact_overflow", 0LL);
    if (pairsDropped > 0 || pointsDropped > 0)
      std::printf("%-10s note: dropped %lld candidate body pairs and %lld collider contact points (capacities: "
                  "solver.max_pairs_per_body / pair_memory_mb, max_contacts_per_body)\n",
                  name.c_str(), pairsDropped, pointsDropped);
    results.push_back({{"backend", name}, {"device", device}, {"steps", timed}, {"seconds", seconds},
                       {"ms_per_step", 1e3 * perStep}, {"ms_per_simulated_second", 1e3 * perSim},
                       {"particle_steps_per_second", double(particles) / perStep},
                       {"pair_overflow", pairsDropped}, {"contact_overflow", pointsDropped}});
  }
  if (results.empty())
    throw smash::InputError("--backends: none of '" + o.backends + "' is available on this machine");
  if (gSignal) {
    std::fprintf(stderr, "smash: benchmark stopped by %s; no results written\n", signalName(gSignal));
    return 128 + gSignal;
  }
  if (out) {
    Json j = {{"scene", o.scene}, {"bodies", scene.bodies.size()}, {"particles", particles}, {"results", results}};
    out->commit(j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
    std::printf("wrote %s\n", o.out.c_str());
  }
  return 0;
}

}  // namespace

/// Inside a catch block: the message on stderr, and the exit code docs/cli.md gives the error.
int reportError() {
  std::fflush(stdout);
  try {
    try {
      throw;
    } catch (const smash::Error&) {
      throw;
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::filesystem::filesystem_error&) {
      throw;
    } catch (...) {
      smash::rethrowAsSmashError();  // a CUDA / Thrust failure becomes a DeviceError
    }
  } catch (const smash::OutputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 4;
  } catch (const smash::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    // Loaders' path queries (a symlink loop, a name too long): bad input, named by its path.
    std::fprintf(stderr, "error: %s: %s\n", smash::quoteToken(e.path1().string(), 200).c_str(),
                 e.code().message().c_str());
    return 2;
  } catch (const smash::DeviceError& e) {
    std::fprintf(stderr, "error: device: %s\n", e.what());
    return 5;
  } catch (const smash::OutOfMemory& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 5;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error: out of memory\n");
    return 5;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "internal error: %s (please report it)\n", e.what());
    return 6;
  } catch (...) {
    std::fprintf(stderr, "internal error: unknown exception (please report it)\n");
    return 6;
  }
  return 6;
}

int main(int argc, char** argv) {
  CLI::App app{"smash: a particle / shape-matching rigid-body solver (CUDA, OpenMP, serial, and a "
               "double-precision CPU reference)\n\nExit codes: 0 ok, 1 a scene check failed, 2 bad input or usage, "
               "3 stopped by the watchdog, 4 outputs could not be written, 5 out of memory or a device failure, "
               "6 internal error, 129/130/143 interrupted (SIGHUP/SIGINT/SIGTERM)."};
  app.require_subcommand(1);
  RunOptions ro;
  auto* run = app.add_subcommand("run", "run a scene: per-frame table, progress, verdict; with --out, files too");
  run->add_option("scene", ro.scene, "scene file (JSON; docs/scene-format.md)")->required();
  run->add_option("--backend", ro.backend, "where to run: auto (cuda if a GPU is present, else omp), cuda, omp, cpp, "
                                           "or the double-precision reference")
      ->check(CLI::IsMember({"auto", "reference", "cpp", "omp", "cuda"}));
  run->add_option("--method", ro.method, "solver method, overriding the scene's")
      ->check(CLI::IsMember({"scene", "shape_matching", "impulse"}));
  run->add_option("--frames", ro.frames, "number of frames, overriding the scene's");
  run->add_option("--substeps", ro.substeps, "solver steps per frame, overriding the scene's");
  run->add_option("--out", ro.out, "output folder: animation.glb, poses.csv, summary.json (created if missing)");
  run->add_option("--export-every", ro.exportEvery, "keep every K-th frame in animation.glb and poses.csv");
  run->add_option("--particles", ro.particlesEvery, "also write particles/frame_NNNNNN.ply every K frames (debugging)")
      ;
  run->add_flag("--no-gltf", ro.noGltf, "do not write animation.glb");
  run->add_flag("--no-csv", ro.noCsv, "do not write poses.csv");
  run->add_flag("--render", ro.render, "render frames/frame_NNNNN.png, preview.png and (with ffmpeg) animation.mp4 "
                                       "with Embree on the CPU");
  run->add_option("--render-every", ro.renderEvery, "render every K-th exported frame");
  run->add_option("--size", ro.size, "picture size WIDTHxHEIGHT");
  run->add_option("--samples", ro.samples, "rays per pixel side (2 = 4 rays per pixel)")->check(CLI::Range(1, 8));
  run->add_option("--every", ro.every, "print every K-th frame in the table");
  run->add_option("--progress", ro.progress, "progress on stderr: auto (unless --quiet), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  run->add_flag("--quiet", ro.quiet, "print only the verdict (and errors)");
  run->add_option("--save-state", ro.saveState, "write the run's state to FILE at the end (and where a signal stops it), "
                                               "for --resume");
  run->add_option("--save-every", ro.saveEvery, "also write the state every N frames (replacing FILE as a whole)");
  run->add_option("--resume", ro.resume, "start from a state written by --save-state (same scene, method and "
                                         "substeps; --frames sets where the run ends)");

  std::string validatePath;
  auto* validate = app.add_subcommand("validate", "load and check a scene (meshes, fields, SDF bakes), then exit");
  validate->add_option("scene", validatePath, "scene file (JSON)")->required();

  BenchOptions bo;
  auto* bench = app.add_subcommand("benchmark", "time a scene on one or more backends (ms per step, per simulated second)");
  bench->add_option("scene", bo.scene, "scene file (JSON)")->required();
  bench->add_option("--backends", bo.backends, "comma-separated: auto, cuda, omp, cpp, reference");
  bench->add_option("--frames", bo.frames, "frames to time, overriding the scene's");
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
      for (const std::string& note : scene.advice()) std::printf("note: %s\n", note.c_str());
      return 0;
    }
    if (*bench) {
      bo.outGiven = bench->count("--out") > 0;
      if (bo.frames != -1 && bo.frames < 1)
        throw smash::InputError("--frames: must be a whole number >= 1, got " + std::to_string(bo.frames));
      std::stringstream list(bo.backends);
      for (std::string name; std::getline(list, name, ',');)
        if (name != "auto") smash::parseBackend(name);
      return benchmarkCommand(bo);
    }
    ro.outGiven = run->count("--out") > 0;
    ro.saveStateGiven = run->count("--save-state") > 0;
    ro.resumeGiven = run->count("--resume") > 0;
    return runCommand(ro);
  } catch (...) {
    return reportError();
  }
}
