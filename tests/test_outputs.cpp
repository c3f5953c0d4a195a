// The output contract of `smash run` under faults (docs/cli.md "Outputs", docs/reliability.md):
// a full disk, a concurrent run, planted symlinks, a reused folder, signals, paths with '%', and
// bounded memory. Each case runs the real command into a fresh folder and reads what it left.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "io/outputs.h"
#include "scene/scene.h"
#include "test_util.h"

using smash::test::runCommand;
namespace fs = std::filesystem;

namespace {

std::string smashCmd(const std::string& args) { return std::string(SMASH_EXE) + " " + args; }
std::string lab() { return smash::test::sourcePath("scenes/lab_bunny.json"); }

std::string freshFolder(const std::string& name) {
  const std::string dir = "smash_test_faults_" + name;
  fs::remove_all(dir);
  return dir;
}

std::string readFile(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Every entry below `folder` (relative names; folders marked with a trailing '/') and each
/// regular file's contents: a folder's state, to compare before and after a run.
std::map<std::string, std::string> snapshot(const std::string& folder) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(folder)) {
    const std::string rel = fs::relative(e.path(), folder).string();
    if (e.is_symlink()) out[rel + "@"] = fs::read_symlink(e.path()).string();
    else if (e.is_directory()) out[rel + "/"] = "";
    else out[rel] = readFile(e.path().string());
  }
  return out;
}

std::vector<std::string> names(const std::map<std::string, std::string>& snap) {
  std::vector<std::string> n;
  for (const auto& [k, v] : snap) n.push_back(k);
  return n;
}

/// A complete run's folder: summary.json names every file, each exists; poses.csv has one well
/// formed row per exported frame and body.
void requireConsistent(const std::string& out) {
  const nlohmann::json summary = nlohmann::json::parse(readFile(out + "/summary.json"));
  for (const auto& f : summary["files"]) CHECK(fs::exists(out + "/" + f.get<std::string>()));
  if (fs::exists(out + "/poses.csv")) {
    std::ifstream csv(out + "/poses.csv");
    std::string line;
    std::getline(csv, line);
    CHECK(line == "frame,time,body,x,y,z,qw,qx,qy,qz");
    std::size_t rows = 0;
    while (std::getline(csv, line)) {
      ++rows;
      CHECK(std::count(line.begin(), line.end(), ',') == 9);
    }
    CHECK(rows == summary["exported_frames"].get<std::size_t>() * summary["scene"]["bodies"].get<std::size_t>());
  }
  for (const auto& e : fs::directory_iterator(out)) {
    const std::string name = e.path().filename().string();
    INFO(name);
    CHECK(name.find(".partial") == std::string::npos);
    CHECK(name.rfind(".smash-run-", 0) != 0);  // no staging folder left behind
  }
}

bool haveFfmpeg() { return std::system("command -v ffmpeg > /dev/null 2>&1") == 0; }

}  // namespace

TEST_CASE("outputs: a full disk leaves the folder exactly as it was before the run", "[cli][outputs][faults]") {
  const std::string out = freshFolder("full");
  // A complete earlier run in the folder.
  auto first = runCommand(smashCmd("run " + lab() + " --backend omp --frames 6 --out " + out + " --quiet"));
  REQUIRE(first.exitCode == 1);  // too short to rest: a failed check, files written
  const auto before = snapshot(out);
  REQUIRE(before.count("summary.json"));
  // File size limits of 40, 120 and 400 KB: the glTF (about 170 KB), a PNG, the CSV or the
  // summary fails to be written, at different points of the finish.
  for (const char* limit : {"40", "120", "400"})
    for (const char* extra : {"", " --render --size 256x256 --samples 1", " --no-gltf --particles 1"}) {
      const std::string cmd = std::string("trap '' XFSZ; ulimit -f ") + limit + "; " +
                              smashCmd("run " + lab() + " --backend omp --frames 40 --out " + out + " --quiet" + extra);
      auto r = runCommand(cmd);
      INFO(cmd << "\n" << r.output);
      if (r.exitCode == 1) {
        // Everything fitted: then it must be a complete, consistent new set.
        requireConsistent(out);
        continue;
      }
      CHECK(r.exitCode == 4);
      CHECK(r.output.find("File too large") != std::string::npos);
      const auto after = snapshot(out);
      CHECK(names(after) == names(before));
      CHECK(after == before);
    }
}

