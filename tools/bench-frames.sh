#!/usr/bin/env bash
# Measures frame output, JSON against binary, stored and compressed (docs/output-format.md,
# "Binary frames"):
#  - bytes per vertex and write time per frame for a generated scene of STRANDS strands of 50
#    vertices (default 1000: 50,000 vertices, the strands of `bristle bench`), one step per
#    frame so that a frame's write compares with one step;
#  - the same for STRANDS strands of random direction and length (seed 3): identical strands
#    on a grid (above) deflate far better than a real groom's, which these stand for;
#  - the size of scenes/demo.json's output folder in each layout;
#  - for both scenes, what zlib levels 1, 6 and 9 would give on the stored frames (the choice
#    of kFrameDeflateLevel, include/bristle/io/frame_npz.hpp), through Python's zlib module,
#    which uses the same system zlib as bristle.
# usage: bash tools/bench-frames.sh [BRISTLE] [WORK] [STRANDS] [THREADS]
# Prints Markdown table rows. Each run is repeated 3 times and the fastest kept: a shared
# machine only ever slows a run down.
set -euo pipefail
cd "$(dirname "$0")/.."
bristle=${1:-build/bristle}
work=${2:-/tmp/bristle-bench-frames}
strands=${3:-1000}
threads=${4:-1}
mkdir -p "$work"

