#pragma once
/// "Did you mean ...?" for unknown keys, material names, rod names and enumerated values.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace bristle {

/// Optimal-string-alignment edit distance (insertions, deletions, substitutions and swaps of
/// two neighbouring characters each cost 1), ignoring ASCII case.
int edit_distance(const std::string& a, const std::string& b);

/// Words and candidates longer than this are never compared (no suggestion): the edit
/// distance costs their product in time and memory (docs/limits.md).
inline constexpr std::size_t kLongestTypo = 256;

/// The candidate closest to `word`, when it is close enough to be a plausible typo: at most
/// 1 edit for words up to 4 characters, 2 up to 8, 3 beyond. Ties go to the first candidate.
/// Candidates whose length differs from the word's by more than that are skipped unseen.
std::optional<std::string> closest_match(const std::string& word,
                                         const std::vector<std::string>& candidates);

/// `; did you mean "x"?` when closest_match finds one, otherwise "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace bristle
