#!/usr/bin/env python3
"""Scene fuzzer for the whole command line (docs/fuzzing.md).

Generates scenes from a fixed seed -- valid but extreme ones (stiffness over 8 decades, steps
up to 1/24 s, every collider type, handles, loads, static mode, every solver option, tiny and
huge numbers) and malformed ones (mutated, truncated, deeply nested, huge numbers, giant
strings, wrong types, bad `rod_contact` values) -- and runs each through `bristle validate`, `bristle run`, then
`compare`, `render`, `export`, `validate` and `modes` on what the run wrote.

A case fails when a command crashes (signal or sanitizer report), hangs (timeout), exits with
a code other than 0/1/2, writes a non-finite number in a frame, ends a failed run with a
manifest status that does not say where it failed, writes anything after refusing the scene
(exit 2), or when a reader refuses a folder `bristle run` wrote. Every failure is copied to
the failures folder with the command that reproduces it. Exits 1 when any case failed.

Case N of seed S is the same scene on every machine: `--seed S --only N` runs it alone.
Only the standard library is used.
"""

import argparse
import concurrent.futures
import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

# --------------------------------------------------------------------------------------------
# Valid but extreme scenes

DTS = [1e-5, 1e-4, 1e-3, 1 / 240, 1 / 120, 1 / 60, 1 / 24]
# Numbers the loader accepts where a positive number is expected, but that stress arithmetic.
EXTREME_POSITIVE = [5e-324, 1e-300, 1e-30, 1e30, 1e300, 1.7976931348623157e308]


def log_uniform(rng, lo_exp, hi_exp):
    return 10.0 ** rng.uniform(lo_exp, hi_exp)


def unit_vector(rng, dim):
    while True:
        v = [rng.gauss(0, 1) for _ in range(dim)]
        n = math.sqrt(sum(c * c for c in v))
        if n > 1e-3:
            return [c / n for c in v]


def polyline(rng, dim, segments, length):
    """A random rod: a walk whose turns stay well below pi (a fold is refused, not extreme)."""
    direction = unit_vector(rng, dim)
    start = [rng.uniform(-0.05, 0.05) for _ in range(dim)]
    points = [start]
    step = length / segments
    curl = rng.choice([0.0, 0.0, 0.3, 1.0])
    for _ in range(segments):
        turn = unit_vector(rng, dim)
        direction = [d + curl * t for d, t in zip(direction, turn)]
        n = math.sqrt(sum(c * c for c in direction))
        direction = [c / n for c in direction]
        points.append([p + step * d for p, d in zip(points[-1], direction)])
    return points


# Cross-section aspect ratios (a/b or width/thickness): round, mild, and extreme both ways.
ASPECTS = [1.0, 1.0, 0.5, 2.0, 10.0, 0.1, 1e2, 1e-2, 1e4, 1e-4]


def make_section(rng, extreme):
    """A material's section: a "radius", or a "cross_section" of every type, whose larger half
    extent stays at most 1 mm (brushes below are 4 mm apart) unless the section is meant to be
    tiny or huge."""
    size = log_uniform(rng, -5, -3)  # the larger half extent
    if rng.random() < 0.08:
        size = rng.choice([1e-9, 1e-7, 0.02, 0.1])  # tiny, or huge (refused by a brush)
    kind = rng.choice(["radius", "radius", "circle", "ellipse", "ellipse", "rectangle", "rectangle"])
    if kind == "radius":
        return {"radius": size}
    if kind == "circle":
        return {"cross_section": {"type": "circle", "radius": size}}
    aspect = rng.choice(ASPECTS)
    big, small = size, size * min(aspect, 1.0 / aspect)
    first, second = (big, small) if aspect >= 1.0 else (small, big)
    if kind == "ellipse":
        section = {"type": "ellipse", "a": first, "b": second}
    else:
        section = {"type": "rectangle", "width": 2 * first, "thickness": 2 * second}
    if extreme and rng.random() < 0.3:
        section[rng.choice([k for k in section if k != "type"])] = rng.choice(EXTREME_POSITIVE)
    return {"cross_section": section}


def anisotropic(material):
    """Whether a material bends differently about its two axes (refused in 3D without twist)."""
    section = material.get("cross_section", {}) if isinstance(material, dict) else {}
    if section.get("type") == "ellipse":
        return section["a"] != section["b"]
    if section.get("type") == "rectangle":
        return section["width"] != section["thickness"]
    return False


def make_material(rng, extreme):
    material = {"density": log_uniform(rng, 1, 4)}
    material.update(make_section(rng, extreme))
    material["youngs_modulus"] = log_uniform(rng, 3, 11)  # 8 decades of stiffness
    if extreme and rng.random() < 0.5:
        material[rng.choice(["density", "youngs_modulus"] + (["radius"] if "radius" in material else []))] = \
            rng.choice(EXTREME_POSITIVE)
    # What resists twist (rods with "twist": true): Poisson's ratio over its whole range, or G.
    twist_key = rng.random()
    if twist_key < 0.25:
        material["poissons_ratio"] = rng.choice([rng.uniform(-0.99, 0.5), -0.999999, 0.5])
    elif twist_key < 0.4:
        material["shear_modulus"] = log_uniform(rng, 2, 11) if not extreme else rng.choice(
            [log_uniform(rng, 2, 11)] + EXTREME_POSITIVE)
    return material


