#include "core/sdf_bake.h"

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <limits>
#include <mutex>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <openvdb/openvdb.h>
#include <openvdb/tools/MeshToVolume.h>

#include "core/error.h"
#include "core/files.h"

namespace smash {

double BakedGrid::interpolantLipschitz() const {
  if (nx < 2 || ny < 2 || nz < 2 || !(cell > 0)) return std::numeric_limits<double>::infinity();  // no bound
  auto at = [&](int i, int j, int k) {
    return static_cast<double>(values[static_cast<std::size_t>(i) + static_cast<std::size_t>(nx) * (j + static_cast<std::size_t>(ny) * k)]);
  };
  double most = 0.0;
  for (int k = 0; k + 1 < nz; ++k)
    for (int j = 0; j + 1 < ny; ++j)
      for (int i = 0; i + 1 < nx; ++i) {
        double mx = 0, my = 0, mz = 0;
        for (int a = 0; a < 2; ++a)
          for (int b = 0; b < 2; ++b) {
            mx = std::max(mx, std::abs(at(i + 1, j + a, k + b) - at(i, j + a, k + b)));
            my = std::max(my, std::abs(at(i + a, j + 1, k + b) - at(i + a, j, k + b)));
            mz = std::max(mz, std::abs(at(i + a, j + b, k + 1) - at(i + a, j + b, k)));
          }
        most = std::max(most, std::sqrt(mx * mx + my * my + mz * mz));
      }
  return most / cell;
}

GridSdfView BakedGrid::view() const {
  GridSdfView v;
  v.values = values.data();
  v.nx = nx;
  v.ny = ny;
  v.nz = nz;
  v.originX = static_cast<float>(origin.x);
  v.originY = static_cast<float>(origin.y);
  v.originZ = static_cast<float>(origin.z);
  v.cell = static_cast<float>(cell);
  return v;
}

namespace {

std::atomic<int> gOpenVdbBakes{0};

/// The dense box a bake fills: VDB voxel (i, j, k) sits at (i, j, k)·cell; the box covers the
/// mesh's voxels plus padding.
struct BakeBox {
  glm::ivec3 first, last;
  double cell;
  std::size_t voxels() const {
    return static_cast<std::size_t>(last.x - first.x + 1) * static_cast<std::size_t>(last.y - first.y + 1) *
           static_cast<std::size_t>(last.z - first.z + 1);
  }
};

BakeBox bakeBox(const Mesh& mesh, int resolution, const std::string& context) {
  if (resolution < kMinSdfResolution || resolution > kMaxSdfResolution)
    throw InputError(context + ": sdf_resolution must be in [" + std::to_string(kMinSdfResolution) +
                     ", " + std::to_string(kMaxSdfResolution) + "], got " + std::to_string(resolution));
  if (mesh.vertices.empty() || mesh.triangles.empty())
    throw InputError(context + ": cannot bake an SDF from an empty mesh");
  glm::dvec3 lo(mesh.vertices.front()), hi(lo);
  for (const glm::dvec3& v : mesh.vertices) {
    lo = glm::min(lo, v);
    hi = glm::max(hi, v);
  }
  const glm::dvec3 extent = hi - lo;
  const double cell = std::max({extent.x, extent.y, extent.z}) / resolution;
  if (!(cell > 0) || !std::isfinite(cell)) throw InputError(context + ": mesh has no extent to bake");
  // Node indices are ints: a mesh this far from the origin, for its size, cannot be gridded.
  const double reach = std::max({std::fabs(lo.x), std::fabs(lo.y), std::fabs(lo.z), std::fabs(hi.x), std::fabs(hi.y),
                                 std::fabs(hi.z)}) / cell;
  if (!(reach < double(1 << 30)))
    throw InputError(context + ": the mesh lies " + std::to_string(reach) + " cells from its origin at sdf_resolution " +
                     std::to_string(resolution) + "; move its vertices near the origin");
  return {glm::ivec3(glm::floor(lo / cell) - double(kSdfPadding)), glm::ivec3(glm::ceil(hi / cell) + double(kSdfPadding)),
          cell};
}

// ---- The on-disk cache -----------------------------------------------------------------------

constexpr char kCacheMagic[8] = {'S', 'M', 'A', 'S', 'H', 'S', 'D', 'F'};
constexpr std::uint32_t kCacheVersion = 2;
/// Bumped with any change to how bakeSdf computes values (bands, sign, read-out): part of the key.
constexpr std::uint32_t kBakeAlgorithm = 1;

struct CacheHeader {
  char magic[8];
  std::uint32_t version;
  std::uint32_t resolution;
  std::uint64_t key;
  std::int32_t nx, ny, nz, padding;
  double origin[3];
  double cell;
  std::uint64_t count;
  std::uint64_t checksum;  ///< FNV-1a of the values
};

std::uint64_t fnv1a(const void* data, std::size_t size, std::uint64_t h) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/// The cache key: the mesh exactly as baked (vertex and triangle bytes), the resolution, the
/// padding, this cache format and OpenVDB's version (its distances are the values stored).
std::uint64_t cacheKey(const Mesh& mesh, int resolution) {
  std::uint64_t h = 1469598103934665603ull;
  const std::uint32_t header[7] = {kCacheVersion, kBakeAlgorithm, static_cast<std::uint32_t>(resolution), kSdfPadding,
                                   OPENVDB_LIBRARY_MAJOR_VERSION_NUMBER, OPENVDB_LIBRARY_MINOR_VERSION_NUMBER,
                                   OPENVDB_LIBRARY_PATCH_VERSION_NUMBER};
  h = fnv1a(header, sizeof header, h);
  const std::uint64_t counts[2] = {mesh.vertices.size(), mesh.triangles.size()};
  h = fnv1a(counts, sizeof counts, h);
  h = fnv1a(mesh.vertices.data(), mesh.vertices.size() * sizeof(glm::dvec3), h);
  return fnv1a(mesh.triangles.data(), mesh.triangles.size() * sizeof(mesh.triangles[0]), h);
}

std::string cacheFile(std::uint64_t key) {
  const std::string dir = sdfCacheFolder();
  if (dir.empty()) return {};
  char name[40];
  std::snprintf(name, sizeof name, "/%016llx.sdf", static_cast<unsigned long long>(key));
  return dir + name;
}

/// The cached grid for `key`, or false (no cache, no file, or a file that does not check out:
/// wrong magic, version, key, sizes — it is then baked again and replaced).
bool readCache(const std::string& file, std::uint64_t key, int resolution, const BakeBox& box, BakedGrid& out) {
  if (file.empty()) return false;
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);  // a FIFO must not block
  if (fd < 0) return false;
  struct stat st {};
  CacheHeader h{};
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
            ::read(fd, &h, sizeof h) == ssize_t(sizeof h) &&
            std::memcmp(h.magic, kCacheMagic, sizeof kCacheMagic) == 0 && h.version == kCacheVersion &&
            h.key == key && h.resolution == std::uint32_t(resolution) && h.padding == kSdfPadding &&
            h.nx == box.last.x - box.first.x + 1 && h.ny == box.last.y - box.first.y + 1 &&
            h.nz == box.last.z - box.first.z + 1 && h.cell == box.cell &&
            h.origin[0] == box.first.x * box.cell && h.origin[1] == box.first.y * box.cell &&
            h.origin[2] == box.first.z * box.cell &&
            h.count == box.voxels() && std::uint64_t(st.st_size) == sizeof h + h.count * sizeof(float);
  if (ok) {
    out.values.resize(h.count);
    char* p = reinterpret_cast<char*>(out.values.data());
    std::size_t left = h.count * sizeof(float);
    while (ok && left > 0) {
      const ssize_t n = ::read(fd, p, left);
      if (n <= 0) ok = false;
      else {
        p += n;
        left -= static_cast<std::size_t>(n);
      }
    }
  }
  ::close(fd);
  if (!ok || fnv1a(out.values.data(), out.values.size() * sizeof(float), 1469598103934665603ull) != h.checksum)
    return false;
  for (float v : out.values)
    if (!std::isfinite(v)) return false;
  out.nx = h.nx;
  out.ny = h.ny;
  out.nz = h.nz;
  out.origin = glm::dvec3(h.origin[0], h.origin[1], h.origin[2]);
  out.cell = h.cell;
  return true;
}

/// Writes the grid to the cache through a new temporary and a rename (a reader sees a whole file
/// or none; concurrent bakes of the same key are harmless). Failures only cost the cache.
void writeCache(const std::string& file, std::uint64_t key, int resolution, const BakedGrid& g) {
  if (file.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(file).parent_path(), ec);
  std::string tmp = file + ".partial-XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) return;
  CacheHeader h{};
  std::memcpy(h.magic, kCacheMagic, sizeof kCacheMagic);
  h.version = kCacheVersion;
  h.resolution = static_cast<std::uint32_t>(resolution);
  h.key = key;
  h.nx = g.nx;
  h.ny = g.ny;
  h.nz = g.nz;
  h.padding = kSdfPadding;
  h.origin[0] = g.origin.x;
  h.origin[1] = g.origin.y;
  h.origin[2] = g.origin.z;
  h.cell = g.cell;
  h.count = g.values.size();
  h.checksum = fnv1a(g.values.data(), g.values.size() * sizeof(float), 1469598103934665603ull);
  auto writeAll = [fd](const void* data, std::size_t size) {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
      const ssize_t n = ::write(fd, p, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      p += n;
      size -= static_cast<std::size_t>(n);
    }
    return true;
  };
  const bool ok = ::fchmod(fd, 0644) == 0 && writeAll(&h, sizeof h) &&
                  writeAll(g.values.data(), g.values.size() * sizeof(float)) && ::fsync(fd) == 0;
  if (::close(fd) != 0 || !ok || ::rename(tmp.c_str(), file.c_str()) != 0) ::unlink(tmp.c_str());
}

}  // namespace

