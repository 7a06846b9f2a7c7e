#pragma once
/// A small deterministic random number generator for scene generators (brush jitter).
///
/// Generated scenes must be the same on every platform and standard library, so we use
/// splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
/// OOPSLA 2014) and our own conversion to doubles instead of <random>'s distributions,
/// whose algorithms the standard leaves to the implementation.

#include <cstdint>

namespace bristle {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}

  /// The next 64 random bits.
  std::uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  /// Uniform in [0, 1): the top 53 bits scaled by 2^-53, exact in a double.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  /// Uniform in [-1, 1).
  double symmetric() { return 2.0 * uniform() - 1.0; }

 private:
  std::uint64_t state_;
};

}  // namespace bristle