def make_rods(rng, dim, materials, budget, extreme):
    """Rods, the vertex positions of each (for placing loads, colliders and handles), and for
    each rod with twist its root and axis (for handles that turn it about itself)."""
    rods, shapes, twisted = [], [], {}
    for r in range(rng.randint(1, 3)):
        rod = {"name": f"r{r}", "material": rng.choice(list(materials))}
        if rng.random() < 0.1:  # an inline material
            rod["material"] = make_material(rng, extreme)
        material = rod["material"] if isinstance(rod["material"], dict) else materials[rod["material"]]
        first_shape = len(shapes)
        kind = rng.choice(["vertices", "straight", "brush"] + (["helix"] if dim == 3 else []))
        length = log_uniform(rng, -3, 0)
        if kind == "brush":
            segments = rng.randint(1, 6)
            columns = rng.randint(1, 4)
            layout = ({"type": "grid", "columns": columns, "spacing": 0.004} if dim == 2 else
                      rng.choice([{"type": "grid", "rows": rng.randint(1, 3), "columns": columns, "spacing": 0.004},
                                  {"type": "disk", "radius": 0.006, "spacing": 0.004}]))
            direction = unit_vector(rng, dim)
            rod["generator"] = {"type": "brush", "layout": layout, "root": [0.0] * dim,
                                "direction": direction, "length": length, "segments": segments}
            if rng.random() < 0.5:
                rod["generator"]["jitter"] = {"length": rng.uniform(0, 0.9), "direction": rng.uniform(0, 1.5),
                                              "seed": rng.randint(0, 2**63 - 1)}
            count = columns * (layout.get("rows", 1) if layout["type"] == "grid" else 7)
            for k in range(count):
                shapes.append((f"r{r}_{k}", [[0.0] * dim] + [[length * d for d in direction]] * segments,
                               segments + 1, {0, 1}))
            budget -= count * (segments + 1)
        else:
            segments = rng.randint(1, min(40, max(1, budget - 2)))
            points = polyline(rng, dim, segments, length)
            if kind == "helix":
                radius, pitch = length / 4.0, rng.choice([0.0, length / 8.0, length])
                turns = rng.uniform(0.2, 4.0)
                rod["generator"] = {"type": "helix", "centre": [0.0, 0.0, 0.0], "axis": unit_vector(rng, 3),
                                    "radius": radius, "pitch": pitch, "turns": turns,
                                    "handedness": rng.choice(["right", "left"]), "segments": segments}
                # Where loads, colliders and handles are placed: near enough (a coil about the origin).
                points = [[radius * math.cos(2 * math.pi * turns * k / segments),
                           radius * math.sin(2 * math.pi * turns * k / segments),
                           pitch * turns * k / segments] for k in range(segments + 1)]
            if kind == "straight":
                rod["generator"] = {"type": "straight", "from": points[0], "to": points[-1], "segments": segments}
                points = [[a + (b - a) * k / segments for a, b in zip(points[0], points[-1])]
                          for k in range(segments + 1)]
            elif kind == "vertices":
                rod["vertices"] = points
            n = segments + 1
            # Pinned and clamped roots and tips (what twist_fixed acts on), and random sets.
            fixed = rng.choice([[], [0], [0, 1], [0, 1], [n - 1], [0, n - 1], [0, 1, n - 2, n - 1],
                                sorted(rng.sample(range(n), rng.randint(1, n)))])
            fixed = sorted(set(fixed))
            fixed = [f for f in fixed if f < n]
            if fixed or rng.random() < 0.5:
                rod["fixed"] = fixed
            shapes.append((rod["name"], points, n, set(fixed)))
            budget -= n
        if kind == "brush":
            rod["fixed"] = rng.choice([[0, 1], [0]])
            shapes = [(name, pts, n, set(rod["fixed"])) if name.startswith(f"r{r}_") else (name, pts, n, fx)
                      for name, pts, n, fx in shapes]
        if rng.random() < 0.5:
            rod["rest"] = rng.choice(["initial", "straight"])
        # In 3D a section that bends differently about its two axes needs twist (else refused).
        if dim == 3 and (anisotropic(material) or rng.random() < 0.4):
            add_twist(rng, rod, kind, shapes[first_shape:], extreme)
            if kind == "helix":
                axis = rod["generator"]["axis"]
            elif kind == "brush":
                axis = rod["generator"]["direction"]
            else:
                pts = shapes[first_shape][1]
                axis = [b - a for a, b in zip(pts[0], pts[1])]
            for name, pts, _, _ in shapes[first_shape:]:
                twisted[name] = (pts[0], axis)
        rods.append(rod)
        if budget <= 4:
            break
    return rods, shapes, twisted


def add_twist(rng, rod, kind, shapes, extreme):
    """The twist keys of a 3D rod: material_normal (any, or along the first edge, where the
    frame has to pick another), rest_twist from none to 1e6 rad/m, twist_fixed on every kind
    of end (a `true` end is fixed, so the scene stays valid)."""
    rod["twist"] = True
    _, points, n, fixed = shapes[0]
    edge = [b - a for a, b in zip(points[0], points[1])]
    if rng.random() < 0.5:
        rod["material_normal"] = rng.choice([unit_vector(rng, 3), unit_vector(rng, 3), edge,
                                             [e + 1e-9 * u for e, u in zip(edge, unit_vector(rng, 3))],
                                             [5e-324, 0.0, 0.0], [1e300, 1e300, 0.0]])
        if all(c == 0.0 for c in rod["material_normal"]):
            rod["material_normal"] = [0.0, 0.0, 1.0]
    if rng.random() < 0.5:
        sign = rng.choice([1.0, -1.0])
        rod["rest_twist"] = sign * rng.choice([0.0, log_uniform(rng, -1, 2), log_uniform(rng, 2, 4), 1e6]
                                              + ([1e300, 5e-324] if extreme else []))
    if rng.random() < 0.5:
        twist_fixed = {}
        for end, vertex in (("root", 0), ("tip", n - 1)):
            if rng.random() < 0.6:
                # true only on a fixed end (else refused), false anywhere
                twist_fixed[end] = vertex in fixed and rng.random() < 0.6
        rod["twist_fixed"] = twist_fixed


