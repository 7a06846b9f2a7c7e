"""Checks tools/bristle_frames.py on the JSON and binary output folders of one scene.

    python3 check_bristle_frames.py TOOLS_DIR JSON_OUT BINARY_OUT SCRATCH BRISTLE [stored|deflated]

Every value is checked against an independent reading: the JSON frames through the json
module, the binary frames through one np.load call each. Then frames rewritten by
numpy.savez and numpy.savez_compressed must read back in bristle (BRISTLE compare) as the
same frames. With the last argument, the binary frames' position and velocity arrays must be
stored (--frames binary) or deflated (--frames compressed) zip members. Exits 1 with
"CHECK FAILED: ..." on the first difference.
"""

import json
import os
import shutil
import subprocess
import sys
import zipfile

import numpy as np


def check(condition, what):
    if not condition:
        print(f"CHECK FAILED: {what}")
        sys.exit(1)


def same_bits(a, b):
    """Bitwise equality of float64 arrays: -0.0 differs from 0.0, shapes must match."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.uint64), b.view(np.uint64))


def main(tools, json_dir, binary_dir, scratch, bristle, method=None):
    sys.path.insert(0, tools)
    import bristle_frames

    from_json = bristle_frames.load_folder(json_dir)
    from_binary = bristle_frames.load_folder(binary_dir)
    manifest = from_binary.manifest
    check(manifest["frame_layout"] == "npz", "the binary folder's manifest says npz")
    check(from_json.manifest["frame_layout"] == "json", "the JSON folder's manifest says json")
    frames = manifest["frame_count"]
    dimension = manifest["dimension"]
    vertices = sum(rod["vertex_count"] for rod in manifest["rods"])
    check(frames >= 2, f"at least 2 frames, found {frames}")
    for out in (from_json, from_binary):
        check(out.all_positions.shape == (frames, vertices, dimension),
              f"all_positions shape {out.all_positions.shape}, expected {(frames, vertices, dimension)}")
        check(out.times.shape == (frames,), "one time per frame")
        check(list(out.frames) == list(range(frames)), "frames 0..F-1 in order")

    # The two layouts hold the same doubles, bit for bit, and the same stats.
    check(same_bits(from_json.all_positions, from_binary.all_positions), "positions equal in both layouts")
    check(same_bits(from_json.all_velocities, from_binary.all_velocities), "velocities equal in both layouts")
    check(same_bits(from_json.times, from_binary.times), "times equal in both layouts")
    check(from_json.stats == from_binary.stats, "stats equal in both layouts")

    # Independent readings: json.load per JSON frame, one np.load per binary frame.
    for k in range(frames):
        with open(os.path.join(json_dir, "frames", f"{k:06d}.json"), encoding="utf-8") as stream:
            raw = json.load(stream)
        archive = np.load(os.path.join(binary_dir, "frames", f"{k:06d}.npz"))
        check(sorted(archive.files) == ["frame", "positions", "stats", "time", "velocities"],
              f"frame {k}: arrays {sorted(archive.files)}")
        check(int(archive["frame"]) == k and raw["frame"] == k, f"frame {k}: its index")
        check(archive["positions"].dtype == np.float64 and archive["positions"].shape == (vertices, dimension),
              f"frame {k}: np.load positions {archive['positions'].dtype} {archive['positions'].shape}")
        check(same_bits(archive["time"], raw["time"]), f"frame {k}: time")
        check(json.loads(archive["stats"].tobytes()) == raw["stats"], f"frame {k}: stats")
        offset = 0
        for r, rod in enumerate(raw["rods"]):
            n = len(rod["positions"])
            check(rod["name"] == from_binary.rod_names[r], f"frame {k}: rod {r}'s name")
            for key, per_rod in (("positions", from_binary.positions), ("velocities", from_binary.velocities)):
                expected = np.array(rod[key], dtype=np.float64)
                check(same_bits(archive[key][offset:offset + n], expected), f"frame {k}: np.load {key} of rod {r}")
                check(same_bits(per_rod[rod["name"]][k], expected), f"frame {k}: load_folder {key} of rod {r}")
            offset += n
        archive.close()
        if method is not None:
            with zipfile.ZipFile(os.path.join(binary_dir, "frames", f"{k:06d}.npz")) as zip_file:
                for name in ("positions.npy", "velocities.npy"):
                    found = zip_file.getinfo(name).compress_type
                    expected = zipfile.ZIP_DEFLATED if method == "deflated" else zipfile.ZIP_STORED
                    check(found == expected, f"frame {k}: {name} has zip method {found}, expected {expected} ({method})")

    # Frame 0 is the scene's initial state: the expanded scene's vertices, at rest.
    for rod in manifest["scene"]["rods"]:
        initial = np.array(rod["vertices"], dtype=np.float64)
        check(same_bits(from_binary.positions[rod["name"]][0], initial), f"frame 0 of rod {rod['name']} is the scene's")
    check(not np.any(from_binary.all_velocities[0]), "frame 0 is at rest")
    frame_dt = manifest["frame_dt"]
    check(np.allclose(from_binary.times, np.arange(frames) * frame_dt, rtol=1e-12, atol=1e-15),
          "frame k at time k * frame_dt")
    check(not same_bits(from_binary.all_positions[-1], from_binary.all_positions[0]), "the rods moved")

    # A killed run: the manifest lists two frames and says "running"; load_folder also takes
    # the frames on disk past its list, as bristle's readers do.
    killed = os.path.join(scratch, "killed")
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(binary_dir, killed)
    with open(os.path.join(killed, "manifest.json"), encoding="utf-8") as stream:
        partial = json.load(stream)
    partial["status"] = "running"
    partial["frame_files"] = partial["frame_files"][:2]
    partial["frame_count"] = 2
    with open(os.path.join(killed, "manifest.json"), "w", encoding="utf-8") as stream:
        json.dump(partial, stream)
    with open(os.path.join(killed, "frames", f".{frames:06d}.npz.tmp"), "wb") as stream:
        stream.write(b"PK\x03\x04 half a frame")
    resumed = bristle_frames.load_folder(killed)
    check(resumed.all_positions.shape[0] == frames, f"killed run: {resumed.all_positions.shape[0]} of {frames} frames")
    check(same_bits(resumed.all_positions, from_binary.all_positions), "killed run: the same positions")

    # The other way round: bristle reads frames numpy wrote (numpy.savez, stored members, and
    # numpy.savez_compressed, deflated members).
    rewritten = os.path.join(scratch, "rewritten")
    shutil.copytree(binary_dir, rewritten)
    for k, save in ((1, np.savez), (frames - 1, np.savez_compressed)):
        path = os.path.join(rewritten, "frames", f"{k:06d}.npz")
        with np.load(path) as archive:
            arrays = {name: archive[name] for name in archive.files}
        os.remove(path)
        save(path, **arrays)
    result = subprocess.run([bristle, "compare", rewritten, binary_dir, "--atol", "0", "--rtol", "0", "--velocities"],
                            capture_output=True, text=True)
    check(result.returncode == 0, f"bristle compare of frames numpy.savez and savez_compressed wrote: exit "
                                  f"{result.returncode}, {result.stdout}{result.stderr}")

    print(f"bristle_frames: {frames} frames of {vertices} vertices ({dimension}D), JSON and binary bitwise equal")


if __name__ == "__main__":
    if len(sys.argv) not in (6, 7) or (len(sys.argv) == 7 and sys.argv[6] not in ("stored", "deflated")):
        print(__doc__)
        sys.exit(2)
    main(*sys.argv[1:])
