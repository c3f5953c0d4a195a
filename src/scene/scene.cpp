#include "scene/scene.h"

#include <cmath>
#include <limits>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/files.h"
#include "core/random.h"

namespace smash {
namespace {

using Json = nlohmann::json;

// Reads one JSON object, remembering which keys were used so that unknown keys (typos) are
// reported instead of silently ignored. Every error names the file and the field path.
class Fields {
 public:
  Fields(const Json& j, std::string file, std::string path)
      : j_(j), file_(std::move(file)), path_(std::move(path)) {
    if (!j_.is_object()) fail("must be an object");
  }

  [[noreturn]] void fail(const std::string& what) const { failAt(path_, what); }
  [[noreturn]] void failAt(const std::string& field, const std::string& what) const {
    throw InputError(file_ + ": " + (field.empty() ? std::string("(top level)") : field) + ": " +
                     what);
  }
  std::string at(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  const std::string& file() const { return file_; }

  bool has(const std::string& key) const { return j_.contains(key); }

  const Json* get(const std::string& key) {
    used_.insert(key);
    auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }
  const Json& require(const std::string& key) {
    const Json* v = get(key);
    if (!v) failAt(at(key), "is required");
    return *v;
  }

  double number(const std::string& key, double fallback) {
    const Json* v = get(key);
    return v ? toNumber(*v, at(key)) : fallback;
  }
  double requireNumber(const std::string& key) { return toNumber(require(key), at(key)); }
  double positive(const std::string& key, double fallback) {
    double x = number(key, fallback);
    if (!(x > 0)) failAt(at(key), "must be > 0, got " + show(x));
    return x;
  }
  double nonNegative(const std::string& key, double fallback) {
    double x = number(key, fallback);
    if (!(x >= 0)) failAt(at(key), "must be >= 0, got " + show(x));
    return x;
  }
  double unitInterval(const std::string& key, double fallback) {
    double x = number(key, fallback);
    if (!(x >= 0 && x <= 1)) failAt(at(key), "must be in [0, 1], got " + show(x));
    return x;
  }
  std::int64_t integer(const std::string& key, std::int64_t fallback, std::int64_t lo,
                       std::int64_t hi) {
    const Json* v = get(key);
    if (!v) return fallback;
    return toInteger(*v, at(key), lo, hi);
  }
  bool boolean(const std::string& key, bool fallback) {
    const Json* v = get(key);
    if (!v) return fallback;
    if (!v->is_boolean()) failAt(at(key), "must be true or false");
    return v->get<bool>();
  }
  std::string string(const std::string& key, const std::string& fallback) {
    const Json* v = get(key);
    if (!v) return fallback;
    if (!v->is_string()) failAt(at(key), "must be a string");
    return v->get<std::string>();
  }
  std::string choice(const std::string& key, const std::string& fallback,
                     const std::vector<std::string>& allowed) {
    std::string s = string(key, fallback);
    for (const auto& a : allowed)
      if (a == s) return s;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + ("'" + a + "'");
    failAt(at(key), "'" + s + "' is not one of " + list);
  }
  glm::dvec3 vec3(const std::string& key, glm::dvec3 fallback) {
    const Json* v = get(key);
    return v ? toVec3(*v, at(key)) : fallback;
  }
  glm::dvec3 requireVec3(const std::string& key) { return toVec3(require(key), at(key)); }

  /// Unknown keys are errors: a typo must not silently fall back to a default.
  void finish() const {
    for (auto it = j_.begin(); it != j_.end(); ++it)
      if (!used_.count(it.key())) {
        std::string known;
        for (const auto& k : used_) known += (known.empty() ? "" : ", ") + k;
        failAt(at(it.key()), "unknown key (known here: " + known + ")");
      }
  }

  double toNumber(const Json& v, const std::string& field) const {
    if (!v.is_number()) failAt(field, "must be a number");
    double x = v.get<double>();
    if (!std::isfinite(x)) failAt(field, "must be finite, got " + show(x));
    return x;
  }
  std::int64_t toInteger(const Json& v, const std::string& field, std::int64_t lo,
                         std::int64_t hi) const {
    if (!v.is_number_integer()) failAt(field, "must be an integer");
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
      failAt(field, "must be at most " + std::to_string(hi));
    std::int64_t x = v.get<std::int64_t>();
    if (x < lo || x > hi)
      failAt(field, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                        std::to_string(x));
    return x;
  }
  glm::dvec3 toVec3(const Json& v, const std::string& field) const {
    if (!v.is_array() || v.size() != 3) failAt(field, "must be an array of 3 numbers");
    glm::dvec3 r;
    for (int k = 0; k < 3; ++k) r[k] = toNumber(v[k], field + "[" + std::to_string(k) + "]");
    return r;
  }
  static std::string show(double x) {
    std::ostringstream s;
    s << x;
    return s.str();
  }

 private:
  const Json& j_;
  std::string file_, path_;
  std::set<std::string> used_;
};

glm::dvec3 unitVector(Fields& f, const std::string& key, glm::dvec3 fallback) {
  glm::dvec3 n = f.vec3(key, fallback);
  double len = glm::length(n);
  if (!(len > 1e-12)) f.failAt(f.at(key), "must be a non-zero vector");
  return n / len;
}

// {"axis": [x,y,z], "degrees": a} or {"quaternion": [w,x,y,z]}
glm::dquat parseRotation(const Json& j, const std::string& file, const std::string& path) {
  Fields f(j, file, path);
  glm::dquat q(1, 0, 0, 0);
  if (f.has("quaternion")) {
    const Json& v = f.require("quaternion");
    if (!v.is_array() || v.size() != 4)
      f.failAt(f.at("quaternion"), "must be an array of 4 numbers [w, x, y, z]");
    double c[4];
    for (int k = 0; k < 4; ++k)
      c[k] = f.toNumber(v[k], f.at("quaternion") + "[" + std::to_string(k) + "]");
    q = glm::dquat(c[0], c[1], c[2], c[3]);
    double len = glm::length(q);
    if (!(len > 1e-12)) f.failAt(f.at("quaternion"), "must be non-zero");
    q = q / len;
  } else {
    glm::dvec3 axis = unitVector(f, "axis", glm::dvec3(0, 1, 0));
    double degrees = f.requireNumber("degrees");
    q = glm::angleAxis(glm::radians(degrees), axis);
  }
  f.finish();
  return q;
}

glm::dquat optionalRotation(Fields& f, const std::string& key) {
  const Json* r = f.get(key);
  return r ? parseRotation(*r, f.file(), f.at(key)) : glm::dquat(1, 0, 0, 0);
}

glm::dvec3 parseScale(Fields& f) {
  glm::dvec3 scale(1.0);
  if (const Json* j = f.get("scale")) {
    if (j->is_number())
      scale = glm::dvec3(f.toNumber(*j, f.at("scale")));
    else
      scale = f.toVec3(*j, f.at("scale"));
    for (int k = 0; k < 3; ++k)
      if (!(scale[k] > 0)) f.failAt(f.at("scale"), "must be > 0");
  }
  return scale;
}

std::string meshPathOf(Fields& f, const std::string& baseDir) {
  std::string meshRel = f.string("mesh", "");
  if (meshRel.empty()) f.failAt(f.at("mesh"), "is required (path of an OBJ file)");
  if (meshRel.find('\0') != std::string::npos) f.failAt(f.at("mesh"), "a path must not contain a NUL character");
  namespace fs = std::filesystem;
  fs::path meshPath = fs::path(meshRel).is_absolute() ? fs::path(meshRel) : fs::path(baseDir) / meshRel;
  std::error_code ec;
  const fs::file_status st = fs::status(meshPath, ec);
  const std::string shown = quoteToken(meshPath.string(), 200);
  if (ec && ec != std::errc::no_such_file_or_directory)
    f.failAt(f.at("mesh"), "cannot access " + shown + ": " + ec.message());
  if (!fs::exists(st)) f.failAt(f.at("mesh"), "file not found: " + shown);
  return meshPath.string();
}

Collider<double> parseCollider(const Json& j, const std::string& file, const std::string& baseDir,
                               const std::string& path, std::shared_ptr<const ColliderMesh>& meshOut,
                               bool bake) {
  Fields f(j, file, path);
  std::string type =
      f.choice("type", "", {"plane", "sphere", "box", "capsule", "box_container", "mesh"});
  Collider<double> c;
  if (type == "mesh") {
    // A static obstacle baked from a closed mesh (a bowl, a ramp), placed by position/rotation.
    c.type = ColliderType::Mesh;
    const std::string meshPath = meshPathOf(f, baseDir);
    const glm::dvec3 scale = parseScale(f);
    c.point = f.vec3("position", glm::dvec3(0.0));
    c.rotation = optionalRotation(f, "rotation");
    const int resolution = static_cast<int>(
        f.integer("sdf_resolution", 64, kMinSdfResolution, kMaxSdfResolution));
    f.finish();
    auto m = std::make_shared<ColliderMesh>();
    m->file = meshPath;
    m->mesh = loadObj(meshPath);
    for (glm::dvec3& v : m->mesh.vertices) v *= scale;
    if (signedVolume(m->mesh) < 0)
      f.failAt(f.at("mesh"), "faces point inwards (negative enclosed volume); flip their winding");
    if (bake) m->grid = bakeSdf(m->mesh, resolution, file + ": " + path);
    c.grid = m->grid.view();
    c.meshThickness = 2.0 * std::fabs(signedVolume(m->mesh)) / surfaceArea(m->mesh);
    meshOut = std::move(m);
    return c;
  }
  if (type == "plane") {
    c.type = ColliderType::Plane;
    c.point = f.requireVec3("point");
    c.normal = unitVector(f, "normal", glm::dvec3(0, 1, 0));
  } else if (type == "sphere") {
    c.type = ColliderType::Sphere;
    c.point = f.requireVec3("center");
    c.radius = f.positive("radius", 0);
  } else if (type == "capsule") {
    c.type = ColliderType::Capsule;
    c.point = f.requireVec3("a");
    c.point2 = f.requireVec3("b");
    c.radius = f.positive("radius", 0);
  } else {  // box, box_container
    c.type = type == "box" ? ColliderType::Box : ColliderType::BoxContainer;
    c.point = f.requireVec3("center");
    c.halfExtents = f.requireVec3("half_extents");
    for (int k = 0; k < 3; ++k)
      if (!(c.halfExtents[k] > 0)) f.failAt(f.at("half_extents"), "every component must be > 0");
    c.rotation = optionalRotation(f, "rotation");
  }
  f.finish();
  return c;
}

struct ShapeEntry {
  std::string name;
  Shape shape;
};

Shape parseShape(const std::string& name, const Json& j, const std::string& file,
                 const std::string& baseDir, const std::string& path) {
  Fields f(j, file, path);
  const std::string meshPath = meshPathOf(f, baseDir);
  ShapeOptions options;
  options.scale = parseScale(f);
  const int sdfResolution = static_cast<int>(
      f.integer("sdf_resolution", 32, kMinSdfResolution, kMaxSdfResolution));
  options.particleMass = f.positive("particle_mass", 1.0);
  if (const Json* s = f.get("sampling")) {
    Fields sf(*s, file, f.at("sampling"));
    std::string mode = sf.choice("mode", "vertices", {"vertices", "surface"});
    if (mode == "surface") {
      options.sampling = Sampling::Surface;
      options.sampleCount = static_cast<int>(sf.integer("count", 0, 1, kMaxSampleCount));
      if (!sf.has("count")) sf.failAt(sf.at("count"), "is required for surface sampling");
      options.seed = static_cast<std::uint64_t>(sf.integer("seed", 1, 0, INT64_MAX));
    }
    sf.finish();
  }
  f.finish();
  Mesh mesh = loadObj(meshPath);
  Shape shape = buildShape(name, mesh, options, file + ": " + path);
  shape.sdfResolution = sdfResolution;
  return shape;
}

template <class T>
int indexByName(const std::vector<T>& items, const std::string& name) {
  for (std::size_t i = 0; i < items.size(); ++i)
    if (items[i].name == name) return static_cast<int>(i);
  return -1;
}

// Common part of a body and a generator: shape, material and initial motion.
Body parseBodyCommon(Fields& f, const Scene& scene) {
  Body b;
  std::string shape = f.string("shape", "");
  if (shape.empty()) f.failAt(f.at("shape"), "is required");
  b.shape = indexByName(scene.shapes, shape);
  if (b.shape < 0) f.failAt(f.at("shape"), "no shape named '" + shape + "'");
  std::string material = f.string("material", "default");
  b.material = indexByName(scene.materials, material);
  if (b.material < 0)
    f.failAt(f.at("material"), "no material named '" + material + "' (define it in materials)");
  b.rotation = optionalRotation(f, "rotation");
  b.velocity = f.vec3("velocity", glm::dvec3(0.0));
  b.angularVelocity = f.vec3("angular_velocity", glm::dvec3(0.0));
  return b;
}

glm::dquat randomRotation(Random& rng, double maxDegrees) {
  // Axis uniform on the sphere, angle uniform in [-max, max].
  double z = rng.uniform(-1, 1), phi = rng.uniform(0, 2 * M_PI);
  double s = std::sqrt(std::max(0.0, 1 - z * z));
  glm::dvec3 axis(s * std::cos(phi), s * std::sin(phi), z);
  return glm::angleAxis(glm::radians(rng.uniform(-maxDegrees, maxDegrees)), axis);
}

void parseGenerator(const Json& j, const std::string& file, const std::string& path,
                    Scene& scene) {
  Fields f(j, file, path);
  f.choice("type", "", {"grid"});
  Body proto = parseBodyCommon(f, scene);
  glm::dvec3 origin = f.requireVec3("origin");
  const Json& countJson = f.require("count");
  if (!countJson.is_array() || countJson.size() != 3)
    f.failAt(f.at("count"), "must be an array of 3 integers");
  std::int64_t n[3];
  for (int k = 0; k < 3; ++k)
    n[k] = f.toInteger(countJson[k], f.at("count") + "[" + std::to_string(k) + "]", 1, kMaxBodies);
  std::int64_t total = 0, plane = 0;
  if (!checkedMul(n[0], n[1], plane) || !checkedMul(plane, n[2], total) ||
      total + static_cast<std::int64_t>(scene.bodies.size()) > kMaxBodies)
    f.failAt(f.at("count"), "makes " + std::to_string(n[0]) + " x " + std::to_string(n[1]) + " x " +
                                std::to_string(n[2]) + " bodies; the limit is " + std::to_string(kMaxBodies) +
                                " in the scene");
  glm::dvec3 spacing = f.requireVec3("spacing");
  double jitterPos = 0, jitterRot = 0;
  std::uint64_t seed = 1;
  if (const Json* jj = f.get("jitter")) {
    Fields jf(*jj, file, f.at("jitter"));
    jitterPos = jf.nonNegative("position", 0);
    jitterRot = jf.nonNegative("rotation_degrees", 0);
    seed = static_cast<std::uint64_t>(jf.integer("seed", 1, 0, INT64_MAX));
    jf.finish();
  }
  f.finish();
  Random rng(seed);
  for (std::int64_t iz = 0; iz < n[2]; ++iz)
    for (std::int64_t iy = 0; iy < n[1]; ++iy)
      for (std::int64_t ix = 0; ix < n[0]; ++ix) {
        Body b = proto;
        b.position = origin + glm::dvec3(ix, iy, iz) * spacing;
        if (jitterPos > 0)
          b.position += rng.uniform3(-1, 1) * jitterPos;
        if (jitterRot > 0) b.rotation = randomRotation(rng, jitterRot) * b.rotation;
        scene.bodies.push_back(b);
      }
}

void parseSolver(const Json& j, const std::string& file, Scene& scene) {
  Fields f(j, file, "solver");
  SolverSettings& s = scene.solver;
  s.method = f.choice("method", "shape_matching", {"shape_matching", "impulse"}) == "impulse"
                 ? Method::Impulse
                 : Method::ShapeMatching;
  s.rotation = f.choice("rotation", "optimal", {"optimal", "seeds"}) == "seeds"
                   ? RotationFit::Seeds
                   : RotationFit::Optimal;
  s.collideAfter = f.boolean("collide_after", true);
  s.restitutionThreshold = f.nonNegative("restitution_threshold", 0.1);
  if (f.has("contact_margin")) s.contactMargin = f.nonNegative("contact_margin", 0.0);
  s.contactSolver = f.choice("contact_solver", "sequential", {"sequential", "averaged"}) == "averaged"
                        ? ContactSolver::Averaged
                        : ContactSolver::Sequential;
  s.penetrationSlop = f.nonNegative("penetration_slop", 2e-4);
  s.maxContactsPerBody = static_cast<int>(f.integer("max_contacts_per_body", 256, 1, 4096));
  s.contactIterations = static_cast<int>(f.integer("contact_iterations", 32, 1, 1000));
  // At most a contact manifold's points (kManifoldPoints); 0 (default): no reduction.
  s.maxContactsPerCollider = static_cast<int>(f.integer("max_contacts_per_collider", 0, 0, 8));
  s.bodyContacts = f.boolean("body_contacts", true);
  s.maxPairsPerBody = static_cast<int>(f.integer("max_pairs_per_body", 16, 1, 1024));
  s.pairMemoryMb = static_cast<int>(f.integer("pair_memory_mb", 256, 1, 1 << 20));
  // At most a contact manifold's points (kManifoldPoints, math/contact_solver.h).
  s.maxContactsPerPair = static_cast<int>(f.integer("max_contacts_per_pair", 8, 1, 8));
  s.pairSweeps = static_cast<int>(f.integer("pair_sweeps", 2, 1, 64));
  s.gaussSeidelRounds = static_cast<int>(f.integer("gauss_seidel_rounds", 16, 0, 1000));
  s.shockLevels = static_cast<int>(f.integer("shock_levels", 16, 0, 64));
  s.shockSweeps = static_cast<int>(f.integer("shock_sweeps", 64, 1, 256));
  s.sleep = f.boolean("sleep", true);
  s.sleepSpeed = f.nonNegative("sleep_speed", 0.03);
  s.sleepTime = f.nonNegative("sleep_time", 0.5);
  if (const Json* c = f.get("contact")) {
    Fields cf(*c, file, "solver.contact");
    std::string model = cf.choice("model", "impulse",
                                  {"impulse", "penalty_linear", "penalty_buffered", "penalty_barrier"});
    s.contact = model == "impulse"            ? ContactModel::Impulse
                : model == "penalty_linear"   ? ContactModel::PenaltyLinear
                : model == "penalty_buffered" ? ContactModel::PenaltyBuffered
                                              : ContactModel::PenaltyBarrier;
    s.penalty.model = s.contact;
    s.penalty.stiffness = cf.nonNegative("stiffness", 0);
    s.penalty.buffer = cf.nonNegative("buffer", 0);
    s.penalty.barrier = cf.nonNegative("barrier", 0);
    if ((s.contact == ContactModel::PenaltyLinear || s.contact == ContactModel::PenaltyBuffered) &&
        !(s.penalty.stiffness > 0))
      cf.failAt(cf.at("stiffness"), "must be > 0 for model '" + model + "'");
    if ((s.contact == ContactModel::PenaltyBuffered || s.contact == ContactModel::PenaltyBarrier) &&
        !(s.penalty.buffer > 0))
      cf.failAt(cf.at("buffer"), "must be > 0 for model '" + model + "'");
    if (s.contact == ContactModel::PenaltyBarrier && !(s.penalty.barrier > 0))
      cf.failAt(cf.at("barrier"), "must be > 0 for model 'penalty_barrier'");
    cf.finish();
  }
  f.finish();
}

void parseChecks(const Json& j, const std::string& file, Scene& scene) {
  Fields f(j, file, "checks");
  if (f.has("max_penetration")) scene.checks.maxPenetration = f.nonNegative("max_penetration", 0);
  if (f.has("rest_speed")) scene.checks.restSpeed = f.nonNegative("rest_speed", 0);
  if (f.has("max_body_penetration"))
    scene.checks.maxBodyPenetration = f.nonNegative("max_body_penetration", 0);
  if (f.has("max_final_kinetic_energy"))
    scene.checks.maxFinalKineticEnergy = f.nonNegative("max_final_kinetic_energy", 0);
  if (f.has("bounds")) {
    Fields bf(*f.get("bounds"), file, "checks.bounds");
    glm::dvec3 lo = bf.requireVec3("min"), hi = bf.requireVec3("max");
    for (int k = 0; k < 3; ++k)
      if (!(lo[k] < hi[k])) bf.failAt(bf.at("max"), "must be greater than min in every axis");
    bf.finish();
    scene.checks.boundsMin = lo;
    scene.checks.boundsMax = hi;
  }
  f.finish();
}

}  // namespace

void bakeShapes(Scene& scene, const std::string& prefix) {
  std::vector<bool> used(scene.shapes.size(), false);
  for (const Body& b : scene.bodies) used[b.shape] = true;
  for (std::size_t k = 0; k < scene.shapes.size(); ++k) {
    Shape& shape = scene.shapes[k];
    if (!used[k] || shape.sdf) continue;
    if (shape.mesh.triangles.empty())
      throw InputError(prefix + "shapes." + shape.name +
                       ": has no mesh to bake a signed distance field from (body contacts need one; "
                       "set solver.body_contacts to false to let bodies pass through each other)");
    requireSolid(shape.mesh, shape.sdfResolution, kMaxSdfResolution, prefix + "shapes." + shape.name);
    shape.sdf = std::make_shared<const BakedGrid>(
        bakeSdf(shape.mesh, shape.sdfResolution, prefix + "shapes." + shape.name));
  }
}

void bakeShapeSdfs(Scene& scene) { bakeShapes(scene, scene.path.empty() ? "" : scene.path + ": "); }

void requireBakedShapes(const Scene& scene) {
  for (std::size_t k = 0; k < scene.colliders.size(); ++k)
    if (scene.colliders[k].type == ColliderType::Mesh &&
        (k >= scene.colliderMeshes.size() || !scene.colliderMeshes[k]))
      throw InputError((scene.path.empty() ? std::string("scene") : scene.path) + ": colliders[" +
                       std::to_string(k) + "]: a mesh collider needs its baked mesh (colliderMeshes)");
  if (!scene.solver.bodyContacts || scene.bodies.size() < 2) return;
  for (const Body& b : scene.bodies)
    if (!scene.shapes[b.shape].sdf)
      throw InputError((scene.path.empty() ? std::string("scene") : scene.path) + ": shapes." +
                       scene.shapes[b.shape].name +
                       ": body contacts are on but the shape has no baked signed distance field "
                       "(bakeShapeSdfs, or solver.body_contacts false)");
}

double Scene::contactMargin() const {
  if (solver.contactMargin >= 0) return solver.contactMargin;
  const double h = stepDt();
  return 2.0 * glm::length(gravity) * h * h;
}

glm::dvec3 workingOrigin(const Scene& scene) {
  glm::dvec3 lo(std::numeric_limits<double>::infinity()), hi(-std::numeric_limits<double>::infinity());
  for (const Body& b : scene.bodies) {
    lo = glm::min(lo, b.position);
    hi = glm::max(hi, b.position);
  }
  if (scene.bodies.empty()) return glm::dvec3(0.0);
  const glm::dvec3 centre = 0.5 * lo + 0.5 * hi;  // no overflow for coordinates near ±DBL_MAX
  for (int k = 0; k < 3; ++k)
    if (!std::isfinite(centre[k])) return glm::dvec3(0.0);
  if (std::max({std::abs(centre.x), std::abs(centre.y), std::abs(centre.z)}) <= kOriginFreeRadius)
    return glm::dvec3(0.0);
  auto lattice = [](double v) { return kOriginGrid * std::nearbyint(v / kOriginGrid); };
  return glm::dvec3(lattice(centre.x), lattice(centre.y), lattice(centre.z));
}

Scene translatedScene(const Scene& scene, const glm::dvec3& by) {
  Scene out = scene;
  if (by == glm::dvec3(0.0)) return out;
  for (Body& b : out.bodies) b.position += by;
  for (Collider<double>& c : out.colliders) {
    c.point += by;
    if (c.type == ColliderType::Capsule) c.point2 += by;
    // A plane's point may lie anywhere on it: anchored at its foot nearest the new origin, the
    // float φ = (x − point)·n holds no large terms that cancel.
    if (c.type == ColliderType::Plane) c.point = c.normal * glm::dot(c.point, c.normal);
  }
  if (out.checks.boundsMin) *out.checks.boundsMin += by;
  if (out.checks.boundsMax) *out.checks.boundsMax += by;
  return out;
}

bool Scene::bodyContactsActive() const {
  if (!solver.bodyContacts || bodies.size() < 2) return false;
  for (const Body& b : bodies)
    if (!shapes[b.shape].sdf) return false;
  return true;
}

std::vector<std::string> Scene::advice() const {
  std::vector<std::string> notes;
  std::vector<bool> used(shapes.size(), false);
  for (const Body& b : bodies) used[static_cast<std::size_t>(b.shape)] = true;
  // A collider thinner than a body's particles are apart can pass between them and end inside the
  // body: contacts are found at the particles (a hostile test, 2026-12-07: a 5 mm sphere collider
  // went 39 mm into a 0.1 m box of 200 surface samples, one every 17 mm, at 1 m/s, and 41 mm into
  // one of 2,000, one every 5.5 mm — random samples leave holes wider than their mean spacing;
  // 8,000 held). Named from a mean spacing of half the collider's thickness.
  // One note per shape, naming its thinnest such collider (a scene of many thin colliders gets
  // one line a shape), with a count within what a shape may ask for.
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    const Shape& s = shapes[k];
    if (!used[k] || s.mesh.triangles.empty() || s.rest.empty()) continue;
    const double area = surfaceArea(s.mesh);
    const double spacing = std::sqrt(area / static_cast<double>(s.rest.size()));
    std::size_t thinnest = colliders.size(), others = 0;
    double t = 0;
    for (std::size_t c = 0; c < colliders.size(); ++c) {
      const double tc = colliderThickness(colliders[c]);
      if (!(tc > 0) || !(tc < 1e29) || !(spacing > tc / 2)) continue;  // a plane or a box container never
      if (thinnest < colliders.size()) ++others;
      if (thinnest == colliders.size() || tc < t) {
        thinnest = c;
        t = tc;
      }
    }
    if (thinnest == colliders.size()) continue;
    const double count = std::min(std::ceil(area / ((t / 3) * (t / 3))), static_cast<double>(kMaxSampleCount));
    std::ostringstream note;
    note.precision(3);
    note << "colliders[" << thinnest << "]";
    if (others > 0) note << " (and " << others << " more)";
    note << " is " << t * 1000 << " mm thick, less than twice as thick as shape \"" << s.name
         << "\"'s particles are apart (one every " << spacing * 1000 << " mm over its surface): it can pass "
         << "between them and end up inside a body, since contacts are found at the particles; sample the shape "
         << "densely, e.g. \"sampling\": {\"mode\": \"surface\", \"count\": " << static_cast<long long>(count) << "}";
    notes.push_back(note.str());
  }
  if (!bodyContactsActive()) return notes;
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    const Shape& s = shapes[k];
    if (!used[k] || s.mesh.triangles.empty() || s.rest.empty() || !(s.thickness > 0)) continue;
    const double area = surfaceArea(s.mesh);
    const double spacing = std::sqrt(area / static_cast<double>(s.rest.size()));
    if (!(spacing > s.thickness)) continue;
    // A count that puts a particle every third of the thickness.
    const double count = std::ceil(area / ((s.thickness / 3) * (s.thickness / 3)));
    std::ostringstream note;
    note.precision(3);
    note << "shape \"" << s.name << "\": " << s.rest.size() << " particles over " << area
         << " m^2 of surface, one every " << spacing * 1000 << " mm, sparser than the shape is thick ("
         << s.thickness * 1000 << " mm): bodies touching it can sit or sink between its particles (two stacked "
         << "cubes of 8 vertex particles merge); sample it densely, e.g. \"sampling\": {\"mode\": \"surface\", "
         << "\"count\": " << static_cast<long long>(count) << "}";
    notes.push_back(note.str());
  }
  return notes;
}

