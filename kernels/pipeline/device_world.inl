// The World implementation, written once against a Thrust *system* (cpp, omp or cuda) and
// instantiated by one translation unit per backend (backend_cpp.cpp, backend_omp.cpp,
// backend_cuda.cu). Explicit systems and policies — never thrust::device_vector — so the three
// instantiations can live in one program.
//
// A step is a short list of named stages; each is one Thrust call on backend data, an NVTX range
// for Nsight, and (when profiling) a timed, synchronised region. Collective algorithms (scan,
// sorts, searches, reads to the host) are the System's (host_algorithms.h, backend_cuda.cu), so
// the stages read the same on every backend. Host reads go through readBack and are counted:
// none in a step, with or without body contacts (the pair count stays on the device), except one
// per frame where the pair slots are provisioned as the pairs grow (checkPairSlots). No
// allocations in the steady state: Thrust's temporary storage comes from a cache that is warm
// after the first step.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <algorithm>
#include <map>
#include <numeric>
#include <utility>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <thrust/copy.h>
#include <thrust/fill.h>
#include <thrust/functional.h>
#include <thrust/host_vector.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/binary_search.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sort.h>

#if __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define SMASH_NVTX_PUSH(name) nvtxRangePushA(name)
#define SMASH_NVTX_POP() nvtxRangePop()
#else
#define SMASH_NVTX_PUSH(name) ((void)0)
#define SMASH_NVTX_POP() ((void)0)
#endif

#include "core/error.h"
#include "core/shape.h"
#include "math/rotation.h"
#include "pipeline/step_kernels.h"
#include "world/world.h"

namespace smash::pipeline {

/// Thrust temporary storage that is allocated once and reused: blocks freed by a call go back to
/// a free list keyed by size, so steady-state steps allocate nothing.
template <class System>
class CachingAllocator {
 public:
  using value_type = char;
  CachingAllocator() = default;
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;
  ~CachingAllocator() {
    for (auto& [size, ptr] : free_) System::freeBytes(ptr);
    for (auto& [ptr, size] : used_) System::freeBytes(ptr);
  }
  char* allocate(std::ptrdiff_t n) {
    auto it = free_.lower_bound(n);
    char* ptr;
    if (it != free_.end()) {
      ptr = it->second;
      n = it->first;
      free_.erase(it);
    } else {
      ptr = System::allocateBytes(static_cast<std::size_t>(n));
      ++allocations_;
    }
    used_[ptr] = n;
    return ptr;
  }
  void deallocate(char* ptr, std::size_t) {
    auto it = used_.find(ptr);
    free_.emplace(it->second, ptr);
    used_.erase(it);
  }
  long allocations() const { return allocations_; }

 private:
  std::multimap<std::ptrdiff_t, char*> free_;
  std::map<char*, std::ptrdiff_t> used_;
  long allocations_ = 0;
};

template <class System>
class DeviceWorld final : public World {
  template <class T>
  using Vector = typename System::template Vector<T>;

 public:
  DeviceWorld(const Scene& worldScene, StepStrategy strategy)
      : origin_(workingOrigin(worldScene)),
        scene_(translatedScene(worldScene, -origin_)),
        strategy_(strategy == StepStrategy::Auto ? System::kDefaultStrategy : strategy) {
    // Everything below, and every step, works in the scene moved by −origin_ (docs/physics.md
    // §10): positions in float relative to the working origin.
    const Scene& scene = scene_;
    // Every buffer gets its size from describeBuffers, which the memory estimate reads too.
    const BufferSizes sizes = sizesOf(scene, strategy_);
    wideColliderContacts_ = sizes.wideColliderContacts;
    // Fewer bodies than threads: the per-body step's particle loops split over blocks of a body's
    // chunks (step_kernels.h FusedBlockSums), the same bits.
    const int splitBelowBodies = splitBelow();  // (read on every layout: a bad setting is refused)
    splitBodies_ = strategy_ == StepStrategy::PerBody && sizes.bodies > 0 &&
                   static_cast<int>(sizes.bodies) < splitBelowBodies;
    bodyContacts_ = sizes.bodyContacts;
    pairCapacity_ = static_cast<long long>(sizes.pairCapacity);
    describeBuffers(sizes, [this](auto member, std::size_t count, std::size_t) { (this->*member).resize(count); });
    // Shapes: rest offsets and masses, concatenated; per-shape mass properties.
    // Staged in std::vector (CCCL's host_vector::push_back binds a reference through a null
    // iterator when growing from empty: UBSan reports it), then copied over whole.
    std::vector<Float4> rest, pushCones, pushRays, clusterSpheres;
    std::vector<int> clusterEnd, clusterOrder;
    std::vector<ShapeClusters> shapeClusters;
    std::vector<ShapeData> shapes;
    std::vector<float> grids;  // every baked field (shapes', then mesh colliders'), concatenated
    std::vector<std::size_t> shapeGridOffset, colliderGridOffset;
    for (const Shape& s : scene.shapes) {
      shapeGridOffset.push_back(grids.size());
      if (s.sdf) grids.insert(grids.end(), s.sdf->values.begin(), s.sdf->values.end());
    }
    for (const auto& m : scene.colliderMeshes) {
      colliderGridOffset.push_back(grids.size());
      if (m) grids.insert(grids.end(), m->grid.values.begin(), m->grid.values.end());
    }
    copyIn(grids_, grids);
    const float* gridBase = raw(grids_);
    for (const Shape& s : scene.shapes) {
      ShapeData d{};
      d.restOffset = static_cast<int>(rest.size());
      d.count = static_cast<int>(s.rest.size());
      d.mass = static_cast<float>(s.totalMass);
      // Rounded up a little so the float bound stays conservative.
      d.radius = static_cast<float>(s.boundingRadius * (1 + 1e-6) + 1e-6);
      d.thickness = static_cast<float>(s.thickness);
      d.aqq = M3(s.Aqq);
      d.aqqInverse = M3(s.AqqInverse);
      d.inertia = M3(s.inertia);
      d.inertiaInverse = M3(s.inertiaInverse);
      if (s.sdf) {
        d.sdf = s.sdf->view();
        d.sdf.values = gridBase + shapeGridOffset[shapes.size()];
      }
      const ParticleClusters c = clusterParticles(s.rest, kClusterSize);
      ShapeClusters sc{};
      sc.offset = static_cast<int>(clusterSpheres.size());
      sc.count = static_cast<int>(c.spheres.size());
      if (s.sdf) sc.sdfLipschitz = lipschitzBoundOf(s.sdf->interpolantLipschitz());
      shapeClusters.push_back(sc);
      for (std::size_t k = 0; k < c.spheres.size(); ++k) {
        clusterSpheres.push_back(clusterSphereOf(c.spheres[k]));
        clusterEnd.push_back(c.ends[k]);
      }
      clusterOrder.insert(clusterOrder.end(), c.order.begin(), c.order.end());
      for (std::size_t i = 0; i < s.rest.size(); ++i) {
        rest.push_back(Float4(V3(s.rest[i]), static_cast<float>(s.mass[i])));
        const glm::dvec4 cone = i < s.pushCone.size() ? s.pushCone[i] : kNoPushCone;
        pushCones.push_back(Float4(V3(glm::dvec3(cone)), static_cast<float>(cone.w)));
        const glm::dmat3 rays = i < s.pushRays.size() ? s.pushRays[i] : glm::dmat3(0.0);
        for (int k = 0; k < 3; ++k) pushRays.push_back(Float4(V3(rays[k]), 0.0f));
      }
      shapes.push_back(d);
    }
    // Bodies and their particles.
    std::vector<BodyData> bodies;
    std::vector<Float4> position, velocity;
    std::vector<int> particleBody;
    for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
      const Body& body = scene.bodies[b];
      const Shape& s = scene.shapes[body.shape];
      const Material& m = scene.materials[body.material];
      BodyData d{};
      d.shape = body.shape;
      d.particleOffset = static_cast<int>(position.size());
      d.particleCount = static_cast<int>(s.rest.size());
      d.restitution = static_cast<float>(m.restitution);
      d.friction = static_cast<float>(m.friction);
      d.centre = V3(body.position);
      d.rotation = M3(rotationMatrix(body.rotation));
      d.velocity = V3(body.velocity);
      d.angularVelocity = V3(body.angularVelocity);
      for (const glm::dvec3& r0 : s.rest) {
        V3 r = d.rotation * V3(r0);
        position.push_back(Float4(d.centre + r, 0.0f));
        velocity.push_back(Float4(d.velocity + glm::cross(d.angularVelocity, r), 0.0f));
        particleBody.push_back(static_cast<int>(b));
      }
      bodies.push_back(d);
    }
    std::vector<Collider<float>> colliders;
    for (std::size_t k = 0; k < scene.colliders.size(); ++k) {
      const Collider<double>& c = scene.colliders[k];
      Collider<float> f;
      f.grid = c.grid;
      if (k < scene.colliderMeshes.size() && scene.colliderMeshes[k])
        f.grid.values = gridBase + colliderGridOffset[k];
      f.type = c.type;
      f.point = V3(c.point);
      f.normal = V3(c.normal);
      f.point2 = V3(c.point2);
      f.halfExtents = V3(c.halfExtents);
      f.radius = static_cast<float>(c.radius);
      f.rotation = Quat<float>(c.rotation);
      f.meshThickness = static_cast<float>(c.meshThickness);
      colliders.push_back(f);
    }
    // The fixed-order segmented sum's chunks (IntegrateChunkSums): each body's particles in runs of
    // kMatchChunk.
    std::vector<int> chunkFirst, bodyFirstChunk;
    for (const BodyData& d : bodies) {
      bodyFirstChunk.push_back(static_cast<int>(chunkFirst.size()));
      for (int k = 0; k < d.particleCount; k += kMatchChunk) chunkFirst.push_back(d.particleOffset + k);
    }
    bodyFirstChunk.push_back(static_cast<int>(chunkFirst.size()));

    copyIn(rest_, rest);
    copyIn(pushCones_, pushCones);
    copyIn(pushRays_, pushRays);
    copyIn(shapeClusters_, shapeClusters);
    copyIn(clusterSpheres_, clusterSpheres);
    copyIn(clusterEnd_, clusterEnd);
    copyIn(clusterParticles_, clusterOrder);
    copyIn(shapes_, shapes);
    copyIn(bodies_, bodies);
    copyIn(position_, position);
    copyIn(velocity_, velocity);
    copyIn(particleBody_, particleBody);
    copyIn(chunkFirst_, chunkFirst);
    copyIn(bodyFirstChunk_, bodyFirstChunk);
    copyIn(colliders_, colliders);
    // Initial values: counters and flags start at 0 (and the last count entry, never written,
    // stays 0 so the scan's last entry is the total), first incidents at −1.
    fillAll(chunkContactCount_, 0);
    fillAll(overflow_, 0LL);
    fillAll(incidentStep_, -1LL);
    fillAll(incidentKind_, 0);
    fillAll(stepIndex_, 0LL);
    fillAll(awakeSeen_, 0LL);
    fillAll(pairsFound_, 0);
    fillAll(wakeMark_, -1LL);
    cellBuckets_ = static_cast<int>(sizes.cellBuckets);
    narrowChunks_ = static_cast<int>(sizes.narrowChunks);
    wideNarrowPhase_ = sizes.wideNarrowPhase;
    // Grid cells twice the largest bounding radius plus the margin: a body at rest walks 27.
    double largest = 0;
    for (const Shape& s : scene.shapes) largest = std::max(largest, s.boundingRadius);
    cellSize_ = static_cast<float>(2.0 * (largest + scene.contactMargin()));
    if (!(cellSize_ > 0.0f)) cellSize_ = 1.0f;
    fillAll(colliderCount_, 0);
    fillAll(previousColliderCount_, 0);
    fillAll(pairTally_, 0LL);
    pairSlots_ = static_cast<int>(sizes.pairSlots);
    stageSeconds_.assign(kStageNames.size(), 0.0);
    provisionPairs();
  }

  /// The sizes every buffer is derived from.
  struct BufferSizes {
    std::size_t particles = 0, rest = 0, shapes = 0, bodies = 0, chunks = 0, colliders = 0, grids = 0;
    std::size_t clusters = 0;  // the shapes' particle clusters (clusterParticles)
    std::size_t contactsPerBody = 0, contactsPerPair = 0, pairCapacity = 0;
    std::size_t pairSlots = 0;  // the pairs provisioned at creation (≤ pairCapacity)
    std::size_t cellBuckets = 0;  // broad-phase grid buckets: a power of two ≥ 2 × bodies
    std::size_t narrowChunks = 0;  // most chunks of any shape (the wide narrow phase's elements)
    bool wideNarrowPhase = false;  // the per-particle layout's narrow phase, per (pair, chunk)
    bool wideColliderContacts = false, bodyContacts = false;
    bool pairGaussSeidel = false;  // the rounds' colouring (math/pair_colors.h)
  };

