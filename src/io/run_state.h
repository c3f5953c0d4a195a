// `smash run --save-state FILE` / `--resume FILE`: a run's state on disk. The file is a small
// header — what the state belongs to — followed by the world's own snapshot (World::saveState,
// which carries its format version and checks bodies, particles and contact settings):
//
//   magic "SMASHRN1" | u32 version (1) | u32 header bytes | u64 scene fingerprint |
//   i64 frame | u32 substeps | u32 method | u64 world bytes | world snapshot | u64 checksum
//
// The fingerprint is FNV-1a of the scene file's JSON without "frames" (keys sorted, so
// formatting does not matter), the loaded shapes' particles and mesh colliders, the method and
// the substeps: a state resumes only the scene and settings it was saved from, and a longer run
// is asked for with --frames (or by editing "frames"). A checksum (FNV-1a of everything before
// it) closes the file: a damaged byte anywhere is refused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scene/scene.h"

namespace smash::io {

struct RunState {
  std::uint64_t fingerprint = 0;
  std::int64_t frame = 0;
  std::uint32_t substeps = 0;
  std::uint32_t method = 0;
  std::vector<std::uint8_t> world;  ///< World::saveState()
};

/// The fingerprint of a scene file's text (frames left out) with the run's method and substeps,
/// and of what the scene loaded from its mesh files: every shape's particles and masses, every
/// mesh collider's vertices and triangles (a mesh re-exported under the same name is another
/// scene).
/// Throws InputError naming the file when it is not JSON.
std::uint64_t sceneFingerprint(const std::string& sceneText, const std::string& file, std::uint32_t method,
                               std::uint32_t substeps, const Scene& scene);

/// Writes `state` to `file` through a new temporary and a rename (every write checked); throws
/// OutputError naming the file.
void writeRunState(const std::string& file, const RunState& state);

/// Reads and checks a state file (regular file, magic, version, sizes); throws InputError naming
/// the file and what is wrong. The world snapshot is checked by World::loadState.
RunState readRunState(const std::string& file);

/// Throws OutputError unless a state file can be created at `file` (checked before step 1).
void checkStateWritable(const std::string& file);

}  // namespace smash::io
