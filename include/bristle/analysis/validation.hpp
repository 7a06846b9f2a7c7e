#pragma once
/// The validation suite behind `bristle verify`: runs every case of validation_cases.hpp on
/// the scenes in scenes/validation/, and collects one table row per compared quantity plus
/// the data of the plots (docs/validation.md).
///
/// Scenes and what is compared (every dimensionless number is computed from the scene):
///
///   1  self_weight_gamma_{0.1,1,10,100}.json   tip position vs the elastica, < 0.5% of L
///   2  tip_load_alpha_{0.1,1,10}.json          tip position vs the elastica, < 0.5% of L
///                                               (alpha = 1 also vs Bisshopp and Drucker 1945)
///   3  modes_clamped_free_{2d,3d}.json         first 3 bending frequencies, within 0.5%
///   4  greenhill_column.json                   buckling Gamma, within 2% of 7.8373
///   5  self_weight_gamma_10.json, tip_load_alpha_1.json resampled to 10..160 segments:
///      observed order of convergence of the tip error, >= 1
///
/// and, for rods with twist, on rods built in code (validation_cases.hpp), each with a
/// refinement series and its observed order (>= 1.5):
///
///   6  torsional frequencies of a clamped-free rod, k = 1..3, within 0.5% at 100 segments
///   7  Greenhill's twist buckling, M L / (E I) within 3% of 2.861 pi at 160 segments
///   8  a close-coiled spring's stiffness within 3% of G d^4 / (8 D^3 n) at 48 edges per turn
///   9  a quarter-circle cantilever's out-of-plane tip deflection within 1% at 160 segments
///
/// The targets are issue 4's. The scenes place the clamp as validation_clamped_rod.hpp says.

#include <functional>
#include <string>
#include <vector>

#include "bristle/analysis/validation_cases.hpp"

namespace bristle {

/// One row of the table.
struct ValidationCheck {
  std::string case_name;    ///< "1 self-weight cantilever"
  std::string scene;        ///< file name of the scene, "" for derived checks
  std::string parameters;   ///< "Gamma = 10, N = 80"
  std::string reference;    ///< the reference value, as text
  std::string bristle;      ///< Bristle's value, as text
  std::string error;        ///< the error, as text with its unit
  std::string target;       ///< "< 0.5% of L"
  bool pass = false;
  std::string note;         ///< a failure's reason, or ""
};

/// A cantilever's simulated centreline and its reference curve, units of L (plot of case 1).
struct CentrelinePlotData {
  std::string label;  ///< "Gamma = 10"
  std::vector<Vec2> bristle;
  std::vector<Vec2> reference;
};

/// Error against segments (plots of case 5 and of cases 6 to 9).
struct ConvergencePlotData {
  std::string label;  ///< "self weight, Gamma = 10"
  ConvergenceStudy study;
  std::string quantity = "tip error";   ///< what study.errors are, in the text table
  std::string unit = " L";              ///< appended to each error in the text table
  std::string heading = "tip error / L";  ///< the error column's heading in docs/validation.md
  std::string resolution = "N";         ///< what study.segments count
  /// Cases 6 to 9: Bristle's value(s) at each of study.segments with their errors against the
  /// reference, as text, and a sentence for docs/validation.md before the table (the rod, and
  /// runs outside study.segments). Empty for case 5.
  std::vector<std::string> values;
  std::string before;
};

struct ValidationReport {
  std::vector<ValidationCheck> checks;
  std::vector<CentrelinePlotData> centrelines;
  std::vector<ConvergencePlotData> convergence;
  /// Cases 6 to 9 (rods with twist): relative errors, their own plot.
  std::vector<ConvergencePlotData> twist_convergence;
  bool quick = false;
  double seconds = 0.0;  ///< wall time of the whole suite [s]

  bool passed() const;
  int failures() const;
};

struct ValidationSettings {
  std::string scene_dir = "scenes/validation";
  /// Quick: the convergence studies stop at 80 segments and Greenhill's threshold is found to
  /// 1e-4 instead of 1e-6; everything else is the same.
  bool quick = false;
  /// Called with a short line before each case (progress on stderr); may be empty.
  std::function<void(const std::string&)> progress;
};

/// The segment counts of the convergence study.
std::vector<int> convergence_segments(bool quick);

/// Runs the whole suite. Throws SceneError for an unreadable or invalid scene, and
/// ValidationError for a scene that is not the case it stands for; a solver that fails, or a
/// result off target, is a failed row.
ValidationReport run_validation(const ValidationSettings& settings);

}  // namespace bristle
