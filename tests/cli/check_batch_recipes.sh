#!/usr/bin/env bash
# Runs the GNU parallel and Slurm recipes of docs/batch.md as the page writes them, on two
# small scenes: each fenced block that follows a "<!-- tested: NAME -->" line is read from the
# page, so the test cannot drift from what users copy.
#   check_batch_recipes.sh BRISTLE_DIR DOC SCENE_A SCENE_B WORK
set -uo pipefail
# Absolute paths: the recipes run in folders of their own.
bristle_dir=$(readlink -f "$1")
doc=$(readlink -f "$2")
scene_a=$(readlink -f "$3")
scene_b=$(readlink -f "$4")
work=$(readlink -m "$5")
fail() { echo "CHECK FAILED: $*"; exit 1; }
command -v parallel >/dev/null || fail "GNU parallel is not installed (tools/install-deps.sh installs it)"

# The block under <!-- tested: NAME -->, without its fences.
block() {
  awk -v marker="<!-- tested: $1 -->" '
    $0 == marker { found = 1; next }
    found == 1 && /^```/ { found = 2; next }
    found == 2 && /^```/ { exit }
    found == 2 { print }' "$doc"
}
for name in parallel "slurm submit" sweep.sbatch; do
  [ -n "$(block "$name")" ] || fail "no block marked '<!-- tested: $name -->' in $doc"
done

# bristle from this build on the PATH, as `cmake --install` would put it; a fresh HOME so
# GNU parallel runs as on a machine that never ran it.
export PATH="$bristle_dir:$PATH"
export HOME="$work/home"
setup() {
  rm -rf "$work/$1" && mkdir -p "$work/$1/scenes/sweep" "$HOME" || exit 1
  cp "$scene_a" "$work/$1/scenes/sweep/" && cp "$scene_b" "$work/$1/scenes/sweep/" || exit 1
  cd "$work/$1" || exit 1
}
stem_a=$(basename "$scene_a" .json)
stem_b=$(basename "$scene_b" .json)
complete_run() {  # complete_run STEM: runs/STEM is a complete run, rendered
  grep -q '"status": "complete"' "runs/$1/manifest.json" || fail "runs/$1 is not a complete run"
  [ -f "runs/$1/images/000000.png" ] || fail "runs/$1/images/000000.png was not rendered"
}

# --- GNU parallel: from a folder without runs/, as the page's reader starts ---------------------
setup parallel
echo "--- the GNU parallel recipe:"
block parallel
bash -euo pipefail -c "$(block parallel)" || fail "the GNU parallel recipe exited with $?"
for stem in "$stem_a" "$stem_b"; do complete_run "$stem"; [ -f "runs/$stem.log" ] || fail "no runs/$stem.log"; done
[ "$(awk 'NR > 1 && $7 == 0' runs/joblog.txt | wc -l)" -eq 2 ] || fail "runs/joblog.txt does not record two scenes with exit 0"
# Rerun as the page says: --resume-failed starts nothing that completed.
bash -euo pipefail -c "$(block parallel)" || fail "the GNU parallel recipe, rerun, exited with $?"
[ "$(awk 'NR > 1' runs/joblog.txt | wc -l)" -eq 2 ] || fail "the rerun ran completed scenes again"

# --- Slurm: the submit block without sbatch, then task 2 of the array run by bash -------------
setup slurm
echo "--- the Slurm submit block (sbatch left out) and sweep.sbatch:"
block "slurm submit" | grep -v '^sbatch '
bash -euo pipefail -c "$(block "slurm submit" | grep -v '^sbatch ')" || fail "the Slurm submit block exited with $?"
[ -d runs ] || fail "the Slurm submit block did not create runs/ (sbatch's --output needs it)"
block sweep.sbatch > sweep.sbatch
rm -rf runs  # the script must create it too, for a task started elsewhere
SLURM_ARRAY_TASK_ID=2 SLURM_CPUS_PER_TASK=1 bash sweep.sbatch || fail "sweep.sbatch (task 2) exited with $?"
second=$(sed -n 2p scenes.txt)
complete_run "$(basename "$second" .json)"
echo "the batch recipes of $doc ran as written"
