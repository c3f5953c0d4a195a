// Grid signed distance fields (physics.md §5–6): a shape's reference SDF φ_ref, baked once from its mesh
// into a dense grid of node values (src/core/sdf_bake.cpp, with OpenVDB), sampled trilinearly.
//
// The view is a POD (a pointer into backend memory plus the grid geometry), so it can sit inside a
// device array of shapes or colliders. Values are float on every backend; the reference samples
// the same float values in double arithmetic.
//
// Inside the node box the value is the trilinear interpolant and the gradient is the interpolant's
// exact gradient (continuous along each cell's interior, unit length only approximately, so it is
// normalised). Outside the box φ = φ(nearest box point) + distance to the box: continuous, never
// smaller than the true distance minus the interpolation error, which is all a contact test needs;
// bakes pad the box by several cells so no surface lies near its faces.
#pragma once

#include "math/hd.h"
#include "math/sdf_sample.h"

namespace smash {

struct GridSdfView {
  const float* values = nullptr;  ///< nx·ny·nz node values, x fastest
  int nx = 0, ny = 0, nz = 0;
  float originX = 0, originY = 0, originZ = 0;  ///< position of node (0, 0, 0)
  float cell = 1;                               ///< node spacing
};

template <class T>
SMASH_HD SdfSample<T> sampleGrid(const GridSdfView& g, const Vec3<T>& p) {
  const Vec3<T> origin(T(g.originX), T(g.originY), T(g.originZ));
  const T cell = T(g.cell);
  const Vec3<T> upper = origin + cell * Vec3<T>(T(g.nx - 1), T(g.ny - 1), T(g.nz - 1));
  const Vec3<T> q = glm::clamp(p, origin, upper);
  const Vec3<T> u = (q - origin) / cell;
  // Cell index, kept one short of the last node so the cell always has a +1 neighbour.
  int i = static_cast<int>(u.x), j = static_cast<int>(u.y), k = static_cast<int>(u.z);
  i = i < 0 ? 0 : (i > g.nx - 2 ? g.nx - 2 : i);
  j = j < 0 ? 0 : (j > g.ny - 2 ? g.ny - 2 : j);
  k = k < 0 ? 0 : (k > g.nz - 2 ? g.nz - 2 : k);
  const T fx = u.x - T(i), fy = u.y - T(j), fz = u.z - T(k);
  const long long sx = 1, sy = g.nx, sz = static_cast<long long>(g.nx) * g.ny;
  const float* c = g.values + i * sx + j * sy + k * sz;
  const T c000 = T(c[0]), c100 = T(c[sx]), c010 = T(c[sy]), c110 = T(c[sx + sy]);
  const T c001 = T(c[sz]), c101 = T(c[sx + sz]), c011 = T(c[sy + sz]), c111 = T(c[sx + sy + sz]);
  // Interpolate along x, then y, then z, keeping the partial derivatives.
  const T c00 = c000 + fx * (c100 - c000), c10 = c010 + fx * (c110 - c010);
  const T c01 = c001 + fx * (c101 - c001), c11 = c011 + fx * (c111 - c011);
  const T c0 = c00 + fy * (c10 - c00), c1 = c01 + fy * (c11 - c01);
  T phi = c0 + fz * (c1 - c0);
  const T dx0 = (c100 - c000) + fy * ((c110 - c010) - (c100 - c000));
  const T dx1 = (c101 - c001) + fy * ((c111 - c011) - (c101 - c001));
  Vec3<T> grad(dx0 + fz * (dx1 - dx0), (c10 - c00) + fz * ((c11 - c01) - (c10 - c00)), c1 - c0);
  const Vec3<T> outside = p - q;
  const T out = glm::length(outside);
  if (out > T(0)) {
    phi += out;
    grad = outside / out;
  }
  const T len = glm::length(grad);
  if (!(len > ScalarTraits<T>::tiny)) return {phi, Vec3<T>(T(0), T(1), T(0))};
  return {phi, grad / len};
}

/// sampleGrid's φ alone (no gradient): the same value to the bit.
template <class T>
SMASH_HD T sampleGridPhi(const GridSdfView& g, const Vec3<T>& p) {
  const Vec3<T> origin(T(g.originX), T(g.originY), T(g.originZ));
  const T cell = T(g.cell);
  const Vec3<T> upper = origin + cell * Vec3<T>(T(g.nx - 1), T(g.ny - 1), T(g.nz - 1));
  const Vec3<T> q = glm::clamp(p, origin, upper);
  const Vec3<T> u = (q - origin) / cell;
  int i = static_cast<int>(u.x), j = static_cast<int>(u.y), k = static_cast<int>(u.z);
  i = i < 0 ? 0 : (i > g.nx - 2 ? g.nx - 2 : i);
  j = j < 0 ? 0 : (j > g.ny - 2 ? g.ny - 2 : j);
  k = k < 0 ? 0 : (k > g.nz - 2 ? g.nz - 2 : k);
  const T fx = u.x - T(i), fy = u.y - T(j), fz = u.z - T(k);
  const long long sx = 1, sy = g.nx, sz = static_cast<long long>(g.nx) * g.ny;
  const float* c = g.values + i * sx + j * sy + k * sz;
  const T c00 = T(c[0]) + fx * (T(c[sx]) - T(c[0])), c10 = T(c[sy]) + fx * (T(c[sx + sy]) - T(c[sy]));
  const T c01 = T(c[sz]) + fx * (T(c[sx + sz]) - T(c[sz]));
  const T c11 = T(c[sy + sz]) + fx * (T(c[sx + sy + sz]) - T(c[sy + sz]));
  const T c0 = c00 + fy * (c10 - c00), c1 = c01 + fy * (c11 - c01);
  return c0 + fz * (c1 - c0) + glm::length(p - q);
}

/// φ_j of physics.md §6 for a grid in the frame of a body (or a placed collider) with centre c and
/// rotation R: φ(x) = φ_ref(Rᵀ (x − c)), gradient R ∇φ_ref.
template <class T>
SMASH_HD SdfSample<T> sampleGridPlaced(const GridSdfView& g, const Vec3<T>& centre,
                                       const Mat3<T>& rotation, const Vec3<T>& x) {
  SdfSample<T> s = sampleGrid(g, glm::transpose(rotation) * (x - centre));
  return {s.phi, rotation * s.gradient};
}

}  // namespace smash
