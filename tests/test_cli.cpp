// The smash command, end to end: exit codes and messages, and the files a run writes, read back
// (the glTF by tinygltf, a real glTF reader).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <tiny_gltf.h>

#include "test_util.h"
#include "world/world.h"

using smash::test::runCommand;
namespace fs = std::filesystem;

namespace {
std::string smashCmd(const std::string& args) { return std::string(SMASH_EXE) + " " + args; }
std::string scenePath(const std::string& name) { return smash::test::sourcePath("scenes/" + name); }
std::vector<std::string> lines(const std::string& file) {
  std::ifstream in(file);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}
nlohmann::json readJson(const std::string& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}
std::string freshFolder(const std::string& name) {
  const std::string dir = "smash_test_out_" + name;
  fs::remove_all(dir);
  return dir;
}
/// Float values of an accessor (tightly packed, as smash writes them).
std::vector<float> accessorFloats(const tinygltf::Model& m, int index) {
  const tinygltf::Accessor& a = m.accessors[static_cast<std::size_t>(index)];
  const tinygltf::BufferView& v = m.bufferViews[static_cast<std::size_t>(a.bufferView)];
  const auto* p = reinterpret_cast<const float*>(m.buffers[static_cast<std::size_t>(v.buffer)].data.data() +
                                                 v.byteOffset + a.byteOffset);
  const std::size_t n = a.count * static_cast<std::size_t>(tinygltf::GetNumComponentsInType(static_cast<std::uint32_t>(a.type)));
  return std::vector<float>(p, p + n);
}
}  // namespace

TEST_CASE("cli: a run writes glTF, CSV, PLY and a summary that read back", "[cli][outputs]") {
  const std::string out = freshFolder("stack");
  auto r = runCommand(smashCmd("run " + scenePath("box_stack.json") + " --backend omp --frames 30 --out " + out +
                               " --particles 10 --progress never"));
  INFO(r.output);
  REQUIRE(r.exitCode == 0);
  // summary.json: the run as a whole.
  const nlohmann::json summary = readJson(out + "/summary.json");
  CHECK(summary["scene"]["bodies"] == 5);
  CHECK(summary["scene"]["particles"] == 2000);
  CHECK(summary["backend"] == "omp");
  CHECK(summary["frames"] == 30);
  CHECK(summary["steps"] == 60);
  CHECK(summary["exported_frames"] == 31);
  CHECK(summary["timing"]["ms_per_step"].get<double>() > 0);
  CHECK(summary["verdict"]["pass"].is_boolean());
  CHECK(summary["deepest_body_penetration"]["relative"].get<double>() < 0.02);
  CHECK(summary["final_kinetic_energy_J"].get<double>() >= 0);
  // poses.csv: a header and 31 frames × 5 bodies.
  const std::vector<std::string> csv = lines(out + "/poses.csv");
  REQUIRE(csv.size() == 1 + 31 * 5);
  CHECK(csv[0] == "frame,time,body,x,y,z,qw,qx,qy,qz");
  CHECK(csv.back().rfind("30,0.5,4,", 0) == 0);
  // animation.glb through tinygltf: 5 body nodes with the box mesh, the ground, and one
  // animation of 10 channels (translation + rotation per body) over 31 key frames.
  tinygltf::Model model;
  tinygltf::TinyGLTF loader;
  std::string err, warn;
  REQUIRE(loader.LoadBinaryFromFile(&model, &err, &warn, out + "/animation.glb"));
  INFO(err << warn);
  REQUIRE(model.nodes.size() == 6);
  for (int b = 0; b < 5; ++b) CHECK(model.nodes[static_cast<std::size_t>(b)].name == "body " + std::to_string(b));
  CHECK(model.meshes[static_cast<std::size_t>(model.nodes[0].mesh)].name == "box");
  REQUIRE(model.animations.size() == 1);
  const tinygltf::Animation& anim = model.animations[0];
  REQUIRE(anim.channels.size() == 10);
  const std::vector<float> times = accessorFloats(model, anim.samplers[0].input);
  REQUIRE(times.size() == 31);
  CHECK(times.front() == 0.0f);
  CHECK(times.back() == Approx(0.5f));
  // Body 4's last translation key equals the last CSV row.
  const std::vector<float> t4 = accessorFloats(model, anim.samplers[static_cast<std::size_t>(anim.channels[8].sampler)].output);
  REQUIRE(anim.channels[8].target_path == "translation");
  REQUIRE(t4.size() == 31 * 3);
  std::stringstream row(csv.back());
  std::vector<double> fields;
  for (std::string f; std::getline(row, f, ',');) fields.push_back(std::stod(f));
  CHECK(t4[90] == Approx(fields[3]).margin(1e-6));
  CHECK(t4[91] == Approx(fields[4]).margin(1e-6));
  // PLY: frames 0, 10, 20, 30, each with every particle.
  for (const char* frame : {"000000", "000010", "000020", "000030"}) {
    const std::vector<std::string> ply = lines(out + "/particles/frame_" + frame + ".ply");
    REQUIRE(ply.size() > 8);
    CHECK(ply[3] == "element vertex 2000");
    CHECK(ply.size() == 8 + 2000);
  }
  // Nothing left under a temporary name.
  for (const auto& entry : fs::recursive_directory_iterator(out))
    CHECK(entry.path().string().find(".partial") == std::string::npos);
}

