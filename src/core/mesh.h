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
Mesh loadObj(const std::string& path);

/// Parses OBJ text; `name` is used in error messages.
Mesh parseObj(std::istream& in, const std::string& name);

/// Rejects meshes no shape can be built from: no vertices or faces, non-finite coordinates,
/// indices out of range, every face of zero area, or zero enclosed volume (flat or collinear).
void validateMesh(const Mesh& mesh, const std::string& name);

/// Signed volume by the divergence theorem (positive for outward-facing triangles).
double signedVolume(const Mesh& mesh);
double surfaceArea(const Mesh& mesh);

}  // namespace smash