const char* methodName(Method m) { return m == Method::Impulse ? "impulse" : "shape_matching"; }

/// JSON with a duplicate key in any object rejected, naming the key's path (nlohmann keeps the
/// last silently; a scene with "dt" twice would run with whichever came last).
Json parseJsonRejectingDuplicates(const std::string& text, const std::string& file) {
  struct Level {
    bool object = false;
    std::set<std::string> keys;
    std::string key;     // the member being parsed (objects)
    long index = -1;     // the element being parsed (arrays)
  };
  std::vector<Level> levels;
  auto where = [&levels]() {
    std::string path;
    for (const Level& l : levels) {
      if (l.object) path += (path.empty() ? "" : ".") + l.key;
      else if (l.index >= 0) path += "[" + std::to_string(l.index) + "]";
    }
    return path;
  };
  auto enterValue = [&levels]() {  // a value starts: an array parent counts an element
    if (!levels.empty() && !levels.back().object) ++levels.back().index;
  };
  return Json::parse(text, [&](int, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        enterValue();
        levels.push_back(Level{event == Json::parse_event_t::object_start, {}, {}, -1});
        break;
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        if (!levels.empty()) levels.pop_back();
        break;
      case Json::parse_event_t::key: {
        Level& l = levels.back();
        l.key = parsed.get<std::string>();
        if (!l.keys.insert(l.key).second)
          throw InputError(file + ": " + quoteToken(where(), 120) + ": duplicate key (each key may appear once)");
        break;
      }
      case Json::parse_event_t::value:
        enterValue();
        break;
    }
    return true;
  });
}