# The benchmark's strands: L = 0.2 m, radius 50 um, E = 3 GPa, density 1300 kg/m^3, clamped
# horizontally at the root, on a square grid 2 mm apart; dt = frame_dt = 1/240 s, 30 steps.
python3 - "$work/strands.json" "$strands" <<'PY'
import json, math, sys
path, count = sys.argv[1], int(sys.argv[2])
side = math.ceil(math.sqrt(count))
rods = []
for i in range(count):
    y, z = 0.002 * (i // side), 0.002 * (i % side)
    rods.append({"name": f"strand_{i}", "material": "hair",
                 "generator": {"type": "straight", "from": [0, y, z], "to": [0.2, y, z], "segments": 49},
                 "fixed": [0, 1]})
scene = {"format": "bristle-scene/1", "name": f"strands_{count}", "dimension": 3,
         "time": {"dt": 1 / 240, "frame_dt": 1 / 240, "duration": 30 / 240},
         "gravity": [0, -9.81, 0],
         "materials": {"hair": {"density": 1300, "radius": 5e-5, "youngs_modulus": 3e9}},
         "rods": rods}
with open(path, "w") as stream:
    json.dump(scene, stream)
PY

# The same strands, each turned by up to 0.5 rad about two axes and 0.15 to 0.25 m long.
python3 - "$work/varied.json" "$strands" <<'PY'
import json, math, random, sys
path, count = sys.argv[1], int(sys.argv[2])
random.seed(3)
side = math.ceil(math.sqrt(count))
rods = []
for i in range(count):
    y, z = 0.002 * (i // side), 0.002 * (i % side)
    a, b, length = random.uniform(-0.5, 0.5), random.uniform(-0.5, 0.5), random.uniform(0.15, 0.25)
    to = [length * math.cos(a) * math.cos(b), y + length * math.sin(a), z + length * math.cos(a) * math.sin(b)]
    rods.append({"name": f"strand_{i}", "material": "hair",
                 "generator": {"type": "straight", "from": [0, y, z], "to": to, "segments": 49},
                 "fixed": [0, 1]})
scene = {"format": "bristle-scene/1", "name": f"varied_{count}", "dimension": 3,
         "time": {"dt": 1 / 240, "frame_dt": 1 / 240, "duration": 30 / 240},
         "gravity": [0, -9.81, 0],
         "materials": {"hair": {"density": 1300, "radius": 5e-5, "youngs_modulus": 3e9}},
         "rods": rods}
with open(path, "w") as stream:
    json.dump(scene, stream)
PY

# Runs SCENE with --frames LAYOUT three times; prints "wall write frames steps bytes vertices".
measure() {
  local scene=$1 layout=$2 out=$3 best_wall="" best_write="" line
  for _ in 1 2 3; do
    line=$("$bristle" run "$scene" -o "$out" --force --frames "$layout" --threads "$threads" 2>/dev/null)
    # complete: OUT (31 frames, 30 steps, 0.125 s simulated in 2.1 s wall time, 0.9 s of it writing JSON frames)
    read -r frames steps wall write < <(sed -E 's/.*\(([0-9]+) frames, ([0-9]+) steps, .* in ([0-9.e+-]+) s wall time, ([0-9.e+-]+) s of it.*/\1 \2 \3 \4/' <<<"$line")
    if [ -z "$best_write" ] || awk "BEGIN{exit !($write < $best_write)}"; then best_write=$write; fi
    if [ -z "$best_wall" ] || awk "BEGIN{exit !($wall < $best_wall)}"; then best_wall=$wall; fi
  done
  local bytes vertices
  bytes=$(du -sb "$out/frames" | cut -f1)
  vertices=$(python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print(sum(r['vertex_count'] for r in m['rods']))" "$out/manifest.json")
  echo "$best_wall $best_write $frames $steps $bytes $vertices $(du -sb "$out" | cut -f1)"
}

echo "| scene | layout | bytes / vertex / frame | write time / frame | simulation time / step | folder size |"
echo "|---|---|---:|---:|---:|---:|"
for scene in strands varied; do
  for layout in json binary compressed; do
    read -r wall write frames steps bytes vertices total < <(measure "$work/$scene.json" $layout "$work/${scene}_$layout")
    awk -v n=$scene -v l=$layout -v w="$wall" -v wr="$write" -v f="$frames" -v s="$steps" -v b="$bytes" -v v="$vertices" -v t="$total" \
      'BEGIN{printf "| %d %s strands, %d vertices | %s | %.1f | %.1f ms | %.1f ms | %.1f MB |\n", v/50, n == "varied" ? "varied" : "identical", v, l, b/f/v, 1000*wr/f, 1000*(w-wr)/s, t/1e6}'
  done
done
for layout in json binary compressed; do
  read -r wall write frames steps bytes vertices total < <(measure scenes/demo.json $layout "$work/demo_$layout")
  awk -v l=$layout -v w="$wall" -v wr="$write" -v f="$frames" -v s="$steps" -v b="$bytes" -v v="$vertices" -v t="$total" \
    'BEGIN{printf "| demo.json, %d vertices | %s | %.1f | %.2f ms | %.2f ms | %.2f MB |\n", v, l, b/f/v, 1000*wr/f, 1000*(w-wr)/s, t/1e6}'
done

# The demo's folder against JSON (issue 17: binary at most a third of the JSON size).
for layout in binary compressed; do
  awk -v l=$layout -v a="$(du -sb "$work/demo_$layout" | cut -f1)" -v j="$(du -sb "$work/demo_json" | cut -f1)" \
    'BEGIN{printf "demo.json folder, %s / json: %.3f\n", l, a/j}'
done

# zlib levels on the stored frames' members, raw deflate as zip method 8; best of 3 per frame.
echo
echo "| scene | zlib level | size / stored | deflate time / frame |"
echo "|---|---:|---:|---:|"
for scene in strands varied demo; do
  python3 - "$work/${scene}_binary" "$scene" <<'PY'
import glob, sys, time, zipfile, zlib
frames = sorted(glob.glob(sys.argv[1] + "/frames/*.npz"))
members = []
for path in frames:
    with zipfile.ZipFile(path) as archive:
        members.append([archive.read(name) for name in archive.namelist()])
stored = sum(len(m) for frame in members for m in frame)
for level in (1, 6, 9):
    size, seconds = 0, 0.0
    for frame in members:
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            packed = []
            for m in frame:
                z = zlib.compressobj(level, zlib.DEFLATED, -15)
                packed.append(z.compress(m) + z.flush())
            best = min(best, time.perf_counter() - start)
        size += sum(min(len(p), len(m)) for p, m in zip(packed, frame))
        seconds += best
    print(f"| {sys.argv[2]} | {level} | {size / stored:.3f} | {1000 * seconds / len(frames):.2f} ms |")
PY
done