  static BufferSizes sizesOf(const Scene& scene, StepStrategy strategy) {
    BufferSizes z;
    for (const Body& b : scene.bodies) {
      const std::size_t count = scene.shapes[b.shape].rest.size();
      z.particles += count;
      z.chunks += (count + kMatchChunk - 1) / kMatchChunk;
    }
    for (const Shape& s : scene.shapes) {
      z.rest += s.rest.size();
      z.clusters += clusterParticles(s.rest, kClusterSize).spheres.size();
      if (s.sdf) z.grids += s.sdf->values.size();
    }
    for (const auto& m : scene.colliderMeshes)
      if (m) z.grids += m->grid.values.size();
    z.shapes = scene.shapes.size();
    z.bodies = scene.bodies.size();
    z.colliders = scene.colliders.size();
    const SolverSettings& solver = scene.solver;
    z.contactsPerBody = static_cast<std::size_t>(solver.maxContactsPerBody);
    z.contactsPerPair = static_cast<std::size_t>(solver.maxContactsPerPair);
    z.bodyContacts = scene.bodyContactsActive();
    z.pairCapacity = z.bodyContacts ? z.bodies * static_cast<std::size_t>(solver.maxPairsPerBody) : 0;
    for (const Shape& s : scene.shapes)
      z.narrowChunks = std::max(z.narrowChunks, (s.rest.size() + kMatchChunk - 1) / kMatchChunk);
    z.wideNarrowPhase = z.bodyContacts && strategy == StepStrategy::PerParticle;
    z.pairGaussSeidel = z.bodyContacts && solver.gaussSeidelRounds > 0;
    // Contact slots for every candidate pair when they fit pair_memory_mb: the step's pair passes
    // then never outgrow them and the host has nothing to watch. Otherwise four pairs per body to
    // start with, more between frames (checkPairSlots).
    const double slotBytes = 2.0 * static_cast<double>(z.contactsPerPair) * sizeof(PairContact<float>) +
                             (z.wideNarrowPhase ? 2.0 * static_cast<double>(z.narrowChunks) * kManifoldDeepest * sizeof(ManifoldKey) : 0.0);
    const bool allFit = static_cast<double>(z.pairCapacity) * slotBytes <= solver.pairMemoryMb * 1048576.0;
    z.pairSlots = allFit ? z.pairCapacity : std::min(z.pairCapacity, std::max<std::size_t>(kFirstPairSlots, 4 * z.bodies));
    z.cellBuckets = 1;
    while (z.bodyContacts && z.cellBuckets < 2 * z.bodies) z.cellBuckets *= 2;
    // The per-particle strategy resolves collider contacts wide (SolveColliderContacts and the
    // push-out passes) wherever resolveBodyContacts would run after the pose update with
    // sequential impulses; the averaged solver and physics.md §3's contacts-before-the-move order of the
    // impulse method stay per body. With body contacts, the gather and the push-out of every body
    // (PrepareBodies and FinishPairBodies, wide) — the pile path has the same conditions.
    z.wideColliderContacts = strategy == StepStrategy::PerParticle &&
                             solver.contact == ContactModel::Impulse &&
                             solver.contactSolver == ContactSolver::Sequential && solver.collideAfter &&
                             z.colliders > 0;
    return z;
  }

  /// Every backend buffer once: visit(member, count allocated at creation, count the memory
  /// estimate assumes); the two are the same (the contact slots of body pairs may grow later, if
  /// a scene has more than four pairs per body: provisionPairs).
  template <class Visit>
  static void describeBuffers(const BufferSizes& z, Visit&& visit) {
    auto fixed = [&](auto member, std::size_t count) { visit(member, count, count); };
    fixed(&DeviceWorld::grids_, z.grids);
    fixed(&DeviceWorld::rest_, z.rest);
    fixed(&DeviceWorld::pushCones_, z.rest);
    fixed(&DeviceWorld::pushRays_, 3 * z.rest);
    fixed(&DeviceWorld::shapeClusters_, z.shapes);
    fixed(&DeviceWorld::clusterSpheres_, z.clusters);
    fixed(&DeviceWorld::clusterEnd_, z.clusters);
    fixed(&DeviceWorld::clusterParticles_, z.rest);
    fixed(&DeviceWorld::shapes_, z.shapes);
    fixed(&DeviceWorld::bodies_, z.bodies);
    fixed(&DeviceWorld::position_, z.particles);
    fixed(&DeviceWorld::velocity_, z.particles);
    fixed(&DeviceWorld::particleBody_, z.particles);
    fixed(&DeviceWorld::colliders_, z.colliders);
    fixed(&DeviceWorld::chunkFirst_, z.chunks);
    fixed(&DeviceWorld::bodyFirstChunk_, z.bodies + 1);
    fixed(&DeviceWorld::chunkSums_, z.chunks);
    fixed(&DeviceWorld::sums_, z.bodies);
    fixed(&DeviceWorld::contacts_, z.bodies * z.contactsPerBody);
    fixed(&DeviceWorld::overflow_, z.bodies);
    fixed(&DeviceWorld::incidentStep_, z.bodies);
    fixed(&DeviceWorld::incidentKind_, z.bodies);
    fixed(&DeviceWorld::stepIndex_, 1);
    fixed(&DeviceWorld::awakeSeen_, 1);
    if (z.wideColliderContacts || z.bodyContacts) fixed(&DeviceWorld::bodiesStart_, z.bodies);
    // The collider contacts each body solved this step (read by the pair passes too), and with
    // colliders last step's: the warm start (KeepContacts; 24 B a slot, a quarter of a contact).
    if (z.colliders > 0 || z.bodyContacts) fixed(&DeviceWorld::colliderCount_, z.bodies);
    if (z.colliders > 0) {
      fixed(&DeviceWorld::previousColliderCount_, z.bodies);
      fixed(&DeviceWorld::previousContacts_, z.bodies * z.contactsPerBody);
    }
    if (z.wideColliderContacts) {
      fixed(&DeviceWorld::bodyNear_, z.bodies * z.colliders);
      fixed(&DeviceWorld::chunkContactCount_, z.colliders * z.chunks + 1);  // + a final 0
      fixed(&DeviceWorld::chunkContactOffset_, z.colliders * z.chunks + 1);
      fixed(&DeviceWorld::chunkDeepest_, z.chunks);
      fixed(&DeviceWorld::chunkDeepestAt_, z.chunks);
      fixed(&DeviceWorld::pushGate_, z.bodies);
      fixed(&DeviceWorld::pushDone_, z.bodies);
      fixed(&DeviceWorld::pushMoved_, z.bodies);
      fixed(&DeviceWorld::pushFrom_, z.bodies);
      fixed(&DeviceWorld::pushPoint_, z.bodies);
      fixed(&DeviceWorld::pushSolvedFrom_, 2 * z.bodies);
      fixed(&DeviceWorld::pushMost_, z.bodies);
    }
    if (z.bodyContacts) {
      const std::size_t nb = z.bodies, cap = z.pairCapacity;
      fixed(&DeviceWorld::bodiesPredicted_, nb);
      fixed(&DeviceWorld::cellKeys_, nb);
      fixed(&DeviceWorld::sortOrder_, nb);
      fixed(&DeviceWorld::cellStart_, z.cellBuckets + 1);
      fixed(&DeviceWorld::spheres_, nb);
      fixed(&DeviceWorld::cells_, nb);
      fixed(&DeviceWorld::pairsFound_, nb + 1);  // + a final 0: the scan's last entry is the total
      fixed(&DeviceWorld::pairsOffset_, nb + 1);
      fixed(&DeviceWorld::incidenceStart_, nb + 1);
      fixed(&DeviceWorld::split_, nb);
      fixed(&DeviceWorld::invInertia_, nb);
      fixed(&DeviceWorld::onBody_, nb);
      fixed(&DeviceWorld::shockLevel_, nb);
      fixed(&DeviceWorld::shockLevelScratch_, nb);
      fixed(&DeviceWorld::islandRest_, nb);
      fixed(&DeviceWorld::islandRestScratch_, nb);
      fixed(&DeviceWorld::islandLabel_, nb);
      fixed(&DeviceWorld::islandLabelScratch_, nb);
      fixed(&DeviceWorld::wakeMark_, nb);
      fixed(&DeviceWorld::pairSupport_, cap);
      // Candidate pairs at full capacity (a few words each) ...
      fixed(&DeviceWorld::pairTally_, 4);
      fixed(&DeviceWorld::pairKeys_, cap);
      fixed(&DeviceWorld::previousPairKeys_, cap);
      fixed(&DeviceWorld::pairContactCount_, cap);
      fixed(&DeviceWorld::previousPairContactCount_, cap);
      fixed(&DeviceWorld::incidenceBody_, 2 * cap);
      fixed(&DeviceWorld::incidencePair_, 2 * cap);
      fixed(&DeviceWorld::onA_, cap);
      fixed(&DeviceWorld::onB_, cap);
      if (z.pairGaussSeidel) {  // the colouring of the Gauss–Seidel rounds: 20 B a candidate pair
        fixed(&DeviceWorld::pairColor_, cap);
        fixed(&DeviceWorld::pairColorNext_, cap);
        fixed(&DeviceWorld::pairColorTentative_, cap);
        fixed(&DeviceWorld::colorKey_, cap);
        fixed(&DeviceWorld::colorOrder_, cap);
        fixed(&DeviceWorld::colorStart_, kPairColors + 2);
        fixed(&DeviceWorld::colorCount_, kPairColors + 1);
      }
      // ... but the contact slots only for the pairs provisioned (at full capacity they would be
      // the largest buffer by far): four per body at creation; more between frames if a scene
      // needs them (checkPairSlots, provisionPairs).
      fixed(&DeviceWorld::pairContacts_, z.pairSlots * z.contactsPerPair);
      fixed(&DeviceWorld::previousPairContacts_, z.pairSlots * z.contactsPerPair);
      if (z.wideNarrowPhase) {  // the manifolds' quadrant extremes, and each element's deepest
        fixed(&DeviceWorld::pairExtremes_, cap * (kManifoldCriteria - kManifoldDeepest));
        fixed(&DeviceWorld::elementDeepest_, z.pairSlots * 2 * z.narrowChunks * kManifoldDeepest);
      }
    }
  }

  /// Backend memory of a scene's buffers: at creation (`estimate` false) or with the grow-only
  /// buffers at their expected size (World::create's memory check).
  static std::size_t plannedBytes(const Scene& scene, StepStrategy strategy, bool estimate) {
    std::size_t bytes = 0;
    describeBuffers(sizesOf(scene, strategy == StepStrategy::Auto ? System::kDefaultStrategy : strategy),
                    [&](auto member, std::size_t count, std::size_t expected) {
                      using Buffer = std::remove_reference_t<decltype(std::declval<DeviceWorld&>().*member)>;
                      bytes += (estimate ? expected : count) * sizeof(typename Buffer::value_type);
                    });
    return bytes;
  }

  /// What the world's buffers hold now (the memory check's estimate is tested against it).
  std::size_t deviceBytes() const override {
    std::size_t bytes = 0;
    describeBuffers(sizesOf(scene_, strategy_), [&](auto member, std::size_t, std::size_t) {
      const auto& buffer = this->*member;
      bytes += buffer.size() * sizeof(typename std::remove_reference_t<decltype(buffer)>::value_type);
    });
    return bytes;
  }

  Backend backend() const override { return System::kBackend; }
  StepStrategy strategy() const override { return strategy_; }
  std::size_t bodyCount() const override { return bodies_.size(); }
  std::size_t particleCount() const override { return position_.size(); }

  void step() override {
    ++steps_;
    if (bodies_.empty()) return;
    if (restfulSteps_ >= 2 && !census_) {
      restStep();
      return;
    }
    // A step with no host read and no host-side timing or counting is a fixed launch sequence:
    // the CUDA system captures it once into a CUDA graph and replays it (System::runStep).
    // With body contacts too: the pair count stays on the device, and the pair buffers swapped at
    // the end of a step alternate, so even and odd steps are two fixed sequences.
    const bool fixedSequence = !profiling_ && !census_;
    System::runStep(
        context_,
        [&] {
          stepKernels();
          noteAwake();
        },
        fixedSequence, bodyContacts_ ? static_cast<int>(steps_ & 1) : 0);
    if (bodyContacts_) swapPairBuffers();
    ++restSpan_;
    lookAtRest();
    lookAtPairSlots();
  }

  /// Whether the world rests (restStep), learnt at frame ends without a host wait: each step
  /// ends with NoteAwake, which raises a device flag if any body is awake, and at a frame's end
  /// the flag is sent to the host and cleared (System::startRead: on CUDA an asynchronous copy on
  /// the step's stream, on the CPU at once); its value arrives when the copy is done
  /// (System::finishedRead: CUDA looks again at the next frame's end while the device is
  /// behind). A flag that stayed down covers a span of steps that all ended with every body
  /// asleep; all but its first also began so, and with the span before it clean, its first too.
  /// Two such steps in a row are enough (restStep). Learnt late, the answer still holds: a world
  /// whose every body slept through two steps is a fixed point of the step, and nothing but the
  /// host's setPoses, loadState or new pair slots changes it (restartRestLook). The serial
  /// system does not skip (System::kSkipsRest): the tests' stepped world.
  void noteAwake() {
    if constexpr (System::kSkipsRest) {
      if (!scene_.sleepSettings<float>().enabled) return;
      stage(kSleep, [&] {
        const int nb = static_cast<int>(bodies_.size());
        launch("NoteAwake", nb, NoteAwake{raw(bodies_), raw(awakeSeen_)}, nb * 4.0 + 8);
      });
    }
  }
  void lookAtRest() {
    if constexpr (System::kSkipsRest) {
      if (!scene_.sleepSettings<float>().enabled || census_ || steps_ % std::max(1, scene_.substeps) != 0) return;
      if (!restReadPending_) {
        System::startRead(context_, raw(awakeSeen_));
        thrust::fill(exec(), awakeSeen_.begin(), awakeSeen_.end(), 0LL);
        restReadPending_ = true;
        pendingSpan_ = restSpan_;
        pendingEpoch_ = restEpoch_;
        restSpan_ = 0;
      }
      long long awake = 0;
      if (!System::finishedRead(context_, awake)) return;
      restReadPending_ = false;
      if (pendingEpoch_ != restEpoch_) return;  // a span from before the host changed the world
      const bool clean = awake == 0;
      restfulSteps_ = !clean ? 0 : lastSpanClean_ ? restfulSteps_ + pendingSpan_ : pendingSpan_ - 1;
      lastSpanClean_ = clean;
    }
  }
  /// The host changed the world (poses, a loaded state, more pair slots): it rests only once two
  /// of its steps from now on began and ended asleep.
  void restartRestLook() {
    restfulSteps_ = 0;
    lastSpanClean_ = false;
    restSpan_ = 0;
    ++restEpoch_;
  }

