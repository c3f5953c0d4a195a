// A small, portable, seeded random generator. std::uniform_real_distribution is implementation
// defined, so scenes built with it would differ between standard libraries; this one gives the
// same numbers everywhere (SplitMix64, Steele et al. 2014) — provided the calls happen in a fixed
// order (see uniform3).
#pragma once

#include <cstdint>

#include <glm/glm.hpp>

namespace smash {

class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}
  std::uint64_t nextU64() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1).
  double uniform() { return static_cast<double>(nextU64() >> 11) * 0x1.0p-53; }
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// A point uniform in the box [lo, hi), drawn in a fixed order: z, then y, then x. Never write
  /// dvec3(rng.uniform(), rng.uniform(), rng.uniform()) — C++ leaves the order of function
  /// arguments open (GCC draws the last first, clang the first), so a scene would differ between
  /// compilers. The order here is the one GCC builds used, so scenes keep their values.
  glm::dvec3 uniform3(const glm::dvec3& lo, const glm::dvec3& hi) {
    const double z = uniform(lo.z, hi.z);
    const double y = uniform(lo.y, hi.y);
    const double x = uniform(lo.x, hi.x);
    return {x, y, z};
  }
  glm::dvec3 uniform3(double lo, double hi) { return uniform3(glm::dvec3(lo), glm::dvec3(hi)); }

 private:
  std::uint64_t state_;
};

}  // namespace smash
