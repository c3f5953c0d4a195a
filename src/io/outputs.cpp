#include "io/outputs.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

#include <glm/gtx/quaternion.hpp>
#include <tiny_gltf.h>

#include "core/error.h"

namespace smash::io {
namespace fs = std::filesystem;

const char* const kRunOutputNames[7] = {"animation.glb", "poses.csv", "particles", "frames",
                                        "preview.png", "animation.mp4", "summary.json"};

namespace {

std::string errnoText() { return std::strerror(errno); }

/// Writes all of [data, data + size) to fd; false on any error (errno set).
bool writeAll(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

/// Data written so far reaches the disk, then the descriptor is closed: false if either fails.
bool syncAndClose(int fd) {
  const bool synced = ::fsync(fd) == 0 || errno == EINVAL;  // EINVAL: a file that cannot sync
  const int saved = errno;
  const bool closed = ::close(fd) == 0;
  if (!synced) errno = saved;
  return synced && closed;
}

}  // namespace

void renameIntoPlace(const std::string& tmp, const std::string& file) {
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) throw OutputError(file + ": cannot rename into place: " + ec.message());
}

namespace {
/// Writes [data, data + size) to the open `fd` of `path`, syncs and closes it; on any failure
/// removes `path` and throws OutputError naming `shown`.
void writeSyncClose(int fd, const std::string& path, const std::string& shown, const void* data, std::size_t size) {
  if (!writeAll(fd, data, size)) {
    const std::string why = errnoText();
    ::close(fd);
    ::unlink(path.c_str());
    throw OutputError(shown + ": write failed: " + why);
  }
  if (!syncAndClose(fd)) {
    const std::string why = errnoText();
    ::unlink(path.c_str());
    throw OutputError(shown + ": write failed: " + why);
  }
}
}  // namespace

void writeNewFile(const std::string& file, const void* data, std::size_t size) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw OutputError(file + ": cannot create: " + errnoText());
  writeSyncClose(fd, file, file, data, size);
}

PendingFile::PendingFile(std::string file) : file_(std::move(file)) {
  if (file_.empty()) throw InputError("--out: the file name must not be empty");
  std::error_code ec;
  if (fs::is_directory(file_, ec)) throw OutputError(file_ + ": is a folder, not a file");
  // The temporary sits beside the file under a short name of its own (a name near the file
  // system's limit must not become too long with a suffix).
  const fs::path parent = fs::path(file_).parent_path();
  tmp_ = ((parent.empty() ? fs::path(".") : parent) / ".smash-partial-XXXXXX").string();
  fd_ = ::mkstemp(tmp_.data());  // O_CREAT | O_EXCL: never an existing file or link
  if (fd_ < 0) throw OutputError(file_ + ": cannot write: " + errnoText());
  ::fchmod(fd_, 0644);
}

PendingFile::~PendingFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
}

void PendingFile::commit(const std::string& text) {
  if (fd_ < 0) throw OutputError(file_ + ": already written");
  const int fd = fd_;
  fd_ = -1;
  writeSyncClose(fd, tmp_, file_, text.data(), text.size());
  try {
    renameIntoPlace(tmp_, file_);
  } catch (...) {
    ::unlink(tmp_.c_str());
    throw;
  }
}

void writePly(const std::vector<glm::vec3>& positions, const std::string& file) {
  std::string text = "ply\nformat ascii 1.0\ncomment smash particle positions\nelement vertex " +
                     std::to_string(positions.size()) +
                     "\nproperty float x\nproperty float y\nproperty float z\nend_header\n";
  char line[96];
  for (const glm::vec3& p : positions) {
    std::snprintf(line, sizeof line, "%.7g %.7g %.7g\n", p.x, p.y, p.z);
    text += line;
  }
  writeNewFile(file, text.data(), text.size());
}

namespace {

// glTF building blocks: one buffer, appended to; views and accessors into it.
struct GltfBuilder {
  tinygltf::Model model;

  GltfBuilder() {
    model.buffers.emplace_back();
    model.asset.version = "2.0";
    model.asset.generator = "smash";
  }
  std::vector<unsigned char>& bytes() { return model.buffers[0].data; }