  /// Once per frame (the scene's substeps), the host looks at the pairs found: the step's one
  /// read, and none once every pair the scene may have is provisioned.
  void lookAtPairSlots() {
    if (bodyContacts_ && pairSlots_ < pairCapacity_ && steps_ % std::max(1, scene_.substeps) == 0) checkPairSlots();
  }

  /// A step of a world whose every body slept through the last two steps (lookAtRest). Such a step
  /// leaves the world as it found it — a sleeping body is not integrated and gathers no contacts, a
  /// pair of two sleeping bodies has none, the colliders do not move and no awake body is left to
  /// touch one — and the two before it left both pair buffers the same, so it only counts: the step
  /// index, the pairs found (CountPairs from the broad phase's last scan: the tallies and the pair
  /// overflow grow as a stepped world's do), the pair buffers' parity and the frame's look at the
  /// pair slots (the bits of a stepped run: tests/test_body_contacts.cpp compares OpenMP with the
  /// serial system, which steps it). Nothing but setPoses or loadState can wake such a world; both
  /// step it again, as do slots provisioned anew (resizePairSlots: the pairs kept may change).
  void restStep() {
    const StepParams p = params();
    stage(kBodies, [&] {
      launch("AdvanceStep", 1, AdvanceStep{p}, 16.0);
      if (bodyContacts_) launch("CountPairs", 1, CountPairs{p}, 4.0 + 32);
    });
    if (!bodyContacts_) return;
    swapPairBuffers();
    lookAtPairSlots();
  }

  /// The most pairs found since the last look: provisions twice as many when they fill more than
  /// half of the slots, so the next frame has room to double before any pair is dropped (a pair
  /// past the slots is dropped and counted in pairOverflow, as past the capacity).
  void checkPairSlots() {
    const long long most = readBack(raw(pairTally_) + 2);
    thrust::fill(exec(), pairTally_.begin() + 2, pairTally_.begin() + 3, 0LL);
    if (2 * most > pairSlots_) growPairSlots(2 * most);
  }

  /// At least `pairs` slots (never more than the capacity, never fewer than now). The contact
  /// slots keep their contents (last step's warm start); the passes' width grows with them.
  void growPairSlots(long long pairs) {
    const long long want = std::min<long long>(pairCapacity_, std::max<long long>(pairs, pairSlots_));
    if (want <= pairSlots_) return;
    resizePairSlots(static_cast<int>((want + 63) / 64 * 64 < pairCapacity_ ? (want + 63) / 64 * 64 : pairCapacity_));
  }

  /// Exactly `slots` pairs provisioned (a loaded state's).
  void resizePairSlots(int slots) {
    if (slots == pairSlots_) return;
    pairSlots_ = slots;
    restartRestLook();  // more pairs may be kept: step again (restStep)
    const std::size_t n = static_cast<std::size_t>(slots);
    const std::size_t perPair = static_cast<std::size_t>(scene_.solver.maxContactsPerPair);
    pairContacts_.resize(n * perPair);
    previousPairContacts_.resize(n * perPair);
    if (wideNarrowPhase_) elementDeepest_.resize(n * 2 * static_cast<std::size_t>(narrowChunks_) * kManifoldDeepest);
    System::resetStep(context_);  // buffers moved
  }

  /// Outside a step (creation, new poses, a loaded state): the pairs the bodies' spheres give
  /// now, by the broad phase's count, provisioned twice over (a pile that starts packed).
  void provisionPairs() {
    if (!bodyContacts_ || bodies_.empty()) return;
    const int nb = static_cast<int>(bodies_.size());
    const StepParams p = params();
    System::forEach(exec(), context_, nb, GridKeys{p});
    System::stableSortByKey(exec(), p.cellKeys, p.sortOrder, nb, sortScratchI_);
    System::lowerBounds(exec(), p.cellKeys, nb, cellBuckets_ + 1, p.cellStart);
    System::forEach(exec(), context_, nb, GridPairs{p, false});
    System::exclusiveScan(exec(), p.pairsFound, nb + 1, p.pairsOffset);
    int found = 0;
    System::copyToHost(&found, p.pairsOffset + nb, 1);  // not a step's read
    growPairSlots(2LL * found);
  }

  /// The launches of one step (the parameters they get are the same every step: per-step values
  /// such as the step index live in device memory).
  void stepKernels() {
    const int n = static_cast<int>(position_.size()), nb = static_cast<int>(bodies_.size());
    const StepParams p = params();
    stage(kBodies, [&] { launch("AdvanceStep", 1, AdvanceStep{p}, 16.0); });
    const bool shapeMatching = scene_.solver.method == Method::ShapeMatching;
    const double chunks = static_cast<double>(chunkFirst_.size()), BD = sizeof(BodyData);
    if (bodyContacts_ || wideColliderContacts_)
      stage(kBodies, [&] {
        // The step's starting state, for the watchdog at the end of the deferred contact phases.
        thrust::copy(exec(), bodies_.begin(), bodies_.end(), bodiesStart_.begin());
        record("copy bodies (step start)", 1, nb, 2 * nb * BD);
      });
    if (strategy_ == StepStrategy::PerBody) {
      const FusedBodyStep fused{p, shapeMatching};
      const int blocks = (static_cast<int>(chunks) + kBlockChunks - 1) / kBlockChunks;
      const double blockParticles = kBlockChunks * kMatchChunk;
      if (splitBodies_) {
        // The same step with its particle loops over blocks of a body's chunks: the sums (x, v
        // read, a chunk's sums written), the body's own part, the projection (x, v written).
        stage(kBodies, [&] {
          if (shapeMatching)
            launch("FusedBlockSums", blocks, FusedBlockSums{fused, static_cast<int>(chunks)},
                   n * 32.0 + chunks * sizeof(MatchSums) + nb * BD, blockParticles);
          launch("FusedBodySettle", nb, FusedBodySettle{fused}, chunks * sizeof(MatchSums) + nb * 2 * BD,
                 double(chunks) / nb);
        });
      } else {
        // One thread per body for the whole step: reads x, v and writes x, v of its particles.
        stage(kBodies, [&] {
          launch("FusedBodyStep", nb, fused, n * 64.0 + nb * 2 * BD, 3.0 * n / nb);
        });
      }
      if (bodyContacts_) bodyContactPhase();
      if (splitBodies_)
        stage(kProject, [&] {
          launch("FusedBlockProject", blocks, FusedBlockProject{{params(), shapeMatching}, static_cast<int>(chunks)},
                 n * 32.0 + nb * BD, blockParticles);
        });
      else if (bodyContacts_)
        stage(kProject, [&] { launch("ProjectBodies", nb, ProjectBodies{params()}, n * 32.0 + nb * BD, double(n) / nb); });
      keepContacts();
      return;
    }
    // resolveBodyContacts inside the per-body functors, for the model: gather and push-out over
    // the body's particles per collider, the solve over its (at most capacity) contacts.
    const double perParticles = double(n) / nb, colliders = double(colliders_.size());
    const double gatheredPerBody = std::min<double>(perParticles, scene_.solver.maxContactsPerBody);
    const double perBodyContactLoops =
        p.deferContacts || colliders == 0
            ? 0
            : perParticles * colliders * 2 + samplingLoops(gatheredPerBody) + solveLoops(gatheredPerBody);
    // Model bytes (docs/profiling.md): DRAM traffic of each kernel, with per-shape data (rest
    // offsets, fields) and the colliders cache-resident; a body's data read by its particles
    // counted once per body.
    if (shapeMatching) {
      // x and v read once (32 B), nothing written; the body-level sums as 72 B per chunk.
      stage(kIntegrate, [&] {
        launchLanes("IntegrateChunkSums", static_cast<int>(chunks), IntegrateChunkSums{p},
               n * 32.0 + chunks * (8 + sizeof(MatchSums)) + nb * BD);
      });
      stage(kMatchSums, [&] {
        launchLanes("BodyMatchSums", nb, BodyMatchSums{p}, chunks * sizeof(MatchSums) + nb * (8.0 + sizeof(MatchSums)));
      });
      // With the contacts deferred to a wide phase, MatchBodies is O(1) per body; otherwise it
      // runs resolveBodyContacts' loops over the body's particles.
      stage(kBodies, [&] {
        launch(p.deferContacts ? "MatchBodies" : "MatchBodies+contacts (per body)", nb, MatchBodies{p},
               nb * (2 * BD + sizeof(MatchSums)), perBodyContactLoops);
      });
    } else {
      stage(kBodies, [&] {
        launch(p.deferContacts ? "ImpulseBodies" : "ImpulseBodies+contacts (per body)", nb, ImpulseBodies{p},
               nb * 2 * BD, perBodyContactLoops);
      });
    }
    if (wideColliderContacts_ && !bodyContacts_) colliderContactPhase();
    if (bodyContacts_) bodyContactPhase();
    if (!bodyContacts_ && p.sleep.enabled)
      stage(kSleep, [&] { launch("SleepBodies", nb, SleepBodies{p}, nb * 2 * BD); });
    stage(kProject, [&] { launch("ProjectParticles", n, ProjectParticles{params()}, n * 36.0 + nb * BD); });
    keepContacts();
  }

  /// The step's end: each body's collider contacts of this step, with the impulses the solve left
  /// in them, become the next step's warm start (KeepContacts).
  void keepContacts() {
    if (!keepsContacts()) return;
    const int nb = static_cast<int>(bodies_.size());
    const double kept = census_ ? censusSum(colliderCount_, nb) : 0;
    stage(kColliderContacts, [&] {
      launchLanes("KeepContacts", nb, KeepContacts{params()}, nb * 12.0 + kept * (sizeof(ContactSlot) + sizeof(KeptContact)));
    });
  }

  /// The model's dependent loop steps of a body alone against the colliders with `gathered`
  /// contacts: the manifold's sampling (math/contact_solver.h reduceColliderContacts, about
  /// capacity passes over them; none when it keeps them all) and the solve's sweeps over what it
  /// keeps — one patch's worth, a body on the ground (a body against several patches keeps up to
  /// capacity per patch).
  double samplingLoops(double gathered) const {
    const double capacity = scene_.solver.maxContactsPerCollider;
    return capacity <= 0 || gathered <= capacity ? 0 : gathered * (1 + capacity);
  }
  /// At most: the sweeps stop when the body's velocities settle (contact_solver.h
  /// solveAgainstStatic), a resting body's after a few.
  double solveLoops(double gathered) const {
    const double capacity = scene_.solver.maxContactsPerCollider;
    const double kept = capacity <= 0 || gathered <= capacity ? gathered : capacity;
    return kept * (1 + scene_.solver.contactIterations);
  }

  /// Collider contacts of the per-particle strategy ("Collider contacts, wide" in
  /// step_kernels.h): gather by chunk and scan, solve per body, push-out as segmented maxima,
  /// then the watchdog against the step's start. A fixed launch sequence with no host read: the
  /// push-out runs its five passes × colliders, bodies that are done skip them.
  void colliderContactPhase() {
    const int nb = static_cast<int>(bodies_.size());
    const double BD = sizeof(BodyData), C = sizeof(ContactSlot);
    const StepParams p = params();
    stage(kColliderContacts, [&] {
      const Gathered g = colliderGather();
      // (+ the push-out's arming, 32 B, and the velocities before the solve, 32 B: limitPushWork)
      launchLanes("SolveColliderContacts", nb, SolveColliderContacts{p}, nb * (2 * BD + 64) + 2 * g.contacts * C);
    });
    stage(kPushOut, [&] {
      pushOutPasses();
      launch("LimitPushWorkAndWatch", nb, LimitPushWorkAndWatch{p}, nb * (3 * BD + 68));
    });
  }

  /// For the model (0 without the census): the collider contacts a gather found, and the most of
  /// one body (at most max_contacts_per_body).
  struct Gathered {
    double contacts = 0, most = 0;
  };

  /// The wide gather of every body's collider contacts at its pose now (step_kernels.h "Collider
  /// contacts, wide"), ending with ColliderManifold's count per body.
  Gathered colliderGather() {
    const int nb = static_cast<int>(bodies_.size());
    const int colliders = static_cast<int>(colliders_.size());
    const int chunks = static_cast<int>(chunkFirst_.size());
    const double BD = sizeof(BodyData), C = sizeof(ContactSlot), K = colliders;
    const StepParams p = params();
    launch("NearColliders", nb, NearColliders{p}, nb * (BD + 4 * K));
    launchLanes("ChunkContactCounts", chunks, ChunkContactCounts{p}, chunks * (8 + 8 * K) + nb * BD);
    // The colliders a body may have swept into this step (step_kernels.h, "two kernels each"):
    // modelled as the decision only, which is all it does unless bodies move fast.
    launchLanes("SweptChunkContactCounts", chunks, SweptChunkContactCounts{p}, chunks * 8.0 + nb * 2 * BD);
    collective("scan (contact counts)", [&] {
      System::exclusiveScan(exec(), p.chunkContactCount, colliders * chunks + 1, p.chunkContactOffset);
    }, kScanLaunches, K * chunks + 1, (K * chunks + 1) * 8.0);
    // Data-dependent traffic for the model only: the contacts this step gathered.
    Gathered g;
    if (census_) {
      g.contacts = censusRead(p.chunkContactOffset + colliders * chunks);
      g.most = std::min<double>(censusMaxBodyContacts(), scene_.solver.maxContactsPerBody);
    }
    launchLanes("ChunkContactsScatter", chunks, ChunkContactsScatter{p}, chunks * (8 + 8 * K) + g.contacts * C + nb * BD);
    // The fallback gather is charged to the model only as the decision (as the swept counts).
    // With body contacts, the lone bodies' manifold only: charged as for every body.
    launch("ColliderManifold", nb, ColliderManifold{p}, nb * (BD + 28) + g.contacts * C, samplingLoops(g.most));
    return g;
  }