TEST_CASE("outputs: a second run into a locked folder fails at once, racing runs stay consistent",
          "[cli][outputs][faults]") {
  const std::string out = freshFolder("locked");
  fs::create_directories(out);
  const std::string lock = out + "/.smash.lock";
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
  // With --no-csv too: the folder is checked before step 1, not after the simulation.
  for (const char* extra : {"", " --no-csv", " --no-csv --no-gltf"}) {
    auto r = runCommand(smashCmd("run " + lab() + " --backend omp --frames 100000 --out " + out + extra));
    INFO(r.output);
    CHECK(r.exitCode == 4);
    CHECK(r.output.find("another smash run is writing to this output folder") != std::string::npos);
    CHECK(r.output.find("frame") == std::string::npos);  // no table: nothing was simulated
  }
  ::close(fd);
  // Four runs started together into one folder: each either finishes or is refused (exit 4);
  // what is left is one complete run's set.
  const std::string cmd = "for i in 1 2 3 4; do " + smashCmd("run " + lab() + " --backend omp --frames 60 --out " + out +
                                                              " --quiet > /dev/null 2>&1") +
                          " & done; wait";
  runCommand(cmd);
  requireConsistent(out);
  const nlohmann::json summary = nlohmann::json::parse(readFile(out + "/summary.json"));
  CHECK(summary["frames"] == 60);
}

TEST_CASE("outputs: planted symlinks are never followed", "[cli][outputs][faults]") {
  const std::string out = freshFolder("symlinks");
  fs::create_directories(out);
  const std::string victim = fs::absolute("smash_test_faults_victim").string();
  { std::ofstream(victim) << "precious"; }
  for (const char* name : {"poses.csv", "poses.csv.partial", "summary.json", "summary.json.partial",
                           "animation.glb", "preview.png", "frames"})
    fs::create_symlink(victim, out + "/" + name);
  auto r = runCommand(smashCmd("run " + lab() + " --backend omp --frames 5 --out " + out +
                               " --quiet --render --size 32x32 --samples 1"));
  INFO(r.output);
  CHECK(r.exitCode == 1);
  CHECK(readFile(victim) == "precious");
  // The run's own files replaced the links (the links were previous outputs' names).
  CHECK(!fs::is_symlink(out + "/poses.csv"));
  CHECK(!fs::is_symlink(out + "/summary.json"));
  CHECK(fs::is_directory(fs::symlink_status(out + "/frames")));
  // The lock file planted as a link: refused, victim untouched.
  const std::string out2 = freshFolder("symlock");
  fs::create_directories(out2);
  fs::create_symlink(victim, out2 + "/.smash.lock");
  auto r2 = runCommand(smashCmd("run " + lab() + " --backend omp --frames 5 --out " + out2 + " --quiet"));
  INFO(r2.output);
  CHECK(r2.exitCode == 4);
  CHECK(readFile(victim) == "precious");
}

TEST_CASE("outputs: a reused folder holds only the latest run's outputs", "[cli][outputs][faults]") {
  const std::string out = freshFolder("reused");
  auto r1 = runCommand(smashCmd("run " + lab() + " --backend omp --frames 20 --out " + out +
                                " --quiet --render --size 32x32 --samples 1 --particles 5"));
  REQUIRE(r1.exitCode == 1);
  REQUIRE(fs::exists(out + "/particles/frame_000020.ply"));
  auto r2 = runCommand(smashCmd("run " + lab() + " --backend omp --frames 5 --out " + out +
                                " --quiet --render --size 32x32 --samples 1 --no-gltf"));
  INFO(r2.output);
  REQUIRE(r2.exitCode == 1);
  std::size_t pngs = 0;
  for (const auto& e : fs::directory_iterator(out + "/frames")) pngs += e.path().extension() == ".png";
  CHECK(pngs == 6);  // frames 0..5, none of the previous run's 21
  CHECK(!fs::exists(out + "/animation.glb"));
  CHECK(!fs::exists(out + "/particles"));
  requireConsistent(out);
  const nlohmann::json summary = nlohmann::json::parse(readFile(out + "/summary.json"));
  CHECK(summary["render"]["frames"] == 6);
  // A run stopped by the watchdog leaves the previous complete set as it was.
  const auto before = snapshot(out);
  const std::string mesh = smash::test::sourcePath("scenes/meshes/bunny.obj");
  const std::string scene = smash::test::writeTemp("faults_watchdog.json", R"({
    "dt": 0.01, "frames": 50, "solver": {"body_contacts": false},
    "materials": {"default": {}},
    "shapes": {"bunny": {"mesh": ")" + mesh + R"(", "scale": 0.4}},
    "bodies": [{"shape": "bunny", "position": [5, 1, 0], "velocity": [0, 50, 0]}],
    "watchdog": {"max_speed": 20, "policy": "stop"}
  })");
  auto r3 = runCommand(smashCmd("run " + scene + " --backend omp --out " + out + " --particles 1"));
  INFO(r3.output);
  CHECK(r3.exitCode == 3);
  CHECK(snapshot(out) == before);
  // A killed run's staging folder (SIGKILL: nothing could clean it) is removed by the next run.
  // (Only folders shaped like mkdtemp's are taken: this user's, mode 0700; a user's own folder
  // that happens to share the prefix stays.)
  fs::create_directories(out + "/.smash-run-killed/frames");
  fs::permissions(out + "/.smash-run-killed", fs::perms::owner_all, fs::perm_options::replace);
  fs::create_directories(out + "/.smash-run-mydata");
  auto r4 = runCommand(smashCmd("run " + lab() + " --backend omp --frames 2 --out " + out + " --quiet"));
  CHECK(r4.exitCode == 1);
  CHECK(!fs::exists(out + "/.smash-run-killed"));
  CHECK(fs::exists(out + "/.smash-run-mydata"));
  fs::remove_all(out + "/.smash-run-mydata");
}

