#!/usr/bin/env python3
"""Reads `bristle export --format vtk` output with VTK's own reader (python3-vtk9).

Runs a scene, exports it as VTK and as OBJ, then reads the .pvd collection (plain XML: VTK
has no .pvd reader of its own, ParaView's is part of ParaView) and every .vtp it lists with
vtkXMLPolyDataReader, and checks:
  - one rods dataset (part 0) per frame, at the frame's time, and the colliders (part 1);
  - the rods: points, one polyline per rod with the rod's vertex count, the radius,
    velocity and rod_id arrays, and coordinates equal to the OBJ export's (both exact);
  - the colliders: triangles only, collider_id per triangle, the same vertices and
    triangle count as the OBJ export, and the sphere that the handle carries centred where
    the handle's pose puts it at each frame's time.
Exits 1 with "CHECK FAILED: ..." lines on any failure; prints "N passed, 0 failed".

usage: check_vtk_export.py BRISTLE SCENE WORK
"""

import json
import math
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

try:
    from vtkmodules.vtkIOXML import vtkXMLPolyDataReader
except ImportError as error:  # the test must not pass without reading anything
    print(f"CHECK FAILED: VTK's Python module is missing ({error}); "
          "install python3-vtk9 (tools/install-deps.sh)")
    sys.exit(1)

failures = []
passed = 0


def check(condition, text):
    global passed
    if condition:
        passed += 1
    else:
        failures.append(text)
        print("CHECK FAILED: " + text)


def run(*args):
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        print(f"$ {' '.join(args)}\nexit {result.returncode}\n{result.stdout}{result.stderr}")
        sys.exit(1)


def read_obj(path):
    """Objects of an OBJ file: name -> {"v": [(x, y, z)], "l": [[i, j]], "f": [[a, b, c]]};
    indices are 0-based into the object's own vertices. And the time from the header."""
    objects, order, current, base, time = {}, [], None, 0, None
    total = 0
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "#" and "t" in parts and time is None:
                time = float(parts[parts.index("t") + 2])
            elif parts[0] == "o":
                base = total
                current = {"v": [], "l": [], "f": []}
                objects[parts[1]] = current
                order.append(parts[1])
            elif parts[0] == "v":
                current["v"].append(tuple(float(x) for x in parts[1:4]))
                total += 1
            elif parts[0] in ("l", "f"):
                current[parts[0]].append([int(i) - 1 - base for i in parts[1:]])
    return objects, order, time


def read_vtp(path):
    reader = vtkXMLPolyDataReader()
    reader.SetFileName(path)
    reader.Update()
    check(reader.GetErrorCode() == 0, f"{path}: VTK reports error {reader.GetErrorCode()}")
    return reader.GetOutput()


def cells(cell_array):
    """The point ids of each cell of a vtkCellArray."""
    out = []
    offsets = cell_array.GetOffsetsArray()
    conn = cell_array.GetConnectivityArray()
    for c in range(cell_array.GetNumberOfCells()):
        begin, end = int(offsets.GetTuple1(c)), int(offsets.GetTuple1(c + 1))
        out.append([int(conn.GetTuple1(i)) for i in range(begin, end)])
    return out


def sphere_centre(time):
    """The sphere collider of tests/cli/export/colliders.json at `time`: its handle turns it
    about the y axis through the origin by 0.3 s rad and lifts it by 0.01 s m, s = t / 0.1."""
    s = min(max(time / 0.1, 0.0), 1.0)
    angle = 0.3 * s
    x, y, z = 0.05, 0.02, 0.0
    return (math.cos(angle) * x + math.sin(angle) * z, y + 0.01 * s, -math.sin(angle) * x + math.cos(angle) * z)


