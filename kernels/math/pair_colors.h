// Colour classes of touching body pairs for the Gauss–Seidel contact rounds (docs/physics.md §6,
// "Rounds"; docs/solver.md "Gauss–Seidel rounds"). Two pairs of one colour share no awake body,
// so a colour's pairs are swept at once, each writing its two bodies' velocities; the colours
// follow one another, so a pair sees the velocities its neighbours of earlier colours left —
// Gauss–Seidel over pairs, as Box2D v3's graph colouring (src/constraint_graph.c) runs it.
//
// The colouring is speculative greedy with conflict repair (Gebremedhin & Manne, 2000), double
// buffered so that it is the same on every backend and in the reference: in each pass an
// uncoloured pair takes the least colour none of its neighbours held as the pass started
// (tentative), and of two neighbours that took the same colour in one pass the one that
// outranks keeps it (a fixed hash of the pair's bodies, then the bodies). A pair still
// uncoloured after kColorPasses passes, or that needs a colour past kPairColors, is swept on its
// own after the colours (kOverflowColor), pairs in index order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "math/hd.h"

namespace smash {

constexpr int kPairColors = 24;              ///< colour classes, one launch each per round
constexpr int kColorPasses = 12;             ///< passes of the colouring (two launches each)
constexpr int kUncolored = -1;               ///< not coloured yet
constexpr int kOverflowColor = kPairColors;  ///< swept one pair after another, after the colours
constexpr int kNotSolved = kPairColors + 1;  ///< a slot without a touching pair (sorted last)

/// A pair's rank in the colouring: a hash of its bodies (splitmix64's finaliser), so that the
/// winners of a conflict are spread over the pile rather than in index order.
SMASH_HD std::uint64_t pairRank(int a, int b) {
  std::uint64_t x = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// Pair (a, b) outranks pair (c, d): the higher rank, ties by the bodies (pairs are distinct).
SMASH_HD bool outranks(int a, int b, int c, int d) {
  const std::uint64_t r = pairRank(a, b), s = pairRank(c, d);
  if (r != s) return r > s;
  return a != c ? a < c : b < d;
}

/// Tentative colour of a pair uncoloured as the pass starts: the least colour no neighbour holds
/// (`forNeighbours(f)` calls f(c, d, colour) for every touching pair (c, d) that shares an awake
/// body with it, with its colour as the pass started); kOverflowColor when all are taken.
template <class ForNeighbours>
SMASH_HD int tentativeColor(const ForNeighbours& forNeighbours) {
  static_assert(kPairColors <= 32, "colours are a 32-bit mask");
  std::uint32_t used = 0;
  forNeighbours([&](int, int, int colour) {
    if (colour >= 0 && colour < kPairColors) used |= 1u << colour;
  });
  for (int k = 0; k < kPairColors; ++k)
    if (!((used >> k) & 1u)) return k;
  return kOverflowColor;
}

/// The pair's colour after the pass's repair: its tentative colour `mine`, unless a neighbour that
/// also took a colour in this pass took the same one and outranks it (`forNeighbours` as above,
/// with the neighbours' tentative colours, and whether each was new in this pass).
template <class ForNeighbours>
SMASH_HD int repairedColor(int a, int b, int mine, const ForNeighbours& forNeighbours) {
  if (mine == kOverflowColor) return mine;  // the overflow is swept in order: no conflict
  bool lost = false;
  forNeighbours([&](int c, int d, int colour, bool fresh) {
    if (fresh && colour == mine && outranks(c, d, a, b)) lost = true;
  });
  return lost ? kUncolored : mine;
}

#if !defined(__CUDA_ARCH__)
/// The colouring on the host, pass by pass as the kernels run it (ColorSeed, ColorTentative,
/// ColorRepair): the reference's, and the tests'. `bodies(p)` gives pair p's bodies (a, b) and
/// `forNeighbours(p, f)` calls f(r) for every touching pair r ≠ p that shares an awake body with
/// it. Returns each pair's colour, kOverflowColor for the pairs swept in the overflow.
template <class Bodies, class ForNeighbours>
std::vector<int> colorPairsOnHost(std::size_t count, const Bodies& bodies, const ForNeighbours& forNeighbours) {
  std::vector<int> from(count, kUncolored), tentative(count), to(count);
  for (int pass = 0; pass < kColorPasses; ++pass) {
    for (std::size_t p = 0; p < count; ++p)
      tentative[p] = from[p] != kUncolored ? from[p] : tentativeColor([&](const auto& f) {
        forNeighbours(p, [&](std::size_t r) {
          const std::pair<int, int> e = bodies(r);
          f(e.first, e.second, from[r]);
        });
      });
    for (std::size_t p = 0; p < count; ++p) {
      if (from[p] != kUncolored) {
        to[p] = from[p];
        continue;
      }
      const std::pair<int, int> mine = bodies(p);
      to[p] = repairedColor(mine.first, mine.second, tentative[p], [&](const auto& f) {
        forNeighbours(p, [&](std::size_t r) {
          const std::pair<int, int> e = bodies(r);
          f(e.first, e.second, tentative[r], from[r] == kUncolored);
        });
      });
    }
    std::swap(from, to);
  }
  for (int& c : from)
    if (c == kUncolored) c = kOverflowColor;
  return from;
}
#endif

}  // namespace smash
