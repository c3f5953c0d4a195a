// Scenes: the JSON format (documented in docs/scene-format.md) and its validated, fully built
// in-memory form. loadScene either returns a complete Scene or throws an InputError that names
// the file and the field; nothing is ever half-loaded.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

#include "core/shape.h"
#include "math/contact.h"
#include "math/sdf.h"
#include "math/sleep.h"

namespace smash {

enum class Method { ShapeMatching, Impulse };
/// How a body's contacts with one collider become an impulse on the body.
enum class ContactSolver {
  Sequential,  ///< per-point impulses, Gauss–Seidel with clamped accumulation (default)
  Averaged,    ///< physics.md §3 literally: one impulse at the average of the approaching points
};
enum class RotationFit {
  Optimal,  ///< R = rotation part of A_pq (default; minimises the matching objective)
  Seeds,    ///< R = rotation part of A_pq A_qq⁻¹, as in the course seeds
};

struct SolverSettings {
  Method method = Method::ShapeMatching;
  RotationFit rotation = RotationFit::Optimal;
  bool collideAfter = true;  ///< second contact pass at the end of the step (physics.md §2.6)
  ContactModel contact = ContactModel::Impulse;
  PenaltyParams<double> penalty;  ///< used when contact is one of the penalty models
  double restitutionThreshold = 0.1;  ///< m/s: slower approaches do not bounce (docs/solver.md)
  /// Particles closer than this to a collider take part in the body-level contact; < 0 = auto
  /// (2|g|h², the distance a resting body sinks in one step).
  double contactMargin = -1.0;
  ContactSolver contactSolver = ContactSolver::Sequential;
  /// A particle counts as inside a collider for physics.md §2.2's per-particle impulse (and for the
  /// averaged solver) only when deeper than this. Push-out leaves the deepest particle exactly on
  /// the surface, where the sign of φ is decided by rounding; without a slop that coin flip
  /// reflects one particle's velocity or not, differently in float and double. A pair's overlap up
  /// to this is left to the velocity solve (the pair separation and shock positions): 0.2 mm so
  /// that resting piles are not pushed apart by ~g h² every step (docs/solver.md, "Piles that
  /// sleep").
  double penetrationSlop = 2e-4;
  /// Gauss–Seidel sweeps of the sequential contact solver.
  int contactIterations = 32;
  /// Contacts a body keeps per step (all colliders together): beyond it the deepest are kept,
  /// in the order found, and the rest are counted as overflow. Same rule on every backend and
  /// in the reference, so it is part of the algorithm; the buffer is sized from it up front.
  int maxContactsPerBody = 256;
  /// Collider contacts a body alone against the colliders solves per patch: a manifold of the
  /// deepest and the farthest (math/contact_solver.h reduceColliderContacts, at most 8); 0 (the
  /// default: a reduced set rocks bodies on edges and curved supports) solves every one gathered.
  int maxContactsPerCollider = 0;
  /// Bodies collide with each other (physics.md §6): each shape's mesh is baked into a grid SDF when a
  /// scene has more than one body.
  bool bodyContacts = true;
  /// Broad-phase candidate pairs the buffer holds, per body (sized up front; overflow counted).
  int maxPairsPerBody = 16;
  /// Memory (MiB) for body pairs' contact slots provisioned for every candidate pair at once: a
  /// scene whose capacity fits has no pair count to watch (steps read nothing back); a larger one
  /// starts with four pairs per body and the host provisions more between frames.
  int pairMemoryMb = 256;
  /// Points of a body pair's contact manifold (the deepest and the extremes, at most 8).
  int maxContactsPerPair = 8;
  /// Gauss–Seidel sweeps over a pair's manifold in each contact round (physics.md §6, "Mass
  /// splitting"): each pair's own problem, with split masses, solved closer before the rounds
  /// average the bodies' copies.
  int pairSweeps = 2;
  /// Of the contact rounds, the first this many (at most contact_iterations) are Gauss–Seidel
  /// over colour classes of pairs that share no awake body, the rest Jacobi with mass splitting
  /// (physics.md §6, "Rounds"); 0: Jacobi only.
  int gaussSeidelRounds = 16;
  /// Levels of shock propagation after the contact rounds (contact_solver.h): bodies at contact-
  /// graph distance k < shockLevels from a collider are solved against what carries them as
  /// static; 0 turns it off.
  int shockLevels = 16;
  /// At most this many Gauss–Seidel sweeps of a body of a shock level against what carries it
  /// (fewer where its velocities settle first: contact_solver.h sweepSettled).
  int shockSweeps = 64;
  /// Sleeping (docs/solver.md "Sleeping"): an island of touching bodies whose every body has
  /// been supported and slower than sleepSpeed at its fastest point for sleepTime seconds stops
  /// being stepped until an awake body touches it.
  bool sleep = true;
  double sleepSpeed = 0.03;  ///< m/s, |v| + r |ω| (Jolt's point-velocity threshold)
  double sleepTime = 0.5;    ///< s (Box2D's b2_timeToSleep)
};

/// A static mesh obstacle: its mesh (in the collider's frame, for output) and the baked field
/// that Collider::grid points into. Shared by copies of the scene.
struct ColliderMesh {
  std::string file;
  Mesh mesh;
  BakedGrid grid;
};

struct Material {
  std::string name;
  double restitution = 0.5;
  double friction = 0.2;
};

struct Body {
  int shape = 0;     ///< index into Scene::shapes
  int material = 0;  ///< index into Scene::materials
  glm::dvec3 position{0.0};  ///< centre of mass, world
  glm::dquat rotation{1, 0, 0, 0};
  glm::dvec3 velocity{0.0};
  glm::dvec3 angularVelocity{0.0};
};

/// Pass/fail checks a scene states about its own outcome (used by the runner's verdict).
struct SceneChecks {
  std::optional<double> maxPenetration;  ///< deepest penetration allowed at the end of any step
  std::optional<double> restSpeed;       ///< max particle speed at the end of the run
  /// deepest particle of a body inside another, as a fraction of the smaller body's diameter,
  /// checked at the end of every frame
  std::optional<double> maxBodyPenetration;
  std::optional<double> maxFinalKineticEnergy;  ///< Σ ½ m v² at the end of the run, joules
  std::optional<glm::dvec3> boundsMin, boundsMax;  ///< every particle stays inside, every step
};

/// The state check every step makes (issue "a step that checks its state"): a body whose state is
/// non-finite, farther than worldBound from the working origin along any axis (|x − o_x|, ... ≤
/// worldBound, o = workingOrigin(scene): a scene's bound moves with the scene), or faster than maxSpeed (linear, or angular at
/// its bounding radius) is an incident, recorded with body and step. Policy Stop leaves the state
/// as it is and runners stop; Clamp scales speeds down to maxSpeed, moves the centre back inside
/// the bound, and freezes a non-finite body at its pose from the start of the step.
struct Watchdog {
  enum class Policy { Stop, Clamp };
  double worldBound = 1e5;
  double maxSpeed = 1e4;
  Policy policy = Policy::Stop;
};

struct Scene {
  std::string name;
  std::string path;       ///< file it came from ("" when built in code)
  double dt = 1.0 / 60;   ///< frame time step; one solver step is dt / substeps
  int substeps = 1;
  int frames = 100;
  glm::dvec3 gravity{0, -9.8, 0};
  double linearDamping = 1.0;   ///< α of physics.md §2.1 / §3.1 (linear_decay)
  double angularDamping = 1.0;  ///< angular_decay of physics.md §3.1
  SolverSettings solver;
  std::vector<Material> materials;
  std::vector<Collider<double>> colliders;
  /// Parallel to `colliders`: the mesh and grid of a ColliderType::Mesh collider, else null.
  std::vector<std::shared_ptr<const ColliderMesh>> colliderMeshes;
  std::vector<Shape> shapes;
  std::vector<Body> bodies;
  SceneChecks checks;
  Watchdog watchdog;

