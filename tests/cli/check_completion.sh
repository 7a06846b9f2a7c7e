#!/usr/bin/env bash
# The bash completion (tools/bristle-completion.bash), called as bash calls it: COMP_WORDS
# and COMP_CWORD set, then _bristle; COMPREPLY must hold what a user expects after TAB.
#   check_completion.sh BRISTLE COMPLETION WORK
set -uo pipefail
export LC_ALL=C
bristle=$1
completion=$2
work=$3
# shellcheck source=/dev/null
source "$completion" || { echo "CHECK FAILED: sourcing $completion"; exit 1; }
complete -p bristle >/dev/null || { echo "CHECK FAILED: no 'complete' for bristle"; exit 1; }

# A folder to complete in: a scene, another file, a folder.
rm -rf "$work" && mkdir -p "$work/runs" && touch "$work/a.json" "$work/b.txt" && cd "$work" || exit 1

failures=0
# expect "EXPECTED WORDS" WORD...: completes the last WORD of `bristle WORD...`.
expect() {
  local expected=$1
  shift
  COMP_WORDS=("$bristle" "$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _bristle
  local got
  got=$(printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//')
  if [ "$got" = "$expected" ]; then
    echo "ok: bristle $* -> $got"
  else
    echo "CHECK FAILED: bristle $*<TAB>: expected '$expected', got '$got'"
    failures=$((failures + 1))
  fi
}

# Commands, from `bristle help` (whatever it lists: compared with the program, not a list here).
commands=$("$bristle" help | awk '/^commands:/{on=1; next} on && NF==0{exit} on{print $1}' | sort | tr '\n' ' ' | sed 's/ $//')
expect "$(printf '%s\n' $commands --help --version | sort | tr '\n' ' ' | sed 's/ $//')" ""
expect "render run" r
expect "$commands" help ""
expect "validate verify" help v
# A command's flags, from its help text.
expect "--force --frames --help --output --quiet --threads" run --
expect "--threads" run --t
expect "--atol" compare --a
# Values: choices from the usage line, folders, files, nothing for a number.
expect "obj usd vtk" export out --format ""
expect "equilibrium initial" modes a.json --at ""
expect "binary compressed json" run a.json --frames ""
expect "compressed" batch a.json --frames c
expect "runs" run a.json -o ""
expect "runs" run a.json --output ""
expect "a.json b.txt runs" render runs --video ""
expect "" run a.json --threads ""
expect "" render runs --frames ""
# Positionals: scene files and folders for a SCENE, folders for an output folder.
expect "a.json runs" run ""
expect "a.json runs" batch a.json ""
expect "a.json" validate a
expect "runs" compare ""
expect "runs" render ""
expect "runs" check-contact ""
expect "--help --overlap-tolerance --threads" check-contact --
expect "" check-contact runs --overlap-tolerance ""
# Something that is not bristle completes nothing (and does not fail).
COMP_WORDS=("$work/not-bristle" "") COMP_CWORD=1 COMPREPLY=()
_bristle && [ ${#COMPREPLY[@]} -eq 0 ] || { echo "CHECK FAILED: a missing executable"; failures=$((failures + 1)); }

[ "$failures" -eq 0 ] || { echo "CHECK FAILED: $failures completions wrong"; exit 1; }
echo "all completions as expected"
