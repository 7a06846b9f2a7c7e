#pragma once
/// Writes an output folder (interface.md section 3): OUT/manifest.json and OUT/frames/NNNNNN.json,
/// or OUT/frames/NNNNNN.npz when the manifest's frame_layout is FrameLayout::Npz.
///
/// Every file is written whole (temporary file + rename, io/atomic_file.hpp). The manifest is
/// written first with status "running" and frame_count 0, rewritten as frames accumulate (at
/// most once per `manifest_interval_seconds` of wall time, so long runs do not spend their
/// time rewriting a growing file list) and always by finish(). A reader that finds a
/// "running" manifest looks for frames beyond its list on disk (output_reader.hpp).

#include <chrono>
#include <string>

#include "bristle/io/frame.hpp"

namespace bristle {

struct FrameWriterOptions {
  /// Least wall time between manifest rewrites while running [s]; 0 rewrites after every frame.
  double manifest_interval_seconds = 1.0;
  /// How .npz frames store their members (when the manifest's frame_layout is Npz).
  NpzCompression npz_compression = NpzCompression::Stored;
};

class FrameWriter {
 public:
  /// Creates `out_dir` (and its parents) and `out_dir/frames`, and writes the manifest with
  /// status "running", frame_count 0 and no frame files. `manifest.frame_files`,
  /// `frame_count` and `status` are overwritten. Throws OutputError.
  FrameWriter(std::string out_dir, Manifest manifest, FrameWriterOptions options = {});

  /// Writes frames/NNNNNN.json (or .npz, manifest.frame_layout); frames must come in order 0, 1, 2, ... (frame.index is
  /// checked). Throws OutputError.
  void write(const Frame& frame);

  /// Rewrites the manifest with the final status: "complete", "interrupted" or "failed: <reason>".
  void finish(const std::string& status);

  const Manifest& manifest() const { return manifest_; }
  /// Wall time spent in write() and finish() so far, files and their encoding [s].
  double write_seconds() const { return write_seconds_; }
  const std::string& out_dir() const { return out_dir_; }

 private:
  void write_manifest();

  std::string out_dir_;
  Manifest manifest_;
  FrameWriterOptions options_;
  std::chrono::steady_clock::time_point last_manifest_write_;
  double write_seconds_ = 0.0;
};

/// True when `dir` does not exist or is an empty folder.
bool output_folder_is_empty(const std::string& dir);

/// Removes what a previous run wrote into `dir`: manifest.json, frames/ and temporary files
/// left by an interrupted run. Other files in `dir` are left alone. Throws OutputError.
void clear_output_folder(const std::string& dir);

}  // namespace bristle