TEST_CASE("outputs: SIGTERM and SIGINT stop at a frame boundary with a consistent result", "[cli][outputs][signals]") {
  for (const char* sig : {"TERM", "INT", "HUP"}) {
    const std::string out = freshFolder(std::string("signal_") + sig);
    // The run is started in the background, signalled once its staging folder exists (the
    // handlers are in place by then) and half a second later, and waited for: exit 128 + signal.
    // (`env --default-signal`: a background job of a non-interactive shell starts with SIGINT
    // ignored, and smash keeps a signal its parent ignores — as nohup expects.)
    const std::string cmd = "env --default-signal=INT,HUP " +
                            smashCmd("run " + lab() + " --backend omp --frames 1000000 --export-every 7 --out " +
                                     out + " --render --size 32x32 --quiet --particles 1") +
                            " 2>&1 & P=$!; while ! ls -A " + out + " 2>/dev/null | grep -q smash-run; do sleep 0.05; done; "
                            "sleep 0.5; kill -" + sig + " $P; wait $P";
    auto r = runCommand(cmd);
    INFO(cmd << "\n" << r.output);
    CHECK(r.exitCode == (std::string(sig) == "TERM" ? 143 : std::string(sig) == "INT" ? 130 : 129));
    CHECK(r.output.find(std::string("stopped by SIG") + sig) != std::string::npos);
    requireConsistent(out);
    const nlohmann::json summary = nlohmann::json::parse(readFile(out + "/summary.json"));
    CHECK(summary["interrupted"] == true);
    CHECK(summary["verdict"]["pass"].is_null());
    CHECK(summary["render"].contains("skipped"));
    const int done = summary["frames_completed"].get<int>();
    CHECK(done < 1000000);
    CHECK(summary["steps"].get<int>() == done * summary["substeps"].get<int>());
    // The last completed frame is in the CSV even off the export stride.
    std::ifstream csv(out + "/poses.csv");
    std::string line, last;
    while (std::getline(csv, line)) last = line;
    CHECK(last.rfind(std::to_string(done) + ",", 0) == 0);
  }
}

TEST_CASE("outputs: every output path is checked before step 1", "[cli][outputs][bad-input]") {
  const std::string file = smash::test::writeTemp("faults_not_a_folder", "x");
  struct Case {
    std::string args;
    int code;
    std::string says;
  };
  const Case cases[] = {
      {"--out \"\"", 2, "--out: the output folder must not be empty"},
      {"--no-csv --out " + file, 4, "cannot create the output folder"},
      {"--no-csv --no-gltf --out " + file + "/sub", 4, "cannot create the output folder"},
      {"--export-every 0 --out x", 2, "--export-every: must be a whole number >= 1, got 0"},
      {"--render-every 0 --out x", 2, "--render-every: must be a whole number >= 1, got 0"},
  };
  for (const Case& c : cases) {
    auto r = runCommand(smashCmd("run " + lab() + " --backend omp --frames 1000000 " + c.args));
    INFO(c.args << "\n" << r.output);
    CHECK(r.exitCode == c.code);
    CHECK(r.output.find(c.says) != std::string::npos);
  }
  // benchmark --out: a folder, or a path that cannot be created, fails before timing anything.
  for (const std::string& bad : {std::string("."), file + "/sub.json"}) {
    auto r = runCommand(smashCmd("benchmark " + lab() + " --backends omp --frames 1000000 --out " + bad));
    INFO(r.output);
    CHECK(r.exitCode == 4);
    CHECK(r.output.find("ms/step") == std::string::npos);
  }
  // '%' in the folder name: ffmpeg's pattern is escaped.
  const std::string out = freshFolder("pct%d%%x");
  auto r = runCommand(smashCmd("run " + lab() + " --backend omp --frames 4 --out '" + out +
                               "' --quiet --render --size 32x32 --samples 1"));
  INFO(r.output);
  CHECK(r.exitCode == 1);
  requireConsistent(out);
  if (haveFfmpeg()) CHECK(fs::file_size(out + "/animation.mp4") > 0);
}

