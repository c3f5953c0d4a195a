// Scene files (issue item 6): the lab scene, generators, and one test per bad-input case.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>

#include "math/rotation.h"
#include "scene/scene.h"
#include "test_util.h"

using namespace smash;
using Json = nlohmann::json;

namespace {

Json minimalScene() {
  return Json::parse(R"({
    "dt": 0.01,
    "materials": {"default": {"restitution": 0.5, "friction": 0.2}},
    "colliders": [{"type": "plane", "point": [0, 0, 0], "normal": [0, 1, 0]}],
    "shapes": {"bunny": {"mesh": "meshes/bunny.obj", "scale": 0.4}},
    "bodies": [{"shape": "bunny", "position": [0, 1, 0]}]
  })");
}

Scene parse(const Json& j) { return parseScene(j.dump(), "test.json", test::sourcePath("scenes")); }

void requireRejected(const Json& j, std::initializer_list<const char*> parts) {
  test::requireInputError([&] { parse(j); }, parts);
}

}  // namespace

TEST_CASE("scene: the lab scene reproduces physics.md section 8", "[scene]") {
  Scene s = loadScene(test::sourcePath("scenes/lab_bunny.json"));
  REQUIRE(s.dt == 0.015);
  REQUIRE(s.gravity == glm::dvec3(0, -9.8, 0));
  REQUIRE(s.linearDamping == 0.999);
  REQUIRE(s.angularDamping == 0.98);
  REQUIRE(s.materials.at(0).restitution == 0.5);
  REQUIRE(s.materials.at(0).friction == 0.2);
  REQUIRE(s.colliders.size() == 2);
  REQUIRE(s.colliders[0].point.y == 0.01);
  REQUIRE(s.colliders[1].normal == glm::dvec3(-1, 0, 0));
  REQUIRE(s.bodies.size() == 1);
  REQUIRE(s.bodies[0].position == glm::dvec3(0, 0.6, 0));
  REQUIRE(s.bodies[0].velocity == glm::dvec3(5, 2, 0));
  REQUIRE(s.bodies[0].angularVelocity == glm::dvec3(0, 1, 0));
  REQUIRE(glm::angle(s.bodies[0].rotation) == Approx(glm::radians(80.0)));
  REQUIRE(s.shapes[0].rest.size() == 3483);
  REQUIRE(s.shapes[0].totalMass == 3483.0);  // unit mass per vertex
  // "Starts clear of the ground."
  for (const auto& r : s.shapes[0].rest) {
    glm::dvec3 x = s.bodies[0].position + rotationMatrix(s.bodies[0].rotation) * r;
    REQUIRE(x.y > 0.01);
  }
}

TEST_CASE("scene: defaults, options and generators", "[scene]") {
  Json j = minimalScene();
  j["solver"] = {{"method", "impulse"}, {"rotation", "seeds"}, {"collide_after", false},
                 {"contact", {{"model", "penalty_buffered"}, {"stiffness", 1e4}, {"buffer", 0.01}}}};
  j["generators"] = Json::parse(R"([{"type": "grid", "shape": "bunny", "origin": [0, 2, 0],
      "count": [3, 2, 4], "spacing": [1, 1, 1], "jitter": {"position": 0.1, "rotation_degrees": 30, "seed": 5},
      "velocity": [0, -1, 0]}])");
  Scene s = parse(j);
  REQUIRE(s.solver.method == Method::Impulse);
  REQUIRE(s.solver.rotation == RotationFit::Seeds);
  REQUIRE(!s.solver.collideAfter);
  REQUIRE(s.solver.contact == ContactModel::PenaltyBuffered);
  REQUIRE(s.bodies.size() == 1 + 24);
  REQUIRE(s.bodies[5].velocity.y == -1.0);
  REQUIRE(s.substeps == 1);
  REQUIRE(s.stepDt() == 0.01);
  Scene again = parse(j);  // generators are seeded: same scene twice
  for (std::size_t b = 0; b < s.bodies.size(); ++b) {
    REQUIRE(s.bodies[b].position == again.bodies[b].position);
    REQUIRE(s.bodies[b].rotation == again.bodies[b].rotation);
  }
  // Jitter stays within its bounds.
  REQUIRE(std::fabs(s.bodies[1].position.x - 0.0) <= 0.1);
}

