#include "bristle/io/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "bristle/io/output_error.hpp"

namespace bristle {

namespace fs = std::filesystem;

bool is_temporary_file_name(const std::string& file_name) {
  const std::string suffix = ".tmp";
  return file_name.size() > suffix.size() && file_name.front() == '.' &&
         file_name.compare(file_name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  const fs::path target(path);
  const fs::path temporary = target.parent_path() / ("." + target.filename().string() + ".tmp");
  {
    std::ofstream stream(temporary, std::ios::binary | std::ios::trunc);
    if (!stream) throw OutputError(temporary.string(), std::string("cannot create file: ") + std::strerror(errno));
    stream.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    stream.close();
    if (!stream) {
      std::error_code ignored;
      fs::remove(temporary, ignored);
      throw OutputError(temporary.string(), "cannot write file (disk full?)");
    }
  }
  std::error_code error;
  fs::rename(temporary, target, error);
  if (error) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw OutputError(path, "cannot rename temporary file into place: " + error.message());
  }
}

}  // namespace bristle