TEST_CASE("cli: export stride, rendering and the benchmark command", "[cli][outputs][render]") {
  const std::string out = freshFolder("lab");
  auto r = runCommand(smashCmd("run " + scenePath("lab_bunny.json") + " --backend omp --frames 30 --out " + out +
                               " --export-every 4 --render --size 64x48 --samples 1 --render-every 2 --quiet"));
  INFO(r.output);
  REQUIRE(r.exitCode == 1);  // 30 frames are too few to come to rest: the check says so, files are still written
  // Frames 0, 4, …, 28 and the last (30).
  CHECK(lines(out + "/poses.csv").size() == 1 + 9);
  const nlohmann::json summary = readJson(out + "/summary.json");
  CHECK(summary["exported_frames"] == 9);
  CHECK(summary["render"]["frames"] == 5);
  std::ifstream png(out + "/preview.png", std::ios::binary);
  char magic[8] = {};
  png.read(magic, 8);
  CHECK(std::string(magic + 1, 3) == "PNG");
  std::size_t pngs = 0;
  for (const auto& entry : fs::directory_iterator(out + "/frames")) pngs += entry.path().extension() == ".png";
  CHECK(pngs == 5);
  if (std::system("command -v ffmpeg > /dev/null 2>&1") == 0) CHECK(fs::file_size(out + "/animation.mp4") > 0);

  const std::string bench = "smash_test_bench.json";
  fs::remove(bench);
  auto b = runCommand(smashCmd("benchmark " + scenePath("lab_bunny.json") + " --backends cpp,omp --frames 5 --out " + bench));
  INFO(b.output);
  REQUIRE(b.exitCode == 0);
  const nlohmann::json j = readJson(bench);
  REQUIRE(j["results"].size() == 2);
  CHECK(j["results"][1]["backend"] == "omp");
  CHECK(j["results"][1]["ms_per_step"].get<double>() > 0);
}

TEST_CASE("cli: bad arguments exit 2 and name the option, unwritable outputs exit 4", "[cli][bad-input]") {
  const std::string lab = scenePath("lab_bunny.json");
  struct Case {
    std::string args;
    int code;
    std::string says;
  };
  const std::string file = smash::test::writeTemp("not_a_folder", "x");
  const Case cases[] = {
      {"run " + lab + " --size 10", 2, "--size: '10' is not WIDTHxHEIGHT"},
      {"run " + lab + " --size 8x8 --out smash_test_out_bad --render --frames 1", 2, "--size: width and height must be in [16, 8192]"},
      {"run " + lab + " --render", 2, "--render: needs --out FOLDER"},
      {"run " + lab + " --substeps 0", 2, "--substeps"},
      {"run " + lab + " --export-every 0", 2, "--export-every"},
      {"run " + lab + " --backend gpu", 2, "--backend"},
      {"run " + lab + " --frames -3", 2, "--frames"},
      {"run " + lab + " --samples 9", 2, "--samples"},
      {"run " + lab + " --progress sometimes", 2, "--progress"},
      {"run " + lab + " --no-such-option", 2, "--no-such-option"},
      {"benchmark " + lab + " --backends omp,fpga", 2, "'fpga' is not one of"},
      {"benchmark", 2, "scene is required"},
      {"run " + lab + " --frames 1 --out " + file + "/sub", 4, "cannot create the output folder"},
  };
  for (const Case& c : cases) {
    auto r = runCommand(smashCmd(c.args));
    INFO(c.args << "\n" << r.output);
    CHECK(r.exitCode == c.code);
    CHECK(r.output.find(c.says) != std::string::npos);
  }
  auto help = runCommand(smashCmd("run --help"));
  CHECK(help.exitCode == 0);
  for (const char* option : {"--backend", "--frames", "--substeps", "--out", "--render", "--export-every", "--particles"})
    CHECK(help.output.find(option) != std::string::npos);
}

TEST_CASE("cli: a run stopped by the watchdog leaves nothing that looks finished", "[cli][outputs][watchdog]") {
  const std::string mesh = smash::test::sourcePath("scenes/meshes/bunny.obj");
  const std::string scene = smash::test::writeTemp("watchdog_out.json", R"({
    "dt": 0.01, "frames": 50, "solver": {"body_contacts": false},
    "materials": {"default": {}},
    "shapes": {"bunny": {"mesh": ")" + mesh + R"(", "scale": 0.4}},
    "bodies": [{"shape": "bunny", "position": [0, 1, 0]},
               {"shape": "bunny", "position": [5, 1, 0], "velocity": [0, 50, 0]}],
    "watchdog": {"max_speed": 20, "policy": "stop"}
  })");
  const std::string out = freshFolder("stopped");
  auto r = runCommand(smashCmd("run " + scene + " --backend omp --out " + out + " --particles 1"));
  INFO(r.output);
  REQUIRE(r.exitCode == 3);
  CHECK(!fs::exists(out + "/summary.json"));
  CHECK(!fs::exists(out + "/poses.csv"));
  CHECK(!fs::exists(out + "/poses.csv.partial"));
  CHECK(!fs::exists(out + "/animation.glb"));
  CHECK(!fs::exists(out + "/particles/frame_000000.ply"));
}

