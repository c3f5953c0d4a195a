#include "peers/bullet_pile.h"

#include <algorithm>
#include <cmath>

#include <BulletCollision/CollisionDispatch/btManifoldResult.h>
#include <BulletCollision/CollisionShapes/btShapeHull.h>
#include <btBulletDynamicsCommon.h>

#include "core/error.h"
#include "peers/peer_scene.h"

namespace smash::peers {

namespace {

// smash's material mixing (kernels/math/contact_solver.h mixMaterials): a body against a collider
// uses the body's own material; two bodies use the larger restitution and the geometric mean of
// the frictions. Bullet's defaults multiply both, which made the pile's walls and bodies slide
// with μ = 0.25 and bounce with e = 0.09 where smash has 0.5 and 0.3.
bool isStatic(const btCollisionObject* o) { return o->isStaticOrKinematicObject(); }
btScalar mixedFriction(const btCollisionObject* a, const btCollisionObject* b) {
  if (isStatic(a)) return b->getFriction();
  if (isStatic(b)) return a->getFriction();
  return std::sqrt(a->getFriction() * b->getFriction());
}
btScalar mixedRestitution(const btCollisionObject* a, const btCollisionObject* b) {
  if (isStatic(a)) return b->getRestitution();
  if (isStatic(b)) return a->getRestitution();
  return std::max(a->getRestitution(), b->getRestitution());
}

btVector3 bt(const glm::dvec3& v) { return btVector3(btScalar(v.x), btScalar(v.y), btScalar(v.z)); }
btQuaternion bt(const glm::dquat& q) { return btQuaternion(btScalar(q.x), btScalar(q.y), btScalar(q.z), btScalar(q.w)); }

}  // namespace

struct BulletPile::Impl {
  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher{&config};
  btDbvtBroadphase broadphase;
  btSequentialImpulseConstraintSolver solver;
  btDiscreteDynamicsWorld world{&dispatcher, &broadphase, &solver, &config};
  std::vector<std::unique_ptr<btCollisionShape>> shapes;
  std::vector<std::unique_ptr<btDefaultMotionState>> motions;
  std::vector<std::unique_ptr<btRigidBody>> statics, bodies;
  PeerScene scene;
  double linearDamping = 0, angularDamping = 0;
  CalculateCombinedCallback oldFriction = nullptr, oldRestitution = nullptr;

