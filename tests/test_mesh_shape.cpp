// OBJ loading, shapes and mass properties (issue item 4), and every bad-mesh case.
#include <catch2/catch.hpp>
#include <sstream>

#include "core/mesh.h"
#include "core/shape.h"
#include "math/rotation.h"
#include "test_util.h"

using namespace smash;
using glm::dmat3;
using glm::dvec3;

namespace {
const char* kCube =
    "# unit cube\n"
    "v -0.5 -0.5 -0.5\nv 0.5 -0.5 -0.5\nv 0.5 0.5 -0.5\nv -0.5 0.5 -0.5\n"
    "v -0.5 -0.5 0.5\nv 0.5 -0.5 0.5\nv 0.5 0.5 0.5\nv -0.5 0.5 0.5\n"
    "vn 0 0 1\n"
    "f 1 4 3 2\nf 5 6 7 8\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8\n";

Mesh parse(const std::string& text) {
  std::istringstream in(text);
  return parseObj(in, "test.obj");
}
}  // namespace

TEST_CASE("obj: the shipped meshes load", "[mesh]") {
  Mesh bunny = loadObj(test::sourcePath("scenes/meshes/bunny.obj"));
  REQUIRE(bunny.vertices.size() == 3483);
  REQUIRE(bunny.triangles.size() == 6962);
  REQUIRE(signedVolume(bunny) > 0);  // closed, outward facing
  Mesh spot = loadObj(test::sourcePath("scenes/meshes/spot.obj"));
  REQUIRE(spot.vertices.size() == 2930);
  REQUIRE(spot.triangles.size() == 5856);
}

TEST_CASE("obj: polygons, index forms and negative indices", "[mesh]") {
  Mesh cube = parse(kCube);
  REQUIRE(cube.vertices.size() == 8);
  REQUIRE(cube.triangles.size() == 12);  // quads fanned
  REQUIRE(signedVolume(cube) == Approx(1.0));
  REQUIRE(surfaceArea(cube) == Approx(6.0));
  Mesh t = parse("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1/1/1 2//2 3/3\nf -4 -2 -3\nf 1 4 2\nf 2 4 3\n");
  REQUIRE(t.triangles.size() == 4);
  REQUIRE(t.triangles[1] == std::array<int, 3>{0, 2, 1});
}

TEST_CASE("obj: bad meshes give clear errors", "[mesh][bad-input]") {
  test::requireInputError([] { parse(""); }, {"test.obj", "no vertices"});
  test::requireInputError([] { parse("v 0 0 0\nv 1 0 0\nv 0 1 0\n"); }, {"test.obj", "no faces"});
  test::requireInputError([] { parse("v 0 0 0\nv nan 0 0\n"); }, {"test.obj:2", "'nan' is not finite"});
  {
    test::FpTrapsOff overflowOnPurpose;  // strtod overflows on 1e999
    test::requireInputError([] { parse("v 0 0 0\nv 1e999 0 0\n"); }, {"test.obj:2", "not finite"});
  }
  test::requireInputError([] { parse("v 0 0 0\nv inf 0 0\n"); }, {"test.obj:2", "not finite"});
  test::requireInputError([] { parse("v 1 2\n"); }, {"test.obj:1", "3 coordinates"});
  test::requireInputError([] { parse("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n"); },
                          {"test.obj:4", "face index 9 is out of range", "3 vertices"});
  test::requireInputError([] { parse("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 -7\n"); },
                          {"test.obj:4", "face index -7 is out of range"});
  test::requireInputError([] { parse("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n"); },
                          {"test.obj:4", "index 0 is invalid"});
  test::requireInputError([] { parse("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 x\n"); },
                          {"test.obj:4", "'x' is not an integer"});
  test::requireInputError([] { parse("v 0 0 0\nv 1 0 0\nf 1 2\n"); }, {"test.obj:3", "at least 3"});
  test::requireInputError([] { parse("garbage here\n"); }, {"test.obj:1", "unknown OBJ statement 'garbage'"});
  // Degenerate geometry.
  test::requireInputError([] { parse("v 1 1 1\nv 1 1 1\nv 1 1 1\nf 1 2 3\n"); }, {"all vertices coincide"});
  test::requireInputError([] { parse("v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\nf 3 2 1\n"); },
                          {"every face has zero area"});
  test::requireInputError([] { parse("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 2 4 3\n"); },
                          {"zero volume"});
  test::requireInputError([] { loadObj("does/not/exist.obj"); }, {"does/not/exist.obj", "cannot open"});
}

