#pragma once
/// "Did you mean ...?" for unknown keys, material names, rod names and enumerated values.

#include <optional>
#include <string>
#include <vector>

namespace bristle {

/// Optimal-string-alignment edit distance (insertions, deletions, substitutions and swaps of
/// two neighbouring characters each cost 1), ignoring ASCII case.
int edit_distance(const std::string& a, const std::string& b);

/// The candidate closest to `word`, when it is close enough to be a plausible typo: at most
/// 1 edit for words up to 4 characters, 2 up to 8, 3 beyond. Ties go to the first candidate.
std::optional<std::string> closest_match(const std::string& word,
                                         const std::vector<std::string>& candidates);

/// `; did you mean "x"?` when closest_match finds one, otherwise "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace bristle
