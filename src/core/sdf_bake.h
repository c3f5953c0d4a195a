// Baking a mesh's signed distance field into a dense grid (physics.md §5–6), once per shape at load.
//
// OpenVDB (Debian's libopenvdb-dev) computes the distances: meshToSignedDistanceField with an
// interior band as wide as the grid, so the field holds true distances all the way to the medial
// axis — a particle deep inside another body still learns how far it is from the surface and in
// which direction to leave. The sparse VDB grid is then read out at the nodes of a dense, padded
// box that every backend samples trilinearly (kernels/math/grid_sdf.h).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <glm/glm.hpp>

#include "core/mesh.h"
#include "math/grid_sdf.h"

namespace smash {

struct BakedGrid {
  std::vector<float> values;  ///< nx·ny·nz, x fastest
  int nx = 0, ny = 0, nz = 0;
  glm::dvec3 origin{0.0};  ///< node (0, 0, 0)
  double cell = 0;         ///< node spacing

  /// A view of this grid's values (host memory; backends copy the values and re-point it).
  GridSdfView view() const;
  /// A Lipschitz bound of the trilinear interpolant (grid_sdf.h) inside the node box: in a cell
  /// ∂φ/∂x is the bilinear blend of its four x edges' differences / cell, so |∇φ| ≤ √(mx² + my²
  /// + mz²) with mx the largest |difference| / cell along x in that cell; the largest over cells.
  /// For exact distances at the nodes each m ≤ 1; infinite (no bound) for a degenerate grid.
  double interpolantLipschitz() const;
};

constexpr int kMinSdfResolution = 8;
constexpr int kMaxSdfResolution = 256;  ///< a dense result of ~265³ floats (75 MB); the bake peaks far higher
/// Cells of padding around the mesh's bounding box on every side.
constexpr int kSdfPadding = 4;

/// Bakes `mesh` (already in the frame it will be sampled in) with `resolution` cells along the
/// longest side of its bounding box. The mesh must be closed for the inside to be known; the
/// caller has validated it. Throws InputError (prefixed with `context`) on a bad resolution, or
/// when the bake's memory (bakeMemoryBytes) exceeds what this process can use.
///
/// Baked grids are cached on disk (sdfCacheFolder()), keyed by the mesh's exact vertices and
/// triangles, the resolution, the padding, the cache format and OpenVDB's version: a second load
/// of the same shape reads the grid back — the same floats — instead of baking again. A cache
/// file that does not check out (size, magic, key, non-finite values) is baked again and replaced.
BakedGrid bakeSdf(const Mesh& mesh, int resolution, const std::string& context);

/// Peak memory of OpenVDB's full-band bake, measured on the 2-core VM (bunny, sdf_resolution 32
/// to 256, docs/physics.md "Baking cost"): a fixed part and bytes per voxel of the dense box.
constexpr std::size_t kBakeFixedBytes = std::size_t(32) << 20;
constexpr std::size_t kBakeBytesPerVoxel = 240;
/// The estimate bakeSdf checks before baking `mesh` at `resolution`.
std::size_t bakeMemoryBytes(const Mesh& mesh, int resolution);

/// Where baked grids are cached: $SMASH_CACHE_DIR/sdf (an empty SMASH_CACHE_DIR turns the cache
/// off), else $XDG_CACHE_HOME/smash/sdf, else $HOME/.cache/smash/sdf; empty when none is set.
std::string sdfCacheFolder();

/// How many bakes OpenVDB has run in this process (cache misses), for tests.
int openVdbBakes();

}  // namespace smash
