#include "core/shape.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <tuple>

#include "core/error.h"
#include "core/random.h"
#include "math/rotation.h"

namespace smash {

std::vector<glm::dvec3> sampleSurface(const Mesh& mesh, int count, std::uint64_t seed, std::vector<int>* faces) {
  std::vector<double> cumulative;
  cumulative.reserve(mesh.triangles.size());
  double total = 0;
  for (const auto& t : mesh.triangles) {
    const auto& p = mesh.vertices;
    total += 0.5 * glm::length(glm::cross(p[t[1]] - p[t[0]], p[t[2]] - p[t[0]]));
    cumulative.push_back(total);
  }
  Random rng(seed);
  std::vector<glm::dvec3> points;
  points.reserve(static_cast<std::size_t>(count));
  for (int s = 0; s < count; ++s) {
    double pick = rng.uniform() * total;
    auto it = std::upper_bound(cumulative.begin(), cumulative.end(), pick);
    std::size_t f = std::min<std::size_t>(static_cast<std::size_t>(it - cumulative.begin()),
                                          cumulative.size() - 1);
    const auto& t = mesh.triangles[f];
    if (faces) faces->push_back(static_cast<int>(f));
    // Uniform point in a triangle (Osada et al. 2002): sqrt warps the first coordinate.
    double r1 = std::sqrt(rng.uniform()), r2 = rng.uniform();
    points.push_back((1 - r1) * mesh.vertices[t[0]] + r1 * (1 - r2) * mesh.vertices[t[1]] +
                     r1 * r2 * mesh.vertices[t[2]]);
  }
  return points;
}

void vertexPushCones(const Mesh& mesh, std::vector<glm::dvec4>& cones, std::vector<glm::dmat3>& rays) {
  // The unit outward normals of the faces at each position (exact coordinates: a welded vertex);
  // a mesh wound inwards (negative volume: accepted, its field's sign comes from the solid) has
  // them turned round.
  const double outward = signedVolume(mesh) < 0 ? -1.0 : 1.0;
  std::map<std::tuple<double, double, double>, std::vector<glm::dvec3>> at;
  auto key = [&](std::size_t v) {
    const glm::dvec3& p = mesh.vertices[v];
    return std::make_tuple(p.x, p.y, p.z);
  };
  for (const auto& t : mesh.triangles) {
    const glm::dvec3 n = glm::cross(mesh.vertices[t[1]] - mesh.vertices[t[0]], mesh.vertices[t[2]] - mesh.vertices[t[0]]);
    const double length = glm::length(n);
    if (!(length > 0)) continue;  // a degenerate triangle has no normal
    for (int k = 0; k < 3; ++k) at[key(static_cast<std::size_t>(t[k]))].push_back(outward * n / length);
  }
  const double cosMin = std::cos(kPushConeMinDegrees * 3.14159265358979323846 / 180.0);
  cones.assign(mesh.vertices.size(), kNoPushCone);
  rays.assign(mesh.vertices.size(), glm::dmat3(0.0));
  for (std::size_t v = 0; v < mesh.vertices.size(); ++v) {
    const auto found = at.find(key(v));
    if (found == at.end()) continue;
    // The distinct normals (a face split into triangles counts once), their mean and spread.
    std::vector<glm::dvec3> distinct;
    for (const glm::dvec3& n : found->second) {
      bool seen = false;
      for (const glm::dvec3& d : distinct) seen = seen || glm::dot(n, d) > 1 - 1e-9;
      if (!seen) distinct.push_back(n);
    }
    glm::dvec3 mean(0.0);
    for (const glm::dvec3& d : distinct) mean += d;
    const double length = glm::length(mean);
    if (!(length > 1e-6 * static_cast<double>(distinct.size()))) continue;  // normals that cancel: no axis
    mean /= length;
    double cosAlpha = 1;
    for (const glm::dvec3& d : distinct) cosAlpha = std::min(cosAlpha, glm::dot(mean, d));
    if (cosAlpha > cosMin) continue;  // smooth enough: a face
    cones[v] = glm::dvec4(-mean, cosAlpha);
    if (distinct.size() <= 3)
      for (std::size_t k = 0; k < distinct.size(); ++k) rays[v][static_cast<int>(k)] = -distinct[k];
  }
}

void surfacePushCones(const Mesh& mesh, const std::vector<int>& faces, std::vector<glm::dvec4>& cones,
                      std::vector<glm::dmat3>& rays) {
  cones.assign(faces.size(), kNoPushCone);
  rays.assign(faces.size(), glm::dmat3(0.0));
  const std::size_t nt = mesh.triangles.size();
  if (nt == 0) return;
  // Each triangle's unit outward normal and area; triangles that share an edge (welded by
  // position) and lie in one plane (normals within kFlatFaceDegrees) form a flat face.
  const double outward = signedVolume(mesh) < 0 ? -1.0 : 1.0;
  std::vector<glm::dvec3> normal(nt, glm::dvec3(0.0));
  std::vector<double> area(nt, 0.0);
  for (std::size_t t = 0; t < nt; ++t) {
    const auto& tri = mesh.triangles[t];
    const glm::dvec3 n = glm::cross(mesh.vertices[tri[1]] - mesh.vertices[tri[0]], mesh.vertices[tri[2]] - mesh.vertices[tri[0]]);
    const double length = glm::length(n);
    area[t] = 0.5 * length;
    if (length > 0) normal[t] = outward * n / length;
  }
  std::vector<std::size_t> parent(nt);
  for (std::size_t t = 0; t < nt; ++t) parent[t] = t;
  const std::function<std::size_t(std::size_t)> root = [&](std::size_t t) {
    while (parent[t] != t) t = parent[t] = parent[parent[t]];
    return t;
  };
  using Point = std::tuple<double, double, double>;
  auto key = [&](int v) {
    const glm::dvec3& q = mesh.vertices[static_cast<std::size_t>(v)];
    return Point(q.x, q.y, q.z);
  };
  std::map<std::pair<Point, Point>, std::size_t> edges;
  const double cosFlat = std::cos(kFlatFaceDegrees * 3.14159265358979323846 / 180.0);
  for (std::size_t t = 0; t < nt; ++t) {
    if (!(area[t] > 0)) continue;
    for (int k = 0; k < 3; ++k) {
      Point a = key(mesh.triangles[t][k]), b = key(mesh.triangles[t][(k + 1) % 3]);
      if (b < a) std::swap(a, b);
      const auto found = edges.emplace(std::make_pair(a, b), t);
      if (!found.second && glm::dot(normal[t], normal[found.first->second]) > cosFlat)
        parent[root(t)] = root(found.first->second);
    }
  }
  std::vector<double> faceArea(nt, 0.0);
  double total = 0;
  for (std::size_t t = 0; t < nt; ++t) {
    faceArea[root(t)] += area[t];
    total += area[t];
  }
  bool any = false;
  for (std::size_t i = 0; i < faces.size(); ++i) {
    const std::size_t t = static_cast<std::size_t>(faces[i]);
    if (!(faceArea[root(t)] >= kFlatFaceShare * total) || !(area[t] > 0)) continue;
    cones[i] = glm::dvec4(-normal[t], kFaceCone);
    any = true;
  }
  if (!any) {  // no flat face: as if none had a cone (the same shape data as before)
    cones.clear();
    rays.clear();
  }
}

namespace {

// Fills every mass property from shape.rest (not yet centred) and shape.mass.
void computeMassProperties(Shape& shape) {
  double M = 0;
  glm::dvec3 centre(0.0);
  for (std::size_t i = 0; i < shape.rest.size(); ++i) {
    M += shape.mass[i];
    centre += shape.mass[i] * shape.rest[i];
  }
  centre /= M;
  shape.totalMass = M;
  shape.meshOffset = centre;
  shape.Aqq = glm::dmat3(0.0);
  shape.inertia = glm::dmat3(0.0);
  shape.boundingRadius = 0;
  for (std::size_t i = 0; i < shape.rest.size(); ++i) {
    glm::dvec3 r = shape.rest[i] - centre;
    shape.rest[i] = r;
    double m = shape.mass[i];
    shape.Aqq += m * outer(r, r);
    shape.inertia += m * (glm::dot(r, r) * glm::dmat3(1.0) - outer(r, r));
    shape.boundingRadius = std::max(shape.boundingRadius, glm::length(r));
  }
  for (auto& v : shape.mesh.vertices) v -= centre;
  // A_qq is invertible when the particles span 3D; judge by its smallest eigenvalue relative
  // to the largest rather than by the determinant, which scales with size³.
  glm::dmat3 pinv = symmetricPseudoInverse(shape.Aqq, 1e-10);
  double trace = shape.Aqq[0][0] + shape.Aqq[1][1] + shape.Aqq[2][2];
  double det = glm::determinant(shape.Aqq);
  shape.aqqInvertible = trace > 0 && det > 1e-10 * trace * trace * trace;
  shape.AqqInverse = shape.aqqInvertible ? pinv : glm::dmat3(0.0);
  shape.inertiaInverse = symmetricPseudoInverse(shape.inertia, 1e-10);
}

}  // namespace

Shape buildShape(const std::string& name, const Mesh& mesh, const ShapeOptions& options,
                 const std::string& context) {
  for (int k = 0; k < 3; ++k)
    if (!std::isfinite(options.scale[k]) || !(options.scale[k] > 0))
      throw InputError(context + ".scale: must be finite and > 0");
  if (!std::isfinite(options.particleMass) || !(options.particleMass > 0))
    throw InputError(context + ".particle_mass: must be finite and > 0");
  if (options.sampling == Sampling::Surface && options.sampleCount < 1)
    throw InputError(context + ".sampling.count: must be >= 1");
  Shape shape;
  shape.name = name;
  shape.mesh = mesh;
  for (auto& v : shape.mesh.vertices) v *= options.scale;
  validateMesh(shape.mesh, context + " (after scaling)");
  shape.thickness = 2.0 * std::fabs(signedVolume(shape.mesh)) / surfaceArea(shape.mesh);
  std::vector<int> faces;  // the triangle of each surface sample
  shape.rest = options.sampling == Sampling::Vertices
                   ? shape.mesh.vertices
                   : sampleSurface(shape.mesh, options.sampleCount, options.seed, &faces);
  shape.mass.assign(shape.rest.size(), options.particleMass);
  if (options.sampling == Sampling::Vertices) vertexPushCones(shape.mesh, shape.pushCone, shape.pushRays);
  else surfacePushCones(shape.mesh, faces, shape.pushCone, shape.pushRays);
  computeMassProperties(shape);
  return shape;
}

Shape shapeFromParticles(const std::string& name, const std::vector<glm::dvec3>& points,
                         const std::vector<double>& masses) {
  if (points.empty()) throw InputError("shape '" + name + "': needs at least one particle");
  if (points.size() != masses.size())
    throw InputError("shape '" + name + "': one mass per particle is required");
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!std::isfinite(points[i].x) || !std::isfinite(points[i].y) || !std::isfinite(points[i].z))
      throw InputError("shape '" + name + "': particle " + std::to_string(i) + " is not finite");
    if (!std::isfinite(masses[i]) || !(masses[i] > 0))
      throw InputError("shape '" + name + "': particle " + std::to_string(i) +
                       " needs a finite mass > 0");
  }
  Shape shape;
  shape.name = name;
  shape.rest = points;
  shape.mass = masses;
  computeMassProperties(shape);
  return shape;
}