  /// The wide push-out (step_kernels.h ChunkDeepest, PushOutApply) of the bodies armed for it
  /// (armPushOut): pushOut's passes × colliders as a fixed launch sequence; a body done, or gated
  /// off a collider it cannot touch, reads nothing. First the bodies armed as swept (a body that
  /// moved half a thin collider's thickness this step: rare), each in its thread
  /// (PushOutSweptBodies: charged at its worst, every pass over every particle and collider).
  void pushOutPasses() {
    const int nb = static_cast<int>(bodies_.size());
    const int colliders = static_cast<int>(colliders_.size());
    const int chunks = static_cast<int>(chunkFirst_.size());
    const double BD = sizeof(BodyData);
    const StepParams p = params();
    const double swept = census_ ? censusCountOf(pushDone_, kPushSwept) : 0;
    const double particlesPerBody = nb ? static_cast<double>(position_.size()) / nb : 0;
    launch("PushOutSweptBodies", nb, PushOutSweptBodies{p}, nb * 4.0 + swept * (3 * BD + particlesPerBody * 16 * colliders),
           swept > 0 ? kPushOutPasses * particlesPerBody * colliders : 0.0);
    for (int pass = 0; pass < kPushOutPasses; ++pass)
      for (int k = 0; k < colliders; ++k) {
        const double gated = census_ ? censusCount(pushGate_) : 0;
        const double active = census_ ? nb - censusCount(pushDone_) : 0;  // armed and not done
        const double gatedChunks = nb ? gated * chunks / nb : 0;  // bodies of one shape size: exact
        launchLanes("ChunkDeepest", chunks, ChunkDeepest{p, k}, chunks * 12.0 + gatedChunks * 20 + gated * BD);
        launchLanes("PushOutApply", nb, PushOutApply{p, k}, nb * 4.0 + active * (BD + 20) + gatedChunks * 16);
      }
  }

  /// The Gauss–Seidel contact rounds (math/pair_colors.h, step_kernels.h): the pairs coloured
  /// (kColorPasses passes of two launches), sorted by colour, then each round the colours one
  /// launch each, the overflow in one thread and the bodies' collider contacts. On OpenMP a
  /// colour's launch is as wide as the colour (System::passWidth reads its size); on the serial
  /// system as the pair slots or the bodies if fewer, the elements past the colour doing nothing;
  /// on a GPU the same, a warp an element, at most 16 warps an SM striding over the colour
  /// (System::stridingWidth).
  void gaussSeidelRounds(const StepParams& p, int slots, double pairs, double pairContacts, double mostPairContacts, int rounds) {
    const int nb = static_cast<int>(bodies_.size());
    const double BD = sizeof(BodyData), PC = sizeof(PairContact<float>);
    PairColors colors;
    colors.color = raw(pairColor_);
    colors.next = raw(pairColorNext_);
    colors.tentative = raw(pairColorTentative_);
    colors.key = raw(colorKey_);
    colors.order = raw(colorOrder_);
    colors.start = raw(colorStart_);
    colors.count = raw(colorCount_);
    // Each pass reads a pair's key, its bodies' incidences and their pairs' colours (L2: the
    // working set is a few words a pair); the loop term is a pair's neighbours.
    const double neighbours = pairs > 0 ? 2.0 * 2.0 * pairs / std::max(1, nb) : 0.0;
    launch("ColorSeed", slots, ColorSeed{p, colors}, slots * 4.0 + pairs * 4.0);
    int* from = colors.color;
    int* to = colors.next;
    for (int pass = 0; pass < kColorPasses; ++pass) {
      launch("ColorTentative", slots, ColorTentative{p, colors, from}, slots * 8.0 + pairs * (8 + 8 * neighbours), neighbours);
      launch("ColorRepair", slots, ColorRepair{p, colors, from, to}, slots * 12.0 + pairs * (8 + 12 * neighbours), neighbours);
      std::swap(from, to);
    }
    launch("ColorKeys", slots, ColorKeys{colors, from}, slots * 12.0);
    collective("stable sort (pair colours)", [&] {
      System::stableSortByKey(exec(), colors.key, colors.order, slots, sortScratchI_);
    }, kSortLaunches32, slots, slots * kSortBytesPerElement32);
    collective("lower bound (colour starts)", [&] {
      System::lowerBounds(exec(), colors.key, slots, kPairColors + 2, colors.start);
    }, 1, kPairColors + 2, (kPairColors + 2) * 4.0);
    launch("ColorCounts", kPairColors + 1, ColorCounts{colors}, (kPairColors + 1) * 12.0);
    // A round reads every touching pair's points and its bodies once (the colours split them),
    // and every body in a pair its collider contacts. The census counts CUDA's shape: every
    // colour over min(slots, bodies) warps, a colour's share of the pairs' bytes and the longest
    // warp chain of its pairs' sweeps (launchLanes; an empty colour's warps return at once — the
    // census does not know the GPU's SMs, so it takes no limit on the warps); the overflow in one
    // thread, its pairs' sweeps one after another.
    const double overflowPairs = census_ ? censusRead(colors.count + kOverflowColor) : 0;
    double colorPairs[kPairColors] = {};
    if (census_)
      for (int c = 0; c < kPairColors; ++c) colorPairs[c] = censusRead(colors.count + c);
    // A colour holds at most one pair per awake body (SweepPairColor), so a colour is launched
    // over min(slots, bodies) elements, not over every pair slot (rain_64k: 64,000, not ~360,000,
    // in 384 launches a step), on CUDA a warp each and at most 16 warps an SM, striding
    // (System::stridingWidth); OpenMP reads the colour's size.
    const int colorElements = System::stridingWidth(context_, std::min(slots, nb));
    for (int it = 0; it < rounds; ++it) {
      for (int c = 0; c < kPairColors; ++c) {
        const double share = pairs > 0 ? colorPairs[c] / pairs : 0.0;
        const int width = census_ ? colorElements : System::passWidth(colors.count + c, colorElements);
        const double bytes = share * (pairs * (12 + 4 * BD) + 2 * pairContacts * PC);
#if SMASH_CONTACT_LANES
        if (!census_) {  // x86-64 CPUs: four pairs to an SSE register (the same bits)
          launchSpans("SweepPairColor", width, kColorSpan, SweepPairColorSpans{p, colors.start, colors.order, c}, bytes);
          continue;
        }
#endif
        // A pair a warp on CUDA (its sweeps as scans over its points); the census counts its chain.
        launchLanes("SweepPairColor", width, SweepPairColor{p, colors.start, colors.order, c, width}, bytes);
      }
      launch("SweepPairOverflow", 1, SweepPairOverflow{p, colors.start, colors.order}, 8.0 + overflowPairs * (8 + 4 * BD),
             overflowPairs * mostPairContacts * scene_.solver.pairSweeps);
      launch("SweepCollidersInPlace", nb, SweepCollidersInPlace{p}, nb * (2 * BD + 8));
    }
  }

