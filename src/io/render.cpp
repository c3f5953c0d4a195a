#include "io/render.h"

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/wait.h>

#include <embree3/rtcore.h>
#include <glm/gtx/quaternion.hpp>
#include <stb/stb_image_write.h>

#include "core/error.h"

namespace smash::io {
namespace fs = std::filesystem;

namespace {

glm::vec3 shapeColour(int shape, std::size_t body) {
  static const glm::vec3 palette[] = {{0.85f, 0.52f, 0.32f}, {0.32f, 0.58f, 0.85f}, {0.48f, 0.78f, 0.42f},
                                      {0.86f, 0.78f, 0.36f}, {0.68f, 0.44f, 0.80f}};
  // A small per-body variation so neighbours in a pile can be told apart.
  const std::uint32_t h = static_cast<std::uint32_t>(body) * 2654435761u;
  const float shade = 0.85f + 0.3f * float((h >> 16) & 0xff) / 255.0f;
  return glm::min(palette[shape % 5] * shade, glm::vec3(1.0f));
}

void addTriangles(RTCDevice device, RTCScene scene, const Mesh& mesh, const glm::dmat3& R, const glm::dvec3& t) {
  RTCGeometry g = rtcNewGeometry(device, RTC_GEOMETRY_TYPE_TRIANGLE);
  auto* v = static_cast<float*>(rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3,
                                                        3 * sizeof(float), mesh.vertices.size()));
  auto* idx = static_cast<unsigned*>(rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
                                                             3 * sizeof(unsigned), mesh.triangles.size()));
  for (std::size_t i = 0; i < mesh.vertices.size(); ++i) {
    const glm::dvec3 p = R * mesh.vertices[i] + t;
    v[3 * i] = float(p.x);
    v[3 * i + 1] = float(p.y);
    v[3 * i + 2] = float(p.z);
  }
  for (std::size_t i = 0; i < mesh.triangles.size(); ++i)
    for (int k = 0; k < 3; ++k) idx[3 * i + k] = static_cast<unsigned>(mesh.triangles[i][k]);
  rtcCommitGeometry(g);
  rtcAttachGeometry(scene, g);
  rtcReleaseGeometry(g);
}

Mesh quad(double half) {
  Mesh m;
  m.vertices = {{-half, 0, -half}, {half, 0, -half}, {half, 0, half}, {-half, 0, half}};
  m.triangles = {{0, 2, 1}, {0, 3, 2}};
  return m;
}

}  // namespace

struct Renderer::Impl {
  RTCDevice device = nullptr;
  std::vector<RTCScene> shapeScenes;
  RTCScene top = nullptr;
  std::vector<RTCGeometry> instances;  // one per body; geomID == body index
  std::vector<int> bodyShape;
  std::vector<glm::dmat3> rotation;    // of the frame being rendered
  glm::vec3 eye{0.0f}, forward{0.0f}, right{0.0f}, up{0.0f};
  float tanHalf = 0.4f;
  float checker = 0.5f;
  ~Impl() {
    for (RTCGeometry g : instances) rtcReleaseGeometry(g);
    if (top) rtcReleaseScene(top);
    for (RTCScene s : shapeScenes) rtcReleaseScene(s);
    if (device) rtcReleaseDevice(device);
  }
};

void checkRenderOptions(const RenderOptions& o) {
  if (o.width < 16 || o.height < 16 || o.width > 8192 || o.height > 8192)
    throw InputError("--size: width and height must be in [16, 8192], got " + std::to_string(o.width) + "x" +
                     std::to_string(o.height));
  if (o.samples < 1 || o.samples > 8) throw InputError("--samples: must be in [1, 8]");
}

