// Reading input files safely: only regular files (not a folder, a device such as /dev/zero, a
// FIFO or a socket), no larger than a cap, and every failure an InputError naming the file.
// Checked arithmetic for counts that are multiplied.
#pragma once

#include <cstdint>
#include <string>

namespace smash {

/// Throws InputError naming `path` (as a `what`, e.g. "scene file") unless it is a regular file
/// (after following symbolic links) of at most `maxBytes` bytes. Returns its size.
std::uint64_t requireRegularFile(const std::string& path, std::uint64_t maxBytes, const std::string& what);

/// The whole of a regular file of at most `maxBytes` bytes (requireRegularFile, then read).
std::string readRegularFile(const std::string& path, std::uint64_t maxBytes, const std::string& what);

/// a · b, or false when the product does not fit in int64 (or either is negative).
inline bool checkedMul(std::int64_t a, std::int64_t b, std::int64_t& out) {
  if (a < 0 || b < 0) return false;
  return !__builtin_mul_overflow(a, b, &out);
}

}  // namespace smash
