// One sample of a signed distance field: φ and its (unit) gradient.
#pragma once

#include "math/hd.h"

namespace smash {

template <class T>
struct SdfSample {
  T phi;
  Vec3<T> gradient;
};

}  // namespace smash
