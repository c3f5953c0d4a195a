// Host/device portability for the shared math.
//
// Everything in kernels/math is header-only, templated on the scalar type, and marked SMASH_HD so
// that one source serves three consumers: CUDA kernels (float, nvcc), the Thrust OMP/CPP backends
// (float, g++) and the double-precision CPU reference in src/reference.
#pragma once

#if defined(__CUDACC__)
#define SMASH_HD __host__ __device__ inline
// On the host a rarely taken path kept out of line keeps the hot loop around it small enough to
// inline; on the device a call costs a stack frame and the registers live across it, so there it
// is inlined (its registers count either way: kernels/gpu_budget.txt).
#define SMASH_HD_NOINLINE __host__ __device__ inline
#else
#define SMASH_HD inline
#define SMASH_HD_NOINLINE inline __attribute__((noinline))
#endif

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

namespace smash {

// Machine epsilon without <limits>, which is not usable in device code without
// --expt-relaxed-constexpr.
template <class T>
struct ScalarTraits;
template <>
struct ScalarTraits<float> {
  static constexpr float epsilon = 1.1920928955078125e-7f;
  static constexpr float tiny = 1e-30f;  // well above FLT_MIN, used to guard divisions
};
template <>
struct ScalarTraits<double> {
  static constexpr double epsilon = 2.220446049250313e-16;
  static constexpr double tiny = 1e-290;
};

template <class T>
using Vec3 = glm::vec<3, T, glm::defaultp>;
template <class T>
using Mat3 = glm::mat<3, 3, T, glm::defaultp>;
template <class T>
using Quat = glm::qua<T, glm::defaultp>;

}  // namespace smash