  int view(const void* data, std::size_t size, int target) {
    while (bytes().size() % 4) bytes().push_back(0);
    tinygltf::BufferView v;
    v.buffer = 0;
    v.byteOffset = bytes().size();
    v.byteLength = size;
    if (target) v.target = target;
    const auto* p = static_cast<const unsigned char*>(data);
    bytes().insert(bytes().end(), p, p + size);
    model.bufferViews.push_back(v);
    return static_cast<int>(model.bufferViews.size() - 1);
  }

  int accessor(int view, int componentType, int type, std::size_t count, std::vector<double> lo = {},
               std::vector<double> hi = {}) {
    tinygltf::Accessor a;
    a.bufferView = view;
    a.componentType = componentType;
    a.type = type;
    a.count = count;
    a.minValues = std::move(lo);
    a.maxValues = std::move(hi);
    model.accessors.push_back(a);
    return static_cast<int>(model.accessors.size() - 1);
  }

  int floats(const std::vector<float>& v, int type, int components, int target, bool bounds) {
    std::vector<double> lo, hi;
    if (bounds && !v.empty()) {
      lo.assign(static_cast<std::size_t>(components), 1e300);
      hi.assign(static_cast<std::size_t>(components), -1e300);
      for (std::size_t i = 0; i < v.size(); ++i) {
        const std::size_t c = i % static_cast<std::size_t>(components);
        lo[c] = std::min(lo[c], double(v[i]));
        hi[c] = std::max(hi[c], double(v[i]));
      }
    }
    const int bv = view(v.data(), v.size() * sizeof(float), target);
    return accessor(bv, TINYGLTF_COMPONENT_TYPE_FLOAT, type, v.size() / static_cast<std::size_t>(components),
                    lo, hi);
  }

  int material(const std::string& name, float r, float g, float b, float a = 1.0f) {
    tinygltf::Material m;
    m.name = name;
    m.pbrMetallicRoughness.baseColorFactor = {r, g, b, a};
    m.pbrMetallicRoughness.metallicFactor = 0.0;
    m.pbrMetallicRoughness.roughnessFactor = 0.7;
    m.doubleSided = true;
    if (a < 1.0f) m.alphaMode = "BLEND";
    model.materials.push_back(m);
    return static_cast<int>(model.materials.size() - 1);
  }

  /// A triangle mesh with smooth vertex normals.
  int mesh(const std::string& name, const Mesh& m, int materialIndex) {
    std::vector<float> positions, normals(m.vertices.size() * 3, 0.0f);
    std::vector<std::uint32_t> indices;
    for (const glm::dvec3& v : m.vertices) {
      positions.push_back(float(v.x));
      positions.push_back(float(v.y));
      positions.push_back(float(v.z));
    }
    std::vector<glm::dvec3> n(m.vertices.size(), glm::dvec3(0.0));
    for (const auto& t : m.triangles) {
      const glm::dvec3 face = glm::cross(m.vertices[t[1]] - m.vertices[t[0]], m.vertices[t[2]] - m.vertices[t[0]]);
      for (int k = 0; k < 3; ++k) {
        n[t[k]] += face;
        indices.push_back(static_cast<std::uint32_t>(t[k]));
      }
    }
    for (std::size_t i = 0; i < n.size(); ++i) {
      const double len = glm::length(n[i]);
      const glm::dvec3 u = len > 0 ? n[i] / len : glm::dvec3(0, 1, 0);
      normals[3 * i] = float(u.x);
      normals[3 * i + 1] = float(u.y);
      normals[3 * i + 2] = float(u.z);
    }
    tinygltf::Primitive p;
    p.attributes["POSITION"] = floats(positions, TINYGLTF_TYPE_VEC3, 3, TINYGLTF_TARGET_ARRAY_BUFFER, true);
    p.attributes["NORMAL"] = floats(normals, TINYGLTF_TYPE_VEC3, 3, TINYGLTF_TARGET_ARRAY_BUFFER, false);
    const int iv = view(indices.data(), indices.size() * sizeof(std::uint32_t), TINYGLTF_TARGET_ELEMENT_ARRAY_BUFFER);
    p.indices = accessor(iv, TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT, TINYGLTF_TYPE_SCALAR, indices.size());
    p.material = materialIndex;
    p.mode = TINYGLTF_MODE_TRIANGLES;
    tinygltf::Mesh mesh;
    mesh.name = name;
    mesh.primitives.push_back(p);
    model.meshes.push_back(mesh);
    return static_cast<int>(model.meshes.size() - 1);
  }