TEST_CASE("shape: mass properties", "[shape]") {
  Mesh cube = parse(kCube);
  ShapeOptions options;
  options.scale = dvec3(2.0);
  options.particleMass = 0.5;
  Shape s = buildShape("cube", cube, options, "shapes.cube");
  REQUIRE(s.rest.size() == 8);
  REQUIRE(s.totalMass == Approx(4.0));
  dvec3 sum(0.0);
  for (std::size_t i = 0; i < s.rest.size(); ++i) sum += s.mass[i] * s.rest[i];
  REQUIRE(glm::length(sum) < 1e-15);
  // Eight corners at (±1, ±1, ±1), m = 0.5: I = Σ m (r·r 1 − r rᵀ) = 8 m (3 − 1) 1 = 8·1.
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      REQUIRE(s.inertia[a][b] == Approx(a == b ? 8.0 : 0.0).margin(1e-12));
      REQUIRE(s.Aqq[a][b] == Approx(a == b ? 4.0 : 0.0).margin(1e-12));
    }
  REQUIRE(s.aqqInvertible);
  REQUIRE(s.boundingRadius == Approx(std::sqrt(3.0)));
}

TEST_CASE("shape: bunny mass properties are consistent", "[shape]") {
  Mesh bunny = loadObj(test::sourcePath("scenes/meshes/bunny.obj"));
  Shape s = buildShape("bunny", bunny, ShapeOptions{}, "shapes.bunny");
  REQUIRE(s.totalMass == Approx(3483.0));
  dmat3 I(0.0);
  for (std::size_t i = 0; i < s.rest.size(); ++i)
    I += s.mass[i] * (glm::dot(s.rest[i], s.rest[i]) * dmat3(1.0) - outer(s.rest[i], s.rest[i]));
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) REQUIRE(s.inertia[a][b] == Approx(I[a][b]).margin(1e-9));
  dmat3 check = s.inertiaInverse * s.inertia;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) REQUIRE(check[a][b] == Approx(a == b ? 1.0 : 0.0).margin(1e-10));
}

TEST_CASE("shape: surface sampling is uniform, on the surface and seeded", "[shape]") {
  Mesh cube = parse(kCube);
  ShapeOptions options;
  options.sampling = Sampling::Surface;
  options.sampleCount = 6000;
  options.seed = 42;
  Shape a = buildShape("cube", cube, options, "shapes.cube");
  Shape b = buildShape("cube", cube, options, "shapes.cube");
  REQUIRE(a.rest.size() == 6000);
  REQUIRE(a.rest == b.rest);
  options.seed = 43;
  REQUIRE(buildShape("cube", cube, options, "shapes.cube").rest != a.rest);
  // On the surface: some coordinate at ±0.5 (relative to the centre, which is ~0).
  int perFace[6] = {0, 0, 0, 0, 0, 0};
  for (const auto& p0 : sampleSurface(cube, 6000, 42)) {
    double best = 1;
    int face = -1;
    for (int k = 0; k < 3; ++k)
      for (int s = 0; s < 2; ++s) {
        double d = std::fabs(p0[k] - (s ? 0.5 : -0.5));
        if (d < best) best = d, face = 2 * k + s;
      }
    REQUIRE(best < 1e-12);
    ++perFace[face];
  }
  for (int f = 0; f < 6; ++f) REQUIRE(std::abs(perFace[f] - 1000) < 150);  // ~4.7 sigma
}

TEST_CASE("shape: from particles, including degenerate sets", "[shape]") {
  Shape one = shapeFromParticles("dot", {dvec3(3, 4, 5)}, {2.0});
  REQUIRE(one.rest[0] == dvec3(0.0));
  REQUIRE(!one.aqqInvertible);
  REQUIRE(one.inertiaInverse == dmat3(0.0));
  Shape line = shapeFromParticles("line", {dvec3(0, 0, -1), dvec3(0, 0, 1)}, {1.0, 1.0});
  REQUIRE(!line.aqqInvertible);
  REQUIRE(line.inertiaInverse[2][2] == 0.0);
  REQUIRE(line.inertiaInverse[0][0] == Approx(0.5));
  test::requireInputError([] { shapeFromParticles("none", {}, {}); }, {"none", "at least one particle"});
  test::requireInputError([] { shapeFromParticles("m", {dvec3(0.0)}, {0.0}); }, {"particle 0", "mass > 0"});
  ShapeOptions bad;
  bad.scale = dvec3(1, 0, 1);
  test::requireInputError([&] { buildShape("c", parse(kCube), bad, "x.json: shapes.c"); },
                          {"shapes.c.scale", "> 0"});
}