TEST_CASE("cli: run the lab scene", "[cli]") {
  auto r = runCommand(std::string(SMASH_EXE) + " run " + smash::test::sourcePath("scenes/lab_bunny.json") +
                      " --frames 600 --every 100");
  INFO(r.output);
  REQUIRE(r.exitCode == 0);
  REQUIRE(r.output.find("3483 particles") != std::string::npos);
  REQUIRE(r.output.find("verdict: PASS") != std::string::npos);
  REQUIRE(r.output.find("    600 ") != std::string::npos);  // the last frame's summary line
}

TEST_CASE("cli: a failing check exits 1", "[cli]") {
  // Too short to come to rest: the rest check must fail, and say so.
  auto r = runCommand(std::string(SMASH_EXE) + " run " + smash::test::sourcePath("scenes/lab_bunny.json") +
                      " --frames 20");
  INFO(r.output);
  REQUIRE(r.exitCode == 1);
  REQUIRE(r.output.find("verdict: FAIL") != std::string::npos);
  REQUIRE(r.output.find("FAIL at rest") != std::string::npos);
}

TEST_CASE("cli: bad input and bad arguments exit 2 with a message", "[cli][bad-input]") {
  auto missing = runCommand(std::string(SMASH_EXE) + " run no_such_scene.json");
  REQUIRE(missing.exitCode == 2);
  REQUIRE(missing.output.find("no_such_scene.json: cannot open scene file") != std::string::npos);
  auto badMethod = runCommand(std::string(SMASH_EXE) + " run x.json --method verlet");
  REQUIRE(badMethod.exitCode == 2);
  REQUIRE(badMethod.output.find("verlet") != std::string::npos);
  auto none = runCommand(std::string(SMASH_EXE));
  REQUIRE(none.exitCode == 2);
  auto validate = runCommand(std::string(SMASH_EXE) + " validate " + smash::test::sourcePath("scenes/lab_bunny.json"));
  REQUIRE(validate.exitCode == 0);
  REQUIRE(validate.output.find("ok (1 shapes, 1 bodies, 2 colliders)") != std::string::npos);
  std::string bad = smash::test::writeTemp("bad_scene.json", "{\"dt\": -1}");
  auto invalid = runCommand(std::string(SMASH_EXE) + " validate " + bad);
  REQUIRE(invalid.exitCode == 2);
  REQUIRE(invalid.output.find("dt: must be > 0") != std::string::npos);
}

TEST_CASE("cli: run the lab scene on a pipeline backend", "[cli][world]") {
  auto r = runCommand(std::string(SMASH_EXE) + " run " + smash::test::sourcePath("scenes/lab_bunny.json") +
                      " --backend omp --every 300");
  INFO(r.output);
  REQUIRE(r.exitCode == 0);
  REQUIRE(r.output.find("backend omp (float)") != std::string::npos);
  REQUIRE(r.output.find("verdict: PASS") != std::string::npos);
  if (!smash::backendAvailable(smash::Backend::Cuda)) {
    auto cuda = runCommand(std::string(SMASH_EXE) + " run " + smash::test::sourcePath("scenes/lab_bunny.json") +
                           " --backend cuda");
    REQUIRE(cuda.exitCode == 2);
    REQUIRE(cuda.output.find("--backend: 'cuda' is not available on this machine") != std::string::npos);
  }
}

TEST_CASE("cli: the watchdog stops a run and names the body", "[cli][watchdog]") {
  const std::string mesh = smash::test::sourcePath("scenes/meshes/bunny.obj");
  const std::string scene = smash::test::writeTemp("watchdog_scene.json", R"({
    "dt": 0.01, "frames": 50,
    "materials": {"default": {}},
    "shapes": {"bunny": {"mesh": ")" + mesh + R"(", "scale": 0.4}},
    "bodies": [{"shape": "bunny", "position": [0, 1, 0]},
               {"shape": "bunny", "position": [5, 1, 0], "velocity": [0, 50, 0]}],
    "watchdog": {"max_speed": 20, "policy": "stop"}
  })");
  for (const char* backend : {"reference", "omp"}) {
    auto r = runCommand(std::string(SMASH_EXE) + " run " + scene + " --backend " + backend);
    INFO(r.output);
    REQUIRE(r.exitCode == 3);
    REQUIRE(r.output.find("watchdog: body 1: faster than the speed limit at step 1") != std::string::npos);
    REQUIRE(r.output.find("stopped by the watchdog at frame 1") != std::string::npos);
  }
}
