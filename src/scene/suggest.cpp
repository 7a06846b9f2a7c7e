#include "bristle/scene/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace bristle {
namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// How many edits still look like a typo rather than a different word.
int typo_budget(const std::string& word) {
  if (word.size() <= 4) return 1;
  if (word.size() <= 8) return 2;
  return 3;
}

}  // namespace

int edit_distance(const std::string& a, const std::string& b) {
  const std::size_t n = a.size(), m = b.size();
  // d[i][j]: distance between the first i characters of a and the first j of b.
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1, 0));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const int substitution = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + substitution});
      // A swap of neighbours ("desnity") is one slip of the fingers, not two.
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

std::optional<std::string> closest_match(const std::string& word,
                                         const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  // The distance is at least the difference in length, and the budget is at most 3: longer
  // words (a 20 MB value pasted by mistake) are no typo of anything, and the table that
  // edit_distance fills is |word| x |candidate|, so they are never compared.
  if (word.size() > kLongestTypo) return best;
  int best_distance = typo_budget(word) + 1;
  for (const std::string& candidate : candidates) {
    const std::size_t longer = std::max(word.size(), candidate.size());
    const std::size_t shorter = std::min(word.size(), candidate.size());
    if (longer - shorter >= static_cast<std::size_t>(best_distance) || candidate.size() > kLongestTypo) continue;
    const int distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  const auto match = closest_match(word, candidates);
  return match ? "; did you mean \"" + *match + "\"?" : std::string();
}

}  // namespace bristle
