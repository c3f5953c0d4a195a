// The per-body state check of the watchdog (docs/scene-format.md, "watchdog"), shared by the
// reference (double) and the pipeline (float) so both judge a state the same way.
#pragma once

#include "math/hd.h"

namespace smash {

enum class Incident : int { None = 0, NonFinite = 1, OutOfBounds = 2, TooFast = 3 };

template <class T>
SMASH_HD bool finite3(const Vec3<T>& a) {
  // x − x is 0 for finite x and NaN for ±inf and NaN; NaN != NaN.
  const Vec3<T> d = a - a;
  return d.x == T(0) && d.y == T(0) && d.z == T(0);
}

/// What, if anything, is wrong with a body's state.
template <class T>
SMASH_HD Incident checkBody(const Vec3<T>& centre, const Mat3<T>& rotation, const Vec3<T>& velocity,
                            const Vec3<T>& angularVelocity, T radius, T worldBound, T maxSpeed) {
  if (!finite3(centre) || !finite3(velocity) || !finite3(angularVelocity) ||
      !finite3(rotation[0]) || !finite3(rotation[1]) || !finite3(rotation[2]))
    return Incident::NonFinite;
  for (int k = 0; k < 3; ++k)
    if (centre[k] > worldBound || centre[k] < -worldBound) return Incident::OutOfBounds;
  if (glm::length(velocity) > maxSpeed || glm::length(angularVelocity) * radius > maxSpeed)
    return Incident::TooFast;
  return Incident::None;
}

/// Clamp policy for a finite state: speeds scaled down to the limit, centre back inside the bound.
template <class T>
SMASH_HD void clampBody(Vec3<T>& centre, Vec3<T>& velocity, Vec3<T>& angularVelocity, T radius,
                        T worldBound, T maxSpeed) {
  for (int k = 0; k < 3; ++k) centre[k] = glm::clamp(centre[k], -worldBound, worldBound);
  const T v = glm::length(velocity);
  if (v > maxSpeed) velocity *= maxSpeed / v;
  const T w = glm::length(angularVelocity) * radius;
  if (w > maxSpeed) angularVelocity *= maxSpeed / w;
}

/// The first incident of a body, as worlds report it (host side).
struct BodyIncident {
  unsigned long long body;
  long long step;
  Incident what;
};

inline const char* incidentName(Incident i) {
  switch (i) {
    case Incident::NonFinite:
      return "non-finite state";
    case Incident::OutOfBounds:
      return "left the world bound";
    case Incident::TooFast:
      return "faster than the speed limit";
    case Incident::None:
      break;
  }
  return "healthy";
}

}  // namespace smash