TEST_CASE("outputs: frames held in memory are bounded", "[cli][outputs][memory]") {
  // 10^9 frames with a glTF: refused before step 1, naming the way out.
  auto r = runCommand(smashCmd("run " + lab() + " --backend omp --frames 1000000000 --substeps 1 --out " +
                               freshFolder("mem") + " --quiet"));
  INFO(r.output);
  // The lab has one body: 10^9 kept frames are ~240 GB, past any machine this suite runs on
  // (the bound is half the memory this process can use).
  CHECK(r.exitCode == 2);
  CHECK(r.output.find("--export-every") != std::string::npos);
  CHECK(r.output.find("--no-gltf") != std::string::npos);
  // Without the glTF and pictures nothing is kept: memory stays flat in the number of frames.
  smash::Scene scene = smash::loadScene(lab());
  smash::io::OutputOptions oo;
  oo.folder = freshFolder("flat");
  oo.gltf = false;
  oo.keepFrames = false;
  smash::io::RunOutputs outputs(scene, oo);
  smash::io::FramePoses f;
  f.centres.assign(scene.bodies.size(), glm::dvec3(0));
  f.rotations.assign(scene.bodies.size(), glm::dquat(1, 0, 0, 0));
  for (int k = 0; k <= 1000; ++k) {
    f.frame = k;
    outputs.addFrame(f, k == 1000);
  }
  CHECK(outputs.frames().empty());
  outputs.finish({});
  std::ifstream csv(oo.folder + "/poses.csv");
  std::size_t rows = 0;
  for (std::string line; std::getline(csv, line);) ++rows;
  CHECK(rows == 1 + 1001 * scene.bodies.size());
}

TEST_CASE("memory: the plan bounds what a run uses, on the pipeline and the reference", "[cli][memory]") {
#if defined(__SANITIZE_ADDRESS__)
  WARN("skipped under AddressSanitizer: its shadow memory and address-space reservations are not the program's");
  return;
#else
  // 20 bodies × 262,144 surface samples (5.2 M particles): the world's memory dominates the
  // process's fixed part (the binary, OpenVDB, the shape's SDF: under 100 MB).
  const std::string mesh = smash::test::sourcePath("scenes/meshes/bunny.obj");
  const std::string scene = smash::test::writeTemp("memory_plan.json", R"({
    "dt": 0.01, "frames": 2, "materials": {"default": {}}, "solver": {"body_contacts": false},
    "shapes": {"a": {"mesh": ")" + mesh + R"(", "scale": 0.3, "sampling": {"mode": "surface", "count": 262144}}},
    "colliders": [{"type": "plane", "point": [0, 0, 0], "normal": [0, 1, 0]}],
    "generators": [{"type": "grid", "shape": "a", "origin": [0, 0.12, 0], "count": [4, 1, 5], "spacing": [1, 1, 1]}]
  })");
  for (const char* backend : {"omp", "reference"}) {
    const std::string out = freshFolder(std::string("plan_") + backend);
    auto r = runCommand(smashCmd("run " + scene + " --backend " + backend + " --out " + out + " --quiet --no-gltf"));
    INFO(backend << "\n" << r.output);
    REQUIRE(r.exitCode <= 1);
    const nlohmann::json m = nlohmann::json::parse(readFile(out + "/summary.json"))["memory"];
    const double planned = m["planned_host_bytes"].get<double>(), peak = m["peak_rss_bytes"].get<double>();
    INFO("planned " << planned / 1e6 << " MB, peak RSS " << peak / 1e6 << " MB");
    CHECK(planned + 150e6 >= peak);  // the plan covers the run, up to the fixed part
    CHECK(planned <= 2.5 * peak);    // and is not so loose that it refuses what fits
  }
  // The reference is guarded too, against the address-space limit as well as the machine's
  // memory: 10^6 bodies × 16 particles plan ~1.4 GB; under `ulimit -v` 1.5 GB the run is refused
  // before allocating (exit 2, naming the memory), where it used to be killed.
  const std::string many = smash::test::writeTemp("memory_many.json", R"({
    "dt": 0.01, "frames": 1, "materials": {"default": {}}, "solver": {"body_contacts": false},
    "shapes": {"a": {"mesh": ")" + mesh + R"(", "scale": 0.3, "sampling": {"mode": "surface", "count": 16}}},
    "generators": [{"type": "grid", "shape": "a", "origin": [0, 1, 0], "count": [100, 100, 100], "spacing": [1, 1, 1]}]
  })");
  for (const char* backend : {"reference", "omp", "cpp"}) {
    auto r = runCommand(std::string("ulimit -v 1500000; ") + smashCmd("run " + many + " --backend " + backend + " --quiet"));
    INFO(backend << "\n" << r.output);
    CHECK(r.exitCode == 2);
    CHECK(r.output.find("host memory") != std::string::npos);
  }
