#include "io/run_state.h"

#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/files.h"
#include "io/outputs.h"

namespace smash::io {
namespace {

constexpr char kMagic[8] = {'S', 'M', 'A', 'S', 'H', 'R', 'N', '1'};
constexpr std::uint32_t kVersion = 2;  // 2: the checksum at the end

struct Header {
  char magic[8];
  std::uint32_t version;
  std::uint32_t headerBytes;
  std::uint64_t fingerprint;
  std::int64_t frame;
  std::uint32_t substeps;
  std::uint32_t method;
  std::uint64_t worldBytes;
};

}  // namespace

std::uint64_t sceneFingerprint(const std::string& sceneText, const std::string& file, std::uint32_t method,
                               std::uint32_t substeps, const Scene& scene) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(sceneText);
  } catch (const nlohmann::json::exception&) {
    throw InputError(file + ": malformed JSON");
  }
  if (j.is_object()) j.erase("frames");
  const std::string canonical = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::uint64_t h = fnv1a(canonical.data(), canonical.size());
  h = fnv1a(&method, sizeof method, h);
  h = fnv1a(&substeps, sizeof substeps, h);
  for (const Shape& shape : scene.shapes) {
    h = fnv1a(shape.rest.data(), shape.rest.size() * sizeof(shape.rest[0]), h);
    h = fnv1a(shape.mass.data(), shape.mass.size() * sizeof(double), h);
  }
  for (const auto& mesh : scene.colliderMeshes)
    if (mesh) {
      h = fnv1a(mesh->mesh.vertices.data(), mesh->mesh.vertices.size() * sizeof(mesh->mesh.vertices[0]), h);
      h = fnv1a(mesh->mesh.triangles.data(), mesh->mesh.triangles.size() * sizeof(mesh->mesh.triangles[0]), h);
    }
  return h;
}

void checkStateWritable(const std::string& file) {
  PendingFile probe(file);  // creates (and, destroyed, removes) a new temporary beside it
}

void writeRunState(const std::string& file, const RunState& state) {
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.headerBytes = sizeof(Header);
  h.fingerprint = state.fingerprint;
  h.frame = state.frame;
  h.substeps = state.substeps;
  h.method = state.method;
  h.worldBytes = state.world.size();
  std::string bytes(reinterpret_cast<const char*>(&h), sizeof h);
  bytes.append(reinterpret_cast<const char*>(state.world.data()), state.world.size());
  const std::uint64_t checksum = fnv1a(bytes.data(), bytes.size());
  bytes.append(reinterpret_cast<const char*>(&checksum), sizeof checksum);
  PendingFile out(file);
  out.commit(bytes);
}

RunState readRunState(const std::string& file) {
  const std::string bytes = readRegularFile(file, std::uint64_t(1) << 40, "state file");
  Header h{};
  if (bytes.size() < sizeof h) throw InputError(file + ": not a smash run state (too short)");
  std::memcpy(&h, bytes.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) throw InputError(file + ": not a smash run state (bad magic)");
  if (h.version != kVersion || h.headerBytes != sizeof h)
    throw InputError(file + ": run state version " + std::to_string(h.version) + " is not supported by this build");
  if (h.worldBytes > bytes.size() || bytes.size() - sizeof h != h.worldBytes + sizeof(std::uint64_t))
    throw InputError(file + ": state is " + std::to_string(bytes.size()) + " bytes, expected " +
                     std::to_string(sizeof h + h.worldBytes + sizeof(std::uint64_t)) + " (truncated?)");
  std::uint64_t checksum = 0;
  std::memcpy(&checksum, bytes.data() + bytes.size() - sizeof checksum, sizeof checksum);
  if (checksum != fnv1a(bytes.data(), bytes.size() - sizeof checksum))
    throw InputError(file + ": the state is damaged (its checksum does not match)");
  if (h.frame < 0) throw InputError(file + ": state has an impossible frame number");
  RunState s;
  s.fingerprint = h.fingerprint;
  s.frame = h.frame;
  s.substeps = h.substeps;
  s.method = h.method;
  s.world.assign(bytes.begin() + static_cast<std::ptrdiff_t>(sizeof h),
                 bytes.end() - static_cast<std::ptrdiff_t>(sizeof checksum));
  return s;
}

}  // namespace smash::io
