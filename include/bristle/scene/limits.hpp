#pragma once
/// The resource limits on what a user or a script may ask of Bristle (docs/limits.md): the
/// largest scene, the counts taken from the user. Each is checked where the count is read,
/// before anything is allocated or run, and refused with exit code 2 and the JSON pointer
/// (or the option) that asked for more. The limits are far above any real scene; they exist
/// so that no input makes Bristle allocate without bound or run for ever.

namespace bristle {

/// Largest number of vertices a scene may hold in all; beyond it the scene is refused.
inline constexpr long long kMaxSceneVertices = 10'000'000;
/// Largest `segments` of one generated rod.
inline constexpr int kMaxGeneratedSegments = 1'000'000;
/// Largest number of bristles in one brush.
inline constexpr int kMaxBrushBristles = 100'000;
/// Largest number of frames (duration / frame_dt + 1) and of steps per frame.
inline constexpr double kMaxFrames = 1e7;
inline constexpr double kMaxStepsPerFrame = 1e9;
/// Largest number of time steps in a run (frames x steps per frame).
inline constexpr double kMaxSteps = 1e9;
/// Threads for one run: `solver.threads` and `--threads` (counts above the machine's
/// hardware threads are clamped to them, with a line on stderr).
inline constexpr int kMaxThreads = 1024;
/// `solver.newton_iterations` (per step) and `solver.cg_max_iterations` (per solve).
inline constexpr int kMaxNewtonIterations = 1000;
inline constexpr int kMaxCgIterations = 1'000'000;
/// `bristle modes --count`.
inline constexpr int kMaxModes = 1000;
/// Parallel jobs of `bristle render -j` and `bristle batch -j`.
inline constexpr int kMaxJobs = 1024;
/// Largest magnitude of a vertex coordinate a scene may start with, as given or as a handle
/// places it [m]: what `bristle render` can draw (its camera works with squared distances).
/// A run whose frames could not be drawn is refused before it starts.
inline constexpr double kMaxCoordinate = 1e100;

}  // namespace bristle