#endif
}

TEST_CASE("snapshots: --save-state / --resume reach the uninterrupted state bit for bit", "[cli][snapshot]") {
  const std::string stack = smash::test::sourcePath("scenes/box_stack.json");  // body contacts: warm-start state too
  auto run = [&](const std::string& args) {
    auto r = runCommand(smashCmd("run " + stack + " --backend omp --quiet " + args));
    INFO(args << "\n" << r.output);
    CHECK(r.exitCode == 0);
    return r;
  };
  for (const char* method : {"shape_matching", "impulse"}) {
    const std::string m = std::string(" --method ") + method;
    fs::remove_all("smash_test_snap_a");
    fs::remove_all("smash_test_snap_c");
    run("--frames 40 --save-state smash_test_snap_a.bin --out smash_test_snap_a" + m);
    run("--frames 15 --save-state smash_test_snap_b.bin --save-every 4" + m);
    run("--frames 40 --resume smash_test_snap_b.bin --save-state smash_test_snap_c.bin --out smash_test_snap_c" + m);
    CHECK(readFile("smash_test_snap_a.bin") == readFile("smash_test_snap_c.bin"));
    std::ifstream a("smash_test_snap_a/poses.csv"), c("smash_test_snap_c/poses.csv");
    std::string la, lc, line;
    while (std::getline(a, line)) la = line;
    while (std::getline(c, line)) lc = line;
    CHECK(la == lc);
    CHECK(la.rfind("40,", 0) == 0);
    const nlohmann::json summary = nlohmann::json::parse(readFile("smash_test_snap_c/summary.json"));
    CHECK(summary["resumed_from"]["frame"] == 15);
    CHECK(summary["frames_completed"] == 40);
  }
  // Stopped by SIGTERM: the state is saved where it stopped, and resuming it reaches the state
  // a straight run to the same frame has.
  fs::remove_all("smash_test_snap_sig");
  const std::string cmd = smashCmd("run " + stack + " --backend omp --quiet --frames 1000000 --out smash_test_snap_sig "
                                   "--save-state smash_test_snap_sig.bin --save-every 50") +
                          " 2>&1 & P=$!; while ! ls -A smash_test_snap_sig 2>/dev/null | grep -q smash-run; do sleep 0.05; done; "
                          "sleep 0.7; kill -TERM $P; wait $P";
  auto r = runCommand(cmd);
  INFO(r.output);
  REQUIRE(r.exitCode == 143);
  const int k = nlohmann::json::parse(readFile("smash_test_snap_sig/summary.json"))["frames_completed"].get<int>();
  const std::string to = " --frames " + std::to_string(k + 7);
  run("--resume smash_test_snap_sig.bin --save-state smash_test_snap_x.bin" + to);
  run("--save-state smash_test_snap_y.bin" + to);
  CHECK(readFile("smash_test_snap_x.bin") == readFile("smash_test_snap_y.bin"));
}

