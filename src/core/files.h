// Reading input files safely: only regular files (not a folder, a device such as /dev/zero, a
// FIFO or a socket), no larger than a cap, and every failure an InputError naming the file.
// Checked arithmetic for counts that are multiplied; the memory this process may still use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace smash {

/// Throws InputError naming `path` (as a `what`, e.g. "scene file") unless it is a regular file
/// (after following symbolic links) of at most `maxBytes` bytes. Returns its size.
std::uint64_t requireRegularFile(const std::string& path, std::uint64_t maxBytes, const std::string& what);

/// The whole of a regular file of at most `maxBytes` bytes (requireRegularFile, then read).
std::string readRegularFile(const std::string& path, std::uint64_t maxBytes, const std::string& what);

/// Bytes this process can still allocate on the host: min(MemAvailable, what is left under the
/// cgroup's memory.max (its inactive page cache counted as free), what is left of RLIMIT_AS);
/// physical memory when /proc/meminfo cannot be read; SIZE_MAX when nothing is known.
std::size_t availableHostMemory();

/// Throws InputError naming `scenePath` when `need` bytes (of `what` memory, for `bodies` bodies
/// with `particles` particles) exceed `have`.
void requireMemory(const std::string& scenePath, std::size_t need, std::size_t have, const std::string& what,
                   std::size_t bodies, std::size_t particles);

/// FNV-1a over `size` bytes, continuing from `h` (the checksum of state files and the scene
/// fingerprint of run states).
inline std::uint64_t fnv1a(const void* data, std::size_t size, std::uint64_t h = 1469598103934665603ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/// a · b, or false when the product does not fit in int64 (or either is negative).
inline bool checkedMul(std::int64_t a, std::int64_t b, std::int64_t& out) {
  if (a < 0 || b < 0) return false;
  return !__builtin_mul_overflow(a, b, &out);
}

}  // namespace smash