  int node(const std::string& name, int meshIndex, const glm::dvec3& t, const glm::dquat& q) {
    tinygltf::Node n;
    n.name = name;
    n.mesh = meshIndex;
    n.translation = {t.x, t.y, t.z};
    n.rotation = {q.x, q.y, q.z, q.w};
    model.nodes.push_back(n);
    return static_cast<int>(model.nodes.size() - 1);
  }
};

Mesh boxMesh(const glm::dvec3& half) {
  Mesh m;
  for (int i = 0; i < 8; ++i)
    m.vertices.emplace_back((i & 1 ? 1 : -1) * half.x, (i & 2 ? 1 : -1) * half.y, (i & 4 ? 1 : -1) * half.z);
  const int f[12][3] = {{0, 2, 3}, {0, 3, 1}, {4, 5, 7}, {4, 7, 6}, {0, 1, 5}, {0, 5, 4},
                        {2, 6, 7}, {2, 7, 3}, {0, 4, 6}, {0, 6, 2}, {1, 3, 7}, {1, 7, 5}};
  for (const auto& t : f) m.triangles.push_back({t[0], t[1], t[2]});
  return m;
}

}  // namespace

void writeGlb(const Scene& scene, const std::vector<FramePoses>& frames, const std::string& file) {
  if (frames.empty()) throw OutputError(file + ": no frames to write");
  GltfBuilder g;
  tinygltf::Scene root;
  root.name = scene.name;
  // One mesh per shape, in the body frame (origin = centre of mass), as in the simulation.
  const float palette[][3] = {{0.85f, 0.55f, 0.35f}, {0.35f, 0.6f, 0.85f}, {0.5f, 0.8f, 0.45f},
                              {0.85f, 0.8f, 0.4f},  {0.7f, 0.45f, 0.8f}};
  std::vector<int> shapeMesh;
  for (std::size_t s = 0; s < scene.shapes.size(); ++s) {
    const float* c = palette[s % 5];
    shapeMesh.push_back(g.mesh(scene.shapes[s].name, scene.shapes[s].mesh,
                               g.material(scene.shapes[s].name, c[0], c[1], c[2])));
  }
  const FramePoses& first = frames.front();
  for (std::size_t b = 0; b < scene.bodies.size(); ++b)
    root.nodes.push_back(g.node("body " + std::to_string(b), shapeMesh[scene.bodies[b].shape],
                                first.centres[b], first.rotations[b]));
  // Static colliders, for viewers: mesh colliders as they are, boxes as boxes, a container's
  // floor, a plane as a square of 4× the bodies' extent.
  glm::dvec3 lo(1e300), hi(-1e300);
  for (const glm::dvec3& c : first.centres) {
    lo = glm::min(lo, c);
    hi = glm::max(hi, c);
  }
  const double extent = scene.bodies.empty() ? 10.0 : std::max(2.0, 2.0 * glm::length(hi - lo));
  const int ground = g.material("collider", 0.75f, 0.75f, 0.72f);
  for (std::size_t k = 0; k < scene.colliders.size(); ++k) {
    const Collider<double>& c = scene.colliders[k];
    const std::string name = "collider " + std::to_string(k);
    if (c.type == ColliderType::Mesh && k < scene.colliderMeshes.size() && scene.colliderMeshes[k]) {
      root.nodes.push_back(g.node(name, g.mesh(name, scene.colliderMeshes[k]->mesh, ground), c.point, c.rotation));
    } else if (c.type == ColliderType::Box) {
      root.nodes.push_back(g.node(name, g.mesh(name, boxMesh(c.halfExtents), ground), c.point, c.rotation));
    } else if (c.type == ColliderType::BoxContainer) {
      const glm::dvec3 floorHalf(c.halfExtents.x, 0.005, c.halfExtents.z);
      const glm::dvec3 at = c.point + c.rotation * glm::dvec3(0, -c.halfExtents.y - 0.005, 0);
      root.nodes.push_back(g.node(name, g.mesh(name, boxMesh(floorHalf), ground), at, c.rotation));
    } else if (c.type == ColliderType::Plane) {
      // A thin slab under the plane, turned so its top face is the plane.
      const glm::dquat turn = glm::rotation(glm::dvec3(0, 1, 0), c.normal);
      const glm::dvec3 at = c.point - 0.005 * c.normal;
      root.nodes.push_back(g.node(name, g.mesh(name, boxMesh(glm::dvec3(extent, 0.005, extent)), ground), at, turn));
    }
  }
  // The animation: one time input shared by all channels; per body a translation and a
  // rotation sampler (linear; rotations as unit quaternions x, y, z, w).
  if (frames.size() > 1 && !scene.bodies.empty()) {
    std::vector<float> times;
    for (const FramePoses& f : frames) times.push_back(float(f.time));
    const int input = g.floats(times, TINYGLTF_TYPE_SCALAR, 1, 0, true);
    tinygltf::Animation anim;
    anim.name = "simulation";
    for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
      std::vector<float> t, r;
      for (const FramePoses& f : frames) {
        const glm::dvec3& c = f.centres[b];
        const glm::dquat& q = f.rotations[b];
        t.insert(t.end(), {float(c.x), float(c.y), float(c.z)});
        r.insert(r.end(), {float(q.x), float(q.y), float(q.z), float(q.w)});
      }
      for (int path = 0; path < 2; ++path) {
        tinygltf::AnimationSampler s;
        s.input = input;
        s.output = path == 0 ? g.floats(t, TINYGLTF_TYPE_VEC3, 3, 0, false) : g.floats(r, TINYGLTF_TYPE_VEC4, 4, 0, false);
        s.interpolation = "LINEAR";
        anim.samplers.push_back(s);
        tinygltf::AnimationChannel ch;
        ch.sampler = static_cast<int>(anim.samplers.size() - 1);
        ch.target_node = root.nodes[b];
        ch.target_path = path == 0 ? "translation" : "rotation";
        anim.channels.push_back(ch);
      }
    }
    g.model.animations.push_back(anim);
  }
  g.model.scenes.push_back(root);
  g.model.defaultScene = 0;
  g.model.buffers[0].name = "data";
  // Serialised in memory, then written with every write checked (tinygltf's file writer does not
  // check them: a full disk left a truncated file behind).
  std::ostringstream bytes;
  tinygltf::TinyGLTF writer;
  if (!writer.WriteGltfSceneToStream(&g.model, bytes, false, true) || !bytes)
    throw OutputError(file + ": cannot encode the glTF file");
  const std::string data = bytes.str();
  writeNewFile(file, data.data(), data.size());
}