TEST_CASE("snapshots: bad state files are refused and nothing is written", "[cli][snapshot][bad-input]") {
  const std::string stack = smash::test::sourcePath("scenes/box_stack.json");
  auto r0 = runCommand(smashCmd("run " + stack + " --backend omp --quiet --frames 10 --save-state smash_test_snapbad.bin"));
  REQUIRE(r0.exitCode == 0);
  const std::string good = readFile("smash_test_snapbad.bin");
  auto write = [](const std::string& name, const std::string& bytes) {
    std::ofstream(name, std::ios::binary) << bytes;
    return name;
  };
  std::string version = good;
  version[8] = 9;  // the header's version
  std::string worldVersion = good;
  worldVersion[48 + 8] = 9;  // the world snapshot's own version, after the 48-byte header
  std::string middle = good;
  middle[good.size() / 2] = static_cast<char>(middle[good.size() / 2] ^ 0x10);
  std::string flipped = good;
  flipped[0] = 'X';
  const std::string lab = smash::test::sourcePath("scenes/lab_bunny.json");
  struct Case {
    std::string what, args, says;
  };
  const Case cases[] = {
      {"truncated", stack + " --resume " + write("smash_test_snap_trunc.bin", good.substr(0, good.size() - 100)), "truncated"},
      {"bad magic", stack + " --resume " + write("smash_test_snap_magic.bin", flipped), "bad magic"},
      {"other version", stack + " --resume " + write("smash_test_snap_ver.bin", version), "version 9 is not supported"},
      {"a damaged byte (the world's own version)", stack + " --resume " + write("smash_test_snap_wver.bin", worldVersion), "damaged"},
      {"a damaged byte in the middle", stack + " --resume " + write("smash_test_snap_mid.bin", middle), "damaged"},
      {"empty", stack + " --resume " + write("smash_test_snap_empty.bin", ""), "too short"},
      {"another scene", lab + " --resume smash_test_snapbad.bin", "saved from another scene"},
      {"other method", stack + " --method impulse --resume smash_test_snapbad.bin", "saved from another scene"},
      {"other substeps", stack + " --substeps 3 --resume smash_test_snapbad.bin", "saved from another scene"},
      {"nothing to run", stack + " --frames 10 --resume smash_test_snapbad.bin", "nothing to run"},
      {"a folder", stack + " --resume .", "is a folder"},
      {"the reference", stack + " --backend reference --resume smash_test_snapbad.bin", "not available on the reference"},
      {"--save-every without a file", stack + " --save-every 5", "--save-every: needs --save-state"},
      {"an empty --resume", stack + " --resume ''", "--resume: the file name must not be empty"},
      {"a state under an output's name", stack + " --save-state smash_test_faults_snapbad/summary.json",
       "is one of the names the run writes in --out"},
      {"a state as the folder's lock", stack + " --save-state smash_test_faults_snapbad/.smash.lock",
       "is one of the names the run writes in --out"},
      {"a state over the scene", smash::test::writeTemp("snap_scene.json", readFile(stack)) +
       " --save-state smash_test_snap_scene.json", "is the scene file"},
      {"a state over a device", stack + " --save-state /dev/null", "is not a regular file"},
      {"an empty --save-state", stack + " --save-state ''", "--save-state: the file name must not be empty"},
  };
  for (const Case& c : cases) {
    const std::string out = freshFolder("snapbad");
    auto r = runCommand(smashCmd("run " + c.args + " --out " + out + (c.what == "the reference" ? "" : " --backend omp")));
    INFO(c.what << "\n" << r.output);
    CHECK(r.exitCode == 2);
    CHECK(r.output.find(c.says) != std::string::npos);
    CHECK(!fs::exists(out));  // the output folder this run would have created is gone again
  }
  // --save-state on the reference is refused before step 1 (not after the run).
  auto ref = runCommand(smashCmd("run " + stack + " --backend reference --frames 1000000 --save-state smash_test_snap_ref.bin"));
  INFO(ref.output);
  CHECK(ref.exitCode == 2);
  CHECK(ref.output.find("--save-state: not available on the reference") != std::string::npos);
  // An unwritable state path fails before step 1.
  const std::string file = smash::test::writeTemp("snap_not_a_folder", "x");
  auto r = runCommand(smashCmd("run " + stack + " --backend omp --frames 1000000 --save-state " + file + "/s.bin"));
  INFO(r.output);
  CHECK(r.exitCode == 4);
}

