// libFuzzer target: the scene loader must turn any input into a scene or an InputError. Mesh
// paths resolve against fuzz/ (SMASH_FUZZ_DIR), whose meshes/bunny.obj and meshes/spot.obj are
// tetrahedra, so every execution exercises the JSON validation instead of re-reading a big mesh
// (the OBJ reader has its own target).
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "scene/scene.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    // No SDF bakes: they are OpenVDB's work (seconds and hundreds of MB at the top resolution),
    // not the parser's; the resolution fields are still validated.
    smash::parseScene(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json",
                      SMASH_FUZZ_DIR, false);
  } catch (const smash::InputError&) {
  }
  return 0;
}