  /// physics.md §6–7 (see the functors in step_kernels.h). No host read: the pair count stays on
  /// the device (pairTally), and every per-pair pass is launched over the pairs provisioned
  /// (pairSlots_), its threads past the count doing nothing; the host looks at the most pairs
  /// found once per frame (checkPairSlots) and provisions more before they run out.
  void bodyContactPhase() {
    const int nb = static_cast<int>(bodies_.size());
    const StepParams p = params();
    const double BD = sizeof(BodyData), PC = sizeof(PairContact<float>), PI = sizeof(PairImpulse<float>);
    // The passes' width: the provisioned slots, or the pairs found where the system can read the
    // count for free (System::passWidth; after CountPairs). The census counts CUDA's shape.
    int slots = pairSlots_;
    double pairs = slots;  // this step's pairs: known to the model (census) only
    stage(kBroadPhase, [&] {
      // Grid (step_kernels.h "Broad phase"): bucket keys, sorted with the bodies; bucket starts;
      // each body counts the pairs it owns, a scan places them, each body writes them; sorted by key.
      launch("GridKeys", nb, GridKeys{p}, nb * (BD + 8 + 32));
      collective("stable sort (bucket keys, 32-bit)", [&] {
        System::stableSortByKey(exec(), p.cellKeys, p.sortOrder, nb, sortScratchI_);
      }, kSortLaunches32, nb, nb * kSortBytesPerElement32);
      collective("lower bound (bucket starts)", [&] {
        System::lowerBounds(exec(), p.cellKeys, nb, cellBuckets_ + 1, p.cellStart);
      }, 1, cellBuckets_ + 1, (cellBuckets_ + 1) * 4.0 + nb * 4.0);
      // Bytes: what a pass must read once — each body's sphere, cell and order, the bucket starts
      // — and its count. The neighbours' reads are L2 hits: the working set (40 B per body) fits
      // in L2 up to about a million bodies, and threads in sorted order walk the same cells.
      // Their latency is the loop term: 27 cells × about 3 bodies.
      const double walk = 16 + 16 + 4 + (cellBuckets_ + 1.0) * 4 / nb;
      launch("GridPairs (count)", nb, GridPairs{p, false}, nb * (walk + 4), 27 * 3.0);
      // pairsFound has one more entry, always 0, so the scan's last entry is the total.
      collective("scan (pairs per body)", [&] {
        System::exclusiveScan(exec(), p.pairsFound, nb + 1, p.pairsOffset);
      }, kScanLaunches, nb + 1, (nb + 1) * 8.0);
      // The count stays on the device; the passes below run over the provisioned slots.
      launch("CountPairs", 1, CountPairs{p}, 4.0 + 32);
      if (census_) pairs = censusRead(raw(pairTally_));  // for the model only
      else slots = System::passWidth(raw(pairTally_), pairSlots_);
      launch("GridPairs (write)", nb, GridPairs{p, true}, nb * (walk + 8) + pairs * 8.0, 27 * 3.0);
      launch("PadPairKeys", slots, PadPairKeys{p}, (slots - pairs) * 8.0);
      collective("sort (pair keys, 64-bit)", [&] { System::sortKeys(exec(), p.pairKeys, slots); },
                 kSortLaunches64, slots, slots * kSortBytesPerElement64);
    });
    stage(kNarrowPhase, [&] {
      const long long elements = static_cast<long long>(slots) * 2 * narrowChunks_;
      if (wideNarrowPhase_ && elements < 0x7fffffff) {
        // One element per (pair, side, chunk) (step_kernels.h "Narrow phase, wide"): each ranks
        // its points, writes its four deepest and merges its quadrant extremes into the pair's;
        // then each pair merges its elements' deepest and writes its manifold
        // (math/contact_solver.h).
        const int n = static_cast<int>(elements);
        // Bytes: a pair's 2 × narrowChunks elements are neighbouring threads reading the same key
        // and bodies (one DRAM read per pair); each writes 4 keys of 8 B and merges 4 more into
        // the pair's. The shapes' rest offsets and baked fields are read by every pair of those
        // shapes and stay in L2 (a scene has a few shapes), as for PairContactsOf. The manifold
        // reads the elements' keys and writes its points.
        const double pairBytes = pairs * (8 + 2 * BD), extremeBytes = pairs * 4 * 8.0,
                     deepBytes = pairs * 2 * narrowChunks_ * 4 * 8.0;
        launch("ClearManifoldKeys", n, ClearManifoldKeys{p}, extremeBytes + deepBytes);
        launch("NarrowChunkRanks", n, NarrowChunkRanks{p}, pairBytes + 2 * extremeBytes + deepBytes);
        launch("SweptNarrowChunkRanks", n, SweptNarrowChunkRanks{p}, 2 * pairBytes);
        launch("PairManifold", slots, PairManifold{p}, pairBytes + extremeBytes + deepBytes,
               2.0 * narrowChunks_ * kManifoldDeepest);
        // For the model only: the points the manifolds wrote (known after the launch).
        if (census_) record("PairManifold", 0, 0, censusSum(pairContactCount_, static_cast<int>(pairs)) * PC);
      } else {  // the per-body layout (or more elements than 32-bit indices: the same points)
        launch("PairContactsOf", slots, PairContactsOf{p}, pairs * (8 + 2 * BD + 8),
               2.0 * static_cast<double>(position_.size()) / nb);
      }
      // Slots past the pairs get body nb: sorted last, and the bound for nb is twice the count.
      launch("PairIncidences", slots, PairIncidences{p}, slots * 16.0 + pairs * 8.0);
      collective("stable sort (incidences)", [&] {
        System::stableSortByKey(exec(), p.incidenceBody, p.incidencePair, 2 * slots, sortScratchI_);
      }, kSortLaunches32, 2.0 * slots, 2.0 * slots * kSortBytesPerElement32);
      collective("lower bound (incidence starts)", [&] {
        System::lowerBounds(exec(), p.incidenceBody, 2 * slots, nb + 1, p.incidenceStart);
      }, 1, nb + 1, (nb + 1) * 8.0);
    });
    // For the model only: the contact points the narrow phase found (read by every round).
    const double pairContacts = census_ ? censusSum(pairContactCount_, static_cast<int>(pairs)) : 0;
    const double mostPairContacts = census_ ? censusMax(pairContactCount_, static_cast<int>(pairs)) : 0;
    const double particlesPerBody = static_cast<double>(position_.size()) / nb;
    // A sleeping body an awake one touches wakes before the solve (math/sleep.h).
    if (p.sleep.enabled)
      stage(kSleep, [&] {
        launch("MarkTouchedIslands", nb, MarkTouchedIslands{p}, nb * (BD + 8.0) + 2 * pairs * 12.0);
        launch("WakeIslands", nb, WakeIslands{p}, nb * (2 * BD + 8.0));
        // The model charges the check only (pairs inside a waking island are rare).
        launch("WokenPairContacts", slots, WokenPairContacts{p}, pairs * (8 + 2 * BD));
      });
    // Collider contacts of the per-particle strategy (wideColliderContacts_): every body's gathered
    // wide before PrepareBodies, pushed out wide after FinishPairBodies (step_kernels.h).
    const bool wide = wideColliderContacts_;
    Gathered gathered;  // for the model (census)
    if (wide) stage(kColliderContacts, [&] { gathered = colliderGather(); });
    // For the model: a body's collider contact solve (a body in no pair: sequential impulses over
    // its contacts) or targets and warm start (a body in a pair), at most the most contacts any body
    // gathered; the per-body layout gathers them in the same kernel.
    const double C = sizeof(ContactSlot);
    const double mostColliderContacts =
        wide ? gathered.most : std::min<double>(static_cast<double>(position_.size()) / nb, scene_.solver.maxContactsPerBody);
    // A body in a pair: PrepareBodies writes its world inverse inertia (M, 36 B), which the
    // solve's kernels read in place of its rotation (their BD per body: velocities, mass,
    // material, flags — the rotation's 36 B no longer read).
    const double M = sizeof(M3);
    stage(kSolve, [&] {
      if (wide)
        launch("PrepareBodiesWide", nb, PrepareBodiesWide{p}, nb * (3 * BD + 16 + 12 + M) + 2 * pairs * 4 + 3 * gathered.contacts * C,
               solveLoops(mostColliderContacts));
      else
        launch("PrepareBodies", nb, PrepareBodies{p}, nb * (3 * BD + 16 + M) + 2 * pairs * 4,
               particlesPerBody * double(colliders_.size()) + solveLoops(mostColliderContacts));
      launch("PreparePairs", slots, PreparePairs{p}, pairs * (8 + 2 * BD + 2 * PI) + 2 * pairContacts * PC,
             mostPairContacts);
      // Each body's velocities written back (24 B: one 32-byte sector), not the whole body.
      launch("SweepCollidersAndApply (warm start)", nb, SweepCollidersAndApply{p, true}, nb * (BD + 32 + PI) + 2 * pairs * (8 + PI));
      // The rounds (physics.md §6, "Rounds"): Gauss–Seidel over colour classes first, then Jacobi
      // with mass splitting, whose split masses need the responses prepared again.
      const int gaussSeidel = std::min(scene_.solver.gaussSeidelRounds, scene_.solver.contactIterations);
      if (gaussSeidel > 0) {
        gaussSeidelRounds(p, slots, pairs, pairContacts, mostPairContacts, gaussSeidel);
        if (gaussSeidel < scene_.solver.contactIterations) {
          StepParams split = p;
          split.pairGaussSeidel = false;
          launch("PrepareSplitResponses (pairs)", slots, PrepareSplitResponses{split}, pairs * (8 + 2 * BD) + 2 * pairContacts * PC,
                 mostPairContacts);
          launch("PrepareSplitResponses (bodies)", nb, PrepareSplitColliderResponses{split}, nb * (BD + M + 8) + gathered.contacts * 2 * C,
                 mostColliderContacts);
        }
      }
      for (int it = gaussSeidel; it < scene_.solver.contactIterations; ++it) {
        // Its pair_sweeps sweeps re-read the pair's points from L1: DRAM bytes once, the dependent
        // chain pair_sweeps times as long.
        launchSpans("SweepPairContacts", slots, kPairSpan, SweepPairKernel{p}, pairs * (8 + 2 * BD + 2 * PI) + 2 * pairContacts * PC,
               mostPairContacts * scene_.solver.pairSweeps);
        launch("SweepCollidersAndApply", nb, SweepCollidersAndApply{p, false},
               nb * (BD + 32 + PI + 12) + 2 * pairs * (8 + PI));
      }
      // Shock propagation (step_kernels.h): levels, velocities level by level upwards, then after
      // FinishPairBodies the positions. Each pass reads every body's level (4 B) and moves the
      // bodies of its level; a level's bodies and pairs are a share of all, counted as all.
      const int levels = p.shockLevels;
      const bool shock = levels > 0;
      // The seed reads the normals of the collider contacts of the bodies in pairs (12 B each;
      // it stops at the first that holds the body up: counted as all, an upper bound).
      const double colliderContactBytes = census_ ? censusSum(colliderCount_, nb) * 12.0 : 0;
      if (shock) {
        // Seed into one buffer, relax levels − 1 times alternating; p.shockLevel is the last.
        int* buffers[2] = {levels % 2 == 1 ? p.shockLevel : p.shockLevelScratch,
                           levels % 2 == 1 ? p.shockLevelScratch : p.shockLevel};
        launch("PairSupports", slots, PairSupports{p}, pairs * 8.0 + pairContacts * 12.0, mostPairContacts);
        launch("ShockLevels (seed)", nb, ShockLevels{p, nullptr, buffers[0]}, nb * 16.0 + colliderContactBytes);
        for (int k = 1; k < levels; ++k)
          launch("ShockLevels", nb, ShockLevels{p, buffers[(k - 1) % 2], buffers[k % 2]},
                 nb * 12.0 + 2 * pairs * 12.0);
        // For the model only: which levels have bodies (ShockPositions below); ShockVelocities
        // runs a warp a body, its longest chain counted by the census (launchLanes).
        if (census_) {
          thrust::host_vector<int> level = shockLevel_;
          shockPopulated_.assign(static_cast<std::size_t>(levels), 0);
          for (int l : level)
            if (l >= 0 && l < levels) shockPopulated_[static_cast<std::size_t>(l)] = 1;
        }
        for (int k = 0; k < levels; ++k)
          launchLanes("ShockVelocities", nb, ShockVelocities{p, k}, nb * 4.0 + (nb * 2 * BD + 2 * pairContacts * PC) / levels);
      }
      if (wide)
        launch("FinishPairBodiesWide", nb, FinishPairBodiesWide{p}, nb * (3 * BD + 12) + pairContacts * PC + 2 * pairs * 12.0,
               mostPairContacts);
      else
        launch("FinishPairBodies", nb, FinishPairBodies{p}, nb * 3 * BD + pairContacts * PC + 2 * pairs * 12.0,
               mostPairContacts + kPushOutPasses * particlesPerBody * double(colliders_.size()));
    });
    if (wide)
      stage(kPushOut, [&] {
        pushOutPasses();
        // The lone bodies' push-out is over (PrepareBodiesWide armed them; shock levels do not move them).
        launch("LimitPushWork", nb, LimitPushWork{p}, nb * (2 * BD + 68));
      });
    // The bodies a level of shock propagation moves are pushed out of the colliders before the
    // next level reads them: wide, the passes after each level (every level, populated or not: a
    // fixed launch sequence); per body, pushOut in the body's thread (charged at its worst, every
    // pass over every particle and collider).
    for (int k = 1; k < p.shockLevels; ++k) {
      stage(kSolve, [&] {
        const bool populated = census_ && shockPopulated_[static_cast<std::size_t>(k)];
        const double bytes = nb * 4.0 + (nb * 2 * BD + pairContacts * PC) / p.shockLevels;
        if (wide)
          launch("ShockPositionsWide", nb, ShockPositionsWide{p, k}, bytes + nb * 12.0, populated ? mostPairContacts : 0.0);
        else
          launch("ShockPositions", nb, ShockPositions{p, k}, bytes,
                 populated ? mostPairContacts + kPushOutPasses * particlesPerBody * double(colliders_.size()) : 0.0);
      });
      if (wide) stage(kPushOut, [&] { pushOutPasses(); });
    }
    stage(kSolve, [&] { launch("WatchBodies", nb, WatchBodies{p}, nb * 3 * BD); });
    // Sleeping (math/sleep.h): each body's steps at rest, their least over each island through
    // this step's touching pairs (double-buffered relaxation), then fall asleep or wake.
    if (p.sleep.enabled)
      stage(kSleep, [&] {
        launch("SleepSteps", nb, SleepSteps{p}, nb * (2 * BD + 12) + 2 * pairs * 4);
        for (int k = 0; k < kIslandPasses; ++k)
          launch("IslandMinimum", nb, IslandMinimum{p, k}, nb * 16.0 + 2 * pairs * 16.0);
        launch("SleepDecide", nb, SleepDecide{p}, nb * (BD + 8.0));
      });
  }

  /// This step's contacts become the next step's warm start: host-side, after the step's launches
  /// (a replayed CUDA graph runs no host code, so this is not part of them).
  void swapPairBuffers() {
    previousPairKeys_.swap(pairKeys_);
    previousPairContacts_.swap(pairContacts_);
    previousPairContactCount_.swap(pairContactCount_);
  }

  void synchronize() override { System::synchronize(); }

  std::int64_t stepCount() const override { return steps_; }

  std::vector<BodyIncident> incidents() const override {
    if (incidentStep_.empty()) return {};
    thrust::host_vector<long long> step = incidentStep_;
    thrust::host_vector<int> kind = incidentKind_;
    std::vector<BodyIncident> out;
    for (std::size_t b = 0; b < step.size(); ++b)
      if (step[b] >= 0) out.push_back({b, step[b], static_cast<Incident>(kind[b])});
    return out;
  }

  // State format (kStateVersion below; 5 added the pair slots provisioned and the most pairs found
  // since the host looked, so that a resumed run provisions as the uninterrupted one did; 4 the
  // working origin, 3 each body's sleep state): Header, then nbody BodyData (centres relative to
  // the header's origin), nparticle positions (relative to it too), nparticle velocities, nbody
  // overflow counters, then — with colliders (keepsContacts) — last step's collider contacts per
  // body as warm-start impulses (KeptContact) and their counts, and — when bodies touch — last
  // step's pairs and contacts per pair, all native-endian raw bytes.
  struct StateHeader {
    char magic[8];
    std::uint32_t version;
    std::uint32_t bodyDataSize;
    std::int64_t steps;
    std::uint64_t bodies;
    std::uint64_t particles;
    std::uint32_t contactSize;     // sizeof(ContactSlot)
    std::uint32_t bodyContacts;    // 1 when the pairs' warm-start state follows
    std::uint32_t contactsPerBody, contactsPerPair;
    std::int64_t pairs;            // last step's pairs
    std::int64_t pairOverflow, pairContactOverflow;
    double origin[3];              // the working origin the positions are relative to
    std::int64_t pairSlots;        // the pairs provisioned (0 without body contacts)
    std::int64_t pairsMostFound;   // the most pairs found since the host last looked (pairTally[2])
  };
  static constexpr char kMagic[8] = {'S', 'M', 'A', 'S', 'H', 'W', 'S', '1'};
  // 8: BodyData holds a free body's energy (heldEnergy); 7: every body's collider contacts kept
  // for the warm start (KeptContact), with or without body contacts; 6: contacts carry their
  // response.
  static constexpr std::uint32_t kStateVersion = 8;

  /// Whether the world keeps collider contacts between steps (a scene with colliders): the state
  /// then carries them.
  bool keepsContacts() const { return !previousContacts_.empty(); }

  std::size_t warmBytes(std::int64_t pairs) const {
    const std::size_t nb = bodies_.size();
    const std::size_t kept =
        keepsContacts() ? nb * (static_cast<std::size_t>(scene_.solver.maxContactsPerBody) * sizeof(KeptContact) + sizeof(int)) : 0;
    if (!bodyContacts_) return kept;
    return kept + static_cast<std::size_t>(pairs) *
                      (sizeof(long long) + sizeof(int) +
                       static_cast<std::size_t>(scene_.solver.maxContactsPerPair) * sizeof(PairContact<float>));
  }

