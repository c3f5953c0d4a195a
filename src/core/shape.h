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
  /// φ_ref in the body frame (physics.md §6), baked from `mesh` when bodies can touch; shared by copies.
  std::shared_ptr<const BakedGrid> sdf;
  int sdfResolution = 32;  ///< cells along the longest side when baked (scene option)
};

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

/// Points distributed uniformly by area over the surface (deterministic for a seed).
std::vector<glm::dvec3> sampleSurface(const Mesh& mesh, int count, std::uint64_t seed);

}  // namespace smash
