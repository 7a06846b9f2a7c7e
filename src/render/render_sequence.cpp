#include "bristle/render/render_sequence.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "bristle/render/render_frame.hpp"

namespace bristle {

namespace {

// Runs work(k) for k in [0, count) on `jobs` threads, each taking the next k not yet taken.
// The first exception stops the hand-out of further k and is rethrown once every thread has
// finished the k it holds.
void for_each_frame(int count, int jobs, const std::function<void(int)>& work) {
  jobs = std::max(1, std::min(jobs, count));
  if (jobs <= 1) {
    for (int k = 0; k < count; ++k) work(k);
    return;
  }
  std::atomic<int> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  auto worker = [&]() {
    for (;;) {
      if (stop.load()) return;
      const int k = next.fetch_add(1);
      if (k >= count) return;
      try {
        work(k);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
        stop.store(true);
        return;
      }
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(jobs));
  for (int j = 0; j < jobs; ++j) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace

Bounds sequence_bounds(const Manifest& manifest, int frame_count, const FrameLoader& load,
                       int jobs, std::vector<PaddedPoint>* points, std::size_t max_points) {
  std::size_t vertices = 0;
  for (const RodInfo& rod : manifest.rods) vertices += static_cast<std::size_t>(std::max(0, rod.vertex_count));
  const bool collect = points && vertices * static_cast<std::size_t>(std::max(0, frame_count)) <= max_points;
  const std::size_t frames = static_cast<std::size_t>(std::max(0, frame_count));
  std::vector<Bounds> per_frame(frames);
  std::vector<std::vector<PaddedPoint>> per_frame_points(collect ? frames : 0);
  for_each_frame(frame_count, jobs, [&](int k) {
    const Frame frame = load(k);
    per_frame[static_cast<std::size_t>(k)] = frame_bounds(manifest, frame);
    if (collect) append_frame_points(manifest, frame, per_frame_points[static_cast<std::size_t>(k)]);
  });
  Bounds b;
  for (const Bounds& f : per_frame) b.extend(f);
  if (points) {
    points->clear();
    for (const auto& list : per_frame_points) points->insert(points->end(), list.begin(), list.end());
  }
  return b;
}

std::string frame_image_name(int k) {
  char name[32];
  std::snprintf(name, sizeof name, "%06d.png", k);
  return name;
}

void render_sequence(const Manifest& manifest, int first, int end, const FrameLoader& load,
                     const RenderSetup& setup, const std::string& out_dir,
                     const std::function<void(int)>& progress, int jobs) {
  std::mutex progress_mutex;
  int done = 0;
  for_each_frame(end - first, jobs, [&](int i) {
    const int k = first + i;
    render_frame(manifest, load(k), setup.colliders, setup.camera, setup.options,
                 out_dir + "/" + frame_image_name(k), setup.handles);
    const std::lock_guard<std::mutex> lock(progress_mutex);
    ++done;
    if (progress) progress(done);
  });
}

}  // namespace bristle
