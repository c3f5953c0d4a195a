#include "reference/resting_lcp.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "reference/reference_world.h"

namespace smash {

namespace {

/// Velocity of body i's point at offset r (a static body: 0).
glm::dvec3 pointVelocity(const std::vector<LcpBody>& bodies, int i, const glm::dvec3& r) {
  if (i < 0) return glm::dvec3(0.0);
  return bodies[static_cast<std::size_t>(i)].v + glm::cross(bodies[static_cast<std::size_t>(i)].w, r);
}

/// Applies impulse j at offset r of body i (a static body: nothing).
void applyImpulse(std::vector<LcpBody>& bodies, int i, const glm::dvec3& r, const glm::dvec3& j) {
  if (i < 0) return;
  LcpBody& b = bodies[static_cast<std::size_t>(i)];
  b.v += b.invMass * j;
  b.w += b.invInertia * glm::cross(r, j);
}

/// The relative velocity change at the contact per unit impulse along d, projected on e:
/// eᵀ (K_a + K_b) d with K = (1/m) 1 − [r]× I⁻¹ [r]×.
double effective(const std::vector<LcpBody>& bodies, const LcpContact& c, const glm::dvec3& d, const glm::dvec3& e) {
  double k = 0;
  for (int side = 0; side < 2; ++side) {
    const int i = side == 0 ? c.a : c.b;
    if (i < 0) continue;
    const LcpBody& b = bodies[static_cast<std::size_t>(i)];
    const glm::dvec3& r = side == 0 ? c.ra : c.rb;
    k += glm::dot(e, b.invMass * d - glm::cross(r, b.invInertia * glm::cross(r, d)));
  }
  return k;
}

glm::dvec3 relativeVelocity(const std::vector<LcpBody>& bodies, const LcpContact& c) {
  return pointVelocity(bodies, c.a, c.ra) - pointVelocity(bodies, c.b, c.rb);
}

/// How far a contact's sliding velocity `vt` is from Coulomb's law for the friction impulse
/// `lambdaT` within the disc of radius `limit`, in m/s: inside the disc no sliding; on its rim
/// sliding only opposite to λ_T (the part of vt not along −λ_T); a disc of radius 0 (no normal
/// impulse, or no friction) allows any sliding.
double frictionResidual(const glm::dvec3& vt, const glm::dvec3& lambdaT, double limit) {
  if (!(limit > 0)) return 0;
  const double len = glm::length(lambdaT);
  if (len < limit * (1 - 1e-9)) return glm::length(vt);
  const glm::dvec3 u = lambdaT / len;
  const double along = glm::dot(vt, u);
  return glm::length(along <= 0 ? vt - along * u : vt);
}

}  // namespace

LcpResult solveContactLcp(std::vector<LcpBody> bodies, const std::vector<LcpContact>& contacts, double tolerance,
                          int maxSweeps) {
  const std::size_t n = contacts.size();
  LcpResult r;
  r.normal.assign(n, 0.0);
  r.tangent.assign(n, glm::dvec3(0.0));
  std::vector<double> kn(n);
  for (std::size_t i = 0; i < n; ++i) kn[i] = effective(bodies, contacts[i], contacts[i].normal, contacts[i].normal);
  for (r.sweeps = 1; r.sweeps <= maxSweeps; ++r.sweeps) {
    for (std::size_t i = 0; i < n; ++i) {
      const LcpContact& c = contacts[i];
      if (!(kn[i] > 0)) continue;
      // Normal: the accumulated impulse projected on λ_N ≥ 0.
      const double vn = glm::dot(relativeVelocity(bodies, c), c.normal);
      const double before = r.normal[i];
      r.normal[i] = std::max(0.0, before + (c.target - vn) / kn[i]);
      const double dn = r.normal[i] - before;
      applyImpulse(bodies, c.a, c.ra, dn * c.normal);
      applyImpulse(bodies, c.b, c.rb, -dn * c.normal);
      // Friction: remove the sliding velocity, the accumulated impulse projected on the disc
      // |λ_T| ≤ μ λ_N (one 2×2 step along the sliding direction).
      glm::dvec3 vt = relativeVelocity(bodies, c);
      vt -= glm::dot(vt, c.normal) * c.normal;
      const double speed = glm::length(vt);
      glm::dvec3 dt(0.0);
      if (speed > 0) {
        const glm::dvec3 t = vt / speed;
        const double kt = effective(bodies, c, t, t);
        glm::dvec3 next = r.tangent[i] - (kt > 0 ? speed / kt : 0.0) * t;
        const double limit = c.friction * r.normal[i], len = glm::length(next);
        if (len > limit) next *= len > 0 ? limit / len : 0.0;
        dt = next - r.tangent[i];
        r.tangent[i] = next;
        applyImpulse(bodies, c.a, c.ra, dt);
        applyImpulse(bodies, c.b, c.rb, -dt);
      }
    }
    // The natural residual of the normal LCP, in m/s: |min(λ_N k, v_n − target)| (0 exactly at a
    // solution: either no impulse, or the velocity at its target), and of friction: no sliding
    // inside the disc, on its rim sliding only against λ_T; every 20th sweep.
    if (r.sweeps % 20 != 0 && r.sweeps != maxSweeps) continue;
    double residual = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const LcpContact& c = contacts[i];
      const glm::dvec3 v = relativeVelocity(bodies, c);
      const double vn = glm::dot(v, c.normal);
      residual = std::max(residual, std::abs(std::min(r.normal[i] * kn[i], vn - c.target)));
      residual = std::max(residual, frictionResidual(v - vn * c.normal, r.tangent[i], c.friction * r.normal[i]));
    }
    if (residual <= tolerance) {
      r.converged = true;
      break;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const double vn = glm::dot(relativeVelocity(bodies, contacts[i]), contacts[i].normal);
    r.worstViolation = std::max(r.worstViolation, contacts[i].target - vn);
    r.worstComplementarity = std::max(r.worstComplementarity, r.normal[i] * std::abs(vn - contacts[i].target));
  }
  return r;
}

std::vector<PairNormalImpulse> restingOracle(const ReferenceWorld& world, LcpResult* report,
                                             std::vector<double>* supports) {
  const Scene& scene = world.scene();
  const double h = scene.stepDt();
  const std::size_t nb = world.bodyCount();
  std::vector<LcpBody> bodies(nb);
  for (std::size_t b = 0; b < nb; ++b) {
    const BodyState& s = world.body(b);
    const Shape& shape = scene.shapes[scene.bodies[b].shape];
    if (s.asleep) continue;  // static for the others (math/sleep.h)
    bodies[b].invMass = 1.0 / shape.totalMass;
    bodies[b].invInertia = s.rotation * shape.inertiaInverse * glm::transpose(s.rotation);
    // The next step's velocities before its contacts: gravity and damping (physics.md §2.1, §3.1).
    bodies[b].v = (s.velocity + h * scene.gravity) * scene.linearDamping;
    bodies[b].w = s.angularVelocity * scene.angularDamping;
  }
  auto friction = [&](std::size_t b) { return scene.materials[scene.bodies[b].material].friction; };
  auto target = [&](double phi) { return phi > 0 ? -phi / h : 0.0; };
  // The same pairs in the same order as the iterative solver's totals; each contact adds to its
  // pair's entry.
  std::vector<PairNormalImpulse> totals = world.lastPairImpulses();
  std::vector<LcpContact> contacts;
  std::vector<std::size_t> owner;
  auto add = [&](std::size_t entry, const PairContact<double>& p, std::size_t a, std::size_t b) {
    LcpContact c;
    c.a = static_cast<int>(a);
    c.ra = p.ra;
    c.normal = p.normal;
    c.target = target(p.phi);
    if (b == SIZE_MAX) {
      c.friction = friction(a);
    } else {
      c.b = static_cast<int>(b);
      c.rb = p.rb;
      c.friction = std::sqrt(friction(a) * friction(b));  // the pair's mixing rule
    }
    contacts.push_back(c);
    owner.push_back(entry);
  };
  for (std::size_t entry = 0; entry < totals.size(); ++entry) {
    PairNormalImpulse& t = totals[entry];
    t.normal = 0;
    const std::vector<PairContact<double>>& points =
        t.b == SIZE_MAX ? world.lastColliderContacts()[t.a] : world.lastPairContacts().at({t.a, t.b});
    for (const PairContact<double>& p : points) add(entry, p, t.a, t.b);
  }
  // Highest contacts first (along −g): the weight of a stack then passes down it within one sweep,
  // which PGS otherwise takes a sweep per level and ratio of masses to learn. The order changes
  // how fast the sweeps converge, not where to.
  const double g = glm::length(scene.gravity);
  const glm::dvec3 up = g > 0 ? -scene.gravity / g : glm::dvec3(0.0);
  std::vector<std::size_t> order(contacts.size());
  std::vector<double> height(contacts.size());
  for (std::size_t i = 0; i < contacts.size(); ++i) {
    order[i] = i;
    height[i] = glm::dot(world.body(static_cast<std::size_t>(contacts[i].a)).centre + contacts[i].ra, up);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return height[x] > height[y]; });
  std::vector<LcpContact> sorted;
  for (std::size_t i : order) sorted.push_back(contacts[i]);
  LcpResult solved = solveContactLcp(std::move(bodies), sorted);
  LcpResult result = solved;
  for (std::size_t k = 0; k < order.size(); ++k) {
    result.normal[order[k]] = solved.normal[k];
    result.tangent[order[k]] = solved.tangent[k];
  }
  for (std::size_t i = 0; i < contacts.size(); ++i) totals[owner[i]].normal += result.normal[i];
  if (supports) {
    // The impulse on a is λ_N n + λ_T; it holds up a against a collider, b (−it) against a.
    supports->assign(totals.size(), 0.0);
    for (std::size_t i = 0; i < contacts.size(); ++i) {
      const double upward = glm::dot(result.normal[i] * contacts[i].normal + result.tangent[i], up);
      (*supports)[owner[i]] += contacts[i].b < 0 ? upward : -upward;
    }
  }
  if (report) *report = std::move(result);
  return totals;
}

}  // namespace smash
