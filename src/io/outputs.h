// What a run leaves behind (docs/outputs.md): an animated glTF 2.0 binary (.glb, one mesh per
// shape, one node per body, translation + rotation channels), per-frame body poses as CSV,
// optional per-frame particle positions as PLY, and a summary JSON.
//
// Every file is written under "<name>.partial" and renamed when complete; the summary is written
// last, so a folder with summary.json in it holds a finished run. abandon() removes what a failed
// run wrote; the destructor does the same if finish() was never called.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>
#include <nlohmann/json.hpp>

#include "scene/scene.h"

namespace smash::io {

struct FramePoses {
  int frame = 0;
  double time = 0;
  std::vector<glm::dvec3> centres;
  std::vector<glm::dquat> rotations;
};

struct OutputOptions {
  std::string folder;           ///< created if missing
  bool gltf = true;             ///< animation.glb
  bool csv = true;              ///< poses.csv
  int particlesEvery = 0;       ///< particles/frame_NNNNNN.ply every K frames; 0 = none
  int exportEvery = 1;          ///< keep every K-th frame in the glTF and the CSV
};

class RunOutputs {
 public:
  /// Creates the folder; throws InputError naming it when it cannot be written.
  RunOutputs(const Scene& scene, OutputOptions options);
  ~RunOutputs();
  RunOutputs(const RunOutputs&) = delete;
  RunOutputs& operator=(const RunOutputs&) = delete;

  /// Frame 0 is the initial state. Frames not on the export stride are ignored (but the last
  /// frame of a run is always kept: pass `last`).
  void addFrame(const FramePoses& poses, bool last = false);
  bool wantsParticles(int frame) const;
  void addParticles(int frame, const std::vector<glm::vec3>& positions);

  /// Writes the glTF and the summary (with "files" listing what was written), renames
  /// everything into place. Returns the paths written.
  std::vector<std::string> finish(nlohmann::json summary);
  /// Removes the partial files of a failed run.
  void abandon();

  const std::vector<FramePoses>& frames() const { return frames_; }
  const std::string& folder() const { return options_.folder; }

 private:
  std::string path(const std::string& name) const;

  const Scene& scene_;
  OutputOptions options_;
  std::vector<FramePoses> frames_;
  std::vector<std::string> partials_;  // written, not yet renamed
  std::vector<std::string> particleFiles_;
  std::FILE* csv_ = nullptr;
  bool finished_ = false;
};

/// Writes an animated glTF binary of `frames` (public for tests and tools).
void writeGlb(const Scene& scene, const std::vector<FramePoses>& frames, const std::string& file);

/// Writes positions as an ASCII PLY point cloud.
void writePly(const std::vector<glm::vec3>& positions, const std::string& file);

/// Writes `text` to `file` via "<file>.partial" and a rename.
void writeFileAtomically(const std::string& file, const std::string& text);

/// Renames a finished temporary file onto `file`; throws InputError naming `file` on failure.
void renameIntoPlace(const std::string& tmp, const std::string& file);

}  // namespace smash::io
