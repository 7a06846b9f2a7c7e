#pragma once
/// Whole-file writes: a reader (or a crash) never sees a half-written file.

#include <string>

namespace bristle {

/// Writes `contents` to a temporary file next to `path` (same folder, name starting with '.'
/// and ending in ".tmp"), then renames it over `path`. rename() within one folder is atomic on
/// POSIX file systems, so `path` holds either its old contents or the new ones, never a part.
/// No fsync: the guarantee is against crashes of this process, not power loss.
/// Throws OutputError when the file cannot be written.
void write_file_atomically(const std::string& path, const std::string& contents);

/// True for the temporary names write_file_atomically uses; readers skip them.
bool is_temporary_file_name(const std::string& file_name);

}  // namespace bristle
