#pragma once
/// Helpers shared by the output-folder tests (JSON and binary frames): write a finished run of
/// frames, and read a folder back the way every command does.

#include <functional>
#include <string>
#include <vector>

#include "bristle/io/frame_writer.hpp"
#include "bristle/io/output_error.hpp"
#include "bristle/io/output_reader.hpp"

namespace bristle::test {

/// Writes `count` frames made by `make(k)` into `out` and finishes the run "complete";
/// returns the frames written, for comparison with what is read back.
inline std::vector<Frame> write_complete_run(const std::string& out, const Manifest& manifest, int count,
                                             const std::function<Frame(int)>& make) {
  std::vector<Frame> written;
  FrameWriter writer(out, manifest, {0.0});
  for (int k = 0; k < count; ++k) {
    written.push_back(make(k));
    writer.write(written.back());
  }
  writer.finish("complete");
  return written;
}

/// The error reading every frame of `dir`, "" when all read.
inline std::string output_refusal(const std::string& dir) {
  try {
    const OutputFolder folder(dir);
    for (int k = 0; k < folder.frame_count(); ++k) folder.frame(k);
  } catch (const OutputError& error) {
    return error.what();
  }
  return "";
}

}  // namespace bristle::test