Renderer::Renderer(const Scene& scene, const std::vector<FramePoses>& frames, RenderOptions options)
    : impl_(std::make_unique<Impl>()), options_(options) {
  checkRenderOptions(options_);
  if (frames.empty()) throw InputError("render: no frames");
  Impl& m = *impl_;
  m.device = rtcNewDevice(nullptr);
  if (!m.device) throw InputError("render: Embree could not create a device");
  for (const Shape& s : scene.shapes) {
    RTCScene sc = rtcNewScene(m.device);
    addTriangles(m.device, sc, s.mesh, glm::dmat3(1.0), glm::dvec3(0.0));
    rtcCommitScene(sc);
    m.shapeScenes.push_back(sc);
  }
  m.top = rtcNewScene(m.device);
  for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
    RTCGeometry inst = rtcNewGeometry(m.device, RTC_GEOMETRY_TYPE_INSTANCE);
    rtcSetGeometryInstancedScene(inst, m.shapeScenes[static_cast<std::size_t>(scene.bodies[b].shape)]);
    rtcSetGeometryTimeStepCount(inst, 1);
    rtcAttachGeometryByID(m.top, inst, static_cast<unsigned>(b));
    m.instances.push_back(inst);
    m.bodyShape.push_back(scene.bodies[b].shape);
  }
  // What to frame: every body centre of every frame (padded by its radius) and the colliders
  // that have an extent.
  glm::dvec3 lo(1e300), hi(-1e300);
  for (const FramePoses& f : frames)
    for (std::size_t b = 0; b < f.centres.size(); ++b) {
      const double r = scene.shapes[scene.bodies[b].shape].boundingRadius;
      lo = glm::min(lo, f.centres[b] - r);
      hi = glm::max(hi, f.centres[b] + r);
    }
  if (scene.bodies.empty()) lo = glm::dvec3(-1.0), hi = glm::dvec3(1.0);
  double floorY = lo.y;
  const double reach = std::max(1.0, 3.0 * glm::length(hi - lo));
  for (std::size_t k = 0; k < scene.colliders.size(); ++k) {
    const Collider<double>& c = scene.colliders[k];
    if (c.type == ColliderType::Mesh && k < scene.colliderMeshes.size() && scene.colliderMeshes[k]) {
      addTriangles(m.device, m.top, scene.colliderMeshes[k]->mesh, glm::mat3_cast(c.rotation), c.point);
    } else if (c.type == ColliderType::Plane) {
      const glm::dquat turn = glm::rotation(glm::dvec3(0, 1, 0), c.normal);
      addTriangles(m.device, m.top, quad(reach), glm::mat3_cast(turn), c.point);
    } else if (c.type == ColliderType::BoxContainer) {
      const glm::dvec3 bottom = c.point + c.rotation * glm::dvec3(0, -c.halfExtents.y, 0);
      addTriangles(m.device, m.top, quad(reach), glm::mat3_cast(c.rotation), bottom);
      floorY = std::min(floorY, bottom.y);
    }
  }
  lo.y = std::min(lo.y, floorY);
  // Camera: from the front-right, above, far enough for the bounding sphere to fit the view.
  const glm::dvec3 centre = 0.5 * (lo + hi);
  const double radius = std::max(0.25, 0.5 * glm::length(hi - lo));
  m.checker = float(std::pow(10.0, std::floor(std::log10(radius))) * 0.5);
  const double fov = glm::radians(40.0);
  m.tanHalf = float(std::tan(fov / 2));
  const double aspect = double(options_.width) / options_.height;
  const double distance = radius / std::sin(std::min(fov / 2, std::atan(std::tan(fov / 2) * aspect))) * 1.05;
  // The first of a few viewing directions whose eye is on the free side of every plane (a wall
  // must not stand between the camera and the bodies).
  glm::dvec3 direction = glm::normalize(glm::dvec3(0.0, 1.0, 0.3));
  const glm::dvec3 candidates[] = {{0.55, 0.45, 1.0}, {-0.55, 0.45, 1.0}, {0.55, 0.45, -1.0}, {-0.55, 0.45, -1.0},
                                   {1.0, 0.45, 0.55}, {-1.0, 0.45, 0.55}, {1.0, 0.45, -0.55}, {-1.0, 0.45, -0.55}};
  for (const glm::dvec3& c : candidates) {
    const glm::dvec3 eye = centre + distance * glm::normalize(c);
    bool free = true;
    for (const Collider<double>& col : scene.colliders)
      if (col.type == ColliderType::Plane && glm::dot(eye - col.point, col.normal) < 0) free = false;
    if (free) {
      direction = glm::normalize(c);
      break;
    }
  }
  m.eye = glm::vec3(centre + distance * direction);
  m.forward = glm::normalize(glm::vec3(centre) - m.eye);
  m.right = glm::normalize(glm::cross(m.forward, glm::vec3(0, 1, 0)));
  m.up = glm::cross(m.right, m.forward);
}

Renderer::~Renderer() = default;

