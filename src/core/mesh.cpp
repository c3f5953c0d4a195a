#include "core/mesh.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "core/error.h"
#include "core/files.h"

namespace smash {
namespace {

[[noreturn]] void fail(const std::string& name, std::size_t line, const std::string& what) {
  throw InputError(name + ":" + std::to_string(line) + ": " + what);
}

double parseCoordinate(const std::string& token, const std::string& name, std::size_t line) {
  const char* begin = token.c_str();
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(begin, &end);
  if (end == begin || *end != '\0') fail(name, line, "'" + quoteToken(token, 24) + "' is not a number");
  if (!std::isfinite(value))  // overflow gives ±HUGE_VAL; underflow to 0 is harmless
    fail(name, line, "vertex coordinate '" + quoteToken(token, 24) + "' is not finite");
  return value;
}

// "7", "7/1", "7//3", "7/1/3", negative = relative to the vertices read so far.
int parseFaceIndex(const std::string& token, long vertexCount, const std::string& name,
                   std::size_t line) {
  std::string first = token.substr(0, token.find('/'));
  const char* begin = first.c_str();
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(begin, &end, 10);
  if (end == begin || *end != '\0' || errno == ERANGE)
    fail(name, line, "face index '" + quoteToken(token, 24) + "' is not an integer");
  if (value == 0) fail(name, line, "face index 0 is invalid (OBJ indices start at 1)");
  long index = value > 0 ? value - 1 : vertexCount + value;
  if (index < 0 || index >= vertexCount)
    fail(name, line,
         "face index " + std::to_string(value) + " is out of range (" +
             std::to_string(vertexCount) + " vertices defined so far)");
  return static_cast<int>(index);
}

}  // namespace

Mesh parseObj(std::istream& in, const std::string& name) {
  Mesh mesh;
  // Lines are read into a bounded buffer: a file without line breaks (a device, a sparse file)
  // costs at most kMaxObjLine bytes, not its size.
  std::vector<char> buffer(kMaxObjLine + 1);
  std::size_t lineNo = 0;
  for (;;) {
    in.getline(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    if (in.bad()) throw InputError(name + ": read error");
    if (in.fail()) {
      if (in.eof()) break;  // nothing more to read
      fail(name, lineNo + 1, "line longer than " + std::to_string(kMaxObjLine) + " characters (is this an OBJ file?)");
    }
    ++lineNo;
    const std::string raw(buffer.data());
    std::string text = raw.substr(0, raw.find('#'));
    std::istringstream tokens(text);
    std::string keyword;
    if (!(tokens >> keyword)) continue;
    std::vector<std::string> args;
    for (std::string t; tokens >> t;) args.push_back(t);
    if (keyword == "v") {
      if (args.size() < 3 || args.size() > 4)
        fail(name, lineNo, "a vertex needs 3 coordinates (x y z), got " +
                               std::to_string(args.size()));
      glm::dvec3 p;
      for (int k = 0; k < 3; ++k) p[k] = parseCoordinate(args[k], name, lineNo);
      if (args.size() == 4) parseCoordinate(args[3], name, lineNo);  // weight: checked, unused
      mesh.vertices.push_back(p);
    } else if (keyword == "f") {
      if (args.size() < 3)
        fail(name, lineNo, "a face needs at least 3 vertices, got " + std::to_string(args.size()));
      long count = static_cast<long>(mesh.vertices.size());
      std::vector<int> poly;
      for (const auto& a : args) poly.push_back(parseFaceIndex(a, count, name, lineNo));
      for (std::size_t k = 1; k + 1 < poly.size(); ++k)  // fan triangulation
        mesh.triangles.push_back({poly[0], poly[k], poly[k + 1]});
    } else if (keyword == "vt" || keyword == "vn" || keyword == "vp" || keyword == "o" ||
               keyword == "g" || keyword == "s" || keyword == "usemtl" || keyword == "mtllib" ||
               keyword == "l" || keyword == "p") {
      continue;  // not geometry a shape needs
    } else {
      // Quoted only when it looks like a statement name: the message must not echo a line of a
      // file that is not an OBJ (a mistyped path to /etc/passwd).
      const bool wordLike = keyword.size() <= 16 && std::all_of(keyword.begin(), keyword.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
      });
      fail(name, lineNo,
           wordLike ? "unknown OBJ statement '" + keyword + "'" : std::string("not an OBJ statement (is this an OBJ file?)"));
    }
    if (in.eof()) break;
  }
  validateMesh(mesh, name);
  return mesh;
}

Mesh loadObj(const std::string& path) {
  requireRegularFile(path, kMaxObjBytes, "mesh file");
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open mesh file");
  return parseObj(in, path);
}

double signedVolume(const Mesh& mesh) {
  double v = 0;
  for (const auto& t : mesh.triangles)
    v += glm::dot(mesh.vertices[t[0]], glm::cross(mesh.vertices[t[1]], mesh.vertices[t[2]]));
  return v / 6.0;
}

double surfaceArea(const Mesh& mesh) {
  double a = 0;
  for (const auto& t : mesh.triangles) {
    const auto& p = mesh.vertices;
    a += 0.5 * glm::length(glm::cross(p[t[1]] - p[t[0]], p[t[2]] - p[t[0]]));
  }
  return a;
}

std::size_t openEdges(const Mesh& mesh) {
  // Weld: one id per distinct position (exporters often split vertices per face).
  std::map<std::array<double, 3>, int> ids;
  std::vector<int> weld(mesh.vertices.size());
  for (std::size_t v = 0; v < mesh.vertices.size(); ++v) {
    const glm::dvec3& p = mesh.vertices[v];
    weld[v] = ids.emplace(std::array<double, 3>{p.x, p.y, p.z}, static_cast<int>(ids.size())).first->second;
  }
  // Directed edges: each must be cancelled by one in the opposite direction.
  std::map<std::pair<int, int>, int> balance;
  for (const auto& t : mesh.triangles)
    for (int k = 0; k < 3; ++k) {
      const int a = weld[static_cast<std::size_t>(t[k])], b = weld[static_cast<std::size_t>(t[(k + 1) % 3])];
      if (a == b) continue;  // a degenerate edge bounds nothing
      if (a < b) ++balance[{a, b}]; else --balance[{b, a}];
    }
  std::size_t open = 0;
  for (const auto& [edge, count] : balance) open += static_cast<std::size_t>(std::abs(count));
  return open;
}

void requireSolid(const Mesh& mesh, int resolution, int maxResolution, const std::string& name) {
  const std::size_t open = openEdges(mesh);
  if (open)
    throw InputError(name + ": the mesh is not a closed surface (" + std::to_string(open) +
                     " edges bound one face only, or faces disagree in orientation; vertices are welded "
                     "only at exactly equal positions): body contacts read the "
                     "body's signed distance field, which needs a mesh that encloses a volume — close the "
                     "mesh, or set solver.body_contacts to false");
  glm::dvec3 lo = mesh.vertices[0], hi = lo;
  for (const auto& v : mesh.vertices) {
    lo = glm::min(lo, v);
    hi = glm::max(hi, v);
  }
  const double longest = std::max({hi.x - lo.x, hi.y - lo.y, hi.z - lo.z});
  const double thickness = 2.0 * std::fabs(signedVolume(mesh)) / surfaceArea(mesh);
  const double cell = longest / resolution;
  if (!(thickness >= 2.0 * cell)) {
    // The smallest resolution that passes this very test (not a ceil that rounding may tip).
    double needed = std::max(1.0, std::ceil(2.0 * longest / thickness) - 2.0);
    while (!(thickness >= 2.0 * (longest / needed)) && needed < 1e9) needed += 1.0;
    std::ostringstream m;
    m << name << ": the body is about " << thickness << " thick (2 volume / area) for " << longest
      << " along its longest side: its signed distance field (sdf_resolution " << resolution << ", cells of "
      << cell << ") cannot tell inside from outside; it needs sdf_resolution >= " << needed;
    if (needed > maxResolution) m << " (at most " << maxResolution << "): make the body thicker";
    throw InputError(m.str());
  }
}

void validateMesh(const Mesh& mesh, const std::string& name) {
  if (mesh.vertices.empty()) throw InputError(name + ": mesh has no vertices");
  if (mesh.triangles.empty()) throw InputError(name + ": mesh has no faces");
  const long n = static_cast<long>(mesh.vertices.size());
  for (const auto& v : mesh.vertices)
    if (!std::isfinite(v.x) || !std::isfinite(v.y) || !std::isfinite(v.z))
      throw InputError(name + ": mesh has a non-finite vertex coordinate");
  for (std::size_t f = 0; f < mesh.triangles.size(); ++f)
    for (int k : mesh.triangles[f])
      if (k < 0 || k >= n)
        throw InputError(name + ": triangle " + std::to_string(f) + " has vertex index " +
                         std::to_string(k) + " out of range (" + std::to_string(n) + " vertices)");
  glm::dvec3 lo = mesh.vertices[0], hi = lo;
  for (const auto& v : mesh.vertices) {
    lo = glm::min(lo, v);
    hi = glm::max(hi, v);
  }
  double diag = glm::length(hi - lo);
  if (!std::isfinite(diag) || !std::isfinite(diag * diag * diag))
    throw InputError(name + ": the mesh's extent overflows a double (is the scale too large?)");
  if (!(diag > 0)) throw InputError(name + ": degenerate mesh: all vertices coincide");
  if (!(surfaceArea(mesh) > 1e-12 * diag * diag))
    throw InputError(name + ": degenerate mesh: every face has zero area");
  if (!(std::fabs(signedVolume(mesh)) > 1e-9 * diag * diag * diag))
    throw InputError(name + ": mesh encloses zero volume (flat, or not a closed surface)");
}

}  // namespace smash
