#pragma once
/// Reads an output folder back: the manifest and any frame, as io/frame.hpp structs.
///
/// A finished run lists its frames in the manifest, and so does one stopped by Ctrl-C (status
/// "interrupted": every frame it wrote). A run that was killed leaves a manifest saying
/// "running" whose list may lag behind the frames on disk: for such a folder the reader also
/// takes the consecutive frames/NNNNNN.json (or .npz, the manifest's frame_layout) files that
/// follow the list. Temporary files (".*.tmp") are never frames.

#include <string>
#include <vector>

#include "bristle/io/frame.hpp"

namespace bristle {

/// Reads and checks OUT/manifest.json. Throws OutputError (file, what is wrong).
Manifest read_manifest(const std::string& out_dir);

/// Reads one frame file, in the manifest's frame_layout, and checks it against the manifest
/// (dimension, rods, vertex counts).
Frame read_frame_file(const std::string& path, const Manifest& manifest);

class OutputFolder {
 public:
  /// Opens `out_dir`: reads the manifest and finds the frame files. Throws OutputError.
  explicit OutputFolder(std::string out_dir);

  const std::string& dir() const { return dir_; }
  const Manifest& manifest() const { return manifest_; }
  /// Frames available (the manifest's frames, plus frames found on disk for a run that did
  /// not finish).
  int frame_count() const { return static_cast<int>(frame_files_.size()); }
  /// Path of frame k's file.
  std::string frame_path(int k) const;
  /// Reads frame k (0 <= k < frame_count()). Throws OutputError.
  Frame frame(int k) const;

 private:
  std::string dir_;
  Manifest manifest_;
  std::vector<std::string> frame_files_;  // relative to dir_
};

}  // namespace bristle
