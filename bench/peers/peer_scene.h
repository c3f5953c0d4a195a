// What a peer engine (bench/peers: Bullet, MuJoCo) is given of a smash scene, computed once here
// so that every peer gets the same: each shape's mass properties in its principal frame (engines
// take a diagonal inertia, and smash's body frame is not principal: the bunny's I_xy is 0.176
// beside diagonals of 0.52-0.76), the hull vertices in that frame, the bodies' start states in it,
// smash's per-step damping, and the colliders as planes, boxes and spheres.
//
// Frames: smash's body frame has its origin at the centre of mass; a shape's principal frame has
// the same origin and the principal axes as axes, x_body = R x_principal with R's columns the
// axes (det R = +1). A body's rotation is q_principal = q_body quat(R) going in and
// q_body = q_principal conj(quat(R)) coming back; centres and velocities are unchanged.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

#include "core/error.h"
#include "math/rotation.h"
#include "scene/scene.h"

namespace smash::peers {

struct PrincipalFrame {
  glm::dmat3 axes{1.0};               ///< R, body ← principal: columns are the principal axes, det +1
  glm::dquat rotation{1, 0, 0, 0};    ///< quat(R)
  glm::dvec3 moments{0.0};            ///< diag(Rᵀ I R), kg m²
};

/// The principal frame of a symmetric inertia tensor (body frame, about the centre of mass), by
/// cyclic Jacobi in double. The axes come in the order Jacobi leaves them (unsorted), so an
/// already diagonal tensor keeps R = 1. `context` names the shape in the error a tensor that
/// does not diagonalise (non-finite) raises.
inline PrincipalFrame principalFrame(const glm::dmat3& inertia, const std::string& context) {
  double a[3][3], v[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) a[i][j] = 0.5 * (inertia[j][i] + inertia[i][j]);  // glm: [column][row]
  jacobiEigenSymmetric<double, 3>(a, v, 64);
  PrincipalFrame f;
  for (int c = 0; c < 3; ++c)
    for (int r = 0; r < 3; ++r) f.axes[c][r] = v[r][c];
  if (glm::determinant(f.axes) < 0) f.axes[2] = -f.axes[2];  // a proper rotation: flip one axis
  const glm::dmat3 d = glm::transpose(f.axes) * inertia * f.axes;
  f.moments = glm::dvec3(d[0][0], d[1][1], d[2][2]);
  const double scale = std::abs(d[0][0]) + std::abs(d[1][1]) + std::abs(d[2][2]);
  const double off = std::abs(d[1][0]) + std::abs(d[2][0]) + std::abs(d[2][1]);
  if (!std::isfinite(scale) || !(off <= 1e-9 * scale))
    throw InputError(context + ": inertia tensor does not diagonalise (off-diagonal " + std::to_string(off) +
                     " of " + std::to_string(scale) + ")");
  f.rotation = glm::normalize(glm::quat_cast(f.axes));
  return f;
}

/// Velocity factors of one smash step. Shape matching scales every particle's velocity by
/// linearDamping (physics.md §2.1), which scales a body's linear and angular motion alike and
/// leaves angularDamping unused; the impulse method scales v by linearDamping and ω by
/// angularDamping (§3.1).
struct StepDamping {
  double linear = 1, angular = 1;
};
inline StepDamping stepDamping(const Scene& scene) {
  if (scene.solver.method == Method::Impulse) return {scene.linearDamping, scene.angularDamping};
  return {scene.linearDamping, scene.linearDamping};
}

/// Bullet's damping coefficient for a per-step factor α at step h: Bullet multiplies velocities
/// by (1 − d)^h each step, so d = 1 − α^(1/h).
inline double perSecondDamping(double alpha, double h) { return 1 - std::pow(alpha, 1 / h); }

struct PeerShape {
  std::string name;
  double mass = 0;
  PrincipalFrame frame;
  std::vector<glm::dvec3> vertices;  ///< the shape's mesh vertices in the principal frame (Rᵀ v)
};

struct PeerBody {
  int shape = 0;
  glm::dvec3 position{0.0};         ///< centre of mass, world
  glm::dquat rotation{1, 0, 0, 0};  ///< principal frame → world
  glm::dvec3 velocity{0.0}, angularVelocity{0.0};  ///< world
  double friction = 0, restitution = 0;
};

/// A static collider as the peers take them: a box container (solid everywhere outside the box)
/// becomes six boxes, floor, walls and lid, each a slab 1 m thick outside its face and 1 m wider
/// than the box on each side, so the slabs overlap at the edges and leave no gap.
struct PeerCollider {
  enum class Type { Plane, Box, Sphere };
  Type type = Type::Plane;
  int source = 0;  ///< index into Scene::colliders
  glm::dvec3 point{0.0};   ///< a point of the plane; the box's or sphere's centre
  glm::dvec3 normal{0, 1, 0};
  glm::dvec3 halfExtents{0.0};
  glm::dquat rotation{1, 0, 0, 0};
  double radius = 0;
};

struct PeerScene {
  std::string name;
  double h = 0;  ///< one smash step, scene.stepDt()
  int substeps = 1;
  glm::dvec3 gravity{0.0};
  StepDamping damping;
  std::vector<PeerShape> shapes;
  std::vector<PeerBody> bodies;
  std::vector<PeerCollider> colliders;
};

/// The scene as a peer gets it. Throws InputError naming the collider or shape a peer cannot
/// represent (mesh and capsule colliders, shapes without a mesh); `peer` prefixes the message.
inline PeerScene peerScene(const Scene& scene, const std::string& peer) {
  PeerScene p;
  p.name = scene.name;
  p.h = scene.stepDt();
  p.substeps = scene.substeps;
  p.gravity = scene.gravity;
  p.damping = stepDamping(scene);
  for (std::size_t k = 0; k < scene.shapes.size(); ++k) {
    const Shape& s = scene.shapes[k];
    const std::string context = peer + ": shapes[" + std::to_string(k) + "] (" + s.name + ")";
    if (s.mesh.vertices.empty()) throw InputError(context + ": no mesh to take a hull of");
    PeerShape ps;
    ps.name = s.name;
    ps.mass = s.totalMass;
    ps.frame = principalFrame(s.inertia, context);
    const glm::dmat3 toPrincipal = glm::transpose(ps.frame.axes);
    for (const glm::dvec3& v : s.mesh.vertices) ps.vertices.push_back(toPrincipal * v);
    p.shapes.push_back(std::move(ps));
  }
  for (const Body& b : scene.bodies) {
    const Material& m = scene.materials[b.material];
    p.bodies.push_back({b.shape, b.position, glm::normalize(b.rotation * p.shapes[b.shape].frame.rotation),
                        b.velocity, b.angularVelocity, m.friction, m.restitution});
  }
  for (std::size_t k = 0; k < scene.colliders.size(); ++k) {
    const Collider<double>& c = scene.colliders[k];
    PeerCollider pc;
    pc.source = static_cast<int>(k);
    switch (c.type) {
      case ColliderType::Plane:
        pc.type = PeerCollider::Type::Plane;
        pc.point = c.point;
        pc.normal = c.normal;
        p.colliders.push_back(pc);
        break;
      case ColliderType::Box:
        pc.type = PeerCollider::Type::Box;
        pc.point = c.point;
        pc.halfExtents = c.halfExtents;
        pc.rotation = c.rotation;
        p.colliders.push_back(pc);
        break;
      case ColliderType::BoxContainer:
        pc.type = PeerCollider::Type::Box;
        pc.rotation = c.rotation;
        for (int axis = 0; axis < 3; ++axis)
          for (int side = -1; side <= 1; side += 2) {
            pc.halfExtents = c.halfExtents + glm::dvec3(1.0);
            pc.halfExtents[axis] = 0.5;
            glm::dvec3 offset(0.0);
            offset[axis] = side * (c.halfExtents[axis] + 0.5);
            pc.point = c.point + c.rotation * offset;
            p.colliders.push_back(pc);
          }
        break;
      case ColliderType::Sphere:
        pc.type = PeerCollider::Type::Sphere;
        pc.point = c.point;
        pc.radius = c.radius;
        p.colliders.push_back(pc);
        break;
      case ColliderType::Capsule:
      case ColliderType::Mesh:
        throw InputError(peer + ": colliders[" + std::to_string(k) + "]: " +
                         (c.type == ColliderType::Mesh ? "mesh" : "capsule") + " colliders are not given to peers");
    }
  }
  return p;
}

/// A body's rotation in smash's body frame from the peer's principal-frame rotation.
inline glm::dquat bodyRotation(const glm::dquat& principal, const PeerShape& shape) {
  return glm::normalize(principal * glm::conjugate(shape.frame.rotation));
}

}  // namespace smash::peers
