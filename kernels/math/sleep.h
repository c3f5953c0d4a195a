// Sleeping (docs/physics.md §9, docs/solver.md "Sleeping"): bodies at rest stop being
// stepped and wake when something touches them, after Box2D v3 (solver sets, b2_timeToSleep)
// and Jolt (a point-velocity threshold). The same functions, in double for the reference and in
// float for every backend:
//
//   restSpeed        the fastest point of a body: |v| + r |ω| (r: its bounding radius)
//   nextRestSteps    how many steps a body has been slow while supported (touching a collider or a body)
//   sleepDecision    asleep / woken from the island's minimum
//
// An island is a set of bodies connected through pairs with contact points this step. Every body
// counts its steps at rest; an island whose minimum reaches the sleep time falls asleep at once
// (velocities zeroed), and a sleeping body whose island minimum is below it — an awake body that
// has not been at rest that long touches it — wakes with its count reset to 0. The minimum is
// relaxed over touching pairs kIslandPasses times (double-buffered, the same on every backend and
// in the reference), together with the least body index, which a body keeps as its island label
// while asleep: islands wider than that are handled in parts. Pairs of two sleeping bodies are not
// tested (no contact points); a sleeping body touched by an awake one wakes its whole island
// (label) before the solve.
//
// A sleeping body is static for the awake bodies that touch it (zero inverse mass and inertia,
// zero velocity): it is not integrated, gathers no contacts and is not projected.
#pragma once

#include "math/hd.h"

namespace smash {

/// Relaxation passes of the island minimum per step.
constexpr int kIslandPasses = 16;

template <class T>
struct SleepSettings {
  bool enabled = false;
  T speed = 0;    ///< a body whose fastest point is slower is at rest (m/s)
  int steps = 1;  ///< steps at rest, for every body of its island, before it sleeps (≥ 1)
};

/// The speed of a body's fastest point, bounded through its radius.
template <class T>
SMASH_HD T restSpeed(const Vec3<T>& v, const Vec3<T>& w, T radius) {
  return glm::length(v) + radius * glm::length(w);
}

/// Steps at rest after this one: one more while the body is slow and supported (touching a
/// collider or another body), else 0 — counted in whole steps, so float and double agree on
/// when the time is up; held at s.steps once reached. A free body never sleeps: a slow spin in
/// zero gravity keeps its rotation.
template <class T>
SMASH_HD int nextRestSteps(const SleepSettings<T>& s, int restSteps, const Vec3<T>& v, const Vec3<T>& w, T radius,
                           bool supported) {
  if (!(supported && restSpeed(v, w, radius) < s.speed)) return 0;
  return restSteps < s.steps ? restSteps + 1 : s.steps;
}

/// What a body does once its island's minimum is known.
enum class SleepChange { None, FallAsleep, Wake };

template <class T>
SMASH_HD SleepChange sleepDecision(const SleepSettings<T>& s, bool asleep, int islandMinimum) {
  if (asleep) return islandMinimum < s.steps ? SleepChange::Wake : SleepChange::None;
  return islandMinimum >= s.steps ? SleepChange::FallAsleep : SleepChange::None;
}

/// A body woken before the solve (an awake body touched its island) takes this step as an awake
/// body at rest would have: the velocity of the step's gravity and damping, and its predicted
/// centre moved by it (Box2D wakes an island before the step's velocity integration). Its
/// rotation and angular velocity stay as they were at rest.
template <class V, class T>
SMASH_HD void wakeIntegrate(V& velocity, V& centre, const V& gravity, T linearDamping, T h) {
  velocity = h * gravity * linearDamping;
  centre += h * velocity;
}

}  // namespace smash
