// Hostile inputs through the real command (docs/reliability.md): files that are not files,
// unbounded reads, messages that could echo a file's contents, duplicate JSON keys, counts that
// overflow, and paths that are not UTF-8. Each must exit 2 with a message naming the file or
// field — never abort, never an exit code outside docs/cli.md's table.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/mesh.h"
#include "core/sdf_bake.h"
#include "test_util.h"

using smash::test::runCommand;
namespace fs = std::filesystem;

namespace {

std::string smashCmd(const std::string& args) { return std::string(SMASH_EXE) + " " + args; }
std::string bunny() { return smash::test::sourcePath("scenes/meshes/bunny.obj"); }

/// A scene with one shape made from `mesh` (its JSON text) and `extra` members.
std::string sceneWith(const std::string& name, const std::string& shape, const std::string& extra = "") {
  return smash::test::writeTemp("inputs_" + name + ".json",
                                R"({"dt": 0.01, "frames": 2, "materials": {"default": {}}, "shapes": {"a": )" + shape +
                                    R"(}, "bodies": [{"shape": "a", "position": [0, 1, 0]}])" + extra + "}");
}
std::string meshShape(const std::string& path) { return R"({"mesh": ")" + path + R"("})"; }

struct Expect {
  std::string what;
  std::string args;  // after "smash "
  std::string says;
};

void requireExit2(const Expect& e, const std::string& secret = "") {
  auto r = runCommand("timeout 60 " + smashCmd(e.args));
  INFO(e.what << "\n" << e.args << "\n" << r.output);
  CHECK(r.exitCode == 2);
  CHECK(r.output.find(e.says) != std::string::npos);
  if (!secret.empty()) CHECK(r.output.find(secret) == std::string::npos);
}

}  // namespace

TEST_CASE("inputs: files that are not files, and unbounded reads", "[cli][bad-input][inputs]") {
  const std::string folder = "smash_test_inputs_folder.json";
  fs::create_directories(folder);
  requireExit2({"a folder as the scene", "validate " + folder, "is a folder, not a scene file"});
  requireExit2({"/dev/zero as the scene", "validate /dev/zero", "is not a regular file"});
  requireExit2({"/dev/zero as a mesh", "validate " + sceneWith("devzero", meshShape("/dev/zero")),
                "/dev/zero: is not a regular file"});
  requireExit2({"a FIFO as a mesh", "validate " + sceneWith("fifo", meshShape("/dev/stdin")) + " < /dev/null",
                "is not a regular file"});
  // A sparse 64 MB file of zeros as a mesh: one endless line, refused after one bounded read.
  const std::string sparse = "smash_test_inputs_sparse.obj";
  { std::ofstream(sparse) << ""; }
  fs::resize_file(sparse, 64u << 20);
  requireExit2({"a sparse file as a mesh", "validate " + sceneWith("sparse", meshShape(sparse)), "line longer than"});
  // A symlink loop and a name too long for the file system.
  fs::remove("smash_test_inputs_loop.obj");
  fs::create_symlink("smash_test_inputs_loop.obj", "smash_test_inputs_loop.obj");
  requireExit2({"a symlink loop", "validate " + sceneWith("loop", meshShape("smash_test_inputs_loop.obj")),
                "shapes.a.mesh: cannot access"});
  requireExit2({"a name too long", "validate " + sceneWith("long", meshShape(std::string(5000, 'a') + ".obj")),
                "shapes.a.mesh: cannot access"});
  // A scene larger than the cap (64 MiB) is refused by its size, before reading it.
  const std::string big = "smash_test_inputs_big.json";
  { std::ofstream(big) << "{}"; }
  fs::resize_file(big, (64u << 20) + 1);
  requireExit2({"a scene over the cap", "validate " + big, "may be at most"});
}

TEST_CASE("inputs: messages never echo a file that is not what it should be", "[cli][bad-input][inputs]") {
  const std::string secret = "s3cr3t-t0ken";
  const std::string lookalike = smash::test::writeTemp("inputs_secret.txt", "root:x:0:0:" + secret + ":/root:/bin/bash\n");
  requireExit2({"a password-like file as a mesh", "validate " + sceneWith("secret", meshShape(fs::absolute(lookalike).string())),
                "not an OBJ statement"},
               secret);
  requireExit2({"a password-like file as the scene", "validate " + lookalike, "malformed JSON"}, secret);
  // A JSON string with control characters: the parser's quoted token is short and sanitised.
  const std::string ctrl = smash::test::writeTemp("inputs_ctrl.json", "{\"name\": \"" + secret + "\x01\"}");
  requireExit2({"a control character in a string", "validate " + ctrl, "malformed JSON"}, secret);
  // A number token made of a secret.
  const std::string obj = smash::test::writeTemp("inputs_badnum.obj", "v 1 2 " + secret + "-" + secret + "-" + secret + "\n");
  requireExit2({"a bad number in an OBJ", "validate " + sceneWith("badnum", meshShape(fs::absolute(obj).string())),
                "is not a number"},
               secret + "-" + secret + "-" + secret);
}