Scene parseScene(const std::string& text, const std::string& file, const std::string& baseDir,
                 bool bakeFields) {
  Json root;
  try {
    root = parseJsonRejectingDuplicates(text, file);
  } catch (const Json::parse_error& e) {
    // nlohmann quotes the token it stopped at ("; last read: '...'"), which can be a long run of
    // the file's bytes (a path mistyped to a file that is not a scene): dropped — the line and
    // column say where.
    std::string what = e.what();
    const std::size_t at = what.find("; last read: '");
    if (at != std::string::npos) what.erase(at);
    throw InputError(file + ": malformed JSON: " + quoteToken(what, 400));
  } catch (const Json::out_of_range& e) {
    // A literal like 1e999: JSON has no infinities, and we accept only finite numbers.
    throw InputError(file + ": " + e.what() + ": numbers must be finite");
  }
  Scene scene;
  scene.path = file;
  Fields f(root, file, "");
  scene.name = f.string("name", std::filesystem::path(file).stem().string());
  scene.dt = f.positive("dt", 1.0 / 60);
  scene.substeps = static_cast<int>(f.integer("substeps", 1, 1, 100000));
  scene.frames = static_cast<int>(f.integer("frames", 100, 0, 100000000));
  scene.gravity = f.vec3("gravity", glm::dvec3(0, -9.8, 0));
  if (const Json* d = f.get("damping")) {
    Fields df(*d, file, "damping");
    scene.linearDamping = df.unitInterval("linear", 1.0);
    scene.angularDamping = df.unitInterval("angular", 1.0);
    df.finish();
  }
  if (const Json* s = f.get("solver")) parseSolver(*s, file, scene);

  const Json& materials = f.require("materials");
  {
    Fields mf(materials, file, "materials");
    for (auto it = materials.begin(); it != materials.end(); ++it) {
      Fields m(it.value(), file, "materials." + it.key());
      Material mat;
      mat.name = it.key();
      mat.restitution = m.unitInterval("restitution", 0.5);
      mat.friction = m.nonNegative("friction", 0.2);
      m.finish();
      mf.get(it.key());
      scene.materials.push_back(mat);
    }
    if (scene.materials.empty()) mf.fail("define at least one material");
  }
  if (const Json* cs = f.get("colliders")) {
    if (!cs->is_array()) f.failAt("colliders", "must be an array");
    for (std::size_t i = 0; i < cs->size(); ++i) {
      std::shared_ptr<const ColliderMesh> mesh;
      scene.colliders.push_back(
          parseCollider((*cs)[i], file, baseDir, "colliders[" + std::to_string(i) + "]", mesh, bakeFields));
      scene.colliderMeshes.push_back(std::move(mesh));
    }
  }
  const Json& shapes = f.require("shapes");
  {
    Fields sf(shapes, file, "shapes");
    for (auto it = shapes.begin(); it != shapes.end(); ++it) {
      sf.get(it.key());
      scene.shapes.push_back(parseShape(it.key(), it.value(), file, baseDir, "shapes." + it.key()));
    }
    if (scene.shapes.empty()) sf.fail("define at least one shape");
  }
  if (const Json* bs = f.get("bodies")) {
    if (!bs->is_array()) f.failAt("bodies", "must be an array");
    if (static_cast<std::int64_t>(bs->size()) > kMaxBodies)
      f.failAt("bodies", "too many bodies (limit " + std::to_string(kMaxBodies) + ")");
    for (std::size_t i = 0; i < bs->size(); ++i) {
      Fields bf((*bs)[i], file, "bodies[" + std::to_string(i) + "]");
      Body b = parseBodyCommon(bf, scene);
      b.position = bf.requireVec3("position");
      bf.finish();
      scene.bodies.push_back(b);
    }
  }
  if (const Json* gs = f.get("generators")) {
    if (!gs->is_array()) f.failAt("generators", "must be an array");
    for (std::size_t i = 0; i < gs->size(); ++i)
      parseGenerator((*gs)[i], file, "generators[" + std::to_string(i) + "]", scene);
  }
  if (const Json* c = f.get("checks")) parseChecks(*c, file, scene);
  if (const Json* w = f.get("watchdog")) {
    Fields wf(*w, file, "watchdog");
    scene.watchdog.worldBound = wf.positive("world_bound", 1e5);
    scene.watchdog.maxSpeed = wf.positive("max_speed", 1e4);
    scene.watchdog.policy = wf.choice("policy", "stop", {"stop", "clamp"}) == "clamp"
                                ? Watchdog::Policy::Clamp
                                : Watchdog::Policy::Stop;
    wf.finish();
  }
  f.finish();

  std::int64_t particles = 0;
  for (const Body& b : scene.bodies) particles += static_cast<std::int64_t>(scene.shapes[b.shape].rest.size());
  if (particles > kMaxParticles)
    throw InputError(file + ": bodies: " + std::to_string(particles) +
                     " particles in all exceed the limit of " + std::to_string(kMaxParticles));
  if (scene.solver.rotation == RotationFit::Seeds)
    for (const Shape& s : scene.shapes)
      if (!s.aqqInvertible)
        throw InputError(file + ": solver.rotation: 'seeds' needs A_qq invertible, but the "
                         "particles of shape '" + s.name + "' do not span 3D");
  // Body–body contact needs every shape's φ_ref (physics.md §6): bake the shapes bodies use.
  if (bakeFields && scene.solver.bodyContacts && scene.bodies.size() > 1) bakeShapes(scene, file + ": ");
  return scene;
}

Scene loadScene(const std::string& path) {
  const std::string text = readRegularFile(path, kMaxSceneBytes, "scene file");
  std::string baseDir = std::filesystem::path(path).parent_path().string();
  if (baseDir.empty()) baseDir = ".";
  return parseScene(text, path, baseDir);
}

}  // namespace smash
