// What a run leaves behind (docs/cli.md, "Outputs"): an animated glTF 2.0 binary (.glb, one mesh
// per shape, one node per body, translation + rotation channels), per-frame body poses as CSV,
// optional per-frame particle positions as PLY, and a summary JSON.
//
// A run owns its output set. Before step 1 it creates the output folder, takes an exclusive lock
// on it (flock on "<out>/.smash.lock": a second run into the same folder fails at once) and
// makes a private staging folder inside it ("<out>/.smash-run-XXXXXX", mkdtemp). Every file is
// written there, each created new (O_EXCL | O_NOFOLLOW: nothing planted can be followed), every
// write, flush, fsync and close checked. finish() publishes the set by renames: the previous
// run's outputs (the names below) are moved aside, the new files moved in with summary.json last,
// and the old ones deleted; if any rename fails, everything is moved back. A failed or abandoned
// run removes its staging folder, so the output folder is left as it was before the run.
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
  bool keepFrames = true;       ///< hold the exported frames in memory (for the glTF or pictures)
};

/// Bytes a kept frame of `bodies` bodies costs until the run ends (the poses, and the glTF's
/// float keys, its buffer and its serialised copy at the end).
inline std::size_t keptFrameBytes(std::size_t bodies) { return bodies * (56 + 4 * 28) + 64; }

/// The names a run writes in its output folder (and replaces, from a previous run).
extern const char* const kRunOutputNames[7];

class RunOutputs {
 public:
  /// Creates the folder, locks it, removes staging folders of killed runs and makes its own;
  /// throws OutputError naming the folder when it cannot be written or another run holds it.
  RunOutputs(const Scene& scene, OutputOptions options);
  ~RunOutputs();
  RunOutputs(const RunOutputs&) = delete;
  RunOutputs& operator=(const RunOutputs&) = delete;

  /// Frame 0 is the initial state. Frames not on the export stride are ignored (but the last
  /// frame of a run is always kept: pass `last`).
  void addFrame(const FramePoses& poses, bool last = false);
  bool wantsParticles(int frame) const;
  void addParticles(int frame, const std::vector<glm::vec3>& positions);

  /// Writes the glTF and the summary (with "files" listing what was written) and publishes the
  /// set. Returns the paths written (their final names).
  std::vector<std::string> finish(nlohmann::json summary);
  /// Removes everything the run wrote; the output folder is as it was before the run.
  void abandon();

  const std::vector<FramePoses>& frames() const { return frames_; }
  const std::string& folder() const { return options_.folder; }
  /// Where the run writes `name` until finish() (inside the staging folder).
  std::string staged(const std::string& name) const;
  /// Where `name` ends up (inside the output folder).
  std::string published(const std::string& name) const;

 private:
  void publish(const std::vector<std::string>& names);

  const Scene& scene_;
  OutputOptions options_;
  std::vector<FramePoses> frames_;
  int lastFrame_ = -1;
  std::size_t exported_ = 0;
  std::FILE* csv_ = nullptr;
  std::string staging_;
  int lockFd_ = -1;
  bool lockHeld_ = false, createdLock_ = false;
  std::vector<std::string> createdFolders_;  ///< made by this run, deepest first
  bool finished_ = false;
};

/// A file written once, at the end, by a rename: its temporary (".smash-partial-XXXXXX" beside
/// it, created new) is made when constructed, so a path that cannot be written fails before any work.
/// Destroyed without commit(), the temporary is removed.
class PendingFile {
 public:
  explicit PendingFile(std::string file);
  ~PendingFile();
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;
  /// Writes `text` (every write, the fsync and the close checked) and renames it into place.
  void commit(const std::string& text);
  const std::string& file() const { return file_; }

 private:
  std::string file_, tmp_;
  int fd_ = -1;
};

/// Writes an animated glTF binary of `frames` as the new file `file` (public for tests and tools).
void writeGlb(const Scene& scene, const std::vector<FramePoses>& frames, const std::string& file);

/// Writes positions as an ASCII PLY point cloud (a new file).
void writePly(const std::vector<glm::vec3>& positions, const std::string& file);

/// Writes `size` bytes to a new file (it must not exist; a symlink is not followed), checking
/// every write, the fsync and the close; a failure removes the file and throws OutputError naming it.
void writeNewFile(const std::string& file, const void* data, std::size_t size);

/// Renames a finished temporary file onto `file`; throws OutputError naming `file` on failure.
void renameIntoPlace(const std::string& tmp, const std::string& file);

}  // namespace smash::io
