"""Read a bristle output folder into numpy arrays.

Both frame layouts (docs/output-format.md): JSON frames (`bristle run`, the default) and
binary frames (`bristle run --frames binary`, one numpy .npz per frame; `--frames compressed`
writes the same archives with deflated members, which np.load reads alike). Standard library
and numpy only; copy this file next to your script or put tools/ on sys.path.

    import bristle_frames
    out = bristle_frames.load_folder("out/demo")
    out.times                      # (F,) seconds
    out.positions["brush_0"]       # (F, n, D) metres, one rod
    out.velocities["brush_0"]      # (F, n, D) m/s
    out.all_positions              # (F, V, D), every rod's vertices in manifest order
    out.stats[10]["energies"]      # frame 10's stats, a dict

One frame of a binary folder is one numpy call:

    frame = np.load("out/demo/frames/000010.npz")
    frame["positions"]             # (V, D): every rod's vertices, rods in manifest order

A folder whose run was killed (manifest status "running") holds frames beyond the manifest's
list; they are read too, as bristle's own commands do.

Run as a script, it prints what a folder holds: python3 tools/bristle_frames.py OUT
"""

import json
import os
import sys

import numpy as np

__all__ = ["Output", "load_folder", "load_frame", "read_manifest", "frame_paths"]

# The frame files' extension of each manifest "frame_layout".
_EXTENSIONS = {"json": ".json", "npz": ".npz"}


def read_manifest(out_dir):
    """The folder's manifest.json as a dict, with "frame_layout" filled in ("json" when absent)."""
    with open(os.path.join(out_dir, "manifest.json"), encoding="utf-8") as stream:
        manifest = json.load(stream)
    # Version 2 adds the material directors of rods with twist (docs/output-format.md).
    if manifest.get("format") not in ("bristle-frames/1", "bristle-frames/2"):
        raise ValueError(f"{out_dir}/manifest.json: not a bristle output folder (format {manifest.get('format')!r})")
    manifest.setdefault("frame_layout", "json")
    if manifest["frame_layout"] not in _EXTENSIONS:
        raise ValueError(f"{out_dir}/manifest.json: unknown frame_layout {manifest['frame_layout']!r}")
    return manifest


def frame_paths(out_dir, manifest=None):
    """Paths of every frame: the manifest's list, then for an interrupted run ("running") the
    consecutive frames/NNNNNN files that follow it on disk."""
    manifest = manifest or read_manifest(out_dir)
    paths = [os.path.join(out_dir, name) for name in manifest["frame_files"]]
    if manifest["status"] == "running":
        extension = _EXTENSIONS[manifest["frame_layout"]]
        k = len(paths)
        while os.path.isfile(os.path.join(out_dir, "frames", f"{k:06d}{extension}")):
            paths.append(os.path.join(out_dir, "frames", f"{k:06d}{extension}"))
            k += 1
    return paths


def load_frame(path, dimension=None):
    """One frame file as a dict: "frame" (int), "time" (float), "positions" and "velocities"
    ((V, D) arrays, every rod's vertices in manifest order), "stats" (dict), and any other
    array a binary frame holds. `dimension` is needed for a JSON frame without vertices."""
    if path.endswith(".npz"):
        with np.load(path) as archive:
            frame = {name: archive[name] for name in archive.files}
        frame["frame"] = int(frame["frame"])
        frame["time"] = float(frame["time"])
        frame["stats"] = json.loads(frame["stats"].tobytes().decode("utf-8")) if "stats" in frame else {}
        return frame
    with open(path, encoding="utf-8") as stream:
        data = json.load(stream)
    frame = {"frame": data["frame"], "time": float(data["time"]), "stats": data.get("stats", {})}
    for key in ("positions", "velocities"):
        rows = [vector for rod in data["rods"] for vector in rod[key]]
        frame[key] = np.array(rows, dtype=np.float64).reshape(len(rows), dimension or (len(rows[0]) if rows else 3))
    # Rods with twist: "directors" as a binary frame holds them, one row per edge of every rod,
    # zero rows for rods without twist.
    if any("directors" in rod for rod in data["rods"]):
        rows = []
        for rod in data["rods"]:
            rows.extend(rod.get("directors") or [[0.0, 0.0, 0.0]] * max(len(rod["positions"]) - 1, 0))
        frame["directors"] = np.array(rows, dtype=np.float64).reshape(len(rows), 3)
    return frame