std::vector<unsigned char> Renderer::render(const FramePoses& poses) {
  Impl& m = *impl_;
  if (poses.centres.size() != m.instances.size()) throw InputError("render: pose count does not match the scene");
  m.rotation.resize(poses.centres.size());
  for (std::size_t b = 0; b < m.instances.size(); ++b) {
    m.rotation[b] = glm::mat3_cast(poses.rotations[b]);
    float xfm[12];  // 3×4 column major: the rotation's columns, then the translation
    for (int c = 0; c < 3; ++c)
      for (int r = 0; r < 3; ++r) xfm[3 * c + r] = float(m.rotation[b][c][r]);
    for (int r = 0; r < 3; ++r) xfm[9 + r] = float(poses.centres[b][r]);
    rtcSetGeometryTransform(m.instances[b], 0, RTC_FORMAT_FLOAT3X4_COLUMN_MAJOR, xfm);
    rtcCommitGeometry(m.instances[b]);
  }
  rtcCommitScene(m.top);
  const int W = options_.width, H = options_.height, S = options_.samples;
  const float aspect = float(W) / float(H);
  const glm::vec3 sun = glm::normalize(glm::vec3(-0.4f, 1.0f, 0.35f));
  std::vector<unsigned char> rgb(static_cast<std::size_t>(W) * H * 3);
#pragma omp parallel for schedule(dynamic, 4)
  for (int y = 0; y < H; ++y) {
    RTCIntersectContext context;
    rtcInitIntersectContext(&context);
    for (int x = 0; x < W; ++x) {
      glm::vec3 sum(0.0f);
      for (int sy = 0; sy < S; ++sy)
        for (int sx = 0; sx < S; ++sx) {
          const float u = (2.0f * (float(x) + (float(sx) + 0.5f) / float(S)) / float(W) - 1.0f) * m.tanHalf * aspect;
          const float v = (1.0f - 2.0f * (float(y) + (float(sy) + 0.5f) / float(S)) / float(H)) * m.tanHalf;
          const glm::vec3 dir = glm::normalize(m.forward + u * m.right + v * m.up);
          RTCRayHit rh;
          rh.ray.org_x = m.eye.x;
          rh.ray.org_y = m.eye.y;
          rh.ray.org_z = m.eye.z;
          rh.ray.dir_x = dir.x;
          rh.ray.dir_y = dir.y;
          rh.ray.dir_z = dir.z;
          rh.ray.tnear = 0.0f;
          rh.ray.tfar = std::numeric_limits<float>::infinity();
          rh.ray.mask = 0xffffffffu;
          rh.ray.flags = 0;
          rh.ray.time = 0.0f;
          rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
          rh.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
          rtcIntersect1(m.top, &context, &rh);
          glm::vec3 colour;
          if (rh.hit.geomID == RTC_INVALID_GEOMETRY_ID) {
            colour = glm::mix(glm::vec3(0.93f, 0.95f, 0.98f), glm::vec3(0.55f, 0.68f, 0.85f), std::max(0.0f, dir.y));
          } else {
            glm::vec3 n(rh.hit.Ng_x, rh.hit.Ng_y, rh.hit.Ng_z);
            glm::vec3 albedo(0.78f, 0.77f, 0.74f);
            if (rh.hit.instID[0] != RTC_INVALID_GEOMETRY_ID) {
              const std::size_t body = rh.hit.instID[0];
              n = glm::vec3(m.rotation[body] * glm::dvec3(n));  // object → world
              albedo = shapeColour(m.bodyShape[body], body);
            }
            n = glm::normalize(n);
            if (glm::dot(n, dir) > 0) n = -n;
            const glm::vec3 p = m.eye + rh.ray.tfar * dir;
            if (rh.hit.instID[0] == RTC_INVALID_GEOMETRY_ID) {
              // A faint checkerboard on static geometry gives scale (cells of `m.checker` m).
              const int cx = static_cast<int>(std::floor(p.x / m.checker));
              const int cz = static_cast<int>(std::floor(p.z / m.checker));
              const int cy = static_cast<int>(std::floor(p.y / m.checker));
              // The two axes along the surface (a floor uses x and z).
              const int parity = std::abs(n.y) > 0.7f ? cx + cz : std::abs(n.z) > 0.7f ? cx + cy : cy + cz;
              if ((parity & 1) != 0) albedo *= 0.9f;
            }
            RTCRay shadow;
            const glm::vec3 o = p + 1e-4f * n;
            shadow.org_x = o.x;
            shadow.org_y = o.y;
            shadow.org_z = o.z;
            shadow.dir_x = sun.x;
            shadow.dir_y = sun.y;
            shadow.dir_z = sun.z;
            shadow.tnear = 1e-4f;
            shadow.tfar = std::numeric_limits<float>::infinity();
            shadow.mask = 0xffffffffu;
            shadow.flags = 0;
            shadow.time = 0.0f;
            rtcOccluded1(m.top, &context, &shadow);
            const bool lit = shadow.tfar >= 0.0f;
            const float diffuse = lit ? std::max(0.0f, glm::dot(n, sun)) : 0.0f;
            const float sky = 0.22f + 0.13f * n.y;
            colour = albedo * (0.62f * diffuse + sky);
          }
          sum += colour;
        }
      const glm::vec3 c = glm::clamp(sum / float(S * S), 0.0f, 1.0f);
      unsigned char* px = &rgb[(static_cast<std::size_t>(y) * W + x) * 3];
      for (int k = 0; k < 3; ++k) px[k] = static_cast<unsigned char>(std::lround(std::pow(c[k], 1.0f / 2.2f) * 255.0f));
    }
  }
  return rgb;
}