def make_collider(rng, dim, shapes, extreme):
    _, points, _, _ = rng.choice(shapes)
    anchor = rng.choice(points)
    kind = rng.choice(["plane", "sphere", "capsule", "box"])
    offset = rng.choice([1e-2, 1e-3, 1e-4, 0.0, -1e-4])  # negative: the rod starts inside
    if kind == "plane":
        normal = unit_vector(rng, dim)
        collider = {"type": "plane", "normal": normal, "point": [a - offset * n for a, n in zip(anchor, normal)]}
    elif kind == "sphere":
        radius = rng.choice([0.0, log_uniform(rng, -4, -1)])
        direction = unit_vector(rng, dim)
        collider = {"type": "sphere", "radius": radius,
                    "center": [a + (radius + offset) * d for a, d in zip(anchor, direction)]}
    elif kind == "capsule":
        radius = rng.choice([0.0, log_uniform(rng, -4, -2)])
        direction = unit_vector(rng, dim)
        centre = [a + (radius + offset) * d for a, d in zip(anchor, direction)]
        axis = unit_vector(rng, dim)
        half = log_uniform(rng, -3, -1)
        collider = {"type": "capsule", "radius": radius,
                    "a": [c - half * x for c, x in zip(centre, axis)],
                    "b": [c + half * x for c, x in zip(centre, axis)]}
    else:
        half = [log_uniform(rng, -3, -1) for _ in range(dim)]
        collider = {"type": "box", "half_extents": half,
                    "center": [a - h - offset for a, h in zip(anchor, half)]}
        if rng.random() < 0.5:
            collider["rotation"] = ({"axis": unit_vector(rng, 3), "angle": rng.uniform(-4, 4)} if dim == 3
                                    else {"angle": rng.uniform(-4, 4)})
    if rng.random() < 0.7:
        collider["friction"] = rng.choice([0.0, 0.1, 0.5, 1.0, 10.0])
    if extreme and rng.random() < 0.3:
        # A point far away (1.797e308 is a known finding of the contact solver).
        for key in ("point", "center", "a"):
            if key in collider:
                collider[key][0] = rng.choice([1e300, 1.797e308, -1e30])
    return collider


def make_solver(rng, static):
    solver = {}
    options = {
        "cg_tolerance": lambda: log_uniform(rng, -14, -0.5),
        "cg_max_iterations": lambda: rng.choice([1, 3, 50, 1000]),
        "newton_iterations": lambda: rng.choice([1, 2, 5, 20]),
        "linearization": lambda: rng.choice(["start", "predicted"]),
        "newton_tolerance": lambda: rng.choice([0, 1e-8, 1e-4, 0.5]),
        "line_search": lambda: rng.choice([True, False]),
        "projection": lambda: rng.choice(["projected", "bending_modes", "gauss_newton"]),
        "length_correction": lambda: rng.choice([True, False]),
        "threads": lambda: rng.choice([1, 2, 3, 16]),
    }
    for key, make in options.items():
        if rng.random() < 0.4:
            solver[key] = make()
    solver["mode"] = "static" if static else rng.choice(["dynamic", "dynamic", None])
    if solver["mode"] is None:
        del solver["mode"]
    return solver


def make_handles(rng, dim, rods, colliders, shapes, twisted):
    fixed_rods = [name for name, _, _, fixed in shapes if fixed]
    if not fixed_rods and not colliders:
        return []
    handle = {"name": "h0", "interpolation": rng.choice(["linear", "smooth", "catmull_rom"])}
    if fixed_rods:
        handle["rods"] = rng.sample(fixed_rods, rng.randint(1, len(fixed_rods)))
    if colliders and rng.random() < 0.6:
        handle["colliders"] = sorted(rng.sample(range(len(colliders)), rng.randint(1, len(colliders))))
    if rng.random() < 0.5:
        handle["pivot"] = [rng.uniform(-0.05, 0.05) for _ in range(dim)]
    # A handle holding a rod with twist mostly turns it about its axis, with the pivot at its root.
    about = None
    turned = [name for name in handle.get("rods", []) if name in twisted]
    if turned and rng.random() < 0.7:
        root, axis = twisted[rng.choice(turned)]
        about = axis if any(axis) else None
        handle["pivot"] = list(root)
    keys, t = [], 0.0
    for _ in range(rng.randint(1, 4)):
        key = {"time": t}
        if rng.random() < 0.7:
            key["translation"] = [rng.uniform(-0.02, 0.02) for _ in range(dim)]
        if rng.random() < 0.5:
            angle = rng.uniform(-7, 7)
            key["rotation"] = {"axis": unit_vector(rng, 3), "angle": angle} if dim == 3 else {"angle": angle}
            if about is not None:
                # Turning a twisted rod about its own axis, by up to three turns a key.
                key["rotation"] = {"axis": about, "angle": rng.uniform(-20, 20)}
        keys.append(key)
        t += log_uniform(rng, -3, -0.5)
    handle["keys"] = keys
    return [handle]