TEST_CASE("inputs: duplicate keys, counts that overflow, misleading messages", "[cli][bad-input][inputs]") {
  requireExit2({"a duplicate top-level key", "validate " + smash::test::writeTemp("inputs_dup.json", R"({"dt": 0.01, "dt": 0.02})"),
                "dt: duplicate key"});
  requireExit2({"a duplicate nested key",
                "validate " + sceneWith("dup2", R"({"mesh": ")" + bunny() + R"(", "scale": 0.1, "scale": 0.2})"),
                "shapes.a.scale: duplicate key"});
  requireExit2({"a duplicate key in an array element",
                "validate " + sceneWith("dup3", meshShape(bunny()),
                                        R"(, "colliders": [{"type": "plane"}, {"type": "plane", "normal": [0,1,0], "normal": [0,1,0]}])"),
                "colliders[1].normal: duplicate key"});
  requireExit2({"a generator count whose product overflows",
                "validate " + sceneWith("gen", meshShape(bunny()),
                                        R"(, "generators": [{"type": "grid", "shape": "a", "origin": [0,0,0],
                                            "count": [16777216, 16777216, 16777216], "spacing": [1,1,1]}])"),
                "generators[0].count: makes 16777216 x 16777216 x 16777216 bodies; the limit is"});
  requireExit2({"a sampling count past the cap",
                "validate " + sceneWith("samples", R"({"mesh": ")" + bunny() + R"(", "sampling": {"mode": "surface", "count": 2147483647}})"),
                "shapes.a.sampling.count: must be at most"});
  requireExit2({"a NUL inside a mesh path",
                "validate " + sceneWith("nul", R"({"mesh": ")" + bunny() + R"(\u0000.txt"})"), "must not contain a NUL"});
  requireExit2({"a scale that overflows", "validate " + sceneWith("scale", R"({"mesh": ")" + bunny() + R"(", "scale": 1e300})"),
                "overflows a double (is the scale too large?)"});
  requireExit2({"benchmark steps past 2^31",
                "benchmark " + sceneWith("steps", meshShape(bunny()), R"(, "substeps": 100000)") + " --frames 100000 --backends cpp",
                "more steps than a benchmark counts"});
  requireExit2({"--export-every 0", "run " + sceneWith("every", meshShape(bunny())) + " --export-every 0",
                "--export-every: must be a whole number >= 1, got 0"});
}

TEST_CASE("inputs: paths that are not UTF-8 run to the end", "[cli][inputs]") {
  // A scene file and an output folder whose names hold bytes that are not UTF-8 (Latin-1 'é').
  const std::string scene = smash::test::sourcePath("scenes/lab_bunny.json");
  const std::string name = "smash_test_inputs_\xe9";
  fs::remove_all(name);
  fs::remove_all(name + "_out");
  fs::create_directories(name);
  const std::string copy = name + "/lab_\xe9.json";
  std::string text;
  {
    std::ifstream in(scene);
    std::stringstream s;
    s << in.rdbuf();
    text = s.str();
  }
  // The lab's mesh path is relative to its folder: point it at the source tree.
  const std::string from = "\"meshes/", to = "\"" + smash::test::sourcePath("scenes/meshes/");
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  { std::ofstream(copy) << text; }
  auto r = runCommand(smashCmd("run '" + copy + "' --backend omp --frames 3 --out '" + name + "_out' --quiet"));
  INFO(r.output);
  CHECK(r.exitCode == 1);  // 3 frames: the rest check fails, the files are written
  std::ifstream in(name + "_out/summary.json");
  const nlohmann::json summary = nlohmann::json::parse(in);  // valid JSON (U+FFFD for the bytes)
  CHECK(summary["frames"] == 3);
  CHECK(fs::exists(name + "_out/poses.csv"));
}

