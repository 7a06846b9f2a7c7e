#include "bristle/io/compare.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "bristle/io/json_text.hpp"
#include "bristle/io/output_reader.hpp"
#include "bristle/math/types.hpp"

namespace bristle {

namespace {

bool within(double a, double b, const CompareOptions& options) {
  if (a == b) return true;  // also equal infinities
  const double difference = std::abs(a - b);
  // NaN anywhere compares as different (the test below is false).
  return difference <= options.atol + options.rtol * std::max(std::abs(a), std::abs(b));
}

class Comparison {
 public:
  Comparison(CompareResult& result, const CompareOptions& options) : result_(result), options_(options) {}

  /// A director pair: the angle between them against angle_tol.
  void director(const ValueDifference& where, const Vec3& a, const Vec3& b) {
    ++result_.values_compared;
    ++result_.directors_compared;
    // atan2 of |a x b| and a . b: accurate at small angles, where acos of the dot is not.
    double angle = a == b ? 0.0 : std::atan2(a.cross(b).norm(), a.dot(b));
    if (std::isnan(angle)) angle = INFINITY;
    ValueDifference d = where;
    d.difference = angle;
    for (int k = 0; k < 3; ++k) {
      d.director_a[k] = a[k];
      d.director_b[k] = b[k];
    }
    if (!result_.largest_director || angle > result_.largest_director->difference) result_.largest_director = d;
    if (!(angle <= options_.angle_tol)) {
      ++result_.values_beyond_tolerance;
      result_.same = false;
      if (!result_.first) result_.first = d;
    }
  }

  void value(const ValueDifference& where, double a, double b) {
    ++result_.values_compared;
    const double difference = std::isnan(a) || std::isnan(b) ? INFINITY : std::abs(a - b);
    if (!result_.largest || difference > result_.largest->difference) record(result_.largest, where, a, b, difference);
    if (!within(a, b, options_)) {
      ++result_.values_beyond_tolerance;
      result_.same = false;
      if (!result_.first) record(result_.first, where, a, b, difference);
    }
  }

 private:
  static void record(std::optional<ValueDifference>& slot, const ValueDifference& where, double a, double b,
                     double difference) {
    slot = where;
    slot->a = a;
    slot->b = b;
    slot->difference = difference;
  }