RunOutputs::RunOutputs(const Scene& scene, OutputOptions options) : scene_(scene), options_(std::move(options)) {
  if (options_.folder.empty()) throw InputError("--out: the output folder must not be empty");
  if (options_.exportEvery < 1) throw InputError("--export-every: must be >= 1");
  const std::string& out = options_.folder;
  std::error_code ec;
  // The folder and any missing parents, one level at a time: a level counts as this run's only
  // when this run's mkdir made it (runs started together into a new folder race here), and only
  // those are removed again if the run fails.
  {
    std::vector<fs::path> missing;
    for (fs::path p = fs::path(out); !p.empty() && !fs::exists(fs::symlink_status(p, ec)); p = p.parent_path()) {
      missing.push_back(p);
      if (p == p.parent_path()) break;
    }
    for (auto it = missing.rbegin(); it != missing.rend(); ++it)
      if (fs::create_directory(*it, ec)) createdFolders_.insert(createdFolders_.begin(), it->string());
  }
  if (!fs::is_directory(out, ec))
    throw OutputError(out + ": cannot create the output folder" + (ec ? ": " + ec.message() : ""));
  try {
    // The lock: one run per folder, on a file that stays while any run may use the folder. Its
    // path is checked to still name the locked file (a run that failed removes a lock file it
    // created, while holding it). Opened read-only when it exists: flock needs no write access,
    // so runs by other users into a shared folder work.
    const std::string lock = (fs::path(out) / ".smash.lock").string();
    lockFd_ = ::open(lock.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    createdLock_ = lockFd_ >= 0;
    if (createdLock_) ::fchmod(lockFd_, 0644);  // readable by other users' runs, whatever the umask
    if (lockFd_ < 0 && errno == EEXIST) lockFd_ = ::open(lock.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (lockFd_ < 0) throw OutputError(lock + ": cannot open the output folder's lock file: " + errnoText());
    if (::flock(lockFd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno == EWOULDBLOCK)
        throw OutputError(out + ": another smash run is writing to this output folder (it holds " + lock + ")");
      throw OutputError(lock + ": cannot lock the output folder: " + errnoText());
    }
    struct stat held {}, named {};
    if (::fstat(lockFd_, &held) != 0 || ::lstat(lock.c_str(), &named) != 0 || held.st_ino != named.st_ino ||
        held.st_dev != named.st_dev)
      throw OutputError(out + ": the lock file " + lock + " was replaced while locking it (another run ended); try again");
    lockHeld_ = true;
    // Staging folders left by a run that was killed (SIGKILL, power loss) hold nothing anyone
    // can use; with the lock held, no live run owns one.
    // Only folders that look like mkdtemp's: this user's, mode 0700, the exact name length.
    for (fs::directory_iterator it(out, ec), end; !ec && it != end; it.increment(ec)) {
      const fs::directory_entry& entry = *it;
      const std::string name = entry.path().filename().string();
      struct stat st {};
      if (name.rfind(".smash-run-", 0) == 0 && name.size() == 17 && ::lstat(entry.path().c_str(), &st) == 0 &&
          S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() && (st.st_mode & 0777) == 0700) {
        std::error_code ignore;
        fs::remove_all(entry.path(), ignore);
      }
    }
    std::string pattern = (fs::path(out) / ".smash-run-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw OutputError(out + ": cannot write the output folder: " + errnoText());
    staging_ = pattern;
    if (options_.csv) {
      const std::string file = staged("poses.csv");
      const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd < 0 || !(csv_ = ::fdopen(fd, "w"))) {
        const std::string why = errnoText();
        if (fd >= 0) ::close(fd);
        throw OutputError(published("poses.csv") + ": cannot write: " + why);
      }
      std::fprintf(csv_, "frame,time,body,x,y,z,qw,qx,qy,qz\n");
    }
    if (options_.particlesEvery > 0 && !fs::create_directory(staged("particles"), ec))
      throw OutputError(published("particles") + ": cannot create: " + ec.message());
  } catch (...) {
    abandon();
    if (lockFd_ >= 0) ::close(lockFd_);  // the destructor does not run for a throwing constructor
    lockFd_ = -1;
    throw;
  }
}

RunOutputs::~RunOutputs() {
  if (!finished_) abandon();
  if (lockFd_ >= 0) ::close(lockFd_);  // releases the lock
}

std::string RunOutputs::staged(const std::string& name) const { return (fs::path(staging_) / name).string(); }
std::string RunOutputs::published(const std::string& name) const {
  return (fs::path(options_.folder) / name).string();
}

void RunOutputs::addFrame(const FramePoses& poses, bool last) {
  if (poses.frame % options_.exportEvery != 0 && !last) return;
  if (lastFrame_ == poses.frame) return;
  lastFrame_ = poses.frame;
  ++exported_;
  if (options_.keepFrames) frames_.push_back(poses);
  if (csv_)
    for (std::size_t b = 0; b < poses.centres.size(); ++b) {
      const glm::dvec3& c = poses.centres[b];
      const glm::dquat& q = poses.rotations[b];
      if (std::fprintf(csv_, "%d,%.9g,%zu,%.12g,%.12g,%.12g,%.9g,%.9g,%.9g,%.9g\n", poses.frame, poses.time, b, c.x, c.y,
                       c.z, q.w, q.x, q.y, q.z) < 0)
        throw OutputError(published("poses.csv") + ": write failed: " + errnoText());
    }
}

bool RunOutputs::wantsParticles(int frame) const {
  return options_.particlesEvery > 0 && frame % options_.particlesEvery == 0;
}

void RunOutputs::addParticles(int frame, const std::vector<glm::vec3>& positions) {
  char name[64];
  std::snprintf(name, sizeof name, "particles/frame_%06d.ply", frame);
  writePly(positions, staged(name));
}

std::vector<std::string> RunOutputs::finish(nlohmann::json summary) {
  std::vector<std::string> names;
  std::error_code ec;
  if (csv_) {
    std::FILE* f = csv_;
    csv_ = nullptr;
    int failure = 0;  // the first errno
    if (std::fflush(f) != 0 || std::ferror(f)) failure = errno ? errno : EIO;
    if (!failure && ::fsync(fileno(f)) != 0 && errno != EINVAL) failure = errno;
    if (std::fclose(f) != 0 && !failure) failure = errno;
    if (failure)
      throw OutputError(published("poses.csv") + ": write failed: " + std::strerror(failure));
    names.push_back("poses.csv");
  }
  if (options_.gltf) {
    io::writeGlb(scene_, frames_, staged("animation.glb"));
    names.push_back("animation.glb");
  }
  if (options_.particlesEvery > 0) names.push_back("particles");
  for (const char* name : {"frames", "preview.png", "animation.mp4"})
    if (fs::exists(fs::symlink_status(staged(name), ec))) names.push_back(name);
  std::vector<std::string> written;
  for (const std::string& name : names) written.push_back(published(name));
  summary["folder"] = options_.folder;
  summary["files"] = names;  // relative to the folder (always ASCII)
  summary["exported_frames"] = exported_;
  // Paths and names that are not UTF-8 are written with U+FFFD in their place.
  const std::string text = summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  writeNewFile(staged("summary.json"), text.data(), text.size());
  names.push_back("summary.json");
  written.push_back(published("summary.json"));
  publish(names);
  finished_ = true;
  return written;
}

void RunOutputs::publish(const std::vector<std::string>& names) {
  // Renames only, inside one folder's file system: the previous run's outputs aside, the new
  // set in (summary.json last), and on any failure every rename undone.
  const std::string aside = staged(".previous");
  std::error_code ec;
  if (!fs::create_directory(aside, ec)) throw OutputError(options_.folder + ": cannot write: " + ec.message());
  std::vector<std::string> movedAside, movedIn;
  auto undo = [&] {
    std::error_code ignore;
    for (auto it = movedIn.rbegin(); it != movedIn.rend(); ++it) fs::rename(published(*it), staged(*it), ignore);
    for (const std::string& name : movedAside) fs::rename((fs::path(aside) / name).string(), published(name), ignore);
  };
  // The old summary.json goes aside first: at no moment does it stand beside a partial set.
  std::vector<std::string> previous = {"summary.json"};
  for (const char* name : kRunOutputNames)
    if (std::string(name) != "summary.json") previous.push_back(name);
  for (const std::string& name : previous) {
    if (!fs::exists(fs::symlink_status(published(name), ec))) continue;
    fs::rename(published(name), (fs::path(aside) / name).string(), ec);
    if (ec) {
      undo();
      throw OutputError(published(name) + ": cannot replace the previous run's output: " + ec.message());
    }
    movedAside.push_back(name);
  }
  for (const std::string& name : names) {
    fs::rename(staged(name), published(name), ec);
    if (ec) {
      undo();
      throw OutputError(published(name) + ": cannot rename into place: " + ec.message());
    }
    movedIn.push_back(name);
  }
  fs::remove_all(staging_, ec);  // the previous outputs with it
  staging_.clear();
}

void RunOutputs::abandon() {
  if (csv_) {
    std::fclose(csv_);
    csv_ = nullptr;
  }
  std::error_code ec;
  if (!staging_.empty()) fs::remove_all(staging_, ec);
  staging_.clear();
  if (lockHeld_) {
    // What this run created goes: its lock file (removed while held; a run that opened it in
    // the meantime sees it replaced and stops), then the folders it made, deepest first, each
    // only if empty.
    if (createdLock_) ::unlink((fs::path(options_.folder) / ".smash.lock").c_str());
    for (const std::string& folder : createdFolders_) fs::remove(folder, ec);
  }
  finished_ = true;
}

}  // namespace smash::io
