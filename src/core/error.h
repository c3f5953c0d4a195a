// The exceptions smash throws, one family (docs/cli.md maps each to an exit code):
//   Error        — the base; anything smash itself detects.
//   InputError   — bad input: a scene, mesh, option or state file. Messages name the file and
//                  the field or line and say what is wrong; loaders build into locals and only
//                  hand back complete results, so catching one never leaves anything half-loaded.
//   OutputError  — an output could not be written (full disk, permissions, a locked folder).
//   DeviceError  — the CUDA runtime or Thrust reported a failure.
//   OutOfMemory  — an allocation failed after the up-front estimate let the run start.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace smash {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

class InputError : public Error {
 public:
  explicit InputError(const std::string& message) : Error(message) {}
};

class OutputError : public Error {
 public:
  explicit OutputError(const std::string& message) : Error(message) {}
};

class DeviceError : public Error {
 public:
  explicit DeviceError(const std::string& message) : Error(message) {}
};

class OutOfMemory : public Error {
 public:
  explicit OutOfMemory(const std::string& message) : Error(message) {}
};


/// At most `limit` characters of `text`, printable ASCII only (anything else shown as '?'),
/// "..." when cut: for quoting a token read from a file in a message without echoing the file.
std::string quoteToken(const std::string& text, std::size_t limit = 40);

}  // namespace smash