  std::vector<std::uint8_t> saveState() const override {
    StateHeader h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.version = kStateVersion;
    h.bodyDataSize = sizeof(BodyData);
    h.steps = steps_;
    h.bodies = bodies_.size();
    h.particles = position_.size();
    h.contactSize = sizeof(ContactSlot);
    h.bodyContacts = bodyContacts_ ? 1 : 0;
    h.contactsPerBody = static_cast<std::uint32_t>(scene_.solver.maxContactsPerBody);
    h.contactsPerPair = static_cast<std::uint32_t>(scene_.solver.maxContactsPerPair);
    h.pairs = lastPairCount();
    h.pairOverflow = pairOverflow();
    h.pairContactOverflow = contactOverflowPairs_;
    for (int k = 0; k < 3; ++k) h.origin[k] = origin_[k];
    h.pairSlots = bodyContacts_ ? pairSlots_ : 0;
    h.pairsMostFound = bodyContacts_ ? peek(thrust::raw_pointer_cast(pairTally_.data()) + 2) : 0;
    std::vector<std::uint8_t> out;
    append(out, &h, 1);
    appendDevice(out, bodies_);
    appendDevice(out, position_);
    appendDevice(out, velocity_);
    appendDevice(out, overflow_);
    // Only the slots below each count are state; the rest hold whatever earlier steps left there
    // (a resumed world has zeros), so they are written as zeros: a state depends on the physics
    // alone, and a resumed run saves the same bytes as an uninterrupted one.
    if (keepsContacts()) {
      const std::size_t perBody = static_cast<std::size_t>(scene_.solver.maxContactsPerBody);
      thrust::host_vector<KeptContact> contacts = previousContacts_;
      thrust::host_vector<int> counts = previousColliderCount_;
      zeroPastCounts(contacts, counts, counts.size(), perBody);
      append(out, contacts.data(), contacts.size());
      append(out, counts.data(), counts.size());
    }
    if (bodyContacts_) {
      const std::size_t perPair = static_cast<std::size_t>(scene_.solver.maxContactsPerPair);
      const std::size_t pairs = static_cast<std::size_t>(h.pairs);
      if (pairs) {  // the state keeps a pair as a·nbody + b (pairKeyOf: a shift in the world)
        thrust::host_vector<long long> keys(previousPairKeys_.begin(),
                                            previousPairKeys_.begin() + static_cast<std::ptrdiff_t>(pairs));
        const long long nb = static_cast<long long>(bodies_.size());
        for (long long& k : keys) k = pairA(k) * nb + pairB(k);
        append(out, keys.data(), keys.size());
      }
      appendPrefix(out, previousPairContactCount_, pairs);
      if (pairs) {
        thrust::host_vector<PairContact<float>> slots(previousPairContacts_.begin(),
                                                      previousPairContacts_.begin() + static_cast<std::ptrdiff_t>(pairs * perPair));
        thrust::host_vector<int> pairCounts(previousPairContactCount_.begin(),
                                            previousPairContactCount_.begin() + static_cast<std::ptrdiff_t>(pairs));
        zeroPastCounts(slots, pairCounts, pairs, perPair);
        append(out, slots.data(), slots.size());
      }
    }
    return out;
  }