class Output:
    """A whole output folder in memory.

    manifest       the manifest dict
    rod_names      rod names in manifest order
    frames         (F,) frame indices
    times          (F,) simulated time of each frame [s]
    all_positions  (F, V, D) [m], V = every rod's vertices in manifest order
    all_velocities (F, V, D) [m/s]
    positions      {rod name: (F, n, D) view of all_positions}
    velocities     {rod name: (F, n, D) view of all_velocities}
    stats          [F dicts], each frame's stats
    arrays         {name: (F, ...)} any further per-frame arrays of binary frames, stacked;
                   per_rod(name) splits one whose second axis runs over vertices or edges
    """

    def __init__(self, manifest, frames):
        self.manifest = manifest
        self.rod_names = [rod["name"] for rod in manifest["rods"]]
        counts = [rod["vertex_count"] for rod in manifest["rods"]]
        dimension = manifest["dimension"]
        self.frames = np.array([f["frame"] for f in frames], dtype=np.int64)
        self.times = np.array([f["time"] for f in frames], dtype=np.float64)
        total = sum(counts)
        self.all_positions = np.stack([f["positions"] for f in frames]) if frames else np.zeros((0, total, dimension))
        self.all_velocities = np.stack([f["velocities"] for f in frames]) if frames else np.zeros((0, total, dimension))
        self.stats = [f["stats"] for f in frames]
        known = {"frame", "time", "positions", "velocities", "stats"}
        names = sorted(set().union(*(f.keys() for f in frames)) - known) if frames else []
        self.arrays = {name: np.stack([f[name] for f in frames]) for name in names if all(name in f for f in frames)}
        self._vertex_offsets = np.cumsum([0] + counts)
        self._edge_offsets = np.cumsum([0] + [max(n - 1, 0) for n in counts])
        self.positions = self._split(self.all_positions, self._vertex_offsets)
        self.velocities = self._split(self.all_velocities, self._vertex_offsets)

    def _split(self, stacked, offsets):
        return {name: stacked[:, offsets[r]:offsets[r + 1]] for r, name in enumerate(self.rod_names)}

    def per_rod(self, name):
        """{rod name: (F, n, ...)} for a further array whose second axis runs over every rod's
        vertices (length V) or edges (length V - rods) in manifest order."""
        stacked = self.arrays[name]
        if stacked.shape[1] == self._vertex_offsets[-1]:
            return self._split(stacked, self._vertex_offsets)
        if stacked.shape[1] == self._edge_offsets[-1]:
            return self._split(stacked, self._edge_offsets)
        raise ValueError(f"array {name!r} of shape {stacked.shape[1:]} is neither per vertex nor per edge")


def load_folder(out_dir):
    """Every frame of an output folder, JSON or binary, as an Output."""
    manifest = read_manifest(out_dir)
    dimension = manifest["dimension"]
    frames = [load_frame(path, dimension) for path in frame_paths(out_dir, manifest)]
    for k, frame in enumerate(frames):
        if frame["frame"] != k:
            raise ValueError(f"{out_dir}: frame file {k} holds frame {frame['frame']}")
    return Output(manifest, frames)


def _main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print("usage: python3 bristle_frames.py OUT   (summarise a bristle output folder)")
        return 0 if len(argv) == 2 else 2
    out = load_folder(argv[1])
    print(f"{argv[1]}: {len(out.times)} frames ({out.manifest['frame_layout']}), status {out.manifest['status']!r}, "
          f"t = {out.times[0] if len(out.times) else 0:g} .. {out.times[-1] if len(out.times) else 0:g} s")
    print(f"all_positions {out.all_positions.shape}, {len(out.rod_names)} rods")
    for name in out.rod_names[:5]:
        print(f"  {name}: positions {out.positions[name].shape}")
    if len(out.rod_names) > 5:
        print(f"  ... {len(out.rod_names) - 5} more")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