TEST_CASE("shape: edge and corner vertices carry their faces' cone, welded, either winding", "[shape][edges]") {
  // physics.md §6 "Normals at edges and corners": a cube's corner has its three faces' inward
  // normals, a subdivided cube's edge vertices two, its face vertices and surface samples none.
  auto check = [](const Mesh& mesh, const char* what) {
    INFO(what);
    std::vector<glm::dvec4> cones;
    std::vector<glm::dmat3> rays;
    vertexPushCones(mesh, cones, rays);
    REQUIRE(cones.size() == mesh.vertices.size());
    REQUIRE(rays.size() == mesh.vertices.size());
    for (std::size_t v = 0; v < mesh.vertices.size(); ++v) {
      const dvec3 p = mesh.vertices[v];
      int onFaces = 0;  // the faces of the unit cube the vertex lies on
      dvec3 inward(0.0);
      for (int k = 0; k < 3; ++k)
        if (std::abs(std::abs(p[k]) - 0.5) < 1e-12) {
          ++onFaces;
          inward[k] = p[k] > 0 ? -1.0 : 1.0;
        }
      INFO("vertex " << v << " at (" << p.x << ", " << p.y << ", " << p.z << "), on " << onFaces << " faces");
      if (onFaces < 2) {
        CHECK(cones[v].w < -1);  // a face vertex: no cone
        CHECK(rays[v] == dmat3(0.0));
        continue;
      }
      // The axis: the inward normals' mean; cos α: the angle from it to each (45° and 54.7°).
      const dvec3 axis = glm::normalize(inward);
      CHECK(glm::length(dvec3(cones[v]) - axis) < 1e-12);
      CHECK(cones[v].w == Approx(onFaces == 2 ? std::sqrt(0.5) : 1 / std::sqrt(3.0)));
      int found = 0;
      for (int k = 0; k < 3; ++k) {
        const dvec3 r = rays[v][k];
        if (r == dvec3(0.0)) continue;
        ++found;
        // Each ray is one of the inward face normals.
        CHECK(glm::length(r) == Approx(1.0));
        CHECK(glm::dot(r, inward) == Approx(1.0));
      }
      CHECK(found == onFaces);
    }
  };
  const Mesh cube = parse(kCube);
  check(cube, "the 8-vertex cube");
  // The same cube with every face's vertices its own (split for flat shading): welded by position.
  Mesh split;
  for (const auto& t : cube.triangles) {
    std::array<int, 3> own{};
    for (int k = 0; k < 3; ++k) {
      own[static_cast<std::size_t>(k)] = static_cast<int>(split.vertices.size());
      split.vertices.push_back(cube.vertices[static_cast<std::size_t>(t[static_cast<std::size_t>(k)])]);
    }
    split.triangles.push_back(own);
  }
  check(split, "the cube split into triangles");
  // Wound inwards: the same cones.
  Mesh inwards = cube;
  for (auto& t : inwards.triangles) std::swap(t[1], t[2]);
  REQUIRE(signedVolume(inwards) < 0);
  check(inwards, "the cube wound inwards");
  // Vertex sampling takes them.
  ShapeOptions options;
  Shape vertices = buildShape("cube", cube, options, "shapes.cube");
  REQUIRE(vertices.pushCone.size() == vertices.rest.size());
  for (const glm::dvec4& c : vertices.pushCone) CHECK(c.w == Approx(1 / std::sqrt(3.0)));
}

TEST_CASE("shape: surface samples on a flat face carry its face cone, on a curved mesh none", "[shape][mesh]") {
  // shape.h surfacePushCones: a sample on a flat face of the mesh (2% of its area or more) gets
  // the face's inward normal with w = kFaceCone, either winding; the bunny (no flat face) none at
  // all, so its shape data is what it was.
  for (bool inwards : {false, true}) {
    Mesh cube = parse(kCube);
    if (inwards)
      for (auto& t : cube.triangles) std::swap(t[1], t[2]);
    ShapeOptions options;
    options.sampling = Sampling::Surface;
    options.sampleCount = 300;
    const Shape surface = buildShape("cube", cube, options, "shapes.cube");
    REQUIRE(surface.pushCone.size() == surface.rest.size());
    dvec3 lo(1e30), hi(-1e30);
    for (const dvec3& v : surface.mesh.vertices) {
      lo = glm::min(lo, v);
      hi = glm::max(hi, v);
    }
    for (std::size_t i = 0; i < surface.rest.size(); ++i) {
      // The face the sample lies on: where it touches the box's bounds; its inward normal.
      dvec3 inward(0.0);
      for (int k = 0; k < 3; ++k) {
        if (std::abs(surface.rest[i][k] - lo[k]) < 1e-9) inward[k] = 1;
        if (std::abs(surface.rest[i][k] - hi[k]) < 1e-9) inward[k] = -1;
      }
      INFO("sample " << i << (inwards ? ", wound inwards" : ""));
      REQUIRE(glm::length(inward) == Approx(1.0));  // on one face (an edge has measure zero)
      CHECK(glm::length(dvec3(surface.pushCone[i]) - inward) < 1e-12);
      CHECK(surface.pushCone[i].w == kFaceCone);
      CHECK(surface.pushCone[i].w > 1.0);  // no vertex cone has w > 1 (math/contact.h)
    }
  }
  ShapeOptions options;
  options.sampling = Sampling::Surface;
  options.sampleCount = 400;
  const Shape bunny = buildShape("bunny", loadObj(test::sourcePath("scenes/meshes/bunny.obj")), options, "shapes.bunny");
  CHECK(bunny.pushCone.empty());
  CHECK(bunny.pushRays.empty());
}
