#include "bristle/io/output_reader.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "bristle/io/frame_json.hpp"
#include "bristle/io/frame_npz.hpp"
#include "bristle/io/json_parse.hpp"
#include "bristle/io/output_error.hpp"

namespace bristle {

namespace fs = std::filesystem;

namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) {
    std::error_code error;
    if (!fs::exists(path, error)) throw OutputError(path, "no such file");
    throw OutputError(path, "cannot open the file");
  }
  std::ostringstream bytes;
  bytes << stream.rdbuf();
  return std::move(bytes).str();
}

nlohmann::json parse_file(const std::string& path) {
  const std::string text = read_bytes(path);
  try {
    // Bounded nesting: a damaged file must not overflow the stack of the readers that follow.
    return parse_json_bounded(text);
  } catch (const JsonParseError& error) {
    if (error.syntax())
      throw OutputError(path, "not valid JSON (truncated or corrupt?) at byte " + std::to_string(error.byte()) +
                                  ": " + error.reason());
    throw OutputError(path, error.pointer() + ": " + error.reason());
  }
}

}  // namespace

Manifest read_manifest(const std::string& out_dir) {
  std::error_code error;
  if (!fs::is_directory(out_dir, error)) {
    if (!fs::exists(out_dir, error)) throw OutputError(out_dir, "no such output folder");
    throw OutputError(out_dir, "not a folder (expected an output folder holding manifest.json)");
  }
  const std::string path = (fs::path(out_dir) / "manifest.json").string();
  if (!fs::exists(path, error)) throw OutputError(path, "no manifest: not a bristle output folder");
  return manifest_from_json(parse_file(path), path);
}

Frame read_frame_file(const std::string& path, const Manifest& manifest) {
  if (manifest.frame_layout == FrameLayout::Npz) return frame_from_npz(read_bytes(path), manifest, path);
  return frame_from_json(parse_file(path), manifest, path);
}

OutputFolder::OutputFolder(std::string out_dir) : dir_(std::move(out_dir)), manifest_(read_manifest(dir_)) {
  frame_files_ = manifest_.frame_files;
  std::error_code error;
  for (const std::string& name : frame_files_)
    if (!fs::exists(fs::path(dir_) / name, error))
      throw OutputError((fs::path(dir_) / "manifest.json").string(),
                        "lists " + name + " but that file is missing");
  // An interrupted run: its manifest may lag behind the frames on disk. Take the whole frame
  // files that follow the list (temporary files have other names and are never frames).
  if (manifest_.status == "running") {
    for (int k = static_cast<int>(frame_files_.size());; ++k) {
      const std::string name = frame_file_name(k, manifest_.frame_layout);
      if (!fs::is_regular_file(fs::path(dir_) / name, error)) break;
      frame_files_.push_back(name);
    }
  }
}

std::string OutputFolder::frame_path(int k) const {
  return (fs::path(dir_) / frame_files_.at(static_cast<std::size_t>(k))).string();
}

Frame OutputFolder::frame(int k) const {
  if (k < 0 || k >= frame_count())
    throw OutputError(dir_, "no frame " + std::to_string(k) + " (the folder has " + std::to_string(frame_count()) + ")");
  Frame frame = read_frame_file(frame_path(k), manifest_);
  if (frame.index != k)
    throw OutputError(frame_path(k), std::string(manifest_.frame_layout == FrameLayout::Npz ? "frame" : "/frame") +
                                         ": expected " + std::to_string(k) + ", found " + std::to_string(frame.index));
  return frame;
}

}  // namespace bristle
