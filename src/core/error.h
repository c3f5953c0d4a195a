// The one exception type for bad input. Messages name the file and the field or line, and say
// what is wrong; loaders build into locals and only hand back complete results, so catching an
// InputError never leaves anything half-loaded behind.
#pragma once

#include <stdexcept>
#include <string>

namespace smash {

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace smash
