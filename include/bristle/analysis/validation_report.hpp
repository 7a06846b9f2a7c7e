#pragma once
/// The validation suite's results as text: the table for the terminal, and docs/validation.md
/// with its images (two, and a third for the cases with twist).

#include <string>
#include <vector>

#include "bristle/analysis/validation.hpp"

namespace bristle {

/// The table (case, parameters, reference, Bristle, error, target, pass/fail), fixed-width,
/// followed by the convergence studies (error per N, pairwise and least-squares orders).
std::string validation_table_text(const ValidationReport& report);

/// The Markdown page; images are linked as `image_prefix` + "validation_centrelines.png",
/// "validation_convergence.png" and (cases with twist) "validation_twist_convergence.png".
std::string validation_markdown(const ValidationReport& report, const std::string& image_prefix);

/// Every row and every convergence study as one JSON document (for scripts and CI logs).
std::string validation_json(const ValidationReport& report);

/// Writes `markdown_path` and, in the folder "images" beside it (created if missing),
/// validation_centrelines.png and validation_convergence.png, and validation_twist_convergence.png
/// when the report has cases with twist; each file written whole (write then rename). Returns
/// the paths written, the page last. Throws OutputError when a file cannot be written.
std::vector<std::string> write_validation_docs(const ValidationReport& report, const std::string& markdown_path);

}  // namespace bristle
