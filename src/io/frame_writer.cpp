#include "bristle/io/frame_writer.hpp"

#include <filesystem>

#include "bristle/io/atomic_file.hpp"
#include "bristle/io/frame_json.hpp"
#include "bristle/io/frame_npz.hpp"
#include "bristle/io/output_error.hpp"

namespace bristle {

namespace fs = std::filesystem;

FrameWriter::FrameWriter(std::string out_dir, Manifest manifest, FrameWriterOptions options)
    : out_dir_(std::move(out_dir)), manifest_(std::move(manifest)), options_(options) {
  std::error_code error;
  fs::create_directories(fs::path(out_dir_) / "frames", error);
  if (error) throw OutputError(out_dir_, "cannot create the output folder: " + error.message());
  manifest_.frame_count = 0;
  manifest_.frame_files.clear();
  manifest_.status = "running";
  write_manifest();
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

void FrameWriter::write(const Frame& frame) {
  const auto start = std::chrono::steady_clock::now();
  if (frame.index != manifest_.frame_count)
    throw OutputError(out_dir_, "frame " + std::to_string(frame.index) + " written out of order (expected frame " +
                                    std::to_string(manifest_.frame_count) + ")");
  const FrameLayout layout = manifest_.frame_layout;
  const std::string name = frame_file_name(frame.index, layout);
  // Directors exactly for the manifest's rods with twist, one per edge: a reader requires them.
  for (std::size_t r = 0; r < frame.rods.size() && r < manifest_.rods.size(); ++r) {
    const RodInfo& info = manifest_.rods[r];
    const std::size_t expected = info.twist ? static_cast<std::size_t>(edge_count_of(info.vertex_count)) : 0;
    if (frame.rods[r].directors.size() != expected)
      throw OutputError((fs::path(out_dir_) / name).string(),
                        "rod \"" + info.name + "\": " + std::to_string(frame.rods[r].directors.size()) +
                            " material directors, expected " + std::to_string(expected) +
                            (info.twist ? " (one per edge of a rod with twist)" : " (the rod has no twist)"));
  }
  // The last line of defence: JSON has no infinity, and a null would lie about the state. The
  // binary layout could hold one, but frames mean the same whatever their layout.
  const std::string bad = first_non_finite(frame);
  if (!bad.empty())
    throw OutputError((fs::path(out_dir_) / name).string(), bad + ": not a finite number; the frame is not written");
  write_file_atomically((fs::path(out_dir_) / name).string(), layout == FrameLayout::Npz
                                                                   ? frame_to_npz(frame, manifest_.dimension, options_.npz_compression)
                                                                   : frame_to_text(frame, manifest_.dimension));
  manifest_.frame_files.push_back(name);
  manifest_.frame_count += 1;
  if (seconds_since(last_manifest_write_) >= options_.manifest_interval_seconds) write_manifest();
  write_seconds_ += seconds_since(start);
}

void FrameWriter::finish(const std::string& status) {
  const auto start = std::chrono::steady_clock::now();
  manifest_.status = status;
  write_manifest();
  write_seconds_ += seconds_since(start);
}

void FrameWriter::write_manifest() {
  write_file_atomically((fs::path(out_dir_) / "manifest.json").string(), manifest_to_text(manifest_));
  last_manifest_write_ = std::chrono::steady_clock::now();
}

bool output_folder_is_empty(const std::string& dir) {
  std::error_code error;
  if (!fs::exists(dir, error)) return true;
  return fs::is_directory(dir, error) && fs::is_empty(dir, error);
}

void clear_output_folder(const std::string& dir) {
  std::error_code error;
  if (!fs::exists(dir, error)) return;
  const fs::path root(dir);
  for (const fs::path& path : {root / "manifest.json", root / "frames"}) {
    fs::remove_all(path, error);
    if (error) throw OutputError(path.string(), "cannot remove: " + error.message());
  }
  for (const auto& entry : fs::directory_iterator(root, error)) {
    if (!is_temporary_file_name(entry.path().filename().string())) continue;
    fs::remove(entry.path(), error);
    if (error) throw OutputError(entry.path().string(), "cannot remove: " + error.message());
  }
  if (error) throw OutputError(dir, "cannot list the folder: " + error.message());
}

}  // namespace bristle
