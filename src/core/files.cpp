#include "core/files.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <vector>
#include <sstream>

#include "core/error.h"

namespace smash {

std::uint64_t requireRegularFile(const std::string& path, std::uint64_t maxBytes, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    if (e == ENOENT) throw InputError(path + ": cannot open " + what + ": no such file");
    throw InputError(path + ": cannot open " + what + ": " + std::strerror(e));
  }
  if (S_ISDIR(st.st_mode)) throw InputError(path + ": is a folder, not a " + what);
  if (!S_ISREG(st.st_mode))
    throw InputError(path + ": is not a regular file (a device, FIFO or socket); a " + what + " must be a file");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > maxBytes)
    throw InputError(path + ": is " + std::to_string(size) + " bytes; a " + what + " may be at most " +
                     std::to_string(maxBytes) + " bytes");
  return size;
}

std::string readRegularFile(const std::string& path, std::uint64_t maxBytes, const std::string& what) {
  const std::uint64_t size = requireRegularFile(path, maxBytes, what);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open " + what + ": " + std::strerror(errno));
  std::string text;
  text.reserve(static_cast<std::size_t>(size));
  // Read at most maxBytes + 1: a file that grows after the check is still bounded.
  std::vector<char> chunk(1 << 16);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > maxBytes)
      throw InputError(path + ": is more than " + std::to_string(maxBytes) + " bytes; a " + what +
                       " may be at most that");
  }
  if (in.bad()) throw InputError(path + ": read error");
  return text;
}

std::size_t availableHostMemory() {
  // MemAvailable (what can be allocated without swapping), else physical memory, else unknown
  // (SIZE_MAX: no check refuses anything). Then the cgroup's and the address-space limits.
  std::size_t have = SIZE_MAX;
  {
    std::ifstream meminfo("/proc/meminfo");
    for (std::string line; std::getline(meminfo, line);)
      if (line.rfind("MemAvailable:", 0) == 0) {
        have = static_cast<std::size_t>(std::strtoull(line.c_str() + 13, nullptr, 10)) * 1024;
        break;
      }
  }
  if (have == SIZE_MAX) {
    const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && size > 0) have = static_cast<std::size_t>(pages) * static_cast<std::size_t>(size);
  }
  auto readNumber = [](const char* file, const char* key, std::size_t& value) {
    std::ifstream in(file);
    std::string word;
    while (in >> word) {
      if (key && word != key) continue;
      if (key && !(in >> word)) return false;
      if (word == "max") return false;
      char* end = nullptr;
      const unsigned long long v = std::strtoull(word.c_str(), &end, 10);
      if (end == word.c_str()) return false;
      value = static_cast<std::size_t>(v);
      return true;
    }
    return false;
  };
  // A cgroup v2 limit (containers, systemd slices): what is left under memory.max, counting the
  // cgroup's inactive page cache (reclaimable) as free.
  std::size_t limit = 0, used = 0, cache = 0;
  if (readNumber("/sys/fs/cgroup/memory.max", nullptr, limit)) {
    readNumber("/sys/fs/cgroup/memory.current", nullptr, used);
    readNumber("/sys/fs/cgroup/memory.stat", "inactive_file", cache);
    used = used > cache ? used - cache : 0;
    have = std::min(have, limit > used ? limit - used : 0);
  }
  // An address-space limit (ulimit -v): what is left of it.
  struct rlimit as {};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    std::size_t pages = 0;
    std::ifstream statm("/proc/self/statm");
    statm >> pages;
    const std::size_t mapped = pages * static_cast<std::size_t>(sysconf(_SC_PAGE_SIZE));
    have = std::min(have, as.rlim_cur > mapped ? static_cast<std::size_t>(as.rlim_cur) - mapped : 0);
  }
  return have;
}

void requireMemory(const std::string& scenePath, std::size_t need, std::size_t have, const std::string& what,
                   std::size_t bodies, std::size_t particles) {
  if (need <= have) return;
  char text[160];
  std::snprintf(text, sizeof text, "about %.2f GiB of %s memory; %.2f GiB can be used", double(need) / (1u << 30),
                what.c_str(), double(have) / (1u << 30));
  throw InputError(scenePath + ": bodies: " + std::to_string(bodies) + " bodies with " + std::to_string(particles) +
                   " particles need " + text);
}

}  // namespace smash