void writePng(const std::string& file, int width, int height, const std::vector<unsigned char>& rgb) {
  // Encoded in memory, then written as a new file with every write checked (stb's own file
  // writer does not check them: a full disk left 0-byte and truncated PNGs behind).
  std::vector<unsigned char> png;
  auto append = [](void* context, void* data, int size) {
    auto* out = static_cast<std::vector<unsigned char>*>(context);
    const auto* p = static_cast<const unsigned char*>(data);
    out->insert(out->end(), p, p + size);
  };
  if (!stbi_write_png_to_func(append, &png, width, height, 3, rgb.data(), width * 3) || png.empty())
    throw OutputError(file + ": cannot encode the PNG");
  writeNewFile(file, png.data(), png.size());
}

bool haveFfmpeg() { return std::system("command -v ffmpeg > /dev/null 2>&1") == 0; }

std::string ffmpegPattern(const std::string& folder) {
  // ffmpeg's image2 demuxer reads '%' in the whole path as a format: a literal one is "%%".
  std::string escaped;
  for (char c : folder) escaped += c == '%' ? std::string("%%") : std::string(1, c);
  return escaped + "/frame_%05d.png";
}

void encodeMp4(const std::string& folder, double fps, const std::string& file, const std::function<bool()>& cancelled) {
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.6g", fps);
  // Run without a shell; paths absolute, so no folder name reads as an ffmpeg protocol
  // ("pipe:1", "concat:x") or an option ("-dash"). "-n": never overwrite (the file is new in the
  // run's private staging folder). ffmpeg runs in its own process group: a Ctrl-C at the
  // terminal reaches smash, which finishes the picture it is on and stops, not ffmpeg midway.
  // ffmpeg can exit 0 after failing to write its trailer (a full disk): any message it prints at
  // level "error" counts as a failure, and the file is synced and must not be empty.
  const std::string pattern = ffmpegPattern(fs::absolute(folder).string());
  const std::string out = fs::absolute(file).string();
  const std::string log = out + ".ffmpeg-log";
  std::vector<std::string> args = {"ffmpeg", "-nostdin", "-n", "-xerror", "-loglevel", "error", "-framerate", rate,
                                   "-i", pattern, "-c:v", "libx264", "-pix_fmt", "yuv420p",
                                   "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", out};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, "ffmpeg", &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  std::error_code ignore;
  if (spawned != 0) {
    fs::remove(log, ignore);
    throw OutputError(file + ": cannot start ffmpeg");
  }
  // Waited for by polling, so a cancellation (a signal smash caught) stops ffmpeg's group.
  int status = 0;
  bool stopped = false;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw OutputError(file + ": lost track of ffmpeg");
    if (!stopped && cancelled && cancelled()) {
      ::kill(-pid, SIGTERM);
      stopped = true;
    }
    ::usleep(20000);
  }
  std::string messages;
  {
    std::ifstream in(log);
    std::getline(in, messages);
  }
  fs::remove(log, ignore);
  bool ok = !stopped && WIFEXITED(status) && WEXITSTATUS(status) == 0 && messages.empty();
  if (ok) {
    const int fd = ::open(out.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st {};
    ok = fd >= 0 && ::fstat(fd, &st) == 0 && st.st_size > 0 && (::fsync(fd) == 0 || errno == EINVAL);
    if (fd >= 0) ::close(fd);
  }
  if (!ok) {
    fs::remove(out, ignore);
    throw OutputError(file + (stopped ? std::string(": encoding cancelled")
                                      : ": ffmpeg failed to encode the frames" +
                                            (messages.empty() ? std::string() : ": " + quoteToken(messages, 200))));
  }
}

}  // namespace smash::io
