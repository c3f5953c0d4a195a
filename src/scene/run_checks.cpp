#include "scene/run_checks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/sphere_sweep.h"
#include "math/grid_sdf.h"

namespace smash {
namespace {
std::string format(const char* fmt, double a, double b = 0, double c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, a, b, c);
  return buf;
}
}  // namespace

StepObservation observeParticles(std::int64_t step, const std::vector<glm::dvec3>& positions,
                                 const std::vector<glm::dvec3>& velocities,
                                 const std::vector<Collider<double>>& colliders) {
  auto finite = [](const glm::dvec3& a) {
    return std::isfinite(a.x) && std::isfinite(a.y) && std::isfinite(a.z);
  };
  StepObservation o;
  o.step = step;
  o.particleMin = glm::dvec3(1e300);
  o.particleMax = glm::dvec3(-1e300);
  for (const glm::dvec3& x : positions) {
    o.finite = o.finite && finite(x);
    o.particleMin = glm::min(o.particleMin, x);
    o.particleMax = glm::max(o.particleMax, x);
    for (const auto& collider : colliders)
      o.deepestPenetration = std::max(o.deepestPenetration, -sdfCollider(collider, x).phi);
  }
  for (const glm::dvec3& v : velocities) o.finite = o.finite && finite(v);
  return o;
}

BodyPenetration deepestBodyPenetration(const Scene& scene, const std::vector<glm::dvec3>& centres,
                                       const std::vector<glm::dquat>& rotations) {
  BodyPenetration out;
  const std::size_t n = scene.bodies.size();
  if (n < 2 || centres.size() != n || rotations.size() != n) return out;
  for (const Body& b : scene.bodies)
    if (!scene.shapes[b.shape].sdf) return out;
  std::vector<double> radius(n);
  std::vector<glm::dmat3> R(n);
  for (std::size_t b = 0; b < n; ++b) {
    radius[b] = scene.shapes[scene.bodies[b].shape].boundingRadius;
    R[b] = glm::mat3_cast(rotations[b]);
  }
  // Depth of body i's particles inside body j.
  auto inside = [&](std::size_t i, std::size_t j) {
    const Shape& si = scene.shapes[scene.bodies[i].shape];
    const GridSdfView field = scene.shapes[scene.bodies[j].shape].sdf->view();
    double deepest = 0;
    for (const glm::dvec3& r : si.rest) {
      const glm::dvec3 x = centres[i] + R[i] * r;
      if (glm::length(x - centres[j]) > radius[j]) continue;
      deepest = std::max(deepest, -sampleGridPlaced(field, centres[j], R[j], x).phi);
    }
    return deepest;
  };
  sweepSpheres(centres, radius, [&](std::size_t i, std::size_t j) {
    ++out.pairs;
    const double depth = std::max(inside(i, j), inside(j, i));
    const double size = 2 * std::min(radius[i], radius[j]);
    out.depth = std::max(out.depth, depth);
    out.relative = std::max(out.relative, depth / size);
  });
  return out;
}

void RunChecks::observe(const StepObservation& o) {
  ++observed_;
  if (!o.finite && firstNonFinite_ < 0) firstNonFinite_ = o.step;
  if (o.deepestPenetration > deepest_) {
    deepest_ = o.deepestPenetration;
    deepestStep_ = o.step;
  }
  worstMin_ = glm::min(worstMin_, o.particleMin);
  worstMax_ = glm::max(worstMax_, o.particleMax);
  if (checks_.boundsMin && firstOutOfBounds_ < 0) {
    for (int k = 0; k < 3; ++k)
      if (o.particleMin[k] < (*checks_.boundsMin)[k] || o.particleMax[k] > (*checks_.boundsMax)[k])
        firstOutOfBounds_ = o.step;
  }
}

void RunChecks::observeBodies(const BodyPenetration& b, std::int64_t step) {
  if (b.relative > deepestBody_.relative) {
    deepestBody_ = b;
    deepestBodyStep_ = step;
  }
}

Verdict RunChecks::finish(double finalMaxSpeed) const {
  Verdict v;
  auto add = [&](bool ok, const std::string& text) {
    v.pass = v.pass && ok;
    v.lines.push_back(std::string(ok ? "ok   " : "FAIL ") + text);
  };
  add(firstNonFinite_ < 0, firstNonFinite_ < 0
                               ? "state finite in all " + std::to_string(observed_) + " observed steps"
                               : "non-finite state first seen at step " +
                                     std::to_string(firstNonFinite_));
  if (checks_.maxPenetration)
    add(deepest_ <= *checks_.maxPenetration,
        format("deepest penetration %.3g (step ", deepest_) + std::to_string(deepestStep_) +
            format(") <= %.3g", *checks_.maxPenetration));
  if (checks_.maxBodyPenetration)
    add(deepestBody_.relative <= *checks_.maxBodyPenetration,
        format("deepest body-body penetration %.3g m = %.3g of body size (step ", deepestBody_.depth,
               deepestBody_.relative) +
            std::to_string(deepestBodyStep_) + format(") <= %.3g", *checks_.maxBodyPenetration));
  if (checks_.maxFinalKineticEnergy)
    add(finalEnergy_ >= 0 && finalEnergy_ <= *checks_.maxFinalKineticEnergy,
        format("final kinetic energy %.3g J <= %.3g J", finalEnergy_, *checks_.maxFinalKineticEnergy));
  if (checks_.restSpeed)
    add(finalMaxSpeed <= *checks_.restSpeed,
        format("at rest: final max particle speed %.3g <= %.3g", finalMaxSpeed,
               *checks_.restSpeed));
  if (checks_.boundsMin)
    add(firstOutOfBounds_ < 0,
        firstOutOfBounds_ < 0
            ? format("inside bounds: particles spanned x [%.3f, %.3f], y from %.3f", worstMin_.x,
                     worstMax_.x, worstMin_.y)
            : "left the bounds at step " + std::to_string(firstOutOfBounds_));
  return v;
}

}  // namespace smash
