// Triangle meshes: a strict Wavefront OBJ reader and the checks a mesh must pass before it
// becomes a shape.
//
// Why not tinyobjloader: it turns unparsable numbers such as "nan" into 0 and treats face indices
// out of range as warnings, i.e. it half-loads bad files. This reader accepts the subset of OBJ that
// describes geometry (v, f with v, v/t, v//n, v/t/n and negative indices, polygons fanned into
// triangles), skips texture/normal/grouping statements, and rejects everything else with
// "file:line: what is wrong".
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include <glm/glm.hpp>

namespace smash {

struct Mesh {
  std::vector<glm::dvec3> vertices;
  std::vector<std::array<int, 3>> triangles;  ///< 0-based vertex indices
};

/// Reads an OBJ file; throws InputError naming the file (and line) on any problem, including
/// the checks of validateMesh.
/// Longest OBJ line accepted, and largest OBJ file (bytes).
constexpr std::size_t kMaxObjLine = 65536;
constexpr std::uint64_t kMaxObjBytes = std::uint64_t(1) << 30;

Mesh loadObj(const std::string& path);

/// Parses OBJ text; `name` is used in error messages.
Mesh parseObj(std::istream& in, const std::string& name);

/// Rejects meshes no shape can be built from: no vertices or faces, non-finite coordinates,
/// indices out of range, every face of zero area, or zero enclosed volume (flat or collinear).
void validateMesh(const Mesh& mesh, const std::string& name);

/// Signed volume by the divergence theorem (positive for outward-facing triangles).
double signedVolume(const Mesh& mesh);

/// Edges of the surface that no other triangle shares with the opposite orientation, after
/// welding vertices at equal positions: 0 for a closed, consistently oriented surface.
std::size_t openEdges(const Mesh& mesh);

/// Refuses a mesh whose baked signed distance field cannot describe it as a solid (body–body
/// contacts read the field): open surfaces (a flat plate, a sheet), and bodies thinner than two
/// cells of a field of `resolution` cells along its longest side, estimated as 2 V / A (exact for
/// a plate). The message names `name`, what is wrong and the sdf_resolution that would do.
void requireSolid(const Mesh& mesh, int resolution, int maxResolution, const std::string& name);
double surfaceArea(const Mesh& mesh);

}  // namespace smash