  CompareResult& result_;
  const CompareOptions& options_;
};

const char* axis_name(int component) { return component == 0 ? "x" : component == 1 ? "y" : "z"; }

}  // namespace

CompareResult compare_outputs(const std::string& a_dir, const std::string& b_dir, const CompareOptions& options) {
  const OutputFolder a(a_dir), b(b_dir);
  CompareResult result;
  result.status_a = a.manifest().status;
  result.status_b = b.manifest().status;
  auto structural = [&](const std::string& sentence) {
    result.same = false;
    result.structure.push_back(sentence);
  };

  const Manifest& ma = a.manifest();
  const Manifest& mb = b.manifest();
  if (ma.dimension != mb.dimension) {
    structural("dimensions differ: " + std::to_string(ma.dimension) + " in A, " + std::to_string(mb.dimension) + " in B");
    return result;
  }
  if (ma.rods.size() != mb.rods.size()) {
    structural("rod counts differ: " + std::to_string(ma.rods.size()) + " in A, " + std::to_string(mb.rods.size()) +
               " in B");
    return result;
  }
  for (std::size_t r = 0; r < ma.rods.size(); ++r) {
    if (ma.rods[r].name != mb.rods[r].name)
      structural("rod " + std::to_string(r) + " is \"" + ma.rods[r].name + "\" in A and \"" + mb.rods[r].name + "\" in B");
    else if (ma.rods[r].vertex_count != mb.rods[r].vertex_count)
      structural("rod \"" + ma.rods[r].name + "\" has " + std::to_string(ma.rods[r].vertex_count) +
                 " vertices in A and " + std::to_string(mb.rods[r].vertex_count) + " in B");
    else if (ma.rods[r].twist != mb.rods[r].twist)
      structural("rod \"" + ma.rods[r].name + "\" has twist (material directors) in " + (ma.rods[r].twist ? "A" : "B") +
                 " and not in " + (ma.rods[r].twist ? "B" : "A"));
  }
  if (!result.structure.empty()) return result;
  if (a.frame_count() != b.frame_count())
    structural("frame counts differ: " + std::to_string(a.frame_count()) + " in A, " + std::to_string(b.frame_count()) +
               " in B");

  // Compare the frames both folders have, so that a shorter run still reports where the
  // common frames start to differ.
  Comparison comparison(result, options);
  const int frames = std::min(a.frame_count(), b.frame_count());
  for (int k = 0; k < frames; ++k) {
    const Frame fa = a.frame(k), fb = b.frame(k);
    ValueDifference where;
    where.frame = k;
    where.quantity = "time";
    comparison.value(where, fa.time, fb.time);
    for (std::size_t r = 0; r < fa.rods.size(); ++r) {
      where.rod = static_cast<int>(r);
      where.rod_name = fa.rods[r].name;
      const int n = static_cast<int>(fa.rods[r].positions.size());
      for (int i = 0; i < n; ++i) {
        where.vertex = i;
        for (int c = 0; c < ma.dimension; ++c) {
          where.component = c;
          where.quantity = "position";
          comparison.value(where, fa.rods[r].positions[i][c], fb.rods[r].positions[i][c]);
          if (options.velocities) {
            where.quantity = "velocity";
            comparison.value(where, fa.rods[r].velocities[i][c], fb.rods[r].velocities[i][c]);
          }
        }
      }
      // A rod with twist: its edges' material directors (the same count in both: the
      // manifests agree on the rod's vertices and twist).
      where.quantity = "director";
      where.component = 0;
      for (std::size_t j = 0; j < fa.rods[r].directors.size() && j < fb.rods[r].directors.size(); ++j) {
        where.vertex = static_cast<int>(j);
        comparison.director(where, fa.rods[r].directors[j], fb.rods[r].directors[j]);
      }
    }
    ++result.frames_compared;
  }
  return result;
}

namespace {

std::string format_angle(double angle) {
  std::ostringstream text;
  text << angle;
  return text.str();
}

std::string describe_value(const ValueDifference& d) {
  std::ostringstream text;
  text << "frame " << d.frame;
  if (d.quantity == "time") {
    text << ", time";
  } else if (d.quantity == "director") {
    const auto vector = [](const std::array<double, 3>& v) {
      return "(" + format_double(v[0]) + ", " + format_double(v[1]) + ", " + format_double(v[2]) + ")";
    };
    text << ", rod \"" << d.rod_name << "\" (index " << d.rod << "), edge " << d.vertex << ", director: A = "
         << vector(d.director_a) << ", B = " << vector(d.director_b) << ", angle = " << d.difference << " rad";
    return text.str();
  } else {
    text << ", rod \"" << d.rod_name << "\" (index " << d.rod << "), vertex " << d.vertex << ", " << d.quantity << "."
         << axis_name(d.component);
  }
  text << ": A = " << format_double(d.a) << ", B = " << format_double(d.b) << ", |A - B| = " << d.difference;
  return text.str();
}

}  // namespace

std::string describe(const CompareResult& result, const CompareOptions& options) {
  std::ostringstream text;
  text << (result.same ? "same" : "different") << " (atol " << options.atol << ", rtol " << options.rtol
       << (options.velocities ? ", positions and velocities" : ", positions")
       << (result.directors_compared > 0 ? ", directors within " + format_angle(options.angle_tol) + " rad" : std::string())
       << "; " << result.frames_compared
       << " frames, " << result.values_compared << " values compared)\n";
  for (const std::string& sentence : result.structure) text << "  " << sentence << "\n";
  if (result.first)
    text << "  first difference beyond tolerance: " << describe_value(*result.first) << "\n"
         << "  values beyond tolerance: " << result.values_beyond_tolerance << "\n";
  if (result.largest) text << "  largest difference: " << describe_value(*result.largest) << "\n";
  if (result.largest_director)
    text << "  largest director difference: " << describe_value(*result.largest_director) << "\n";
  if (result.status_a != result.status_b)
    text << "  note: status is \"" << result.status_a << "\" in A and \"" << result.status_b << "\" in B\n";
  return text.str();
}

}  // namespace bristle