TEST_CASE("outputs: runs racing into a new nested folder, and failures that leave no trace", "[cli][outputs][faults]") {
  // Six runs started together into a folder 30 levels deep that does not exist yet: each
  // finishes (exit 1: too short to rest) or is refused (exit 4); one complete set is left.
  for (int trial = 0; trial < 2; ++trial) {
    fs::remove_all("smash_test_faults_race");
    std::string deep = "smash_test_faults_race";
    for (int k = 0; k < 30; ++k) deep += "/d";
    std::string cmd = "for i in 1 2 3 4 5 6; do (" +
                      smashCmd("run " + lab() + " --backend omp --frames 40 --out " + deep + " --quiet > /dev/null 2>&1") +
                      "; echo $? >> smash_test_faults_race.codes) & done; wait";
    fs::remove("smash_test_faults_race.codes");
    runCommand(cmd);
    std::ifstream codes("smash_test_faults_race.codes");
    int finished = 0, refused = 0, other = 0;
    for (int c; codes >> c;) (c == 1 ? finished : c == 4 ? refused : other)++;
    INFO("finished " << finished << ", refused " << refused << ", other " << other);
    CHECK(other == 0);
    CHECK(finished >= 1);
    CHECK(finished + refused == 6);
    requireConsistent(deep);
  }
  // A failed run into a new nested folder removes every level it made; into an existing empty
  // folder it leaves the folder empty (no lock file either).
  const std::string mesh = smash::test::sourcePath("scenes/meshes/bunny.obj");
  const std::string stop = smash::test::writeTemp("faults_stop.json", R"({
    "dt": 0.01, "frames": 50, "solver": {"body_contacts": false}, "materials": {"default": {}},
    "shapes": {"bunny": {"mesh": ")" + mesh + R"(", "scale": 0.4}},
    "bodies": [{"shape": "bunny", "position": [5, 1, 0], "velocity": [0, 50, 0]}],
    "watchdog": {"max_speed": 20, "policy": "stop"}
  })");
  fs::remove_all("smash_test_faults_new");
  auto r = runCommand(smashCmd("run " + stop + " --backend omp --out smash_test_faults_new/a/b --quiet"));
  INFO(r.output);
  CHECK(r.exitCode == 3);
  CHECK(!fs::exists("smash_test_faults_new"));
  const std::string empty = freshFolder("empty");
  fs::create_directories(empty);
  auto r2 = runCommand(smashCmd("run " + stop + " --backend omp --out " + empty + " --quiet"));
  CHECK(r2.exitCode == 3);
  CHECK(fs::is_empty(empty));
}

TEST_CASE("outputs: a signal the parent ignores stays ignored (nohup)", "[cli][outputs][signals]") {
  // A run long enough (~1 s) for the signal to arrive while it runs: lab_bunny's 300 frames fall
  // asleep and end in ~0.1 s, sometimes before the loop saw the staging folder, which then waited
  // for ever. The loop ends when the run does, and the test fails unless the signal was sent.
  const std::string out = freshFolder("nohup");
  const std::string pile = smash::test::sourcePath("scenes/pile_100.json");
  auto r = runCommand("nohup " + smashCmd("run " + pile + " --backend omp --frames 100 --out " + out + " --quiet") +
                      " > /dev/null 2>&1 & P=$!; while kill -0 $P 2>/dev/null && ! ls -A " + out +
                      " 2>/dev/null | grep -q smash-run; do sleep 0.01; done; kill -HUP $P 2>/dev/null && echo hup-sent; wait $P");
  INFO(r.output);
  REQUIRE(r.output.find("hup-sent") != std::string::npos);  // delivered while it ran
  CHECK((r.exitCode == 0 || r.exitCode == 1));  // ran to the end: the verdict's code, not 129
  requireConsistent(out);
  CHECK(nlohmann::json::parse(readFile(out + "/summary.json"))["interrupted"] == false);
}

TEST_CASE("outputs: a closed stdout (| head) does not kill the run", "[cli][outputs][signals]") {
  const std::string out = freshFolder("pipe");
  fs::remove("smash_test_faults_pipe.rc");
  auto r = runCommand("(" + smashCmd("run " + lab() + " --backend omp --frames 300 --every 1 --progress never --out " + out) +
                      " 2>/dev/null; echo $? > smash_test_faults_pipe.rc) | head -2");
  INFO(r.output);
  const std::string rc = readFile("smash_test_faults_pipe.rc");
  CHECK((rc == "0\n" || rc == "1\n"));  // the verdict's code: not 141 (killed by SIGPIPE)
  requireConsistent(out);
}

