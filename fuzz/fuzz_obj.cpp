// libFuzzer target: the OBJ reader must turn any input into a mesh or an InputError — never a
// crash, a hang, a leak, or another exception.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "core/error.h"
#include "core/mesh.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    smash::parseObj(in, "fuzz.obj");
  } catch (const smash::InputError&) {
  }
  return 0;
}
