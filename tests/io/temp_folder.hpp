#pragma once
// A fresh folder under the system's temporary directory, removed when the test ends (kept
// when BRISTLE_KEEP_TEST_FILES is set, for debugging).

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace bristle::test {

class TempFolder {
 public:
  explicit TempFolder(const std::string& label) {
    std::string pattern = (std::filesystem::temp_directory_path() / ("bristle-" + label + "-XXXXXX")).string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = pattern;
  }
  ~TempFolder() {
    if (std::getenv("BRISTLE_KEEP_TEST_FILES")) return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;

  const std::filesystem::path& path() const { return path_; }
  /// A path inside the folder (not created).
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace bristle::test
