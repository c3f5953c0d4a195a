// Sort and sweep over spheres (physics.md §7) on the host: the reference's broad phase and the
// body–body penetration measurement share it. The backends find the same pairs with a uniform
// grid (kernels/pipeline/step_kernels.h, "Broad phase"); the order of the visit does not matter.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include <glm/glm.hpp>

namespace smash {

/// Calls visit(i, j) for every pair of overlapping spheres (centre, reach): boxes sorted stably
/// by their lower x; from each box, walk forward while the next box starts before this one ends.
template <class Visit>
void sweepSpheres(const std::vector<glm::dvec3>& centres, const std::vector<double>& reach, Visit&& visit) {
  const std::size_t n = centres.size();
  std::vector<std::size_t> order(n);
  for (std::size_t b = 0; b < n; ++b) order[b] = b;
  auto low = [&](std::size_t b) { return centres[b].x - reach[b]; };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return low(i) < low(j); });
  for (std::size_t s = 0; s < n; ++s) {
    const std::size_t i = order[s];
    const double highX = centres[i].x + reach[i];
    for (std::size_t t = s + 1; t < n && low(order[t]) <= highX; ++t) {
      const std::size_t j = order[t];
      const double d = reach[i] + reach[j];
      const glm::dvec3 gap = centres[i] - centres[j];
      if (glm::dot(gap, gap) <= d * d) visit(i, j);
    }
  }
}

}  // namespace smash
