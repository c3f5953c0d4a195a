// Shapes: the rest data shared by every body instance of one particle cloud (physics.md §1).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <glm/glm.hpp>

#include "core/mesh.h"
#include "core/sdf_bake.h"

namespace smash {

enum class Sampling { Vertices, Surface };

struct ShapeOptions {
  glm::dvec3 scale{1.0};
  Sampling sampling = Sampling::Vertices;
  int sampleCount = 0;        ///< Surface sampling: number of particles
  std::uint64_t seed = 1;     ///< Surface sampling: random seed
  double particleMass = 1.0;  ///< mass of every particle (physics.md §8: unit mass per vertex)
};

/// Rest data of one shape. Everything is expressed in the body frame, whose origin is the
/// mass-weighted centre of the particles, so Σ m_i r_i = 0.
struct Shape {
  std::string name;
  Mesh mesh;                      ///< scaled and recentred on the centre of mass (for output)
  std::vector<glm::dvec3> rest;   ///< r_i
  std::vector<double> mass;       ///< m_i
  double totalMass = 0;           ///< M = Σ m_i
  glm::dmat3 Aqq{0.0};            ///< Σ m_i r_i r_iᵀ
  glm::dmat3 AqqInverse{0.0};     ///< valid only when aqqInvertible
  bool aqqInvertible = false;     ///< false for flat, collinear and single-particle shapes
  glm::dmat3 inertia{0.0};        ///< I_ref = Σ m_i (r_iᵀ r_i 1 − r_i r_iᵀ)
  glm::dmat3 inertiaInverse{0.0}; ///< pseudo-inverse: degenerate axes get infinite inertia
  double boundingRadius = 0;      ///< max ‖r_i‖
  double thickness = 0;           ///< 2 volume / area of the mesh (0 without one): swept contacts
  glm::dvec3 meshOffset{0.0};     ///< the (scaled) mesh point that became the body origin
  /// Per particle, the directions a contact with another body may push it along (physics.md §6,
  /// "Normals at edges and corners"): xyz the unit inward axis −n̄, n̄ the normalised mean of the
  /// distinct outward normals of the mesh's faces at the particle's vertex, and w = cos α, α the
  /// largest angle between n̄ and those normals. Only vertex particles on an edge or a corner of
  /// the mesh (α ≥ kPushConeMinDegrees) have one, and surface samples on a flat face of the mesh
  /// a face cone (surfacePushCones); every other particle (smooth vertices, other surface
  /// samples, shapes from particles) has kNoPushCone. Empty is the same as all kNoPushCone.
  std::vector<glm::dvec4> pushCone;
  /// Per particle with a pushCone and at most three distinct face normals (an edge: two, a
  /// corner: three), the faces' unit inward normals as columns, the unused ones 0; all 0 for
  /// every other particle (the cone is then the circular one). Same size as pushCone.
  std::vector<glm::dmat3> pushRays;
  /// φ_ref in the body frame (physics.md §6), baked from `mesh` when bodies can touch; shared by copies.
  std::shared_ptr<const BakedGrid> sdf;
  int sdfResolution = 32;  ///< cells along the longest side when baked (scene option)
};

/// The least cone half-angle that makes a vertex an edge or a corner (a box's edge has 45°, its
/// corner 54.7°; 77 of the bunny's 3,483 vertices and 9 of the cow's 2,930 reach it).
constexpr double kPushConeMinDegrees = 40.0;
/// A particle whose contacts take the other body's field gradient as it is.
inline const glm::dvec4 kNoPushCone{0.0, 0.0, 0.0, -2.0};

/// Shape::pushCone and pushRays of the mesh's vertices (as Sampling::Vertices takes them, in
/// order): each vertex's faces are those of every vertex at the same position (a mesh split along
/// its edges, as for flat shading, is welded here).
void vertexPushCones(const Mesh& mesh, std::vector<glm::dvec4>& cones, std::vector<glm::dmat3>& rays);

/// A shape's particles in clusters of at most `maxSize`, spatially close (the narrow phase tests
/// a cluster's bounding sphere before its particles): the particles' indices in cluster order,
/// each cluster's bounding sphere in the rest frame (xyz centre, w radius, rounded up) and its end
/// in `order`. Median splits along the longest side of the bounding box, so the clusters of n
/// particles are always the same: 1 for n ≤ maxSize, else those of ⌊n/2⌋ and ⌈n/2⌉.
struct ParticleClusters {
  std::vector<int> order;
  std::vector<glm::dvec4> spheres;
  std::vector<int> ends;
};
ParticleClusters clusterParticles(const std::vector<glm::dvec3>& rest, int maxSize);

/// Builds a shape from a validated mesh: scale, pick the particles, compute mass properties.
/// Throws InputError (prefixed with `context`) on bad options.
Shape buildShape(const std::string& name, const Mesh& mesh, const ShapeOptions& options,
                 const std::string& context);

/// Builds a shape straight from particle positions and masses (for code and tests); any number
/// of particles ≥ 1, positions in any frame (they are recentred). Masses must be > 0.
Shape shapeFromParticles(const std::string& name, const std::vector<glm::dvec3>& points,
                         const std::vector<double>& masses);

/// Points distributed uniformly by area over the surface (deterministic for a seed); `faces`, when
/// given, receives the triangle each point lies on.
std::vector<glm::dvec3> sampleSurface(const Mesh& mesh, int count, std::uint64_t seed,
                                      std::vector<int>* faces = nullptr);
/// Triangles within this angle of each other across an edge lie in one flat face.
constexpr double kFlatFaceDegrees = 1.0;
/// A flat face at least this share of the mesh's area gives its surface samples a face cone.
constexpr double kFlatFaceShare = 0.02;
/// A flat face's particle: pushCone.w = kFaceCone (> 1, which no vertex cone has), xyz the face's
/// inward normal; its contacts take the other body's gradient where it came through that body's
/// surface along this normal (math/contact.h faceContactNormal).
constexpr double kFaceCone = 2.0;
/// Shape::pushCone and pushRays of surface samples (faces[i]: the triangle sample i lies on;
/// physics.md §6, "Normals on flat faces"): a sample on a flat face of the mesh (kFlatFaceShare of
/// its area or more: a box's six faces, none of the bunny's) gets (face's inward normal,
/// kFaceCone); every other sample kNoPushCone. A mesh without a flat face leaves both
/// empty.
void surfacePushCones(const Mesh& mesh, const std::vector<int>& faces, std::vector<glm::dvec4>& cones,
                      std::vector<glm::dmat3>& rays);

}  // namespace smash
