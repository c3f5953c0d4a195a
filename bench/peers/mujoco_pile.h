// The MuJoCo peer of bench/bench_pile.cpp. MuJoCo is run from Python (bench/peers/mujoco_pile.py,
// MuJoCo from PyPI): this side writes the scene as peer_scene.h prepares it for every peer (JSON),
// runs the script, and reads back the poses after each frame and the run's summary. Everything
// that keeps a run from being complete (no interpreter, no `mujoco` module, the script failing,
// short or malformed output) is an InputError naming the file or the problem.
#pragma once

#include <string>
#include <vector>

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>
#include <nlohmann/json.hpp>

#include "peers/peer_scene.h"
#include "scene/scene.h"

namespace smash::peers {

class MujocoPile {
 public:
  /// Prepares the scene (InputError for colliders MuJoCo is not given) and checks that `python`
  /// runs and imports mujoco and numpy; `script` is mujoco_pile.py.
  MujocoPile(const Scene& scene, std::string python, std::string script);
  /// The MuJoCo version the interpreter imports.
  const std::string& version() const { return version_; }
  /// Writes `dir`/peer.json, runs the script for `frames` frames with its output in `dir`, and
  /// reads poses.bin and summary.json back.
  void run(int frames, const std::string& dir);
  int frames() const { return frames_; }
  /// Seconds of stepping of each frame, as the script timed them.
  const std::vector<double>& frameSeconds() const { return frameSeconds_; }
  /// Centres and rotations (smash's body frame) after frame `f` (0-based).
  void poses(int f, std::vector<glm::dvec3>& centres, std::vector<glm::dquat>& rotations) const;
  /// summary.json as the script wrote it (settings, contacts, solver iterations, energy).
  const nlohmann::json& summary() const { return summary_; }

 private:
  PeerScene scene_;
  std::string python_, script_, version_;
  int frames_ = 0;
  std::vector<double> poses_;  ///< frames × bodies × 7, principal frame
  std::vector<double> frameSeconds_;
  nlohmann::json summary_;
};

}  // namespace smash::peers
