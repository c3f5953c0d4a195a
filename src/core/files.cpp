#include "core/files.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
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

}  // namespace smash
