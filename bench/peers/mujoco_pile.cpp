#include "peers/mujoco_pile.h"

#include <cstdio>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

#include "core/error.h"

namespace smash::peers {

namespace {

using Json = nlohmann::json;

/// `text` as one word for /bin/sh.
std::string shellQuote(const std::string& text) {
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

Json vec(const glm::dvec3& v) { return Json::array({v.x, v.y, v.z}); }
Json quat(const glm::dquat& q) { return Json::array({q.w, q.x, q.y, q.z}); }

/// The exit status of a command run by system() or pclose(), or -1 when it did not exit (a signal).
int exitStatus(int status) { return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1; }


}  // namespace

MujocoPile::MujocoPile(const Scene& scene, std::string python, std::string script)
    : scene_(peerScene(scene, "mujoco peer")), python_(std::move(python)), script_(std::move(script)) {
  if (python_.find('/') != std::string::npos && access(python_.c_str(), X_OK) != 0)
    throw InputError("mujoco peer: no Python interpreter at " + python_ + " (--python)");
  if (access(script_.c_str(), R_OK) != 0) throw InputError("mujoco peer: cannot read " + script_);
  const std::string command = shellQuote(python_) +
                              " -c 'import sys, numpy, mujoco; sys.stdout.write(mujoco.__version__)' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw InputError("mujoco peer: cannot run " + python_);
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe)) output += buffer;
  const int status = exitStatus(pclose(pipe));
  if (status == 127) throw InputError("mujoco peer: Python interpreter " + python_ + " not found (--python)");
  if (status != 0) {
    while (!output.empty() && output.back() == '\n') output.pop_back();
    const std::size_t line = output.rfind('\n');
    throw InputError("mujoco peer: " + python_ + " cannot import mujoco and numpy (" +
                     (line == std::string::npos ? output : output.substr(line + 1)) + "); install them with " + python_ +
                     " -m pip install -r bench/peers/requirements.txt, or let scripts/bench-pile.sh make "
                     "build/venv-bench");
  }
  version_ = output;
}

void MujocoPile::run(int frames, const std::string& dir) {
  const PeerScene& p = scene_;
  Json j;
  j["format"] = "smash-peer-scene/1";
  j["scene"] = p.name;
  j["dt"] = p.h;  // one smash step: one mj_step
  j["substeps"] = p.substeps;
  j["frames"] = frames;
  j["gravity"] = vec(p.gravity);
  j["damping_per_step"] = {{"linear", p.damping.linear}, {"angular", p.damping.angular}};
  j["shapes"] = Json::array();
  for (const PeerShape& s : p.shapes) {
    Json vertices = Json::array();
    for (const glm::dvec3& v : s.vertices) vertices.push_back(vec(v));
    j["shapes"].push_back({{"name", s.name}, {"mass", s.mass}, {"principal_moments", vec(s.frame.moments)},
                           {"vertices", std::move(vertices)}});
  }
  j["bodies"] = Json::array();
  for (const PeerBody& b : p.bodies)
    j["bodies"].push_back({{"shape", b.shape}, {"position", vec(b.position)}, {"rotation", quat(b.rotation)},
                           {"velocity", vec(b.velocity)}, {"angular_velocity", vec(b.angularVelocity)},
                           {"friction", b.friction}, {"restitution", b.restitution}});
  j["colliders"] = Json::array();
  for (const PeerCollider& c : p.colliders) {
    switch (c.type) {
      case PeerCollider::Type::Plane:
        j["colliders"].push_back({{"type", "plane"}, {"point", vec(c.point)}, {"normal", vec(c.normal)}});
        break;
      case PeerCollider::Type::Box:
        j["colliders"].push_back({{"type", "box"}, {"center", vec(c.point)}, {"half_extents", vec(c.halfExtents)},
                                  {"rotation", quat(c.rotation)}});
        break;
      case PeerCollider::Type::Sphere:
        j["colliders"].push_back({{"type", "sphere"}, {"center", vec(c.point)}, {"radius", c.radius}});
        break;
    }
  }
  const std::string scenePath = dir + "/peer.json", posesPath = dir + "/poses.bin",
                    summaryPath = dir + "/summary.json";
  std::remove(posesPath.c_str());
  std::remove(summaryPath.c_str());
  {
    std::ofstream f(scenePath);
    f << j.dump() << "\n";
    if (!f) throw InputError("mujoco peer: cannot write " + scenePath);
  }
  std::fflush(stdout);
  const std::string command = shellQuote(python_) + " " + shellQuote(script_) + " --scene " +
                              shellQuote(scenePath) + " --out " + shellQuote(dir);
  const int status = exitStatus(std::system(command.c_str()));
  if (status != 0)
    throw InputError("mujoco peer: " + script_ + " failed (" +
                     (status < 0 ? std::string("killed") : "exit status " + std::to_string(status)) +
                     "; its input is " + scenePath + ")");
  std::ifstream sf(summaryPath);
  if (!sf) throw InputError("mujoco peer: the script wrote no " + summaryPath);
  try {
    sf >> summary_;
  } catch (const Json::exception& e) {
    throw InputError("mujoco peer: " + summaryPath + ": " + e.what());
  }
  const std::size_t bodies = p.bodies.size();
  try {
    if (!summary_.value("complete", false) || summary_.at("frames").get<int>() != frames ||
        summary_.at("bodies").get<std::size_t>() != bodies)
      throw InputError("mujoco peer: " + summaryPath + ": not a complete run of " + std::to_string(frames) +
                       " frames of " + std::to_string(bodies) + " bodies");
    frameSeconds_ = summary_.at("frame_seconds").get<std::vector<double>>();
    summary_.at("final_kinetic_energy_J").get<double>();
  } catch (const Json::exception& e) {
    throw InputError("mujoco peer: " + summaryPath + ": " + e.what());
  }
  if (frameSeconds_.size() != static_cast<std::size_t>(frames))
    throw InputError("mujoco peer: " + summaryPath + ": frame_seconds has " + std::to_string(frameSeconds_.size()) +
                     " entries, expected " + std::to_string(frames));
  poses_.assign(static_cast<std::size_t>(frames) * bodies * 7, 0.0);
  std::ifstream pf(posesPath, std::ios::binary | std::ios::ate);
  const std::streamoff expected = static_cast<std::streamoff>(poses_.size() * sizeof(double));
  if (!pf || pf.tellg() != expected)
    throw InputError("mujoco peer: " + posesPath + ": expected " + std::to_string(expected) + " bytes (" +
                     std::to_string(frames) + " frames x " + std::to_string(bodies) + " bodies x 7 doubles)");
  pf.seekg(0);
  pf.read(reinterpret_cast<char*>(poses_.data()), expected);
  if (!pf) throw InputError("mujoco peer: cannot read " + posesPath);
  frames_ = frames;
}

void MujocoPile::poses(int f, std::vector<glm::dvec3>& centres, std::vector<glm::dquat>& rotations) const {
  centres.clear();
  rotations.clear();
  const std::size_t bodies = scene_.bodies.size();
  for (std::size_t k = 0; k < bodies; ++k) {
    const double* x = &poses_[(static_cast<std::size_t>(f) * bodies + k) * 7];
    centres.emplace_back(x[0], x[1], x[2]);
    rotations.push_back(bodyRotation(glm::dquat(x[3], x[4], x[5], x[6]), scene_.shapes[scene_.bodies[k].shape]));
  }
}

}  // namespace smash::peers
