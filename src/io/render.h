// Preview pictures without a GPU: Embree (Debian's libembree-dev) ray traces the bodies' meshes,
// one instance per body of one BVH per shape, plus the static colliders; sun light with shadows,
// sky ambient; PNGs written with stb_image_write; an MP4 assembled by ffmpeg when it is installed.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/outputs.h"
#include "scene/scene.h"

namespace smash::io {

struct RenderOptions {
  int width = 960;
  int height = 540;
  int samples = 2;  ///< per pixel side (2 → 4 rays per pixel)
};

/// Throws InputError naming the option when the options are out of range.
void checkRenderOptions(const RenderOptions& options);

class Renderer {
 public:
  /// The camera is placed once to see every body in every frame of `frames` and the colliders.
  Renderer(const Scene& scene, const std::vector<FramePoses>& frames, RenderOptions options);
  ~Renderer();
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  /// RGB, 8 bits per channel, rows top to bottom.
  std::vector<unsigned char> render(const FramePoses& poses);
  int width() const { return options_.width; }
  int height() const { return options_.height; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  RenderOptions options_;
};

/// Writes an RGB image as a new PNG file (writeNewFile); throws OutputError on failure.
void writePng(const std::string& file, int width, int height, const std::vector<unsigned char>& rgb);

/// Whether ffmpeg is on PATH.
bool haveFfmpeg();
/// ffmpeg's input pattern for folder/frame_NNNNN.png ('%' in the folder escaped).
std::string ffmpegPattern(const std::string& folder);
/// Encodes folder/frame_%05d.png (H.264, yuv420p) into the new file `file` (ffmpeg run without a
/// shell); throws OutputError on failure.
/// `cancelled`, polled while ffmpeg runs, stops it (its process group) and fails the encode.
void encodeMp4(const std::string& folder, double fps, const std::string& file,
               const std::function<bool()>& cancelled = {});

}  // namespace smash::io
