// Analytic SDFs (physics.md §5): values at known points and gradients against central differences.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "core/random.h"
#include "math/sdf.h"

using namespace smash;
using glm::dvec3;

namespace {

std::vector<Collider<double>> sampleColliders() {
  std::vector<Collider<double>> cs;
  Collider<double> plane;
  plane.type = ColliderType::Plane;
  plane.point = dvec3(0, 0.5, 0);
  plane.normal = glm::normalize(dvec3(0.2, 1, -0.1));
  cs.push_back(plane);
  Collider<double> sphere;
  sphere.type = ColliderType::Sphere;
  sphere.point = dvec3(0.3, -0.2, 0.1);
  sphere.radius = 0.7;
  cs.push_back(sphere);
  Collider<double> box;
  box.type = ColliderType::Box;
  box.point = dvec3(0.1, 0.2, -0.3);
  box.halfExtents = dvec3(0.5, 0.3, 0.8);
  box.rotation = glm::angleAxis(0.6, glm::normalize(dvec3(1, 2, 3)));
  cs.push_back(box);
  Collider<double> capsule;
  capsule.type = ColliderType::Capsule;
  capsule.point = dvec3(-0.5, 0, 0);
  capsule.point2 = dvec3(0.5, 0.4, 0.2);
  capsule.radius = 0.25;
  cs.push_back(capsule);
  Collider<double> container = box;
  container.type = ColliderType::BoxContainer;
  cs.push_back(container);
  return cs;
}

}  // namespace

TEST_CASE("sdf: values at known points", "[math][sdf]") {
  auto cs = sampleColliders();
  Collider<double> plane;
  plane.point = dvec3(0, 0.01, 0);
  plane.normal = dvec3(0, 1, 0);
  REQUIRE(sdfCollider(plane, dvec3(3, 1.01, -2)).phi == Approx(1.0));
  REQUIRE(sdfCollider(plane, dvec3(3, -0.99, -2)).phi == Approx(-1.0));
  REQUIRE(sdfCollider(cs[1], cs[1].point).phi == Approx(-0.7));
  REQUIRE(sdfCollider(cs[1], cs[1].point + dvec3(0, 0, 2)).phi == Approx(1.3));
  Collider<double> box;
  box.type = ColliderType::Box;
  box.halfExtents = dvec3(1, 2, 3);
  REQUIRE(sdfCollider(box, dvec3(0, 0, 0)).phi == Approx(-1.0));           // nearest face x
  REQUIRE(sdfCollider(box, dvec3(2, 0, 0)).phi == Approx(1.0));
  REQUIRE(sdfCollider(box, dvec3(2, 3, 0)).phi == Approx(std::sqrt(2.0)));  // edge region
  REQUIRE(sdfCollider(box, dvec3(2, 3, 4)).phi == Approx(std::sqrt(3.0)));  // corner region
  Collider<double> container = box;
  container.type = ColliderType::BoxContainer;
  REQUIRE(sdfCollider(container, dvec3(0.5, 0, 0)).phi == Approx(0.5));  // inside: free space
  REQUIRE(sdfCollider(container, dvec3(1.5, 0, 0)).phi == Approx(-0.5));  // through the wall
  REQUIRE(sdfCollider(container, dvec3(0.5, 0, 0)).gradient.x == Approx(-1.0));
  dvec3 axis = glm::normalize(cs[3].point2 - cs[3].point);
  REQUIRE(sdfCollider(cs[3], cs[3].point - 0.25 * axis).phi == Approx(0.0).margin(1e-15));
  REQUIRE(sdfCollider(cs[3], dvec3(-1.0, 0, 0)).phi == Approx(0.25));  // beyond end cap
  // Union is the minimum.
  SdfSample<double> u = sdfUnion(cs.data(), 2, dvec3(0.3, -0.2, 0.1));
  REQUIRE(u.phi == Approx(-0.7));
}

TEST_CASE("sdf: gradients match central differences and have unit length", "[math][sdf]") {
  auto cs = sampleColliders();
  Random rng(5);
  const double h = 1e-6;
  for (std::size_t k = 0; k < cs.size(); ++k) {
    INFO("collider " << k);
    int checked = 0, skipped = 0;
    for (int s = 0; s < 4000; ++s) {
      dvec3 x = rng.uniform3(-2, 2);
      SdfSample<double> at = sdfCollider(cs[k], x);
      REQUIRE(glm::length(at.gradient) == Approx(1.0).margin(1e-12));
      // Skip points within 1e-3 of the medial set, where φ is not differentiable: there the
      // one-sided gradients of nearby points disagree.
      bool smooth = true;
      for (int a = 0; a < 3 && smooth; ++a)
        for (double sgn : {-1.0, 1.0}) {
          dvec3 d(0.0);
          d[a] = sgn * 1e-3;
          if (glm::length(sdfCollider(cs[k], x + d).gradient - at.gradient) > 0.05) smooth = false;
        }
      if (!smooth) {
        ++skipped;
        continue;
      }
      dvec3 fd;
      for (int a = 0; a < 3; ++a) {
        dvec3 d(0.0);
        d[a] = h;
        fd[a] = (sdfCollider(cs[k], x + d).phi - sdfCollider(cs[k], x - d).phi) / (2 * h);
      }
      REQUIRE(glm::length(fd - at.gradient) < 1e-6);
      ++checked;
    }
    REQUIRE(skipped < 200);  // the check really ran on almost every point
    REQUIRE(checked > 3800);
  }
}

TEST_CASE("sdf: float instantiation agrees with double", "[math][sdf][float]") {
  auto cs = sampleColliders();
  Random rng(9);
  for (const auto& c : cs) {
    Collider<float> cf;
    cf.type = c.type;
    cf.point = glm::vec3(c.point);
    cf.normal = glm::vec3(c.normal);
    cf.point2 = glm::vec3(c.point2);
    cf.halfExtents = glm::vec3(c.halfExtents);
    cf.radius = float(c.radius);
    cf.rotation = glm::quat(c.rotation);
    for (int s = 0; s < 1000; ++s) {
      dvec3 x = rng.uniform3(-2, 2);
      REQUIRE(sdfCollider(cf, glm::vec3(x)).phi == Approx(sdfCollider(c, x).phi).margin(1e-5));
    }
  }
}
