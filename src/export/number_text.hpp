#pragma once
// Numbers as text for the exporters: the shortest decimal that reads back to the same value
// (std::to_chars), so files round-trip exactly and stay small. Non-finite values become
// "nan"/"inf" as to_chars spells them; frames written by the simulator are finite.

#include <charconv>
#include <ostream>
#include <string>

namespace bristle::export_detail {

inline void put(std::ostream& out, double x) {
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, x);
  out.write(buf, res.ptr - buf);
}

inline void put_float(std::ostream& out, float x) {
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, x);
  out.write(buf, res.ptr - buf);
}

inline std::string text(double x) {
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, res.ptr);
}

}  // namespace bristle::export_detail
