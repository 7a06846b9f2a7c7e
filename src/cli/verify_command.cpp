/// bristle verify [--quick] [--scenes DIR] [--out DIR] [--docs PATH] [--json]
#include <filesystem>
#include <ostream>

#include "bristle/analysis/validation.hpp"
#include "bristle/analysis/validation_report.hpp"
#include "bristle/cli/args.hpp"
#include "bristle/cli/command.hpp"
#include "bristle/io/atomic_file.hpp"
#include "bristle/io/output_error.hpp"

namespace bristle::cli {

namespace {

const char* const kUsage =
    "usage: bristle verify [--quick] [--scenes DIR] [--out DIR] [--docs PATH] [--json]\n"
    "\n"
    "Runs the physical validation suite (docs/validation.md) on the scenes in scenes/validation/:\n"
    "  0  the elastica reference solver against published tip deflections\n"
    "  1  self-weight cantilevers, Gamma = 0.1 .. 100: tip vs the elastica, < 0.5% of L\n"
    "  2  tip-loaded cantilevers, alpha = 0.1 .. 10: tip vs the elastica and Bisshopp-Drucker\n"
    "  3  clamped-free natural frequencies in 2D and 3D, within 0.5%\n"
    "  4  Greenhill's self-weight buckling threshold, within 2% of 7.8373\n"
    "  5  convergence of the tip error with 10 .. 160 segments, observed order >= 1\n"
    "and, on rods with twist built in code, each with a refinement series (order >= 1.5):\n"
    "  6  torsional frequencies of a clamped-free rod, k = 1..3, within 0.5%\n"
    "  7  Greenhill's twist buckling, M L / (E I) = 2.861 pi, within 3%\n"
    "  8  a close-coiled spring, k = G d^4 / (8 D^3 n), within 3%\n"
    "  9  a quarter circle loaded out of its plane (bending + torsion), within 1%\n"
    "and prints the table (case, parameters, reference, Bristle, error, target, result).\n"
    "Clamps are two fixed vertices; L is measured from the first edge's midpoint.\n"
    "\n"
    "options:\n"
    "  --quick        convergence up to 80 segments, coarser Greenhill tolerances\n"
    "  --scenes DIR   the validation scenes (default: scenes/validation, from the repository root)\n"
    "  --out DIR      also write DIR/validation.md, DIR/images/*.png and DIR/results.json\n"
    "  --docs PATH    also write the Markdown page PATH (e.g. docs/validation.md) and its plots\n"
    "                 in the folder images/ beside it\n"
    "  --json         print the results as JSON instead of the table\n"
    "  -h, --help     show this help\n"
    "\n"
    "exit codes: 0 every check passes, 1 a check fails, 2 bad usage, a missing or invalid scene,\n"
    "or a scene that is not the case it stands for\n";

int verify(const std::vector<std::string>& args, CommandContext& context) {
  const ParsedArgs parsed = parse_args(args, {{"--quick", "", false},
                                              {"--scenes", "", true},
                                              {"--out", "", true},
                                              {"--docs", "", true},
                                              {"--json", "", false}});
  expect_positionals(parsed, {});
  ValidationSettings settings;
  settings.quick = parsed.has("--quick");
  if (const auto dir = parsed.value("--scenes")) settings.scene_dir = *dir;
  if (!std::filesystem::is_directory(settings.scene_dir)) {
    context.err << "error: no validation scenes at '" << settings.scene_dir
                << "': run from the repository root or pass --scenes DIR\n";
    return kExitUsage;
  }
  settings.progress = [&](const std::string& line) { context.err << "verify: " << line << "\n"; };

  ValidationReport report;
  try {
    report = run_validation(settings);
  } catch (const ValidationError& e) {
    context.err << "error: " << e.what() << "\n";
    return kExitUsage;
  }

  if (parsed.has("--json")) context.out << validation_json(report);
  else context.out << validation_table_text(report);

  if (const auto out = parsed.value("--out")) {
    const std::filesystem::path dir(*out);
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    if (error) throw OutputError(dir.string(), "cannot create the folder: " + error.message());
    write_validation_docs(report, (dir / "validation.md").string());
    write_file_atomically((dir / "results.json").string(), validation_json(report));
    context.err << "verify: wrote " << (dir / "validation.md").string() << ", its images and results.json\n";
  }
  if (const auto docs = parsed.value("--docs")) {
    for (const std::string& path : write_validation_docs(report, *docs)) context.err << "verify: wrote " << path << "\n";
  }
  return report.passed() ? kExitSuccess : kExitFailure;
}

}  // namespace

Command make_verify_command() {
  return {"verify", "run the physical validation suite and report against published results", kUsage, verify};
}

}  // namespace bristle::cli