  void addStatic(btCollisionShape* shape, const btTransform& pose) {
    // Friction and restitution do not matter here: mixedFriction and mixedRestitution take the
    // body's against a static collider.
    btRigidBody::btRigidBodyConstructionInfo info(0, nullptr, shape);
    info.m_startWorldTransform = pose;
    statics.push_back(std::make_unique<btRigidBody>(info));
    world.addRigidBody(statics.back().get());
  }
};

BulletPile::BulletPile(const Scene& scene) : impl_(std::make_unique<Impl>()) {
  std::vector<int>& hullVertices = hullVertices_;
  Impl& m = *impl_;
  m.scene = peerScene(scene, "bullet peer");
  const PeerScene& p = m.scene;
  m.world.setGravity(bt(p.gravity));
  m.world.getSolverInfo().m_restitutionVelocityThreshold = btScalar(scene.solver.restitutionThreshold);
  // The mixing callbacks are process-wide; the previous ones come back in the destructor.
  m.oldFriction = gCalculateCombinedFrictionCallback;
  m.oldRestitution = gCalculateCombinedRestitutionCallback;
  gCalculateCombinedFrictionCallback = mixedFriction;
  gCalculateCombinedRestitutionCallback = mixedRestitution;
  for (const PeerCollider& c : p.colliders) {
    btTransform pose;
    pose.setIdentity();
    switch (c.type) {
      case PeerCollider::Type::Plane:
        m.shapes.push_back(std::make_unique<btStaticPlaneShape>(bt(c.normal), btScalar(glm::dot(c.point, c.normal))));
        break;
      case PeerCollider::Type::Box:
        m.shapes.push_back(std::make_unique<btBoxShape>(bt(c.halfExtents)));
        pose.setOrigin(bt(c.point));
        pose.setRotation(bt(c.rotation));
        break;
      case PeerCollider::Type::Sphere:
        m.shapes.push_back(std::make_unique<btSphereShape>(btScalar(c.radius)));
        pose.setOrigin(bt(c.point));
        break;
    }
    m.addStatic(m.shapes.back().get(), pose);
  }
  // One convex hull per shape, from the shape's mesh in its principal frame, reduced with
  // btShapeHull (at most 42 vertices), as Bullet recommends for dynamic hulls.
  std::vector<btCollisionShape*> hulls;
  for (const PeerShape& s : p.shapes) {
    btConvexHullShape full;
    for (const glm::dvec3& v : s.vertices) full.addPoint(bt(v), false);
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
  m.linearDamping = perSecondDamping(p.damping.linear, p.h);
  m.angularDamping = perSecondDamping(p.damping.angular, p.h);
  for (const PeerBody& b : p.bodies) {
    const PeerShape& s = p.shapes[b.shape];
    btTransform pose;
    pose.setIdentity();
    pose.setOrigin(bt(b.position));
    pose.setRotation(bt(b.rotation));
    m.motions.push_back(std::make_unique<btDefaultMotionState>(pose));
    btRigidBody::btRigidBodyConstructionInfo info(btScalar(s.mass), m.motions.back().get(), hulls[b.shape],
                                                  bt(s.frame.moments));
    info.m_friction = btScalar(b.friction);
    info.m_restitution = btScalar(b.restitution);
    info.m_linearDamping = btScalar(m.linearDamping);
    info.m_angularDamping = btScalar(m.angularDamping);
    m.bodies.push_back(std::make_unique<btRigidBody>(info));
    m.bodies.back()->setLinearVelocity(bt(b.velocity));
    m.bodies.back()->setAngularVelocity(bt(b.angularVelocity));
    m.world.addRigidBody(m.bodies.back().get());
  }
}

BulletPile::~BulletPile() {
  for (auto& b : impl_->bodies) impl_->world.removeRigidBody(b.get());
  for (auto& b : impl_->statics) impl_->world.removeRigidBody(b.get());
  gCalculateCombinedFrictionCallback = impl_->oldFriction;
  gCalculateCombinedRestitutionCallback = impl_->oldRestitution;
}

int BulletPile::solverIterations() const { return impl_->world.getSolverInfo().m_numIterations; }
std::string BulletPile::version() const {
  const int v = btGetVersion();
  return std::to_string(v / 100) + "." + (v % 100 < 10 ? "0" : "") + std::to_string(v % 100);
}
double BulletPile::linearDamping() const { return impl_->linearDamping; }
double BulletPile::angularDamping() const { return impl_->angularDamping; }

void BulletPile::step() { impl_->world.stepSimulation(btScalar(impl_->scene.h), 0, btScalar(impl_->scene.h)); }

void BulletPile::poses(std::vector<glm::dvec3>& centres, std::vector<glm::dquat>& rotations) const {
  centres.clear();
  rotations.clear();
  for (std::size_t k = 0; k < impl_->bodies.size(); ++k) {
    const btTransform& t = impl_->bodies[k]->getCenterOfMassTransform();
    const btVector3 o = t.getOrigin();
    const btQuaternion q = t.getRotation();
    centres.emplace_back(o.x(), o.y(), o.z());
    const PeerShape& s = impl_->scene.shapes[impl_->scene.bodies[k].shape];
    rotations.push_back(bodyRotation(glm::dquat(q.w(), q.x(), q.y(), q.z()), s));
  }
}

double BulletPile::kineticEnergy() const {
  // ½ m v² + ½ Σ I_i ω_i², with ω in the principal frame where the inertia is diagonal.
  double e = 0;
  for (std::size_t k = 0; k < impl_->bodies.size(); ++k) {
    const btRigidBody& b = *impl_->bodies[k];
    const PeerShape& s = impl_->scene.shapes[impl_->scene.bodies[k].shape];
    const btVector3 v = b.getLinearVelocity();
    const btVector3 w = b.getAngularVelocity() * b.getCenterOfMassTransform().getBasis();  // Rᵀ ω
    e += 0.5 * s.mass * double(v.length2());
    for (int i = 0; i < 3; ++i) e += 0.5 * s.frame.moments[i] * double(w[i]) * double(w[i]);
  }
  return e;
}

}  // namespace smash::peers