TEST_CASE("scene: bad input names the field", "[scene][bad-input]") {
  SECTION("malformed JSON") {
    test::requireInputError([] { parseScene("{\"dt\": 0.01,", "broken.json", "."); },
                            {"broken.json", "malformed JSON"});
  }
  SECTION("missing scene file") {
    test::requireInputError([] { loadScene("no/such/scene.json"); }, {"no/such/scene.json", "cannot open"});
  }
  SECTION("non-finite numbers") {
    // JSON has no NaN literal; an overflowing literal parses to infinity.
    test::FpTrapsOff overflowOnPurpose;
    Json j = minimalScene();
    std::string text = j.dump();
    text.replace(text.find("\"dt\":0.01"), 9, "\"dt\":1e999");
    test::requireInputError([&] { parseScene(text, "test.json", test::sourcePath("scenes")); },
                            {"test.json", "1e999", "finite"});
    std::string t2 = minimalScene().dump();
    t2.replace(t2.find("\"position\":[0,1,0]"), 18, "\"position\":[0,-1e400,0]");
    test::requireInputError([&] { parseScene(t2, "test.json", test::sourcePath("scenes")); },
                            {"test.json", "-1e400", "finite"});
  }
  SECTION("dt <= 0") {
    Json j = minimalScene();
    j["dt"] = 0;
    requireRejected(j, {"test.json: dt", "> 0"});
    j["dt"] = -0.1;
    requireRejected(j, {"dt", "> 0"});
  }
  SECTION("substeps") {
    Json j = minimalScene();
    j["substeps"] = 0;
    requireRejected(j, {"substeps", "[1, 100000]"});
    j["substeps"] = 1.5;
    requireRejected(j, {"substeps", "integer"});
  }
  SECTION("restitution outside [0, 1]") {
    Json j = minimalScene();
    j["materials"]["default"]["restitution"] = 1.5;
    requireRejected(j, {"materials.default.restitution", "[0, 1]"});
    j["materials"]["default"]["restitution"] = -0.1;
    requireRejected(j, {"materials.default.restitution", "[0, 1]"});
  }
  SECTION("friction < 0") {
    Json j = minimalScene();
    j["materials"]["default"]["friction"] = -0.2;
    requireRejected(j, {"materials.default.friction", ">= 0"});
  }
  SECTION("zero or negative scale and mass") {
    Json j = minimalScene();
    j["shapes"]["bunny"]["scale"] = 0;
    requireRejected(j, {"shapes.bunny.scale", "> 0"});
    j["shapes"]["bunny"]["scale"] = Json::array({1, -1, 1});
    requireRejected(j, {"shapes.bunny.scale", "> 0"});
    j = minimalScene();
    j["shapes"]["bunny"]["particle_mass"] = 0;
    requireRejected(j, {"shapes.bunny.particle_mass", "> 0"});
    j["shapes"]["bunny"]["particle_mass"] = -2;
    requireRejected(j, {"shapes.bunny.particle_mass", "> 0"});
  }
  SECTION("unknown keys, at the top and nested") {
    Json j = minimalScene();
    j["gravty"] = {0, -9.8, 0};
    requireRejected(j, {"gravty", "unknown key"});
    j = minimalScene();
    j["bodies"][0]["velocty"] = {1, 0, 0};
    requireRejected(j, {"bodies[0].velocty", "unknown key"});
    j = minimalScene();
    j["materials"]["default"]["bounce"] = 1;
    requireRejected(j, {"materials.default.bounce", "unknown key"});
  }
  SECTION("missing files and references") {
    Json j = minimalScene();
    j["shapes"]["bunny"]["mesh"] = "meshes/nope.obj";
    requireRejected(j, {"shapes.bunny.mesh", "file not found", "nope.obj"});
    j = minimalScene();
    j["bodies"][0]["shape"] = "teapot";
    requireRejected(j, {"bodies[0].shape", "no shape named 'teapot'"});
    j = minimalScene();
    j["bodies"][0]["material"] = "rubber";
    requireRejected(j, {"bodies[0].material", "no material named 'rubber'"});
    j = minimalScene();
    j["bodies"][0].erase("position");
    requireRejected(j, {"bodies[0].position", "required"});
  }
  SECTION("wrong types and choices") {
    Json j = minimalScene();
    j["gravity"] = {0, -9.8};
    requireRejected(j, {"gravity", "3 numbers"});
    j = minimalScene();
    j["colliders"][0]["type"] = "torus";
    requireRejected(j, {"colliders[0].type", "'torus' is not one of"});
    j = minimalScene();
    j["colliders"][0]["normal"] = {0, 0, 0};
    requireRejected(j, {"colliders[0].normal", "non-zero"});
    j = minimalScene();
    j["solver"] = {{"method", "verlet"}};
    requireRejected(j, {"solver.method", "'verlet'"});
    j = minimalScene();
    j["solver"] = {{"contact", {{"model", "penalty_linear"}}}};
    requireRejected(j, {"solver.contact.stiffness", "> 0"});
    j = minimalScene();
    j["dt"] = "fast";
    requireRejected(j, {"dt", "must be a number"});
  }
  SECTION("watchdog") {
    Json j = minimalScene();
    j["watchdog"] = {{"policy", "ignore"}};
    requireRejected(j, {"watchdog.policy", "'ignore' is not one of"});
    j["watchdog"] = {{"max_speed", 0}};
    requireRejected(j, {"watchdog.max_speed", "> 0"});
    j["watchdog"] = {{"world_bound", -5}};
    requireRejected(j, {"watchdog.world_bound", "> 0"});
  }
  SECTION("generators") {
    Json j = minimalScene();
    j["generators"] = Json::parse(R"([{"type": "grid", "shape": "bunny", "origin": [0,0,0],
        "count": [100000, 1000, 1], "spacing": [1,1,1]}])");
    requireRejected(j, {"generators[0].count", "limit"});
    j["generators"][0]["count"] = {2, 0, 2};
    requireRejected(j, {"generators[0].count[1]", "must be in [1,"});
  }
  SECTION("a bad mesh inside a scene names the mesh file") {
    std::string bad = test::writeTemp("flat.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
    Json j = minimalScene();
    j["shapes"]["bunny"]["mesh"] = std::string(std::filesystem::absolute(bad));
    requireRejected(j, {"flat.obj", "zero volume"});
  }
}

