#include "core/sdf_bake.h"

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <mutex>

#include <openvdb/openvdb.h>
#include <openvdb/tools/MeshToVolume.h>

#include "core/error.h"

namespace smash {

GridSdfView BakedGrid::view() const {
  GridSdfView v;
  v.values = values.data();
  v.nx = nx;
  v.ny = ny;
  v.nz = nz;
  v.originX = static_cast<float>(origin.x);
  v.originY = static_cast<float>(origin.y);
  v.originZ = static_cast<float>(origin.z);
  v.cell = static_cast<float>(cell);
  return v;
}

BakedGrid bakeSdf(const Mesh& mesh, int resolution, const std::string& context) {
  if (resolution < kMinSdfResolution || resolution > kMaxSdfResolution)
    throw InputError(context + ": sdf_resolution must be in [" + std::to_string(kMinSdfResolution) +
                     ", " + std::to_string(kMaxSdfResolution) + "], got " + std::to_string(resolution));
  if (mesh.vertices.empty() || mesh.triangles.empty())
    throw InputError(context + ": cannot bake an SDF from an empty mesh");
  static std::once_flag once;
  std::call_once(once, [] { openvdb::initialize(); });

  glm::dvec3 lo(mesh.vertices.front()), hi(lo);
  for (const glm::dvec3& v : mesh.vertices) {
    lo = glm::min(lo, v);
    hi = glm::max(hi, v);
  }
  const glm::dvec3 extent = hi - lo;
  const double cell = std::max({extent.x, extent.y, extent.z}) / resolution;
  if (!(cell > 0) || !std::isfinite(cell)) throw InputError(context + ": mesh has no extent to bake");

  // VDB voxel (i, j, k) sits at (i, j, k)·cell; the dense box covers the mesh's voxels plus padding.
  const glm::ivec3 first(glm::floor(lo / cell) - double(kSdfPadding));
  const glm::ivec3 last(glm::ceil(hi / cell) + double(kSdfPadding));
  BakedGrid g;
  g.nx = last.x - first.x + 1;
  g.ny = last.y - first.y + 1;
  g.nz = last.z - first.z + 1;
  g.origin = glm::dvec3(first) * cell;
  g.cell = cell;

  std::vector<openvdb::Vec3s> points;
  points.reserve(mesh.vertices.size());
  for (const glm::dvec3& v : mesh.vertices)
    points.emplace_back(static_cast<float>(v.x), static_cast<float>(v.y), static_cast<float>(v.z));
  std::vector<openvdb::Vec3I> triangles;
  triangles.reserve(mesh.triangles.size());
  for (const auto& t : mesh.triangles)
    triangles.emplace_back(static_cast<openvdb::Index32>(t[0]), static_cast<openvdb::Index32>(t[1]),
                           static_cast<openvdb::Index32>(t[2]));
  const std::vector<openvdb::Vec4I> quads;
  auto transform = openvdb::math::Transform::createLinearTransform(cell);
  // Both bands as wide as the padded box: every node gets its true distance, inside all the way
  // to the medial axis (no clamped narrow band) and outside to the box's far corner.
  const float band = static_cast<float>(std::max({g.nx, g.ny, g.nz}) + 2);
  openvdb::FloatGrid::Ptr grid;
  {
    // Floating-point traps (SMASH_FP_TRAPS in the tests) are for smash's own arithmetic:
    // OpenVDB's intermediate values may overflow harmlessly, so its work runs in non-stop mode
    // (its TBB threads are started from here and inherit it), and the flags it raised are
    // cleared before the caller's environment comes back.
    struct NonStop {
      std::fenv_t saved;
      NonStop() { std::feholdexcept(&saved); }
      ~NonStop() {
        std::feclearexcept(FE_ALL_EXCEPT);
        std::fesetenv(&saved);
      }
    } nonStop;
    grid = openvdb::tools::meshToSignedDistanceField<openvdb::FloatGrid>(*transform, points, triangles,
                                                                         quads, band, band);
  }

  g.values.resize(static_cast<std::size_t>(g.nx) * g.ny * g.nz);
  auto accessor = grid->getConstAccessor();
  std::size_t at = 0;
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i)
        g.values[at++] = accessor.getValue(openvdb::Coord(first.x + i, first.y + j, first.z + k));
  // A mesh whose inside OpenVDB could not find (not closed) has no negative values.
  if (*std::min_element(g.values.begin(), g.values.end()) >= 0.0f)
    throw InputError(context + ": the mesh encloses no volume at sdf_resolution " +
                     std::to_string(resolution) + " (is it closed?)");
  return g;
}

}  // namespace smash