ParticleClusters clusterParticles(const std::vector<glm::dvec3>& rest, int maxSize) {
  ParticleClusters c;
  c.order.resize(rest.size());
  for (std::size_t i = 0; i < rest.size(); ++i) c.order[i] = static_cast<int>(i);
  const std::function<void(int, int)> split = [&](int begin, int end) {
    glm::dvec3 lo(std::numeric_limits<double>::infinity()), hi(-std::numeric_limits<double>::infinity());
    for (int i = begin; i < end; ++i) {
      lo = glm::min(lo, rest[static_cast<std::size_t>(c.order[static_cast<std::size_t>(i)])]);
      hi = glm::max(hi, rest[static_cast<std::size_t>(c.order[static_cast<std::size_t>(i)])]);
    }
    if (end - begin <= maxSize) {
      const glm::dvec3 centre = 0.5 * (lo + hi);
      double radius = 0;
      for (int i = begin; i < end; ++i)
        radius = std::max(radius, glm::length(rest[static_cast<std::size_t>(c.order[static_cast<std::size_t>(i)])] - centre));
      c.spheres.emplace_back(centre, radius * (1 + 1e-6) + 1e-9);
      c.ends.push_back(end);
      return;
    }
    const glm::dvec3 extent = hi - lo;
    const int axis = extent.x >= extent.y && extent.x >= extent.z ? 0 : (extent.y >= extent.z ? 1 : 2);
    const int mid = begin + (end - begin) / 2;
    std::nth_element(c.order.begin() + begin, c.order.begin() + mid, c.order.begin() + end, [&](int a, int b) {
      const double x = rest[static_cast<std::size_t>(a)][axis], y = rest[static_cast<std::size_t>(b)][axis];
      return x < y || (x == y && a < b);
    });
    split(begin, mid);
    split(mid, end);
  };
  if (!rest.empty()) split(0, static_cast<int>(rest.size()));
  return c;
}

}  // namespace smash
