#pragma once
// Whole-file writes for the exporters: the text goes to a temporary file next to the target
// (".<name>.tmp", the form io/atomic_file.hpp uses and readers skip), which is renamed over
// the target only when complete. An export that is interrupted or fails never leaves a
// truncated file under the final name.

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "bristle/export/export_error.hpp"

namespace bristle::export_detail {

/// The temporary name used while `path` is being written.
inline std::string temporary_path(const std::string& path) {
  const std::filesystem::path target(path);
  return (target.parent_path() / ("." + target.filename().string() + ".tmp")).string();
}

/// Moves a finished temporary file into place. Throws ExportError (and removes the temporary).
inline void commit_temporary(const std::string& temporary, const std::string& path) {
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw ExportError("cannot write '" + path + "': " + error.message());
  }
}

/// Streams `writer(out)` into `path`, whole. Throws ExportError.
template <class Writer>
void write_whole(const std::string& path, Writer&& writer) {
  const std::string temporary = temporary_path(path);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw ExportError("cannot open '" + path + "' for writing: " + std::strerror(errno));
    try {
      writer(out);
    } catch (...) {
      out.close();
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      throw;
    }
    out.close();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      throw ExportError("cannot write '" + path + "' (disk full?)");
    }
  }
  commit_temporary(temporary, path);
}

}  // namespace bristle::export_detail