TEST_CASE("scene: a failed load leaves nothing half-loaded", "[scene][bad-input]") {
  Scene scene = parse(minimalScene());
  Json bad = minimalScene();
  bad["bodies"].push_back({{"shape", "bunny"}, {"position", {0, 2, 0}}, {"velocity", {0, "x", 0}}});
  REQUIRE_THROWS_AS(scene = parse(bad), InputError);
  REQUIRE(scene.bodies.size() == 1);  // the previous scene is untouched
  REQUIRE(scene.shapes.size() == 1);
}

TEST_CASE("scene: every single-field mutation of the lab scene loads or fails cleanly", "[scene][bad-input]") {
  // Each field of the lab scene replaced by values of every JSON type and edge magnitude, or
  // deleted: the loader must either accept the result or throw an InputError — never another
  // exception (a type error from the JSON library, an out-of-range access, a crash).
  std::ifstream in(test::sourcePath("scenes/lab_bunny.json"));
  const Json base = Json::parse(in);
  const std::vector<Json> values = {nullptr, true, 0, -1, 1.5, 1e308, -1e-300, "x", "",
                                    Json::array(), Json::array({1, 2}), Json::array({1, 2, 3}),
                                    Json::object(), Json::object({{"a", 1}}),
                                    Json::array({nullptr, nullptr, nullptr}),
                                    std::numeric_limits<std::int64_t>::max(),
                                    std::numeric_limits<std::uint64_t>::max()};
  std::vector<Json::json_pointer> paths;
  std::function<void(const Json&, const Json::json_pointer&)> walk = [&](const Json& j, const Json::json_pointer& p) {
    if (!p.empty()) paths.push_back(p);
    if (j.is_object())
      for (auto it = j.begin(); it != j.end(); ++it) walk(it.value(), p / it.key());
    if (j.is_array())
      for (std::size_t i = 0; i < j.size(); ++i) walk(j[i], p / i);
  };
  walk(base, Json::json_pointer());
  REQUIRE(paths.size() > 40);
  int accepted = 0, rejected = 0;
  // Values such as 1e308 overflow on their way to a verdict; traps would turn that into SIGFPE.
  test::FpTrapsOff extremeValuesOnPurpose;
  for (const auto& path : paths) {
    for (std::size_t v = 0; v <= values.size(); ++v) {
      Json mutated = base;
      if (v == values.size()) {
        const Json::json_pointer parent = path.parent_pointer();
        if (mutated[parent].is_object()) mutated[parent].erase(path.back());
        else continue;
      } else {
        mutated[path] = values[v];
      }
      INFO(path.to_string() << " = " << (v < values.size() ? values[v].dump() : "(deleted)"));
      try {
        parseScene(mutated.dump(), "lab.json", test::sourcePath("scenes"));
        ++accepted;
      } catch (const InputError& e) {
        REQUIRE(std::string(e.what()).rfind("lab.json: ", 0) == 0);
        ++rejected;
      }
    }
  }
  REQUIRE(rejected > 500);
  REQUIRE(accepted > 10);
}