std::string sdfCacheFolder() {
  if (const char* dir = std::getenv("SMASH_CACHE_DIR")) return *dir ? std::string(dir) + "/sdf" : std::string();
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/smash/sdf";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/smash/sdf";
  return {};
}

int openVdbBakes() { return gOpenVdbBakes.load(); }

std::size_t bakeMemoryBytes(const Mesh& mesh, int resolution) {
  return kBakeFixedBytes + kBakeBytesPerVoxel * bakeBox(mesh, resolution, "mesh").voxels();
}

BakedGrid bakeSdf(const Mesh& mesh, int resolution, const std::string& context) {
  const BakeBox box = bakeBox(mesh, resolution, context);
  const std::uint64_t key = cacheKey(mesh, resolution);
  const std::string cached = cacheFile(key);
  BakedGrid g;
  if (readCache(cached, key, resolution, box, g)) return g;
  // OpenVDB's full-band bake holds far more than the dense result (measured, docs/physics.md
  // "Baking cost"): checked against the memory this process can use before it starts.
  const std::size_t need = kBakeFixedBytes + kBakeBytesPerVoxel * box.voxels();
  const std::size_t have = availableHostMemory();
  if (need > have) {
    char text[200];
    std::snprintf(text, sizeof text, ": baking the SDF at sdf_resolution %d needs about %.2f GiB (%zu voxels); "
                  "%.2f GiB can be used — lower sdf_resolution", resolution, double(need) / (1u << 30), box.voxels(),
                  double(have) / (1u << 30));
    throw InputError(context + text);
  }
  static std::once_flag once;
  std::call_once(once, [] { openvdb::initialize(); });
  ++gOpenVdbBakes;
  const double cell = box.cell;
  const glm::ivec3 first = box.first, last = box.last;
  g.nx = last.x - first.x + 1;
  g.ny = last.y - first.y + 1;
  g.nz = last.z - first.z + 1;
  g.origin = glm::dvec3(first) * cell;
  g.cell = cell;

  std::vector<openvdb::Vec3s> points;
  points.reserve(mesh.vertices.size());
  for (const glm::dvec3& v : mesh.vertices)
    points.emplace_back(static_cast<float>(v.x), static_cast<float>(v.y), static_cast<float>(v.z));
  std::vector<openvdb::Vec3I> triangles;
  triangles.reserve(mesh.triangles.size());
  for (const auto& t : mesh.triangles)
    triangles.emplace_back(static_cast<openvdb::Index32>(t[0]), static_cast<openvdb::Index32>(t[1]),
                           static_cast<openvdb::Index32>(t[2]));
  const std::vector<openvdb::Vec4I> quads;
  auto transform = openvdb::math::Transform::createLinearTransform(cell);
  // Both bands as wide as the padded box: every node gets its true distance, inside all the way
  // to the medial axis (no clamped narrow band) and outside to the box's far corner.
  const float band = static_cast<float>(std::max({g.nx, g.ny, g.nz}) + 2);
  openvdb::FloatGrid::Ptr grid;
  {
    // Floating-point traps (SMASH_FP_TRAPS in the tests) are for smash's own arithmetic:
    // OpenVDB's intermediate values may overflow harmlessly, so its work runs in non-stop mode
    // (its TBB threads are started from here and inherit it), and the flags it raised are
    // cleared before the caller's environment comes back.
    struct NonStop {
      std::fenv_t saved;
      NonStop() { std::feholdexcept(&saved); }
      ~NonStop() {
        std::feclearexcept(FE_ALL_EXCEPT);
        std::fesetenv(&saved);
      }
    } nonStop;
    grid = openvdb::tools::meshToSignedDistanceField<openvdb::FloatGrid>(*transform, points, triangles,
                                                                         quads, band, band);
  }

  g.values.resize(static_cast<std::size_t>(g.nx) * g.ny * g.nz);
  auto accessor = grid->getConstAccessor();
  std::size_t at = 0;
  for (int k = 0; k < g.nz; ++k)
    for (int j = 0; j < g.ny; ++j)
      for (int i = 0; i < g.nx; ++i)
        g.values[at++] = accessor.getValue(openvdb::Coord(first.x + i, first.y + j, first.z + k));
  // A mesh whose inside OpenVDB could not find (not closed) has no negative values.
  if (*std::min_element(g.values.begin(), g.values.end()) >= 0.0f)
    throw InputError(context + ": the mesh encloses no volume at sdf_resolution " +
                     std::to_string(resolution) + " (is it closed?)");
  writeCache(cached, key, resolution, g);
  return g;
}

}  // namespace smash