TEST_CASE("outputs: a signal while pictures are rendered, or right at the start", "[cli][outputs][signals]") {
  // SIGINT once the first picture is in the staging folder: every frame is published, the
  // pictures are not, and the summary says the result was cut short.
  const std::string out = freshFolder("render_signal");
  const std::string cmd = "env --default-signal=INT " +
                          smashCmd("run " + lab() + " --backend omp --frames 400 --out " + out +
                                   " --render --size 200x200 --samples 1 --quiet") +
                          " 2>&1 & P=$!; while ! ls " + out + "/.smash-run-*/frames 2>/dev/null | grep -q png; do "
                          "sleep 0.05; done; kill -INT $P; wait $P";
  auto r = runCommand(cmd);
  INFO(r.output);
  CHECK(r.exitCode == 130);
  requireConsistent(out);
  const nlohmann::json summary = nlohmann::json::parse(readFile(out + "/summary.json"));
  CHECK(summary["interrupted"] == true);
  CHECK(summary["frames_completed"] == 400);
  CHECK(summary["render"].contains("skipped"));
  CHECK(!fs::exists(out + "/frames"));
  CHECK(!fs::exists(out + "/animation.mp4"));
  // SIGTERM as soon as the staging folder exists (handlers are in place before it is made).
  for (int trial = 0; trial < 3; ++trial) {
    const std::string early = freshFolder("early_signal");
    auto e = runCommand(smashCmd("run " + lab() + " --backend omp --frames 100000 --out " + early + " --quiet --no-gltf") +
                        " 2>&1 & P=$!; while ! ls -A " + early + " 2>/dev/null | grep -q smash-run; do :; done; "
                        "kill -TERM $P; wait $P");
    INFO(e.output);
    CHECK(e.exitCode == 143);
    requireConsistent(early);
  }
}

TEST_CASE("outputs: folder names ffmpeg could misread, and benchmark files", "[cli][outputs][render]") {
  for (const std::string name : {"pipe:1", "concat:x", "-dash", "file:y"}) {
    const std::string out = "smash_test_ffmpeg_" + name;
    fs::remove_all(out);
    auto r = runCommand(smashCmd("run " + lab() + " --backend omp --frames 3 --out='" + out +
                                 "' --quiet --render --size 32x32 --samples 1"));
    INFO(name << "\n" << r.output);
    CHECK(r.exitCode == 1);
    requireConsistent(out);
    if (haveFfmpeg()) CHECK(fs::file_size(out + "/animation.mp4") > 0);
  }
  // A full disk while ffmpeg writes: never a truncated video published.
  if (haveFfmpeg() && std::system("command -v ffprobe > /dev/null 2>&1") == 0) {
    const std::string out = freshFolder("mp4_full");
    auto r = runCommand("trap '' XFSZ; ulimit -f 60; " +
                        smashCmd("run " + smash::test::sourcePath("scenes/box_stack.json") + " --backend omp --frames 300 "
                                 "--out " + out + " --render --size 512x512 --samples 1 --no-gltf --no-csv --quiet"));
    INFO(r.output);
    if (r.exitCode == 4) {
      CHECK(!fs::exists(out));  // the run made the folder, and removed it again
    } else {
      CHECK(r.exitCode <= 1);
      CHECK(std::system(("ffprobe -v error " + out + "/animation.mp4").c_str()) == 0);
    }
  }
  // benchmark --out: a name near the file system's limit works (the temporary has its own short
  // name); a signal leaves no temporary behind and no results file.
  const std::string longName = "smash_test_" + std::string(230, 'b') + ".json";
  fs::remove(longName);
  auto b = runCommand(smashCmd("benchmark " + lab() + " --backends cpp --frames 2 --out " + longName));
  INFO(b.output);
  CHECK(b.exitCode == 0);
  CHECK(fs::exists(longName));
  fs::remove(longName);
  const std::string dir = freshFolder("bench_signal");
  fs::create_directories(dir);
  // The lab with sleeping off, so that its million frames run long: asleep, an OpenMP world is not
  // stepped (docs/physics.md §9) and the benchmark would end before the signal.
  const std::string awake = "smash_test_faults_bench_signal_scene.json";
  {
    std::ifstream in(lab());
    nlohmann::json scene = nlohmann::json::parse(in);
    scene["solver"]["sleep"] = false;
    scene["shapes"]["bunny"]["mesh"] = smash::test::sourcePath("scenes/meshes/bunny.obj");
    std::ofstream(awake) << scene.dump();
  }
  auto s = runCommand(smashCmd("benchmark " + awake + " --backends omp --frames 1000000 --out " + dir + "/b.json") +
                      " 2>&1 & P=$!; while ! ls -A " + dir + " 2>/dev/null | grep -q partial; do sleep 0.05; done; "
                      "sleep 0.3; kill -TERM $P; wait $P");
  INFO(s.output);
  CHECK(s.exitCode == 143);
  CHECK(fs::is_empty(dir));
  fs::remove(awake);
}