namespace {

/// A closed box of extents (x, y, z) as an OBJ, each face with its own four vertices (unwelded,
/// as some exporters write them), triangles facing out.
std::string boxObj(double x, double y, double z) {
  std::ostringstream o;
  const int faces[6][4][3] = {{{0, 0, 0}, {0, 1, 0}, {1, 1, 0}, {1, 0, 0}}, {{0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}},
                              {{0, 0, 0}, {1, 0, 0}, {1, 0, 1}, {0, 0, 1}}, {{0, 1, 0}, {0, 1, 1}, {1, 1, 1}, {1, 1, 0}},
                              {{0, 0, 0}, {0, 0, 1}, {0, 1, 1}, {0, 1, 0}}, {{1, 0, 0}, {1, 1, 0}, {1, 1, 1}, {1, 0, 1}}};
  for (const auto& f : faces)
    for (const auto& v : f) o << "v " << v[0] * x << " " << v[1] * y << " " << v[2] * z << "\n";
  for (int f = 0; f < 6; ++f)
    o << "f " << 4 * f + 1 << " " << 4 * f + 2 << " " << 4 * f + 3 << "\nf " << 4 * f + 1 << " " << 4 * f + 3 << " "
      << 4 * f + 4 << "\n";
  return o.str();
}

/// Two bodies of one shape made from `obj` (body contacts on unless `contacts` is false).
Json twoBodies(const std::string& objPath, int resolution, bool contacts = true) {
  Json j = minimalScene();
  j["shapes"] = Json::object();
  j["shapes"]["plate"] = {{"mesh", objPath}, {"sdf_resolution", resolution}};
  j["bodies"] = Json::parse(R"([{"shape": "plate", "position": [0, 1, 0]}, {"shape": "plate", "position": [0, 2, 0]}])");
  j["solver"] = {{"body_contacts", contacts}};
  return j;
}

}  // namespace