TEST_CASE("sdf cache: a second bake reads the same floats back, a bad cache file is baked again", "[sdf][cache]") {
  const std::string dir = fs::absolute("smash_test_sdf_cache").string();
  fs::remove_all(dir);
  const char* saved = std::getenv("SMASH_CACHE_DIR");
  const std::string savedValue = saved ? saved : "";
  ::setenv("SMASH_CACHE_DIR", dir.c_str(), 1);
  smash::Mesh mesh = smash::loadObj(bunny());
  for (auto& v : mesh.vertices) v *= 0.3;
  const int before = smash::openVdbBakes();
  const smash::BakedGrid first = smash::bakeSdf(mesh, 24, "bunny");
  CHECK(smash::openVdbBakes() == before + 1);
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir + "/sdf")) files.push_back(e.path());
  REQUIRE(files.size() == 1);
  auto same = [&](const smash::BakedGrid& g) {
    CHECK(g.nx == first.nx);
    CHECK(g.ny == first.ny);
    CHECK(g.nz == first.nz);
    CHECK(g.cell == first.cell);
    CHECK(g.origin == first.origin);
    CHECK(g.values == first.values);
  };
  same(smash::bakeSdf(mesh, 24, "bunny"));  // a hit: no bake
  CHECK(smash::openVdbBakes() == before + 1);
  // Damaged files: truncated, a flipped value byte made NaN, a flipped key; each is baked again
  // (the same floats) and replaced by a good file.
  const std::uintmax_t size = fs::file_size(files[0]);
  int bakes = before + 1;
  for (int damage = 0; damage < 3; ++damage) {
    {
      std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
      if (damage == 1) {
        f.seekp(static_cast<std::streamoff>(size - 4));
        const float nan = std::nanf("");
        f.write(reinterpret_cast<const char*>(&nan), 4);
      } else if (damage == 2) {  // a flipped bit in the key
        f.seekg(16);
        const char c = static_cast<char>(f.get() ^ 0x01);
        f.seekp(16);
        f.put(c);
      }
    }
    if (damage == 0) fs::resize_file(files[0], size - 8);
    same(smash::bakeSdf(mesh, 24, "bunny"));
    CHECK(smash::openVdbBakes() == ++bakes);
    CHECK(fs::file_size(files[0]) == size);
  }
  // A FIFO under the cache file's name must not block the read (it is ignored and replaced).
  fs::remove(files[0]);
  REQUIRE(::mkfifo(files[0].c_str(), 0644) == 0);
  same(smash::bakeSdf(mesh, 24, "bunny"));
  CHECK(smash::openVdbBakes() == ++bakes);
  CHECK(fs::is_regular_file(files[0]));
  // Another resolution or another mesh is another key.
  smash::bakeSdf(mesh, 26, "bunny");
  for (auto& v : mesh.vertices) v *= 1.5;
  smash::bakeSdf(mesh, 24, "bunny");
  CHECK(smash::openVdbBakes() == bakes + 2);
  std::size_t count = 0;
  for (const auto& e : fs::directory_iterator(dir + "/sdf")) count += e.path().extension() == ".sdf";
  CHECK(count == 3);
  // The bake's memory is checked before baking: the estimate grows with the voxels.
  CHECK(smash::bakeMemoryBytes(mesh, 256) > 8 * smash::bakeMemoryBytes(mesh, 64) / 2);
  CHECK(smash::bakeMemoryBytes(mesh, 256) > (std::size_t(2) << 30));
  if (saved) ::setenv("SMASH_CACHE_DIR", savedValue.c_str(), 1);
  else ::unsetenv("SMASH_CACHE_DIR");
}

TEST_CASE("sdf cache: a bake too big for the memory left is refused before it starts", "[sdf][cache][cli]") {
#if defined(__SANITIZE_ADDRESS__)
  WARN("skipped under AddressSanitizer (ulimit -v)");
  return;
#else
  // sdf_resolution 256 plans ~3.5 GB; under ulimit -v 1.5 GB it is refused at once, naming the field.
  const std::string scene = smash::test::writeTemp("inputs_bake256.json",
      R"({"dt": 0.01, "frames": 1, "materials": {"default": {}},
          "shapes": {"a": {"mesh": ")" + bunny() + R"(", "scale": 0.3, "sdf_resolution": 256}},
          "bodies": [{"shape": "a", "position": [0, 1, 0]}, {"shape": "a", "position": [1, 1, 0]}]})");
  auto r = runCommand("ulimit -v 1500000; SMASH_CACHE_DIR= timeout 60 " + smashCmd("validate " + scene));
  INFO(r.output);
  CHECK(r.exitCode == 2);
  CHECK(r.output.find("shapes.a: baking the SDF at sdf_resolution 256 needs about") != std::string::npos);
  CHECK(r.output.find("lower sdf_resolution") != std::string::npos);
#endif
}