def make_valid_scene(rng, index):
    """A scene the loader should accept, pushed towards the edges; returns (scene, work)."""
    dim = rng.choice([2, 3])
    static = rng.random() < 0.15
    extreme = rng.random() < 0.25
    dt = rng.choice(DTS)
    steps_per_frame = rng.randint(1, 4)
    frames = rng.randint(1, 6)
    scene = {"format": "bristle-scene/1", "dimension": dim,
             "time": {"dt": dt, "frame_dt": dt * steps_per_frame, "duration": dt * steps_per_frame * frames}}
    if rng.random() < 0.1:
        scene["name"] = rng.choice(["x" * 1000, "a b/c\\d\u00e9", ".", "-"])
    gravity = rng.choice([None, "earth", "random"])
    if gravity == "earth":
        scene["gravity"] = [0.0, -9.81] + ([0.0] if dim == 3 else [])
    elif gravity == "random":
        g = log_uniform(rng, -2, 4)
        scene["gravity"] = [g * c for c in unit_vector(rng, dim)]
    if rng.random() < 0.3:
        scene["damping"] = {"mass": rng.choice([0, log_uniform(rng, -3, 3)]),
                            "stiffness": rng.choice([0, log_uniform(rng, -9, -1)])}
    scene["solver"] = make_solver(rng, static)
    names = [f"m{k}" for k in range(rng.randint(1, 2))]
    scene["materials"] = {name: make_material(rng, extreme) for name in names}
    rods, shapes, twisted = make_rods(rng, dim, scene["materials"], budget=120, extreme=extreme)
    scene["rods"] = rods
    loads = []
    for _ in range(rng.choice([0, 0, 1, 2])):
        name, _, n, fixed = rng.choice(shapes)
        free = [v for v in range(n) if v not in fixed]
        if free:
            load = {"rod": name, "vertex": rng.choice(free),
                    "force": [log_uniform(rng, -7, 1) * c for c in unit_vector(rng, dim)]}
            if rng.random() < 0.5:
                load["ramp"] = rng.choice([0, dt, 0.01, 1.0])
            loads.append(load)
    if loads:
        scene["loads"] = loads
    colliders = [make_collider(rng, dim, shapes, extreme) for _ in range(rng.choice([0, 0, 1, 2, 4]))]
    if colliders:
        scene["colliders"] = colliders
    if not static and rng.random() < 0.25:
        handles = make_handles(rng, dim, rods, colliders, shapes, twisted)
        if handles:
            scene["handles"] = handles
    if extreme and rng.random() < 0.3:
        # Products that overflow a double (a known finding: density 1e300 with gravity 1e300).
        scene["gravity"] = [1e300] * dim
        scene["materials"][names[0]]["density"] = 1e300
    vertices = sum(n for _, _, n, _ in shapes)
    newton = scene["solver"].get("newton_iterations", 1)
    cg = scene["solver"].get("cg_max_iterations", 1000) if colliders else 1
    steps = 50 if static else steps_per_frame * frames
    return scene, vertices * steps * newton * (1 + min(cg, 50))


# --------------------------------------------------------------------------------------------
# Malformed scenes: a valid scene's text, damaged

HUGE_NUMBERS = ["1e308", "-1.7976931348623157e308", "1.797e308", "1e400", "-1e400", "1e-400", "5e-324",
                "123456789012345678901234567890", "-0", "0e999999999", "1" * 400]
JUNK = list('{}[],:"0123456789eE.-+ \n\\') + ["null", "true", "[]", "{}", "\"\"", "\u00ff", "\x00"]