TEST_CASE("scene: a body that touches others must be a solid its field can resolve", "[scene][bad-input]") {
  // An open flat plate (away from the origin, so its signed volume about the origin is not 0 and
  // the mesh check passes): its field is meaningless — two such plates used to end overlapping.
  const std::string open = std::filesystem::absolute(
      test::writeTemp("open_plate.obj", "v 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\nf 1 2 3\nf 1 3 4\n"));
  requireRejected(twoBodies(open, 64), {"shapes.plate", "not a closed surface", "body_contacts"});
  // Without body contacts its particles are all that matters: accepted.
  CHECK(parse(twoBodies(open, 64, false)).shapes.size() == 1);
  // The resolution a refusal names: the smallest that passes (the next one down is refused).
  auto namedResolution = [&](const std::string& path) {
    try {
      parse(twoBodies(path, 64));
    } catch (const InputError& e) {
      const std::string what = e.what();
      const std::size_t at = what.find("sdf_resolution >= ");
      REQUIRE(at != std::string::npos);
      return std::stoi(what.substr(at + 18));
    }
    FAIL("not refused");
    return 0;
  };
  // Closed but 1 mm thick and 1 m wide: a 64-cell field has cells of 1.6 cm; 2 V / A is a hair
  // under 1 mm (the rims count as area), so about 2,004 cells would do — more than 256.
  const std::string thin = std::filesystem::absolute(test::writeTemp("thin_plate.obj", boxObj(1, 0.001, 1)));
  requireRejected(twoBodies(thin, 64), {"shapes.plate", "thick", "at most 256", "make the body thicker"});
  const int thinNeeds = namedResolution(thin);
  CHECK(thinNeeds >= 2000);
  CHECK(thinNeeds <= 2006);
  // 10 cm wide and 1 mm thick: resolvable at the resolution the message names (about 204), and
  // refused one below it.
  const std::string small = std::filesystem::absolute(test::writeTemp("small_plate.obj", boxObj(0.1, 0.001, 0.1)));
  const int smallNeeds = namedResolution(small);
  CHECK(smallNeeds >= 200);
  CHECK(smallNeeds <= 206);
  const Scene ok = parse(twoBodies(small, smallNeeds));
  REQUIRE(ok.shapes[0].sdf);
  const std::string named = "sdf_resolution >= " + std::to_string(smallNeeds);
  requireRejected(twoBodies(small, smallNeeds - 1), {"shapes.plate", named.c_str()});
  // A closed box written with unwelded vertices (every face its own) is closed: accepted.
  const std::string box = std::filesystem::absolute(test::writeTemp("split_box.obj", boxObj(0.2, 0.1, 0.3)));
  CHECK(parse(twoBodies(box, 32)).shapes[0].sdf);
  // Faces that disagree in orientation do not enclose a volume either.
  std::string flipped = boxObj(0.2, 0.1, 0.3);
  flipped.replace(flipped.find("f 1 2 3"), 7, "f 1 3 2");
  const std::string bad = std::filesystem::absolute(test::writeTemp("flipped_box.obj", flipped));
  requireRejected(twoBodies(bad, 32), {"shapes.plate", "not a closed surface"});
}