def main():
    bristle, scene, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    out, vtk_dir, obj_dir = (os.path.join(work, d) for d in ("out", "vtk", "obj"))
    run(bristle, "run", scene, "-o", out, "--quiet")
    run(bristle, "export", out, "--format", "vtk", "-o", vtk_dir, "--quiet")
    run(bristle, "export", out, "--format", "obj", "-o", obj_dir, "--quiet")

    with open(os.path.join(out, "manifest.json")) as f:
        manifest = json.load(f)
    counts = [rod["vertex_count"] for rod in manifest["rods"]]
    radii = [rod["radius"] for rod in manifest["rods"]]
    frames = manifest["frame_count"]
    colliders = len(manifest["scene"]["colliders"])

    check(not any(name.endswith(".vtk") for name in os.listdir(vtk_dir)), "legacy .vtk files written")
    pvds = [name for name in os.listdir(vtk_dir) if name.endswith(".pvd")]
    check(len(pvds) == 1, f"{len(pvds)} .pvd files")
    collection = ET.parse(os.path.join(vtk_dir, pvds[0])).getroot()
    check(collection.get("type") == "Collection", "the .pvd is not a VTK Collection")
    datasets = collection.find("Collection").findall("DataSet")
    rods_sets = [d for d in datasets if d.get("part") == "0"]
    collider_sets = [d for d in datasets if d.get("part") == "1"]
    check(len(rods_sets) == frames, f"{len(rods_sets)} rod datasets for {frames} frames")
    check(len(collider_sets) == frames, f"{len(collider_sets)} collider datasets for {frames} frames")
    objs = sorted(name for name in os.listdir(obj_dir) if name.endswith(".obj"))
    check(len(objs) == frames, f"{len(objs)} OBJ files for {frames} frames")

    for k, (rods_set, collider_set, obj_name) in enumerate(zip(rods_sets, collider_sets, objs)):
        objects, order, obj_time = read_obj(os.path.join(obj_dir, obj_name))
        time = float(rods_set.get("timestep"))
        check(time == obj_time, f"frame {k}: .pvd time {time}, OBJ time {obj_time}")
        check(float(collider_set.get("timestep")) == time, f"frame {k}: collider time differs")

        rods = read_vtp(os.path.join(vtk_dir, rods_set.get("file")))
        check(rods.GetNumberOfPoints() == sum(counts), f"frame {k}: {rods.GetNumberOfPoints()} points")
        lines = cells(rods.GetLines())
        check([len(c) for c in lines] == counts, f"frame {k}: line lengths {[len(c) for c in lines]}, expected {counts}")
        check(rods.GetNumberOfPolys() == 0, f"frame {k}: rods have polygons")
        field = rods.GetFieldData().GetArray("TimeValue")
        check(field is not None and field.GetTuple1(0) == time, f"frame {k}: TimeValue differs from the .pvd")
        point_data = rods.GetPointData()
        radius, velocity = point_data.GetArray("radius"), point_data.GetArray("velocity")
        rod_id = rods.GetCellData().GetArray("rod_id")
        check(radius is not None and velocity is not None and rod_id is not None, f"frame {k}: arrays missing")
        check(velocity.GetNumberOfComponents() == 3, f"frame {k}: velocity is not a vector")
        check([int(rod_id.GetTuple1(r)) for r in range(len(counts))] == list(range(len(counts))),
              f"frame {k}: rod_id")
        # Points, rod by rod, against the OBJ's rod objects (the first len(counts) objects).
        p = 0
        for r, name in enumerate(order[: len(counts)]):
            obj_rod = objects[name]
            check(obj_rod["l"] == [[i, i + 1] for i in range(counts[r] - 1)],
                  f"frame {k}: OBJ rod {name} is not {counts[r] - 1} two-vertex lines")
            for i, v in enumerate(obj_rod["v"]):
                check(rods.GetPoint(p) == v, f"frame {k}: point {p} {rods.GetPoint(p)} != OBJ {v}")
                check(radius.GetTuple1(p) == radii[r], f"frame {k}: radius at point {p}")
                p += 1

        shapes = read_vtp(os.path.join(vtk_dir, collider_set.get("file")))
        triangles = cells(shapes.GetPolys())
        check(len(triangles) > 0 and all(len(t) == 3 for t in triangles), f"frame {k}: collider cells are not triangles")
        ids = shapes.GetCellData().GetArray("collider_id")
        check(ids is not None and sorted({int(ids.GetTuple1(t)) for t in range(len(triangles))}) == list(range(colliders)),
              f"frame {k}: collider_id does not cover the {colliders} colliders")
        obj_shapes = order[len(counts):]
        check(len(obj_shapes) == colliders, f"frame {k}: {len(obj_shapes)} collider objects in the OBJ")
        obj_points = [v for name in obj_shapes for v in objects[name]["v"]]
        check(shapes.GetNumberOfPoints() == len(obj_points), f"frame {k}: collider point counts differ")
        check(all(shapes.GetPoint(i) == v for i, v in enumerate(obj_points)), f"frame {k}: collider points differ from the OBJ")
        check(len(triangles) == sum(len(objects[name]["f"]) for name in obj_shapes), f"frame {k}: triangle counts differ")
        # The sphere (collider 1) follows its handle.
        sphere = [shapes.GetPoint(i) for i in sorted({i for t, c in enumerate(triangles)
                                                       if int(ids.GetTuple1(t)) == 1 for i in c})]
        centre = [sum(v[a] for v in sphere) / len(sphere) for a in range(3)]
        expected = sphere_centre(time)
        check(all(abs(centre[a] - expected[a]) < 1e-9 for a in range(3)),
              f"frame {k}: sphere centred at {centre}, the handle puts it at {expected}")

    print(f"{passed} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