def malformed_text(rng, text):
    kind = rng.choice(["mutate", "mutate", "truncate", "nest", "huge_number", "giant_string", "wrong_type",
                       "duplicate_key", "section_twist", "section_twist"])
    if kind == "section_twist":
        return kind, json.dumps(break_section_twist(rng, json.loads(text)), indent=1)
    if kind == "mutate":
        chars = list(text)
        for _ in range(rng.randint(1, 8)):
            at = rng.randrange(len(chars) + 1)
            op = rng.choice(["delete", "insert", "replace", "repeat"])
            if op == "delete" and chars:
                del chars[min(at, len(chars) - 1)]
            elif op == "insert":
                chars.insert(at, rng.choice(JUNK))
            elif op == "replace" and at < len(chars):
                chars[at] = rng.choice(JUNK)
            else:
                chars[at:at] = chars[at:at + rng.randint(1, 40)]
        return kind, "".join(chars)
    if kind == "truncate":
        return kind, text[:rng.randrange(len(text))]
    if kind == "nest":
        depth = rng.choice([100, 1000, 10000, 100000])  # ~65,000 overflows the stack: a known finding
        value = rng.choice(["[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth])
        return f"nest{depth}", text.replace('"format"', '"name": ' + value + ', "format"', 1)
    if kind == "huge_number":
        numbers = list(re.finditer(r"-?\d+(\.\d+)?([eE][-+]?\d+)?", text))
        chars = text
        for match in sorted(rng.sample(numbers, min(len(numbers), rng.randint(1, 3))), key=lambda m: -m.start()):
            chars = chars[:match.start()] + rng.choice(HUGE_NUMBERS) + chars[match.end():]
        return kind, chars
    if kind == "giant_string":
        size = rng.choice([1000, 100000, 1000000, 20000000])  # 20 MB misspelt: a known slow suggestion
        # A misspelt word where one of a few is expected, so the loader looks for a suggestion.
        words = list(re.finditer(r'"(mode|projection|rest|type|linearization|interpolation|material)": "([^"]*)"', text))
        if words:
            match = rng.choice(words)
            return f"giant{size}", text[:match.start(2)] + "statik" * (size // 6) + text[match.end(2):]
        return f"giant{size}", text.replace('"format"', '"name": ' + json.dumps("x" * size) + ', "format"', 1)
    if kind == "wrong_type":
        scene = json.loads(text)
        paths = list(value_paths(scene))
        container, key = rng.choice(paths)
        container[key] = rng.choice([None, True, "1", [], {}, [[[]]], -1, 1.5, 0, 1e308, "x" * 300])
        return kind, json.dumps(scene, indent=1)
    match = rng.choice(list(re.finditer(r'"[a-z_]+": ', text)))
    return kind, text[:match.start()] + text[match.start():match.end()] + "0, " + text[match.start():]


# Bad values for the cross-section and twist keys (docs/scene-format.md, "materials" and "rods"):
# each is refused with a pointer, or is valid but at an edge (a normal of 5e-324 or along the edge).
BAD_SIZES = [0, -1e-3, 1e400, -0.0, 5e-324, 1e308, "1e-3", None, [1e-3], True]
BAD_SECTIONS = [
    {"type": "circle"}, {"type": "ellipse", "a": 1e-3}, {"type": "rectangle", "width": 1e-3},
    {"type": "Circle", "radius": 1e-3}, {"type": "square", "width": 1e-3}, {"type": "", "radius": 1e-3},
    {"radius": 1e-3}, {"type": "circle", "radius": 1e-3, "a": 1e-3},
    {"type": "rectangle", "width": 1e-3, "thickness": 1e-3, "radius": 1e-3},
    {"type": "ellipse", "a": 1e-3, "b": 1e-3, "type ": "x"}, {}, [], "circle", 1e-3, None,
    {"type": None, "radius": 1e-3}, {"type": ["circle"], "radius": 1e-3},
]
BAD_NORMALS = [[0, 0, 0], [0, 1], [0, 0, 1, 0], [1e308, 1e308, 1e308], [5e-324, 0, 0], [1e400, 0, 0],
               ["0", 0, 1], None, "up", {}, [-0.0, -0.0, -0.0], [1e-320, 1e-320, 1e-320]]
BAD_TWIST_FIXED = [{"root": True}, {"tip": True}, {"root": True, "tip": True}, {"middle": True}, {},
                   {"root": 1}, {"root": "true"}, {"root": None}, True, [], "root", {"root": True, "root ": False}]


def break_section_twist(rng, scene):
    """Breaks one to three of the newest keys: cross_section, shear_modulus, poissons_ratio,
    twist, material_normal, rest_twist, twist_fixed."""
    materials = [m for m in scene.get("materials", {}).values() if isinstance(m, dict)]
    materials += [r["material"] for r in scene["rods"] if isinstance(r.get("material"), dict)]
    rods = scene["rods"]
    for _ in range(rng.randint(1, 3)):
        material, rod = rng.choice(materials), rng.choice(rods)
        what = rng.choice(["both_sizes", "no_size", "section", "section_size", "both_moduli", "poisson",
                           "shear", "twist", "twist_2d", "normal", "normal_no_twist", "rest_twist",
                           "rest_twist_no_twist", "twist_fixed", "twist_fixed_no_twist", "anisotropic_no_twist"])
        if what == "both_sizes":
            material["radius"] = 1e-3
            material.setdefault("cross_section", {"type": "circle", "radius": 1e-3})
        elif what == "no_size":
            material.pop("radius", None)
            material.pop("cross_section", None)
        elif what == "section":
            material.pop("radius", None)
            material["cross_section"] = rng.choice(BAD_SECTIONS)
        elif what == "section_size":
            section = material.get("cross_section")
            if isinstance(section, dict) and len(section) > 1:
                section[rng.choice([k for k in section if k != "type"])] = rng.choice(BAD_SIZES)
            else:
                material["radius"] = rng.choice(BAD_SIZES)
        elif what == "both_moduli":
            material["shear_modulus"], material["poissons_ratio"] = 1e6, 0.3
        elif what == "poisson":
            material.pop("shear_modulus", None)
            material["poissons_ratio"] = rng.choice([-1, -1.0000001, 0.5000001, 1, 1e400, -1e308, "0.3", None])
        elif what == "shear":
            material.pop("poissons_ratio", None)
            material["shear_modulus"] = rng.choice(BAD_SIZES)
        elif what == "twist":
            rod["twist"] = rng.choice(["true", 1, 0, None, [], {}, False])
        elif what == "twist_2d":
            scene["dimension"] = 2  # every 3-vector is now wrong too; the loader names the first
            rod["twist"] = True
        elif what in ("normal", "normal_no_twist"):
            rod["material_normal"] = rng.choice(BAD_NORMALS + [[0, 0, 1]])
            if what == "normal_no_twist":
                rod.pop("twist", None)
        elif what in ("rest_twist", "rest_twist_no_twist"):
            rod["rest_twist"] = rng.choice([1e400, -1e400, 1e308, -1.797e308, 5e-324, "1", None, [1], True])
            if what == "rest_twist_no_twist":
                rod["rest_twist"] = 1.0
                rod["twist"] = False
        elif what in ("twist_fixed", "twist_fixed_no_twist"):
            rod["twist_fixed"] = rng.choice(BAD_TWIST_FIXED)
            if what == "twist_fixed_no_twist":
                rod.pop("twist", None)
            elif rng.random() < 0.5:
                rod["fixed"] = []
        else:  # a ribbon without twist: refused in 3D (unless curved at rest)
            material.pop("radius", None)
            material["cross_section"] = {"type": "rectangle", "width": 1e-3, "thickness": 1e-5}
            for r in rods:
                r.pop("twist", None)
    return scene


def value_paths(value):
    """(container, key) for every value inside a parsed scene, so one can be replaced."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, item in items:
        yield value, key
        yield from value_paths(item)


# `rod_contact` (docs/scene-format.md): valid settings, edges included, and values the loader
# must refuse at /rod_contact or the key inside it.
ROD_CONTACT_FRICTIONS = [0, 0.0, 0.1, 0.5, 1.0, 10.0, 5e-324, 1e-300, 1e300, 1.7976931348623157e308, -0.0]
BAD_ROD_CONTACT = [
    "true", "on", 1, 0, None, [], [True], 1.5,
    {"enabled": "true"}, {"enabled": 1}, {"enabled": None}, {"enabled": [True]},
    {"enabled": True, "friction": -0.1}, {"friction": -5e-324}, {"friction": -1e300}, {"friction": "0.3"},
    {"friction": None}, {"friction": True}, {"friction": [0.3]},
    {"self": "false"}, {"self": 0}, {"self": None},
    {"enabled": True, "frction": 0.3}, {"Enabled": True}, {"enabled": True, "radius": 1e-3}, {"self ": True},
]


def make_rod_contact(seed, index, scene):
    """Adds `rod_contact` to a quarter of the valid scenes (on or off, any friction, self or not;
    the shorthand too) and a bad value to a few; returns whether the value is a bad one. Drawn
    from its own random stream, so that every other case of a seed stays what it was before the
    key existed (past reproducers "seed S case N" still reproduce)."""
    rng = random.Random(f"bristle-fuzz-rod-contact:{seed}:{index}")
    draw = rng.random()
    if draw < 0.06:
        scene["rod_contact"] = rng.choice(BAD_ROD_CONTACT)
        return True
    if draw < 0.1:
        scene["rod_contact"] = rng.choice([True, False])
    elif draw < 0.25:
        settings = {}
        for key, make in (("enabled", lambda: rng.choice([True, True, False])),
                          ("friction", lambda: rng.choice(ROD_CONTACT_FRICTIONS)),
                          ("self", lambda: rng.choice([True, False]))):
            if rng.random() < 0.7:
                settings[key] = make()
        scene["rod_contact"] = settings
    make_rod_contact_method(seed, index, scene)
    return False


# `rod_contact.method` (docs/scene-format.md): the two methods, and values refused at
# /rod_contact/method.
BAD_ROD_CONTACT_METHODS = ["constraint", "Barrier", "", " barrier", 1, None, True, ["constraints"], {}]


def make_rod_contact_method(seed, index, scene):
    """Sets `rod_contact.method` in a third of the valid scenes whose `rod_contact` is an object,
    and a bad method in a few, from a stream of its own: cases without such an object stay what
    they were before the key was fuzzed; those with one may now carry it (seed 1: 112 of its
    first 2000 cases, 6 of them now bad)."""
    settings = scene.get("rod_contact")
    if not isinstance(settings, dict):
        return
    rng = random.Random(f"bristle-fuzz-rod-contact-method:{seed}:{index}")
    draw = rng.random()
    if draw < 0.25:
        settings["method"] = "constraints"
    elif draw < 0.33:
        settings["method"] = "barrier"
    elif draw < 0.36:
        settings["method"] = rng.choice(BAD_ROD_CONTACT_METHODS)


def make_case(seed, index):
    """Case `index` of `seed`: (kind, scene text, estimated work) -- the same on every machine."""
    rng = random.Random(f"bristle-fuzz:{seed}:{index}")
    scene, work = make_valid_scene(rng, index)
    bad_rod_contact = make_rod_contact(seed, index, scene)
    rod_contact = scene.get("rod_contact", False)
    if isinstance(rod_contact, dict) and "method" in rod_contact and rod_contact["method"] not in ("barrier", "constraints"):
        bad_rod_contact = True
    if rod_contact is True or (isinstance(rod_contact, dict) and rod_contact.get("enabled") is True):
        work *= 4  # room for the contact search and a shorter line search, once they run
    text = json.dumps(scene, indent=1)
    if bad_rod_contact:
        return "malformed-rod_contact", text, work
    if rng.random() < 0.35:
        kind, text = malformed_text(rng, text)
        return "malformed-" + kind, text, work
    return ("static" if scene["solver"].get("mode") == "static" else "valid"), text, work


# --------------------------------------------------------------------------------------------
# Running and classifying

class Finding(Exception):
    def __init__(self, category, command, detail):
        super().__init__(f"{category}: {detail}")
        self.category, self.command, self.detail = category, command, detail


SANITIZER = re.compile(r"ERROR: (Address|Leak|Memory|Thread)Sanitizer|runtime error: |UndefinedBehaviorSanitizer")
# docs/output-format.md: "failed: step N (t = T s): ..." naming the rod and vertex where the
# step can (a CG failure is a property of the whole system and names no vertex).
# A state or energy that overflows is caught before its frame is written, and names the pointer.
DYNAMIC_FAILURE = re.compile(r"^failed: step \d+ \(t = [^)]* s\): (.*(rod '[^']*' vertex \d+|conjugate gradient did not converge)"
                             r"|frame \d+ would hold a non-finite number at /)")
STATIC_FAILURE = re.compile(r"^failed: static solve: .+")


def run(command, timeout, expect, cwd=None):
    """Runs one bristle command; raises Finding on a crash, hang or unexpected exit code."""
    shown = " ".join(command)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
                               start_new_session=True)  # its own group: a timeout kills its children too
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise Finding("hang", shown, f"no answer within {timeout:.0f} s")
    err = err.decode("utf-8", "replace")
    code = process.returncode
    if SANITIZER.search(err):
        raise Finding("sanitizer", shown, sanitizer_report(err))
    if code < 0:
        raise Finding("crash", shown, f"killed by signal {-code} ({signal.Signals(-code).name})\n" + tail(err))
    if code not in (0, 1, 2):
        raise Finding("bad-exit", shown, f"exit code {code}\n" + tail(err))
    if "internal error" in err:
        raise Finding("internal-error", shown, tail(err))
    if code not in expect:
        raise Finding("unexpected-exit", shown, f"exit code {code}, expected {sorted(expect)}\n" + tail(err))
    return code, out.decode("utf-8", "replace"), err


def sanitizer_report(text):
    """The report's headline, the first frames of its stack and its summary (a stack overflow
    prints hundreds of identical frames)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if SANITIZER.search(line))
    summary = [line for line in lines if line.startswith("SUMMARY:")]
    return "\n".join(lines[start:start + 10] + summary)


def tail(text, lines=12):
    return "\n".join(text.strip().splitlines()[-lines:])


def non_finite(value, path="") -> str:
    """The JSON path of the first null, NaN or infinity in a parsed frame, or ''."""
    if value is None:
        return path or "/"
    if isinstance(value, float) and not math.isfinite(value):
        return path or "/"
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return ""
    for key, item in items:
        found = non_finite(item, f"{path}/{key}")
        if found:
            return found
    return ""


def check_frames(out_dir, shown):
    frames = sorted(os.listdir(os.path.join(out_dir, "frames")))
    for name in frames:
        if not name.endswith(".json") or name.startswith("."):
            continue
        path = os.path.join(out_dir, "frames", name)
        with open(path, encoding="utf-8") as f:
            # Python reads NaN and Infinity as floats, so they are caught with null below.
            frame = json.load(f)
        where = non_finite(frame)
        if where:
            raise Finding("non-finite", shown, f"non-finite value at {where} of frames/{name}")
    return len(frames)


def run_case(args, index):
    if args.replay:
        # A stored reproducer: its work is unknown, so give it the time of a large scene.
        with open(args.replay[index], encoding="utf-8", errors="surrogatepass") as f:
            kind, text, work = "replay", f.read(), 5e7
    else:
        kind, text, work = make_case(args.seed, index)
    case_dir = os.path.join(args.work, f"case-{index:05d}")
    shutil.rmtree(case_dir, ignore_errors=True)
    os.makedirs(case_dir)
    scene_path = os.path.join(case_dir, "scene.json")
    with open(scene_path, "w", encoding="utf-8", errors="surrogatepass") as f:
        f.write(text)
    bristle, scale = args.bristle, args.time_scale
    out_dir = os.path.join(case_dir, "out")
    # Timeouts: generous multiples of what the work should take on a slow machine.
    read_timeout = scale * (10 + len(text) / 1e6)
    outcome = ""
    try:
        code, _, _ = run([bristle, "validate", scene_path], read_timeout, {0, 2})
        if code == 2:
            code, _, _ = run([bristle, "run", scene_path, "-o", out_dir, "--quiet"], read_timeout, {2})
            if os.path.exists(out_dir):
                raise Finding("wrote-on-refusal", f"{bristle} run {scene_path} -o {out_dir}",
                              "the scene was refused (exit 2) but the output folder exists")
            return kind, "refused", None
        threads = ["--threads", "2"] if index % 3 == 0 else []
        run_command = [bristle, "run", scene_path, "-o", out_dir, "--quiet"] + threads
        code, _, err = run(run_command, scale * (30 + 2e-6 * work), {0, 1})
        shown = " ".join(run_command)
        with open(os.path.join(out_dir, "manifest.json"), encoding="utf-8") as f:
            manifest = json.load(f)
        status = manifest.get("status", "")
        if code == 0 and status != "complete":
            raise Finding("bad-status", shown, f"exit 0 but manifest status {status!r}")
        if code == 1 and not (DYNAMIC_FAILURE.match(status) or STATIC_FAILURE.match(status)):
            raise Finding("bad-status", shown, f"failed run whose status does not say where: {status!r}\n" + tail(err))
        frames = check_frames(out_dir, shown)
        outcome = "complete" if code == 0 else "sim-failed"
        if frames == 0:
            return kind, outcome, None
        readers(args, index, case_dir, out_dir, manifest, frames, read_timeout)
        return kind, outcome, None
    except Finding as finding:
        return kind, outcome or "failed", finding
    finally:
        if not args.keep:
            # Keep the scene (small) for a look; drop the bulky outputs.
            for sub in ("out", "images", "export", "modes", "damaged", "damaged-images", "damaged-export"):
                shutil.rmtree(os.path.join(case_dir, sub), ignore_errors=True)


def readers(args, index, case_dir, out_dir, manifest, frames, timeout):
    """Every reader of output folders on what `bristle run` just wrote: none may refuse it."""
    bristle = args.bristle
    timeout = max(timeout, 30 * args.time_scale)
    run([bristle, "compare", out_dir, out_dir, "--atol", "0", "--rtol", "0", "--velocities"], timeout, {0})
    run([bristle, "render", out_dir, "-o", os.path.join(case_dir, "images"), "--width", "64", "--height", "48",
         "--frames", f"0:{min(2, frames - 1)}", "-j", "1", "--quiet"], timeout, {0})
    export_format = ["obj", "vtk", "usd"][index % 3]
    run([bristle, "export", out_dir, "--format", export_format, "-o", os.path.join(case_dir, "export"), "--quiet"],
        timeout, {0})
    # The manifest's expanded scene is itself a valid scene (docs/scene-format.md).
    expanded = os.path.join(case_dir, "expanded.json")
    with open(expanded, "w", encoding="utf-8") as f:
        json.dump(manifest["scene"], f, indent=1)
    run([bristle, "validate", expanded], timeout, {0})
    # The eigensolver may fail (exit 1) on an extreme scene; refusing the scene may not.
    run([bristle, "modes", expanded, "--count", "3", "--json", "--shapes", os.path.join(case_dir, "modes")],
        timeout, {0, 1})
    if index % 4 == 0:
        damaged_readers(args, index, case_dir, out_dir, frames, timeout)


def damaged_readers(args, index, case_dir, out_dir, frames, timeout):
    """The readers on a damaged copy of the folder: they must refuse it, not crash."""
    rng = random.Random(f"bristle-fuzz-damage:{args.seed}:{index}")
    damaged = os.path.join(case_dir, "damaged")
    shutil.rmtree(damaged, ignore_errors=True)
    shutil.copytree(out_dir, damaged)
    name = rng.choice(["manifest.json"] + [f"frames/{k:06d}.json" for k in range(frames)])
    path = os.path.join(damaged, name)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    how = rng.choice(["truncate", "delete", "number", "type"] + (["director"] * 3 if '"directors"' in text else []))
    if how == "director":
        # A rod with twist's material directors (bristle-frames/2): one not a unit vector, of the
        # wrong size or type, or one too few or too many.
        at = text.index('"directors"')
        vector = re.compile(r"\[[^\[\]]*\]")
        match = vector.search(text, at)
        bad = rng.choice(["[0.5, 0.0, 0.0]", "[0.0, 0.0, 0.0]", "[1e400, 0.0, 0.0]", "[NaN, 0.0, 1.0]", "[1.0, 0.0]",
                          "[1.0, 0.0, 0.0, 0.0]", "null", "\"x\"", "[1.0000001, 0.0, 0.0]", "[1e-320, 0.0, 0.0]",
                          "[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]", ""])
        text = text[:match.start()] + bad + text[match.end():]
    elif how == "truncate":
        text = text[:rng.randrange(len(text))]
    elif how == "number":  # a number beyond a double, or a huge count
        text = re.sub(r"\b\d+(\.\d+)?(e[-+]?\d+)?\b", rng.choice(["1e400", "99999999999999999999", "-1"]), text,
                      count=rng.randint(1, 5))
    elif how == "type":
        text = re.sub(r"\[[^\[\]]*\]", rng.choice(["null", "{}", "\"x\"", "[]"]), text, count=rng.randint(1, 3))
    if how == "delete":
        os.remove(path)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    # Refusing (2) or failing (1) are both fine; a crash, hang or internal error is not.
    run([args.bristle, "compare", damaged, out_dir], timeout, {0, 1, 2})
    run([args.bristle, "render", damaged, "-o", os.path.join(case_dir, "damaged-images"), "--width", "32",
         "--height", "24", "--frames", "0:1", "-j", "1", "--quiet"], timeout, {0, 1, 2})
    run([args.bristle, "export", damaged, "--format", ["obj", "vtk", "usd"][index % 3], "-o",
         os.path.join(case_dir, "damaged-export"), "--quiet"], timeout, {0, 1, 2})


def save_reproducer(args, index, kind, finding):
    folder = os.path.join(args.failures, f"case-{index:05d}-{finding.category}")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    scene = os.path.join(args.work, f"case-{index:05d}", "scene.json")
    if os.path.getsize(scene) < 2_000_000:
        shutil.copy(scene, os.path.join(folder, "scene.json"))
    with open(os.path.join(folder, "README.txt"), "w", encoding="utf-8") as f:
        f.write(f"case {index} of seed {args.seed} ({kind}): {finding.category}\n"
                f"command: {finding.command}\n\n{finding.detail}\n\n"
                f"regenerate and rerun this case alone:\n"
                f"  python3 tools/fuzz_scenes.py --bristle {args.bristle} --seed {args.seed} --only {index}\n"
                if not args.replay else f"replayed from {args.replay[index]}\n")
    return folder


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bristle", default="build/bristle", help="the bristle executable")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=150, help="how many scenes")
    parser.add_argument("--only", type=int, action="append", help="run only case N (repeatable)")
    parser.add_argument("--work", default="build/fuzz-scenes", help="where cases run")
    parser.add_argument("--failures", default="build/fuzz-scenes-failures", help="where reproducers go")
    parser.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--time-scale", type=float, default=1.0,
                        help="multiply every timeout (e.g. 4 for a sanitizer build)")
    parser.add_argument("--keep", action="store_true", help="keep every case's outputs")
    parser.add_argument("--replay", metavar="DIR",
                        help="run the scenes stored in DIR (*.json, e.g. past reproducers) instead of generating")
    parser.add_argument("--emit", metavar="DIR", help="only write the scenes to DIR (a seed corpus), run nothing")
    args = parser.parse_args()
    args.bristle = os.path.abspath(args.bristle)
    # With a sanitizer build: the same reporting as tools/sanitizer-env.sh (third-party leaks
    # suppressed, UBSan halting), unless the caller chose otherwise.
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.environ.setdefault("LSAN_OPTIONS", f"suppressions={root}/tools/lsan.supp:print_suppressions=0")
    os.environ.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
    if args.replay:
        args.replay = sorted(os.path.join(args.replay, name) for name in os.listdir(args.replay)
                             if name.endswith(".json"))
        args.count = len(args.replay)
    indices = args.only or list(range(args.count))

    if args.emit:
        os.makedirs(args.emit, exist_ok=True)
        for index in indices:
            kind, text, _ = make_case(args.seed, index)
            if len(text) < 100_000:
                with open(os.path.join(args.emit, f"gen-{args.seed}-{index:05d}.json"), "w", encoding="utf-8",
                          errors="surrogatepass") as f:
                    f.write(text)
        return 0

    os.makedirs(args.work, exist_ok=True)
    counts, kinds, failures = {}, {}, []
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for index, (kind, outcome, finding) in zip(indices, pool.map(lambda i: run_case(args, i), indices)):
            kinds[kind.split("-")[0]] = kinds.get(kind.split("-")[0], 0) + 1
            if finding:
                outcome = "FAIL " + finding.category
                folder = save_reproducer(args, index, kind, finding)
                failures.append(index)
                print(f"case {index} ({kind}): {finding.category}: {finding.command}\n  "
                      + finding.detail.replace("\n", "\n  ") + f"\n  reproducer: {folder}", flush=True)
            counts[outcome] = counts.get(outcome, 0) + 1
    elapsed = time.monotonic() - start
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    made = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
    print(f"fuzz_scenes: seed {args.seed}, {len(indices)} scenes ({made}) in {elapsed:.0f} s: {summary}; "
          f"{len(failures)} failed" + (f" (cases {' '.join(map(str, failures))})" if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