TEST_CASE("scene advice: a shape of touching bodies sparser than it is thick is named", "[scene]") {
  // Two cubes of their 8 vertices stacked merge into one (nothing samples the faces between the
  // corners); with 500 surface samples they stack. The advice names the sparse shape only, and
  // only when bodies touch each other.
  auto stack = [](const Json& sampling, bool bodyContacts) {
    Json j = Json::parse(R"({"dt": 0.01, "frames": 1, "materials": {"default": {"restitution": 0.2, "friction": 0.5}},
      "colliders": [{"type": "plane", "point": [0, 0, 0], "normal": [0, 1, 0]}],
      "bodies": [{"shape": "sparse", "position": [0, 0.05, 0]}, {"shape": "dense", "position": [0, 0.15, 0]}]})");
    j["solver"]["body_contacts"] = bodyContacts;
    j["shapes"]["sparse"] = {{"mesh", "meshes/box.obj"}, {"scale", 0.1}};
    if (!sampling.is_null()) j["shapes"]["sparse"]["sampling"] = sampling;
    j["shapes"]["dense"] = {{"mesh", "meshes/box.obj"}, {"scale", 0.1},
                            {"sampling", {{"mode", "surface"}, {"count", 500}, {"seed", 1}}}};
    return parse(j);
  };
  const std::vector<std::string> sparse = stack(Json(), true).advice();
  REQUIRE(sparse.size() == 1);
  CHECK(sparse[0].find("shape \"sparse\": 8 particles") != std::string::npos);
  CHECK(sparse[0].find("\"mode\": \"surface\"") != std::string::npos);
  CHECK(stack(Json{{"mode", "surface"}, {"count", 500}, {"seed", 2}}, true).advice().empty());
  CHECK(stack(Json(), false).advice().empty());
}

TEST_CASE("scene advice: a collider thinner than a body's particles are apart is named", "[scene]") {
  // A hostile test (2026-12-07): a 5 mm sphere collider passed between a 0.1 m box's 200 surface
  // samples (one every 17 mm) and ended 39 mm inside it, and 41 mm inside one of 2,000. The
  // advice names the collider and the shape when the particles are more than half the collider's
  // thickness apart, with a count that puts one every third of it; a plane, a thick box or a
  // dense enough shape gets none.
  auto scene = [](const Json& collider, int count) {
    Json j = Json::parse(R"({"dt": 0.01, "frames": 1, "materials": {"default": {"restitution": 0.2, "friction": 0.5}},
      "bodies": [{"shape": "box", "position": [0, 0.5, 0]}]})");
    j["colliders"] = Json::array({Json{{"type", "plane"}, {"point", {0, 0, 0}}, {"normal", {0, 1, 0}}}, collider});
    j["shapes"]["box"] = {{"mesh", "meshes/box.obj"}, {"scale", 0.1},
                          {"sampling", {{"mode", "surface"}, {"count", count}, {"seed", 1}}}};
    return parse(j);
  };
  const Json ball = {{"type", "sphere"}, {"center", {0.5, 0.2, 0}}, {"radius", 0.005}};
  const std::vector<std::string> notes = scene(ball, 200).advice();
  REQUIRE(notes.size() == 1);
  INFO(notes[0]);
  CHECK(notes[0].find("colliders[1] is 10 mm thick") != std::string::npos);
  CHECK(notes[0].find("shape \"box\"") != std::string::npos);
  CHECK(notes[0].find("\"count\": 540") != std::string::npos);  // 0.06 m^2 at one per (3.33 mm)^2, rounded up
  CHECK(scene(ball, 2000).advice().size() == 1);  // one every 5.5 mm: the sphere went 41 mm in
  CHECK(scene(ball, 8000).advice().empty());
  CHECK(scene(Json{{"type", "box"}, {"center", {0.5, 0.2, 0}}, {"half_extents", {0.1, 0.1, 0.1}}}, 200).advice().empty());
  const Json slab = {{"type", "box"}, {"center", {0.5, 0.2, 0}}, {"half_extents", {1, 0.002, 1}}};
  CHECK(scene(slab, 200).advice().size() == 1);
  // Many thin colliders: one note for the shape, naming the thinnest.
  Scene many = scene(ball, 200);
  for (int k = 0; k < 5; ++k) many.colliders.push_back(many.colliders[1]);
  many.colliders[4].radius = 0.002;
  const std::vector<std::string> one = many.advice();
  REQUIRE(one.size() == 1);
  CHECK(one[0].find("colliders[4] (and 5 more) is 4 mm thick") != std::string::npos);
}
