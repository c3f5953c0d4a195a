#include "peers/bullet_pile.h"

#include <BulletCollision/CollisionShapes/btShapeHull.h>
#include <btBulletDynamicsCommon.h>

#include "core/error.h"

namespace smash::peers {

struct BulletPile::Impl {
  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher{&config};
  btDbvtBroadphase broadphase;
  btSequentialImpulseConstraintSolver solver;
  btDiscreteDynamicsWorld world{&dispatcher, &broadphase, &solver, &config};
  std::vector<std::unique_ptr<btCollisionShape>> shapes;
  std::vector<std::unique_ptr<btDefaultMotionState>> motions;
  std::vector<std::unique_ptr<btRigidBody>> statics, bodies;
  std::vector<double> masses;
  double h = 0;

  void addStatic(btCollisionShape* shape, const btTransform& pose, double friction, double restitution) {
    btRigidBody::btRigidBodyConstructionInfo info(0, nullptr, shape);
    info.m_startWorldTransform = pose;
    info.m_friction = btScalar(friction);
    info.m_restitution = btScalar(restitution);
    statics.push_back(std::make_unique<btRigidBody>(info));
    world.addRigidBody(statics.back().get());
  }
};

static btVector3 bt(const glm::dvec3& v) { return btVector3(btScalar(v.x), btScalar(v.y), btScalar(v.z)); }
static btQuaternion bt(const glm::dquat& q) { return btQuaternion(btScalar(q.x), btScalar(q.y), btScalar(q.z), btScalar(q.w)); }

BulletPile::BulletPile(const Scene& scene) : impl_(std::make_unique<Impl>()) {
  std::vector<int>& hullVertices = hullVertices_;
  Impl& m = *impl_;
  m.h = scene.stepDt();
  m.world.setGravity(bt(scene.gravity));
  const Material& wallMaterial = scene.materials.front();
  for (std::size_t k = 0; k < scene.colliders.size(); ++k) {
    const Collider<double>& c = scene.colliders[k];
    btTransform pose;
    pose.setIdentity();
    switch (c.type) {
      case ColliderType::Plane: {
        m.shapes.push_back(std::make_unique<btStaticPlaneShape>(bt(c.normal), btScalar(glm::dot(c.point, c.normal))));
        m.addStatic(m.shapes.back().get(), pose, wallMaterial.friction, wallMaterial.restitution);
        break;
      }
      case ColliderType::Box: {
        m.shapes.push_back(std::make_unique<btBoxShape>(bt(c.halfExtents)));
        pose.setOrigin(bt(c.point));
        pose.setRotation(bt(c.rotation));
        m.addStatic(m.shapes.back().get(), pose, wallMaterial.friction, wallMaterial.restitution);
        break;
      }
      case ColliderType::BoxContainer: {
        // Five walls and a floor, each a slab 1 m thick outside the box.
        const glm::dvec3 he = c.halfExtents;
        for (int axis = 0; axis < 3; ++axis)
          for (int side = -1; side <= 1; side += 2) {
            glm::dvec3 half = he + glm::dvec3(1.0);
            half[axis] = 0.5;
            glm::dvec3 offset(0.0);
            offset[axis] = side * (he[axis] + 0.5);
            m.shapes.push_back(std::make_unique<btBoxShape>(bt(half)));
            pose.setOrigin(bt(c.point + c.rotation * offset));
            pose.setRotation(bt(c.rotation));
            m.addStatic(m.shapes.back().get(), pose, wallMaterial.friction, wallMaterial.restitution);
          }
        break;
      }
      case ColliderType::Sphere: {
        m.shapes.push_back(std::make_unique<btSphereShape>(btScalar(c.radius)));
        pose.setOrigin(bt(c.point));
        m.addStatic(m.shapes.back().get(), pose, wallMaterial.friction, wallMaterial.restitution);
        break;
      }
      default:
        throw InputError("bullet peer: colliders[" + std::to_string(k) + "]: this collider type is not mapped to Bullet");
    }
  }
  // One convex hull per shape, from the shape's mesh in the body frame (origin = centre of mass),
  // reduced with btShapeHull (at most 42 vertices), as Bullet recommends for dynamic hulls.
  std::vector<btCollisionShape*> hulls;
  for (const Shape& s : scene.shapes) {
    btConvexHullShape full;
    for (const glm::dvec3& v : s.mesh.vertices) full.addPoint(bt(v), false);
    full.recalcLocalAabb();
    full.setMargin(0);
    btShapeHull reducer(&full);
    reducer.buildHull(0);
    auto hull = std::make_unique<btConvexHullShape>();
    for (int i = 0; i < reducer.numVertices(); ++i) hull->addPoint(reducer.getVertexPointer()[i], false);
    hull->recalcLocalAabb();
    hull->setMargin(btScalar(0.002));
    hullVertices.push_back(reducer.numVertices());
    hulls.push_back(hull.get());
    m.shapes.push_back(std::move(hull));
  }
  for (const Body& b : scene.bodies) {
    const Shape& s = scene.shapes[b.shape];
    const Material& mat = scene.materials[b.material];
    btVector3 inertia(btScalar(s.inertia[0][0]), btScalar(s.inertia[1][1]), btScalar(s.inertia[2][2]));
    btTransform pose;
    pose.setIdentity();
    pose.setOrigin(bt(b.position));
    pose.setRotation(bt(b.rotation));
    m.motions.push_back(std::make_unique<btDefaultMotionState>(pose));
    btRigidBody::btRigidBodyConstructionInfo info(btScalar(s.totalMass), m.motions.back().get(), hulls[b.shape], inertia);
    info.m_friction = btScalar(mat.friction);
    info.m_restitution = btScalar(mat.restitution);
    info.m_linearDamping = btScalar(1 - scene.linearDamping);
    info.m_angularDamping = btScalar(1 - scene.angularDamping);
    m.bodies.push_back(std::make_unique<btRigidBody>(info));
    m.bodies.back()->setLinearVelocity(bt(b.velocity));
    m.bodies.back()->setAngularVelocity(bt(b.angularVelocity));
    m.world.addRigidBody(m.bodies.back().get());
    m.masses.push_back(s.totalMass);
  }
}

BulletPile::~BulletPile() {
  for (auto& b : impl_->bodies) impl_->world.removeRigidBody(b.get());
  for (auto& b : impl_->statics) impl_->world.removeRigidBody(b.get());
}

int BulletPile::solverIterations() const { return impl_->world.getSolverInfo().m_numIterations; }

void BulletPile::step() { impl_->world.stepSimulation(btScalar(impl_->h), 0, btScalar(impl_->h)); }

void BulletPile::poses(std::vector<glm::dvec3>& centres, std::vector<glm::dquat>& rotations) const {
  centres.clear();
  rotations.clear();
  for (const auto& b : impl_->bodies) {
    const btTransform& t = b->getCenterOfMassTransform();
    const btVector3 o = t.getOrigin();
    const btQuaternion q = t.getRotation();
    centres.emplace_back(o.x(), o.y(), o.z());
    rotations.emplace_back(q.w(), q.x(), q.y(), q.z());
  }
}

double BulletPile::kineticEnergy() const {
  double e = 0;
  for (std::size_t k = 0; k < impl_->bodies.size(); ++k) {
    const btRigidBody& b = *impl_->bodies[k];
    const btVector3 v = b.getLinearVelocity(), w = b.getAngularVelocity();
    const btVector3 Iw = b.getInvInertiaTensorWorld().inverse() * w;
    e += 0.5 * impl_->masses[k] * double(v.length2()) + 0.5 * double(w.dot(Iw));
  }
  return e;
}

}  // namespace smash::peers