  double stepDt() const { return dt / substeps; }
  /// The contact margin in effect: solver.contact_margin, or automatically 2|g|h² (two steps of
  /// free fall from rest, the depth a resting body sinks per step).
  double contactMargin() const;
  /// The solver's sleep settings as the kernels and the reference use them (math/sleep.h): the
  /// sleep time in whole steps, and at least one step more than a body falling freely can stay
  /// below sleep_speed (its speed changes by |g| h a step: ⌊2 sleep_speed / (|g| h)⌋ + 2), so
  /// neither an apex nor a slow fall in weak gravity passes for rest. Without gravity nothing
  /// sleeps: a body at rest cannot be told from one drifting slowly.
  template <class T>
  SleepSettings<T> sleepSettings() const {
    SleepSettings<T> s;
    const double g = std::sqrt(gravity.x * gravity.x + gravity.y * gravity.y + gravity.z * gravity.z);
    s.enabled = solver.sleep && g > 0;
    s.speed = static_cast<T>(solver.sleepSpeed);
    const double h = stepDt();
    const double steps = std::max(std::ceil(solver.sleepTime / h - 1e-9),
                                  g > 0 ? std::floor(2 * solver.sleepSpeed / (g * h)) + 2 : 1.0);
    s.steps = !(steps < 1e9) ? 1000000000 : static_cast<int>(steps);
    return s;
  }
  /// Whether steps look for body–body contacts: enabled, more than one body, every shape baked.
  bool bodyContactsActive() const;
  /// Advice on a valid scene that will not behave as meant (run and validate print it): a shape
  /// of bodies that touch each other with its particles sparser than it is thick — one particle
  /// every sqrt(area / count) against 2 volume / area — lets another body sit or pass between
  /// them (two stacked cubes of 8 vertex particles merge into one).
  std::vector<std::string> advice() const;
};

/// The working origin of a scene (docs/physics.md §10): the point the float backends keep every
/// position relative to, so that a scene far from the world's origin is stepped with the same
/// float resolution as at the origin. 0 for a scene whose bodies' bounding box is centred within
/// kOriginFreeRadius of the origin (every scene near the origin keeps its bits); otherwise the
/// centre of that box rounded to the nearest multiple of kOriginGrid metres (exact in double, so
/// shifting by it is exact for coordinates within a factor of two of it, and a scene moved by a
/// multiple of kOriginGrid holds the very coordinates it holds at home). Depends on the bodies'
/// initial positions only.
glm::dvec3 workingOrigin(const Scene& scene);
constexpr double kOriginFreeRadius = 64.0;
constexpr double kOriginGrid = 16.0;

/// The scene moved by `by`: bodies, colliders and the bounds check (exact in double for a
/// whole-metre `by` near the coordinates, as workingOrigin's).
Scene translatedScene(const Scene& scene, const glm::dvec3& by);

/// Reads, validates and builds a scene file (meshes are loaded relative to the file).
Scene loadScene(const std::string& path);

/// For scenes built in code: bakes the φ_ref grid of every shape a body uses (from its mesh), as
/// loadScene does when bodies can touch. Throws InputError for a shape without a mesh.
void bakeShapeSdfs(Scene& scene);

/// Throws InputError when body contacts are on, there is more than one body, and a shape that a
/// body uses has no baked field (a scene built in code without bakeShapeSdfs).
void requireBakedShapes(const Scene& scene);

/// Same from JSON text; `name` labels errors and `baseDir` resolves mesh paths.
/// `bakeFields` false skips the SDF bakes (the fuzzer, which tests the parser, not OpenVDB);
/// everything else is validated as usual.
Scene parseScene(const std::string& text, const std::string& name, const std::string& baseDir,
                 bool bakeFields = true);

const char* methodName(Method m);

/// Hard limits checked at load (32-bit particle indices in the device pipeline).
constexpr std::int64_t kMaxBodies = 1 << 24;
constexpr std::int64_t kMaxParticles = 0x7fffffff;
/// Surface samples one shape may ask for (its particles, each a body's in every body using it).
constexpr std::int64_t kMaxSampleCount = std::int64_t(1) << 24;
/// Largest scene file read (bytes): scenes are small; generators make many bodies.
constexpr std::uint64_t kMaxSceneBytes = std::uint64_t(64) << 20;

}  // namespace smash