  void loadState(const std::vector<std::uint8_t>& bytes, const std::string& source) override {
    auto fail = [&](const std::string& what) { throw InputError(source + ": " + what); };
    StateHeader h{};
    if (bytes.size() < sizeof h) fail("not a smash state (too short)");
    std::memcpy(&h, bytes.data(), sizeof h);
    if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) fail("not a smash state (bad magic)");
    if (h.version != kStateVersion || h.bodyDataSize != sizeof(BodyData) || h.contactSize != sizeof(ContactSlot))
      fail("state format version " + std::to_string(h.version) + " is not supported by this build");
    if (h.bodies != bodies_.size() || h.particles != position_.size() ||
        h.bodyContacts != (bodyContacts_ ? 1u : 0u) ||
        h.contactsPerBody != static_cast<std::uint32_t>(scene_.solver.maxContactsPerBody) ||
        h.contactsPerPair != static_cast<std::uint32_t>(scene_.solver.maxContactsPerPair))
      fail("state of " + std::to_string(h.bodies) + " bodies / " + std::to_string(h.particles) +
           " particles does not belong to this scene (" + std::to_string(bodies_.size()) + " / " +
           std::to_string(position_.size()) + ", or other contact settings)");
    if (h.pairs < 0 || h.pairs > pairCapacity_) fail("state has an impossible pair count");
    if ((bodyContacts_ && (h.pairSlots < h.pairs || h.pairSlots > pairCapacity_ || h.pairSlots < 1)) ||
        (!bodyContacts_ && h.pairSlots != 0) || h.pairsMostFound < 0)
      fail("state has an impossible pair provision");
    const std::size_t expected = sizeof h + h.bodies * (sizeof(BodyData) + sizeof(long long)) +
                                 h.particles * 2 * sizeof(Float4) + warmBytes(h.pairs);
    if (bytes.size() != expected)
      fail("state is " + std::to_string(bytes.size()) + " bytes, expected " + std::to_string(expected) + " (truncated?)");
    std::size_t at = sizeof h;
    std::vector<BodyData> bodies = take<BodyData>(bytes, at, h.bodies);
    // The static part of each body must be this scene's.
    thrust::host_vector<BodyData> current = bodies_;
    for (std::size_t b = 0; b < bodies.size(); ++b)
      if (bodies[b].shape != current[b].shape || bodies[b].particleOffset != current[b].particleOffset ||
          bodies[b].particleCount != current[b].particleCount || bodies[b].restSteps < 0 ||
          bodies[b].island < 0 || bodies[b].island >= static_cast<int>(current.size()) ||
          bodies[b].asleep < 0 || bodies[b].asleep > kFellAsleep)
        fail("body " + std::to_string(b) + " of the state does not match the scene's body " + std::to_string(b));
    // A held energy (math/rotation.h keepRotationEnergy) is 0 or E/|L|² = ½ l̂ᵀ I⁻¹ l̂ for a unit l̂:
    // between ½ λmin(I⁻¹) ≥ ½ / tr I and ½ λmax(I⁻¹) ≤ ½ tr I⁻¹ (with float's slack); any other
    // value would turn the body towards an energy it cannot have.
    for (std::size_t b = 0; b < bodies.size(); ++b) {
      const double held = bodies[b].heldEnergy;
      if (held == 0.0) continue;
      const Shape& shape = scene_.shapes[static_cast<std::size_t>(bodies[b].shape)];
      const double trace = shape.inertia[0][0] + shape.inertia[1][1] + shape.inertia[2][2];
      const double traceInverse = shape.inertiaInverse[0][0] + shape.inertiaInverse[1][1] + shape.inertiaInverse[2][2];
      // (isfinite first: an ordered comparison of a NaN raises FE_INVALID, which the sanitizer
      // build traps)
      if (!std::isfinite(held) || !(held >= 0.5 / trace * (1 - 1e-3) && held <= 0.5 * traceInverse * (1 + 1e-3)))
        fail("state has a held energy outside what body " + std::to_string(b) + "'s shape allows (" +
             std::to_string(held) + ")");
    }
    // Sleep state (math/sleep.h): a sleeping body is at rest for at least the sleep time; with
    // sleeping off every body is awake.
    const SleepSettings<float> sleep = scene_.sleepSettings<float>();
    for (BodyData& b : bodies) {
      if (b.asleep && (b.restSteps < sleep.steps || b.velocity != V3(0.0f) || b.angularVelocity != V3(0.0f)))
        fail("state has an impossible sleep state (body " + std::to_string(&b - bodies.data()) + ")");
      if (!sleep.enabled) {
        b.asleep = 0;
        b.restSteps = 0;
      }
    }
    std::vector<Float4> position = take<Float4>(bytes, at, h.particles);
    std::vector<Float4> velocity = take<Float4>(bytes, at, h.particles);
    // Positions relative to the state's origin; a scene whose bodies start elsewhere has another
    // working origin, and the positions move to it (in double; nothing moves when they agree).
    const glm::dvec3 stateOrigin(h.origin[0], h.origin[1], h.origin[2]);
    if (!std::isfinite(stateOrigin.x) || !std::isfinite(stateOrigin.y) || !std::isfinite(stateOrigin.z))
      fail("state has a non-finite origin");
    if (stateOrigin != origin_) {
      const glm::dvec3 shift = stateOrigin - origin_;
      for (BodyData& b : bodies) b.centre = V3(glm::dvec3(b.centre) + shift);
      for (Float4& x : position) x = Float4(V3(glm::dvec3(xyz(x)) + shift), x.w);
    }
    std::vector<long long> overflow = take<long long>(bytes, at, h.bodies);
    std::vector<KeptContact> colliderContacts;
    std::vector<int> colliderCount, pairContactCount;
    std::vector<long long> pairKeys;
    std::vector<PairContact<float>> pairContacts;
    if (keepsContacts()) {
      colliderContacts = take<KeptContact>(bytes, at, h.bodies * h.contactsPerBody);
      colliderCount = take<int>(bytes, at, h.bodies);
    }
    if (bodyContacts_) {
      pairKeys = take<long long>(bytes, at, static_cast<std::size_t>(h.pairs));
      pairContactCount = take<int>(bytes, at, static_cast<std::size_t>(h.pairs));
      pairContacts = take<PairContact<float>>(bytes, at, static_cast<std::size_t>(h.pairs) * h.contactsPerPair);
    }
    // The warm-start counts bound loops over fixed-capacity slots, and the pair keys are searched
    // (the file's: sorted, a·nbody + b with a < b; pairKeyOf's in the world once converted): a
    // state whose counts or keys are impossible is refused.
    for (int c : colliderCount)
      if (c < 0 || c > static_cast<int>(h.contactsPerBody)) fail("state has an impossible contact count");
    for (int c : pairContactCount)
      if (c < 0 || c > static_cast<int>(h.contactsPerPair)) fail("state has an impossible pair contact count");
    {
      const long long nb = static_cast<long long>(h.bodies);
      for (std::size_t i = 0; i < pairKeys.size(); ++i) {
        const long long k = pairKeys[i], a = nb ? k / nb : -1, b = nb ? k % nb : -1;
        if (k < 0 || a < 0 || a >= b || b >= nb || (i > 0 && pairKeys[i - 1] >= k))
          fail("state has an impossible pair list");
      }
      for (long long& k : pairKeys) k = pairKeyOf(static_cast<int>(k / nb), static_cast<int>(k % nb));
    }
    // Everything checked: only now does the world change.
    copyIn(bodies_, bodies);
    copyIn(position_, position);
    copyIn(velocity_, velocity);
    copyIn(overflow_, overflow);
    if (keepsContacts()) {
      copyIn(previousContacts_, colliderContacts);
      copyIn(previousColliderCount_, colliderCount);
    }
    if (bodyContacts_) {
      // The saved run's provision exactly (never more: a resumed run drops what it dropped).
      resizePairSlots(static_cast<int>(h.pairSlots));  // keys and counts have the full capacity
      if (!pairKeys.empty()) {
        thrust::copy(pairKeys.begin(), pairKeys.end(), previousPairKeys_.begin());
        thrust::copy(pairContactCount.begin(), pairContactCount.end(), previousPairContactCount_.begin());
        thrust::copy(pairContacts.begin(), pairContacts.end(), previousPairContacts_.begin());
      }
      const std::vector<long long> tally = {h.pairs, 0, h.pairsMostFound, h.pairOverflow};
      copyIn(pairTally_, tally);
      contactOverflowPairs_ = h.pairContactOverflow;
    }
    steps_ = h.steps;
    restartRestLook();  // the saved run's other pair buffer is not in the state: step it again
    thrust::fill(stepIndex_.begin(), stepIndex_.end(), static_cast<long long>(steps_));
    fillAll(wakeMark_, -1LL);  // marks are of the step being taken: none yet
    System::resetStep(context_);  // buffers may have moved: capture again
  }

  std::vector<BodyPose> poses() const override {
    if (bodies_.empty()) return {};
    thrust::host_vector<BodyData> bodies = bodies_;
    std::vector<BodyPose> out;
    out.reserve(bodies.size());
    for (const BodyData& b : bodies)
      out.push_back({origin_ + glm::dvec3(b.centre), quaternionFromRotation(b.rotation), b.velocity,
                     b.angularVelocity});
    return out;
  }

  void setPoses(const std::vector<BodyPose>& poses) override {
    if (poses.size() != bodies_.size())
      throw InputError("setPoses: " + std::to_string(poses.size()) + " poses for " +
                       std::to_string(bodies_.size()) + " bodies");
    if (bodies_.empty()) return;
    thrust::host_vector<BodyData> bodies = bodies_;
    for (std::size_t b = 0; b < poses.size(); ++b) {
      bodies[b].centre = V3(poses[b].centre - origin_);
      bodies[b].rotation = rotationMatrix(poses[b].rotation);
      bodies[b].velocity = poses[b].velocity;
      bodies[b].angularVelocity = poses[b].angularVelocity;
      bodies[b].restSteps = 0;  // a body given a state is awake (math/sleep.h)
      bodies[b].asleep = 0;
      bodies[b].heldEnergy = 0.0f;  // and holds no energy yet (math/rotation.h keepRotationEnergy)
    }
    bodies_ = bodies;
    restartRestLook();
    fillAll(wakeMark_, -1LL);
    System::resetStep(context_);  // buffers may have moved: capture again
    const StepParams p = params();
    System::forEach(exec(), context_, static_cast<int>(position_.size()), ProjectParticles{p});
    provisionPairs();
  }

  std::vector<glm::vec3> particlePositions() const override {
    std::vector<glm::vec3> x = xyzOf(position_);
    if (origin_ != glm::dvec3(0.0))
      for (glm::vec3& p : x) p = glm::vec3(origin_ + glm::dvec3(p));
    return x;
  }
  glm::dvec3 origin() const override { return origin_; }
  std::vector<glm::vec3> particlePositionsRelative() const override { return xyzOf(position_); }
  const float* hostParticleState(bool velocity) const override {
    if constexpr (System::kBackend == Backend::Cuda) {
      (void)velocity;
      return nullptr;  // device memory
    } else {
      const Vector<Float4>& v = velocity ? velocity_ : position_;
      return v.empty() ? nullptr : reinterpret_cast<const float*>(thrust::raw_pointer_cast(v.data()));
    }
  }
  std::vector<glm::vec3> particleVelocities() const override { return xyzOf(velocity_); }

  /// Reads outside a step (not counted): the last step's pair count and the pairs dropped.
  std::int64_t lastPairCount() const { return bodyContacts_ ? peek(thrust::raw_pointer_cast(pairTally_.data())) : 0; }
  std::int64_t pairOverflow() const override {
    return bodyContacts_ ? peek(thrust::raw_pointer_cast(pairTally_.data()) + 3) : 0;
  }
  std::vector<PairNormalImpulse> lastPairImpulses() const override {
    std::vector<PairNormalImpulse> out;
    const std::size_t pairs = static_cast<std::size_t>(lastPairCount());
    const std::size_t perPair = static_cast<std::size_t>(scene_.solver.maxContactsPerPair);
    const std::size_t perBody = static_cast<std::size_t>(scene_.solver.maxContactsPerBody);
    const std::size_t nb = bodies_.size();
    if (pairs) {
      thrust::host_vector<long long> keys(previousPairKeys_.begin(), previousPairKeys_.begin() + static_cast<std::ptrdiff_t>(pairs));
      thrust::host_vector<int> counts(previousPairContactCount_.begin(),
                                      previousPairContactCount_.begin() + static_cast<std::ptrdiff_t>(pairs));
      thrust::host_vector<PairContact<float>> slots(previousPairContacts_.begin(),
                                                    previousPairContacts_.begin() + static_cast<std::ptrdiff_t>(pairs * perPair));
      for (std::size_t q = 0; q < pairs; ++q) {
        if (counts[q] == 0) continue;
        const auto a = static_cast<std::size_t>(pairA(keys[q]));
        const auto b = static_cast<std::size_t>(pairB(keys[q]));
        PairNormalImpulse t{a, b, 0.0, counts[q]};
        for (int k = 0; k < counts[q]; ++k) t.normal += slots[q * perPair + static_cast<std::size_t>(k)].lambdaNormal;
        out.push_back(t);
      }
    }
    if (!keepsContacts()) return out;
    thrust::host_vector<int> counts = previousColliderCount_;
    thrust::host_vector<KeptContact> contacts = previousContacts_;
    for (std::size_t b = 0; b < nb; ++b) {
      if (counts[b] == 0) continue;
      PairNormalImpulse t{b, SIZE_MAX, 0.0, counts[b]};
      for (int k = 0; k < counts[b]; ++k) t.normal += contacts[b * perBody + static_cast<std::size_t>(k)].lambdaNormal;
      out.push_back(t);
    }
    return out;
  }

  std::int64_t sleepingBodies() const override {
    if (bodies_.empty()) return 0;
    thrust::host_vector<BodyData> bodies = bodies_;
    std::int64_t n = 0;
    for (const BodyData& b : bodies) n += b.asleep ? 1 : 0;
    return n;
  }
  std::int64_t touchingPairs() const override {
    const std::int64_t pairs = lastPairCount();
    if (pairs == 0) return 0;
    thrust::host_vector<int> c(previousPairContactCount_.begin(), previousPairContactCount_.begin() + pairs);
    std::int64_t n = 0;
    for (int x : c) n += x > 0 ? 1 : 0;
    return n;
  }

  std::int64_t contactOverflow() const override {
    if (overflow_.empty()) return 0;
    thrust::host_vector<long long> o = overflow_;
    std::int64_t total = contactOverflowPairs_;
    for (long long x : o) total += x;
    return total;
  }

  void setProfiling(bool on) override { profiling_ = on; }
  void setKernelTiming(bool on) override { kernelTiming_ = on; }
  StageTimes stageTimes() const override {
    StageTimes t;
    for (std::size_t k = 0; k < kStageNames.size(); ++k) {
      t.names.push_back(kStageNames[k]);
      t.seconds.push_back(stageSeconds_[k]);
    }
    for (const std::string& key : kernelOrder_) {
      t.kernels.push_back(key);
      t.kernelSeconds.push_back(kernelSeconds_.at(key));
    }
    return t;
  }
  void resetStageTimes() override {
    stageSeconds_.assign(kStageNames.size(), 0.0);
    kernelSeconds_.clear();
    kernelOrder_.clear();
  }

  long temporaryAllocations() const override { return allocator_.allocations(); }
  std::int64_t stepHostReads() const override { return stepHostReads_; }

  void setCensus(bool on) override {
    census_ = on;
    censusRecords_.clear();
    censusOrder_.clear();
    censusStepsStart_ = steps_;
    censusReadsStart_ = stepHostReads_;
  }
  Census census() const override {
    Census c;
    c.steps = steps_ - censusStepsStart_;
    c.hostReads = stepHostReads_ - censusReadsStart_;
    c.graphed = true;  // every step is a fixed sequence (step()); only census and profiling run it plainly
    for (const std::string& key : censusOrder_) c.launches.push_back(censusRecords_.at(key));
    return c;
  }

 private:
  enum Stage { kIntegrate, kMatchSums, kBodies, kProject, kBroadPhase, kNarrowPhase, kSolve, kColliderContacts, kPushOut, kSleep };
  inline static const std::vector<const char*> kStageNames = {
      "integrate+collide (with the chunks' matching sums)", "match sums (segmented reduce)", "bodies (rotation, contacts; per-body strategy: the whole step)",
      "project", "broad phase (grid)", "narrow phase (pair contacts)", "contact solve (pairs, mass splitting)",
      "collider contacts (gather by chunk, solve per body)", "push-out (segmented max by body)",
      "sleep (islands at rest)"};

  template <class F>
  void stage(Stage s, F&& work) {
    currentStage_ = s;
    SMASH_NVTX_PUSH(kStageNames[s]);
    if (!profiling_) {
      work();
    } else {
      auto t0 = std::chrono::steady_clock::now();
      work();
      System::synchronize();
      stageSeconds_[s] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    SMASH_NVTX_POP();
  }

  StepParams params() {
    StepParams p{};
    p.position = thrust::raw_pointer_cast(position_.data());
    p.velocity = thrust::raw_pointer_cast(velocity_.data());
    p.particleBody = thrust::raw_pointer_cast(particleBody_.data());
    p.rest = thrust::raw_pointer_cast(rest_.data());
    p.pushCone = thrust::raw_pointer_cast(pushCones_.data());
    p.pushRays = thrust::raw_pointer_cast(pushRays_.data());
    p.shapeClusters = thrust::raw_pointer_cast(shapeClusters_.data());
    p.clusterSpheres = thrust::raw_pointer_cast(clusterSpheres_.data());
    p.clusterEnd = thrust::raw_pointer_cast(clusterEnd_.data());
    p.clusterParticles = thrust::raw_pointer_cast(clusterParticles_.data());
    p.shapes = thrust::raw_pointer_cast(shapes_.data());
    p.bodies = thrust::raw_pointer_cast(bodies_.data());
    p.sums = thrust::raw_pointer_cast(sums_.data());
    p.chunkSums = raw(chunkSums_);
    p.chunkFirst = raw(chunkFirst_);
    p.bodyFirstChunk = raw(bodyFirstChunk_);
    p.contacts = thrust::raw_pointer_cast(contacts_.data());
    p.contactOverflow = thrust::raw_pointer_cast(overflow_.data());
    p.contactCapacity = scene_.solver.maxContactsPerBody;
    p.colliderManifold = scene_.solver.maxContactsPerCollider;
    p.colliders = thrust::raw_pointer_cast(colliders_.data());
    p.colliderCount = static_cast<int>(colliders_.size());
    const SolverSettings& s = scene_.solver;
    const double h = scene_.stepDt();
    p.gravity = V3(scene_.gravity);
    p.h = static_cast<float>(h);
    p.linearDamping = static_cast<float>(scene_.linearDamping);
    p.angularDamping = static_cast<float>(scene_.angularDamping);
    p.restitutionThreshold = static_cast<float>(s.restitutionThreshold);
    p.contactMargin = static_cast<float>(scene_.contactMargin());
    p.contactIterations = s.contactIterations;
    p.pairSweeps = s.pairSweeps;
    p.penetrationSlop = static_cast<float>(s.penetrationSlop);
    p.seedsRotation = s.rotation == RotationFit::Seeds;
    p.collideAfter = s.collideAfter;
    p.impulseContacts = s.contact == ContactModel::Impulse;
    p.averagedContacts = s.contactSolver == ContactSolver::Averaged;
    p.step = raw(stepIndex_);
    p.incidentStep = thrust::raw_pointer_cast(incidentStep_.data());
    p.incidentKind = thrust::raw_pointer_cast(incidentKind_.data());
    p.worldBound = static_cast<float>(scene_.watchdog.worldBound);
    p.maxSpeed = static_cast<float>(scene_.watchdog.maxSpeed);
    p.clampIncidents = scene_.watchdog.policy == Watchdog::Policy::Clamp;
    p.deferContacts = bodyContacts_ || wideColliderContacts_;
    p.bodyContacts = bodyContacts_;
    p.bodyNear = raw(bodyNear_);
    p.chunkContactCount = raw(chunkContactCount_);
    p.chunkContactOffset = raw(chunkContactOffset_);
    p.chunkDeepest = raw(chunkDeepest_);
    p.chunkDeepestAt = raw(chunkDeepestAt_);
    p.pushGate = raw(pushGate_);
    p.pushDone = raw(pushDone_);
    p.pushMoved = raw(pushMoved_);
    p.pushFrom = raw(pushFrom_);
    p.pushPoint = raw(pushPoint_);
    p.pushSolvedFrom = raw(pushSolvedFrom_);
    p.pushMost = raw(pushMost_);
    p.colliderContacts = s.contact == ContactModel::Impulse && (s.collideAfter || s.method == Method::Impulse);
    p.bodiesStart = raw(bodiesStart_);
    p.bodiesPredicted = raw(bodiesPredicted_);
    p.bodyCount = static_cast<int>(bodies_.size());
    p.cellKeys = raw(cellKeys_);
    p.sortOrder = raw(sortOrder_);
    p.cellStart = raw(cellStart_);
    p.spheres = raw(spheres_);
    p.cells = raw(cells_);
    p.cellMask = cellBuckets_ - 1;
    p.cellSize = cellSize_;
    p.pairsFound = raw(pairsFound_);
    p.pairsOffset = raw(pairsOffset_);
    p.pairKeys = raw(pairKeys_);
    p.pairCapacity = pairSlots_;
    p.pairTally = raw(pairTally_);
    p.pairContacts = raw(pairContacts_);
    p.pairContactCount = raw(pairContactCount_);
    p.pairContactCapacity = s.maxContactsPerPair;
    p.narrowChunks = narrowChunks_;
    p.pairExtremes = raw(pairExtremes_);
    p.elementDeepest = raw(elementDeepest_);
    p.previousPairKeys = raw(previousPairKeys_);
    p.previousPairContacts = raw(previousPairContacts_);
    p.previousPairContactCount = raw(previousPairContactCount_);
    p.previousContacts = raw(previousContacts_);
    p.previousColliderCount = raw(previousColliderCount_);
    p.colliderContactCount = raw(colliderCount_);
    p.incidenceBody = raw(incidenceBody_);
    p.incidencePair = raw(incidencePair_);
    p.incidenceStart = raw(incidenceStart_);
    p.split = raw(split_);
    p.invInertia = raw(invInertia_);
    p.onA = raw(onA_);
    p.onB = raw(onB_);
    p.onBody = raw(onBody_);
    p.pairGaussSeidel = s.gaussSeidelRounds > 0 && p.bodyContacts;
    // Off without colliders: nothing is carried (and the level buffers are then never written).
    const double g = glm::length(scene_.gravity);
    p.shockLevels = p.colliderContacts && p.colliderCount > 0 && g > 0 ? s.shockLevels : 0;
    p.shockSweeps = s.shockSweeps;
    p.up = g > 0 ? V3(-scene_.gravity / g) : V3(0.0f);
    p.pairSupport = raw(pairSupport_);
    p.shockLevel = raw(shockLevel_);
    p.shockLevelScratch = raw(shockLevelScratch_);
    p.sleep = scene_.sleepSettings<float>();
    p.islandRest = raw(islandRest_);
    p.islandRestScratch = raw(islandRestScratch_);
    p.islandLabel = raw(islandLabel_);
    p.islandLabelScratch = raw(islandLabelScratch_);
    p.wakeMark = raw(wakeMark_);
    p.penalty = PenaltyParams<float>{s.penalty.model, static_cast<float>(s.penalty.stiffness),
                                     static_cast<float>(s.penalty.buffer),
                                     static_cast<float>(s.penalty.barrier)};
    return p;
  }

  // Kernel launch census for the GPU model (World::census). Launch and byte counts of Thrust's
  // collectives are the model's assumptions for CUB on sm_90: a decoupled look-back scan is 2
  // kernels reading and writing each element once; an onesweep radix sort of 32-bit keys with
  // 32-bit values is a histogram and 4 passes reading and writing keys and values (64-bit keys:
  // 8 passes).
  static constexpr int kScanLaunches = 2;
  static constexpr int kSortLaunches32 = 5, kSortLaunches64 = 9;
  static constexpr std::size_t kFirstPairSlots = 256;  // pairs provisioned at least (four per body otherwise)
  static constexpr double kSortBytesPerElement32 = 4 * 2 * 8.0, kSortBytesPerElement64 = 8 * 2 * 8.0;

  /// The execution policy of every algorithm of a step: the System's, with the world's
  /// temporary-storage cache, on the world's stream (CUDA).
  auto exec() { return System::onStream(System::policy()(allocator_), context_); }

  /// One kernel over `count` elements (each a call of `functor`); `bytes` is its modelled DRAM
  /// traffic, recorded when the census is on.
  template <class F>
  void launch(const char* kernel, int count, const F& functor, double bytes, double serialSteps = 0) {
    record(kernel, 1, count, bytes, serialSteps);
    if (count <= 0) return;
    timed(kernel, [&] { System::forEach(exec(), context_, count, functor); });
  }

  /// launch for a functor f(i, lanes) whose element's work is spread over lanes (math/lanes.h;
  /// CUDA: a warp an element). For the model (census, on a CPU system), the longest chain one
  /// warp runs, counted as the lanes run in order.
  template <class F>
  void launchLanes(const char* kernel, int count, const F& functor, double bytes) {
    if (count <= 0) {
      record(kernel, 1, count, bytes);
      return;
    }
    std::vector<int> steps(census_ ? static_cast<std::size_t>(count) : 0, 0);
    timed(kernel, [&] { System::forEachLanes(exec(), context_, count, functor, census_ ? steps.data() : nullptr); });
    record(kernel, 1, count, bytes, census_ ? double(*std::max_element(steps.begin(), steps.end())) : 0.0);
  }

  /// launch for a functor that takes a span of `span` elements a call (SweepPairContacts: 32 pair
  /// slots on a CPU, swept four to an SSE register), recorded as `count` elements, one to a thread
  /// as a GPU runs them.
  template <class F>
  void launchSpans(const char* kernel, int count, int span, const F& functor, double bytes, double serialSteps = 0) {
    record(kernel, 1, count, bytes, serialSteps);
    if (count <= 0) return;
    timed(kernel, [&] { System::forEach(exec(), context_, (count + span - 1) / span, functor); });
  }

  template <class Run>
  void collective(const char* name, Run&& run, int launches, double elements, double bytes) {
    record(name, launches, elements, bytes);
    timed(name, run);
  }

  /// With profiling and kernel timing on, each kernel's (or collective's) time too: the device
  /// waited for before and after it, so a time holds its launch cost and nothing queued around it
  /// (stageTimes().kernels).
  template <class Work>
  void timed(const char* kernel, Work&& work) {
    if (!profiling_ || !kernelTiming_) {
      work();
      return;
    }
    System::synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    work();
    System::synchronize();
    const std::string key = std::string(kStageNames[currentStage_]) + ": " + kernel;
    auto it = kernelSeconds_.find(key);
    if (it == kernelSeconds_.end()) {
      it = kernelSeconds_.emplace(key, 0.0).first;
      kernelOrder_.push_back(key);
    }
    it->second += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  void record(const char* kernel, int launches, double elements, double bytes, double serialSteps = 0) {
    if (!census_) return;
    const std::string key = std::string(kStageNames[currentStage_]) + "\n" + kernel;
    LaunchRecord& r = censusRecords_[key];
    if (r.kernel.empty()) {
      r.stage = kStageNames[currentStage_];
      r.kernel = kernel;
      censusOrder_.push_back(key);
    }
    r.launches += launches;
    r.elements += elements;
    r.bytes += bytes;
    r.serialSteps += serialSteps;
  }

  // Reads for the model only (census on): never part of a normal step.
  template <class T>
  double censusRead(const T* deviceValue) const {
    T v = 0;
    System::copyToHost(&v, deviceValue, 1);
    return static_cast<double>(v);
  }
  double censusCount(const Vector<int>& flags) const {
    thrust::host_vector<int> h = flags;
    double n = 0;
    for (int x : h) n += x != 0 ? 1 : 0;
    return n;
  }
  double censusCountOf(const Vector<int>& flags, int value) const {
    thrust::host_vector<int> h = flags;
    double n = 0;
    for (int x : h) n += x == value ? 1 : 0;
    return n;
  }
  double censusMax(const Vector<int>& v, int count) const {
    if (count <= 0) return 0;
    thrust::host_vector<int> h(v.begin(), v.begin() + count);
    return *std::max_element(h.begin(), h.end());
  }
  /// The most contacts any body gathered (from the scanned chunk counts).
  double censusMaxBodyContacts() const {
    thrust::host_vector<int> offset = chunkContactOffset_;
    thrust::host_vector<int> firstChunk = bodyFirstChunk_;
    const int K = static_cast<int>(colliders_.size());
    int most = 0;
    for (std::size_t b = 0; b + 1 < firstChunk.size(); ++b)
      most = std::max(most, offset[static_cast<std::size_t>(K * firstChunk[b + 1])] - offset[static_cast<std::size_t>(K * firstChunk[b])]);
    return most;
  }
  double censusSum(const Vector<int>& v, int count) const {
    if (count <= 0) return 0;
    thrust::host_vector<int> h(v.begin(), v.begin() + count);
    double n = 0;
    for (int x : h) n += x;
    return n;
  }

  /// A device→host read outside a step (an accessor): not counted.
  template <class T>
  T peek(const T* deviceValue) const {
    T value{};
    System::copyToHost(&value, deviceValue, 1);
    return value;
  }

  /// A device→host read made by a step; counted (stepHostReads), because on CUDA each one is a
  /// host wait for everything queued before it.
  template <class T>
  T readBack(const T* deviceValue) {
    T value{};
    System::copyToHost(&value, deviceValue, 1);
    ++stepHostReads_;
    return value;
  }

  /// Clears the slots of each of `groups` groups of `perGroup` past its count (saveState).
  template <class Slots, class Counts>
  static void zeroPastCounts(Slots& slots, const Counts& counts, std::size_t groups, std::size_t perGroup) {
    for (std::size_t g = 0; g < groups; ++g)
      for (std::size_t k = static_cast<std::size_t>(std::max(counts[g], 0)); k < perGroup; ++k)
        slots[g * perGroup + k] = typename Slots::value_type{};
  }

  template <class T>
  static T* raw(Vector<T>& v) { return v.empty() ? nullptr : thrust::raw_pointer_cast(v.data()); }

  template <class T>
  static void append(std::vector<std::uint8_t>& out, const T* data, std::size_t count) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(data);
    out.insert(out.end(), p, p + count * sizeof(T));
  }
  template <class T>
  static void appendDevice(std::vector<std::uint8_t>& out, const Vector<T>& v) {
    if (v.empty()) return;
    thrust::host_vector<T> h = v;
    append(out, h.data(), h.size());
  }
  template <class T>
  static void appendPrefix(std::vector<std::uint8_t>& out, const Vector<T>& v, std::size_t count) {
    if (count == 0) return;
    thrust::host_vector<T> h(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(count));
    append(out, h.data(), h.size());
  }
  template <class T>
  static std::vector<T> take(const std::vector<std::uint8_t>& bytes, std::size_t& at, std::size_t count) {
    std::vector<T> out(count);
    if (count) std::memcpy(out.data(), bytes.data() + at, count * sizeof(T));
    at += count * sizeof(T);
    return out;
  }

  /// Copies a host staging vector into a buffer already sized by describeBuffers.
  template <class T>
  static void copyIn(Vector<T>& dst, const std::vector<T>& src) {
    if (src.empty()) return;  // CCCL dereferences begin() even for an empty range (UBSan)
    if (src.size() != dst.size()) throw std::logic_error("buffer sized differently from its contents");
    thrust::copy(src.begin(), src.end(), dst.begin());
  }
  template <class T>
  static void fillAll(Vector<T>& v, T value) {
    if (!v.empty()) thrust::fill(v.begin(), v.end(), value);
  }

  static std::vector<glm::vec3> xyzOf(const Vector<Float4>& v) {
    if (v.empty()) return {};
    thrust::host_vector<Float4> h = v;
    std::vector<glm::vec3> out(h.size());
    for (std::size_t i = 0; i < h.size(); ++i) out[i] = glm::vec3(h[i]);
    return out;
  }

  glm::dvec3 origin_;  // the working origin (workingOrigin): declared before scene_, which uses it
  Scene scene_;        // the scene moved by −origin_
  StepStrategy strategy_;
  Vector<Float4> rest_;
  Vector<Float4> pushCones_;  // per rest particle, Shape::pushCone (StepParams::pushCone)
  Vector<Float4> pushRays_;   // three per rest particle, Shape::pushRays (StepParams::pushRays)
  Vector<ShapeClusters> shapeClusters_;  // the shapes' particle clusters (StepParams::clusterSpheres)
  Vector<Float4> clusterSpheres_;
  Vector<int> clusterEnd_, clusterParticles_;
  Vector<ShapeData> shapes_;
  Vector<BodyData> bodies_;
  Vector<Float4> position_, velocity_;
  Vector<int> particleBody_;
  Vector<Collider<float>> colliders_;
  Vector<MatchSums> sums_, chunkSums_;
  Vector<int> chunkFirst_, bodyFirstChunk_;
  Vector<ContactSlot> contacts_;
  Vector<long long> overflow_;
  Vector<long long> incidentStep_;
  Vector<int> incidentKind_;
  Vector<float> grids_;
  // the per-body strategy's particle loops split over blocks of chunks (fewer bodies than threads)
  bool splitBodies_ = false;
  /// Bodies below which the per-body step splits: the system's threads, or
  /// SMASH_SPLIT_BODIES_BELOW (docs/cli.md; the tests split every body with it).
  static int splitBelow() {
    const char* setting = std::getenv("SMASH_SPLIT_BODIES_BELOW");
    if (!setting || !*setting) return System::workers();
    long long below = 0;
    bool whole = true;
    for (const char* c = setting; *c && whole; ++c) {
      whole = *c >= '0' && *c <= '9';
      below = 10 * below + (*c - '0');
      whole = whole && below <= (1LL << 30);
    }
    if (!whole)
      throw InputError("SMASH_SPLIT_BODIES_BELOW: '" + quoteToken(setting) + "' is not a whole number from 0 to 2^30");
    return static_cast<int>(below);
  }
  // collider contacts, wide
  bool wideColliderContacts_ = false;
  Vector<int> bodyNear_, chunkContactCount_, chunkContactOffset_, pushGate_, pushDone_, pushMoved_, chunkDeepestAt_,
      pushPoint_;
  Vector<float> pushMost_;
  Vector<Float4> chunkDeepest_, pushFrom_, pushSolvedFrom_;
  // body–body contact
  bool bodyContacts_ = false;
  Vector<BodyData> bodiesStart_, bodiesPredicted_;
  // Broad phase (grid): bucket keys, sort order, bucket starts, each body's owned partners.
  Vector<int> cellKeys_, sortOrder_, cellStart_, pairsFound_, pairsOffset_;
  Vector<Float4> spheres_;
  Vector<Cell> cells_;
  int cellBuckets_ = 1;
  int narrowChunks_ = 0;
  bool wideNarrowPhase_ = false;
  Vector<ManifoldKey> pairExtremes_;  // the wide narrow phase's quadrant extremes (pairs × 4)
  Vector<ManifoldKey> elementDeepest_;  // and each element's four deepest (elements × 4), grow-only
  float cellSize_ = 1;
  // contactOverflowPairs_: pair contact points dropped as counted by builds before the count moved
  // onto the device (per body, in overflow_); it only carries what an older state file holds.
  // pairCapacity_: the scene's most pairs (maxPairsPerBody per body); pairSlots_ (≤ it): the pairs
  // provisioned now — the passes' width, the contact slots — grown between frames
  // (checkPairSlots) and by provisionPairs.
  long long pairCapacity_ = 0, contactOverflowPairs_ = 0;
  int pairSlots_ = 0;
  Vector<long long> pairTally_;  // (4) StepParams::pairTally
  Vector<long long> pairKeys_, previousPairKeys_;
  Vector<PairContact<float>> pairContacts_, previousPairContacts_;
  Vector<int> pairContactCount_, previousPairContactCount_;
  Vector<KeptContact> previousContacts_;
  Vector<int> colliderCount_, previousColliderCount_;
  Vector<int> incidenceBody_, incidencePair_, incidenceStart_, split_;
  Vector<M3> invInertia_;  // (nbody) PrepareBodies → ShockVelocities (pairSolverBody)
  Vector<PairImpulse<float>> onA_, onB_, onBody_;
  Vector<int> pairColor_, pairColorNext_, pairColorTentative_, colorKey_, colorOrder_, colorStart_;  // (math/pair_colors.h)
  Vector<long long> colorCount_;
  Vector<int> shockLevel_, shockLevelScratch_, pairSupport_;
  Vector<int> islandRest_, islandRestScratch_, islandLabel_, islandLabelScratch_;
  Vector<long long> wakeMark_;  // (nbody) the step in which island i was touched (−1: none)
  std::vector<int> shockPopulated_;  // census only: levels with bodies this step
  std::vector<std::pair<int, int>> sortScratchI_;
  Vector<long long> stepIndex_;  // (1) the step being taken, on the device (AdvanceStep)
  CachingAllocator<System> allocator_;
  bool profiling_ = false;
  bool kernelTiming_ = false;  // with profiling_: a wait around every kernel (timed)
  std::int64_t steps_ = 0;
  int restfulSteps_ = 0;  // steps in a row that began and ended with every body asleep (restStep)
  Vector<long long> awakeSeen_;  // (1) raised by NoteAwake since the last look (lookAtRest)
  int restSpan_ = 0;             // steps since the flag was last sent
  int pendingSpan_ = 0;          // steps the flag on its way covers
  bool restReadPending_ = false;
  bool lastSpanClean_ = false;   // the span before: every step ended with every body asleep
  std::int64_t restEpoch_ = 0, pendingEpoch_ = 0;  // restartRestLook's count, then and at the send
  std::int64_t stepHostReads_ = 0;
  bool census_ = false;
  Stage currentStage_ = kIntegrate;
  std::map<std::string, LaunchRecord> censusRecords_;
  std::vector<std::string> censusOrder_;
  std::int64_t censusStepsStart_ = 0, censusReadsStart_ = 0;
  std::vector<double> stageSeconds_;
  std::map<std::string, double> kernelSeconds_;  // "stage: kernel" → seconds (profiling)
  std::vector<std::string> kernelOrder_;         // in the order first launched
  // Last: destroyed first (the CUDA system's graph and stream before the buffers they use).
  typename System::Context context_;
};

}  // namespace smash::pipeline
