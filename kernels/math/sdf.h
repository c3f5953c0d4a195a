// Analytic signed distance fields of the static colliders (physics.md §5).
//
// φ(x) is the distance to the surface, negative inside the solid; `gradient` is ∇φ, a unit vector
// wherever φ is differentiable. On the medial set (centre of a sphere, a box's diagonal planes)
// the gradient is one of the one-sided limits, chosen deterministically, so contact normals are
// always unit and finite.
//
// A collider is a small POD so that an array of them can live in device memory; the meaning of
// the fields depends on `type` (see ColliderType).
#pragma once

#include "math/grid_sdf.h"
#include "math/hd.h"
#include "math/sdf_sample.h"
#include "math/swept.h"

namespace smash {

enum class ColliderType : int {
  Plane = 0,         ///< half-space: `point`, unit `normal` pointing out of the solid
  Sphere = 1,        ///< `point` centre, `radius`
  Box = 2,           ///< `point` centre, `halfExtents`, `rotation`
  Capsule = 3,       ///< segment `point`→`point2`, `radius`
  BoxContainer = 4,  ///< inside-out box: the solid is everything outside it
  Mesh = 5,          ///< baked grid SDF of a mesh (`grid`), placed at `point` with `rotation`
};

template <class T>
struct Collider {
  ColliderType type = ColliderType::Plane;
  Vec3<T> point{T(0)};
  Vec3<T> normal{T(0), T(1), T(0)};
  Vec3<T> point2{T(0)};
  Vec3<T> halfExtents{T(0)};
  T radius = T(0);
  Quat<T> rotation{T(1), T(0), T(0), T(0)};  ///< box / mesh orientation (local → world)
  GridSdfView grid;  ///< Mesh: the baked field in the mesh's frame (backend memory)
  T meshThickness = T(0);  ///< Mesh: 2 volume / area of the placed mesh (0: unknown)
};

template <class T>
SMASH_HD SdfSample<T> sdfPlane(const Vec3<T>& x, const Vec3<T>& point, const Vec3<T>& normal) {
  return {glm::dot(x - point, normal), normal};
}

template <class T>
SMASH_HD SdfSample<T> sdfSphere(const Vec3<T>& x, const Vec3<T>& centre, T radius) {
  Vec3<T> d = x - centre;
  T len = glm::length(d);
  if (!(len > ScalarTraits<T>::tiny)) return {-radius, Vec3<T>(T(0), T(1), T(0))};
  return {len - radius, d / len};
}

/// Axis-aligned box centred at the origin, half extents h (Quilez's box SDF, exact inside and out).
template <class T>
SMASH_HD SdfSample<T> sdfBoxLocal(const Vec3<T>& p, const Vec3<T>& h) {
  Vec3<T> sgn(p.x < T(0) ? T(-1) : T(1), p.y < T(0) ? T(-1) : T(1), p.z < T(0) ? T(-1) : T(1));
  Vec3<T> q = glm::abs(p) - h;
  Vec3<T> qo = glm::max(q, Vec3<T>(T(0)));
  T outside = glm::length(qo);
  if (outside > T(0)) return {outside, sgn * qo / outside};
  // Inside (or on the surface): the nearest face is the axis with the largest q.
  int axis = 0;
  if (q.y > q[axis]) axis = 1;
  if (q.z > q[axis]) axis = 2;
  Vec3<T> g(T(0));
  g[axis] = sgn[axis];
  return {q[axis], g};
}

template <class T>
SMASH_HD SdfSample<T> sdfBox(const Vec3<T>& x, const Vec3<T>& centre, const Vec3<T>& h,
                             const Quat<T>& rotation) {
  Vec3<T> local = glm::conjugate(rotation) * (x - centre);
  SdfSample<T> s = sdfBoxLocal(local, h);
  return {s.phi, rotation * s.gradient};
}

template <class T>
SMASH_HD SdfSample<T> sdfCapsule(const Vec3<T>& x, const Vec3<T>& a, const Vec3<T>& b, T radius) {
  Vec3<T> ab = b - a;
  T len2 = glm::dot(ab, ab);
  T t = len2 > ScalarTraits<T>::tiny ? glm::clamp(glm::dot(x - a, ab) / len2, T(0), T(1)) : T(0);
  return sdfSphere(x, a + t * ab, radius);
}

/// sdfCollider's switch over every shape (sdfCollider answers a plane itself; this, out of line
/// on the host, the others).
template <class T>
SMASH_HD_NOINLINE SdfSample<T> sdfShapedCollider(const Collider<T>& c, const Vec3<T>& x) {
  switch (c.type) {
    case ColliderType::Plane:
      return sdfPlane(x, c.point, c.normal);
    case ColliderType::Sphere:
      return sdfSphere(x, c.point, c.radius);
    case ColliderType::Box:
      return sdfBox(x, c.point, c.halfExtents, c.rotation);
    case ColliderType::Capsule:
      return sdfCapsule(x, c.point, c.point2, c.radius);
    case ColliderType::BoxContainer: {
      SdfSample<T> s = sdfBox(x, c.point, c.halfExtents, c.rotation);
      return {-s.phi, -s.gradient};
    }
    case ColliderType::Mesh: {
      SdfSample<T> s = sampleGrid(c.grid, glm::conjugate(c.rotation) * (x - c.point));
      return {s.phi, c.rotation * s.gradient};
    }
  }
  return {T(1), Vec3<T>(T(0), T(1), T(0))};
}

/// The signed distance and its gradient of collider c at x. A plane, the common ground, inline
/// (one dot product: every particle of a resting body tests it, twice a step); the other shapes
/// through one call, kept out of line on the host so that the particle loops around this stay
/// small (measured: 19% of the resting benchmark's step was the call of the whole switch).
template <class T>
SMASH_HD SdfSample<T> sdfCollider(const Collider<T>& c, const Vec3<T>& x) {
  if (c.type == ColliderType::Plane) return sdfPlane(x, c.point, c.normal);
  return sdfShapedCollider(c, x);
}

/// How much a collider's φ may fall short of a 1-Lipschitz bound: analytic SDFs are exact; a
/// trilinear grid deviates from the true distance by less than a cell (see grid_sdf.h), so a bound
/// through one point holds within twice that.
template <class T>
SMASH_HD T lipschitzSlack(const Collider<T>& c) {
  return c.type == ColliderType::Mesh ? T(2) * T(c.grid.cell) : T(0);
}

/// A bound on the slope of a collider's φ, for sphere tracing (math/swept.h): analytic SDFs are
/// exact distances (1); a trilinear grid's partial derivatives are each at most 1 (√3).
template <class T>
SMASH_HD T lipschitzBound(const Collider<T>& c) {
  return c.type == ColliderType::Mesh ? T(1.7320508075688772) : T(1);
}

/// A collider's thinnest extent, for swept contacts (math/swept.h): solids that cannot be passed
/// through (a half-space, the outside of a box container) are never swept.
template <class T>
SMASH_HD T colliderThickness(const Collider<T>& c) {
  switch (c.type) {
    case ColliderType::Sphere:
    case ColliderType::Capsule:
      return T(2) * c.radius;
    case ColliderType::Box:
      return T(2) * glm::min(c.halfExtents.x, glm::min(c.halfExtents.y, c.halfExtents.z));
    case ColliderType::Mesh:
      return c.meshThickness;
    case ColliderType::Plane:
    case ColliderType::BoxContainer:
      break;
  }
  return T(1e30);
}

/// A collider's field as sweptSample reads it.
template <class T>
struct ColliderField {
  Collider<T> collider;  // a copy: through a reference or pointer nvcc put the collider on the stack (584 B)
  SMASH_HD SdfSample<T> operator()(const Vec3<T>& x) const { return sdfCollider(collider, x); }
  SMASH_HD T phi(const Vec3<T>& x) const { return sdfCollider(collider, x).phi; }
};

/// The contact sample of a point that moved from x0 (the step's start) to x1 (the predicted pose)
/// against collider c: its sample at x1, or the entry's tangent plane when it went past the
/// surface (math/swept.h).
template <class T>
SMASH_HD SdfSample<T> sweptColliderSample(const Collider<T>& c, const Vec3<T>& x0, const Vec3<T>& x1) {
  return sweptSample(ColliderField<T>{c}, x0, x1, sdfCollider(c, x1), lipschitzBound(c), colliderThickness(c),
                     c.type == ColliderType::Mesh ? T(0.05) * T(c.grid.cell) : T(0));
}

/// Union of colliders: the minimum φ (physics.md §5), with the gradient of the closest one.
template <class T>
SMASH_HD SdfSample<T> sdfUnion(const Collider<T>* colliders, int count, const Vec3<T>& x) {
  SdfSample<T> best{T(1e30), Vec3<T>(T(0), T(1), T(0))};
  for (int k = 0; k < count; ++k) {
    SdfSample<T> s = sdfCollider(colliders[k], x);
    if (s.phi < best.phi) best = s;
  }
  return best;
}

}  // namespace smash
