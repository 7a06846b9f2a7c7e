# bash completion for bristle                                    -*- shell-script -*-
#
# Installed as share/bash-completion/completions/bristle (cmake --install); or, by hand:
#   source tools/bristle-completion.bash
#
# Nothing here lists a command or a flag: they are read, at each completion, from the help
# texts of the bristle being completed (`bristle help`, `bristle help COMMAND`), so the
# completion always matches the installed program. What a value completes to follows from its
# placeholder in the help text:
#   SCENE                      scene files (*.json) and folders
#   OUT, DIR, ROOT, A, B       folders
#   FILE, PATH                 files and folders
#   a|b|c (lower case)         those words (from the usage line, e.g. --format obj|vtk|usd)
#   COMMAND                    the commands (bristle help COMMAND)
#   anything else (N, X, ...)  nothing: a number or a name the user types
# Needs bash only; the bash-completion package is not required.

# The commands, one per line: the lines under "commands:" in `bristle help`.
_bristle_commands() {
  "$1" help 2>/dev/null | awk '/^commands:/{on=1; next} on && NF==0{exit} on{print $1}'
}

# What `bristle help COMMAND` says about the command's arguments, one line each:
#   flag FLAG [PLACEHOLDER]   an option, and the placeholder of its value if it takes one
#   positional PLACEHOLDER    the first positional argument of the usage line
# Option lines look like "  -o, --output OUT  text" or "  --width W, --height H  text"; the
# usage line gives the value choices ("[--at initial|equilibrium]") that option lines name.
_bristle_arguments() {
  "$1" help "$2" 2>/dev/null | awk '
    # A value: an upper-case placeholder (N, OUT, X,Y,Z, K|FIRST:LAST, SCENE...) or a list of
    # lower-case choices (obj|vtk|usd).
    function placeholder(word) { return word ~ /^[A-Z][A-Z0-9_|:,]*(\.\.\.)?$/ || word ~ /^[a-z0-9_]+(\|[a-z0-9_]+)+$/ }
    NR == 1 && $1 == "usage:" {
      for (i = 4; i <= NF; ++i) {
        word = $i; gsub(/[][]/, "", word)
        if (word ~ /^-/) {
          next_word = $(i + 1); gsub(/[][]/, "", next_word)
          if (i < NF && next_word !~ /^-/ && placeholder(next_word)) { choices[word] = next_word; ++i }
        } else if (positional == "" && placeholder(word)) {
          positional = word; sub(/\.\.\.$/, "", positional)
        }
      }
      if (positional != "") print "positional", positional
      next
    }
    /^  -/ {
      n = 0
      for (i = 1; i <= NF; ++i) {
        word = $i; sub(/,$/, "", word)
        if (word ~ /^-[-a-zA-Z0-9]+$/) { group[++n] = word; continue }
        if (n > 0 && placeholder(word)) {
          for (k = 1; k <= n; ++k) values[group[k]] = word
          flush(n); n = 0
          continue
        }
        break
      }
      flush(n)
    }
    function flush(count,   k) {
      for (k = 1; k <= count; ++k) {
        value = (group[k] in choices) ? choices[group[k]] : values[group[k]]
        print "flag", group[k], value
      }
    }'
}

# COMPREPLY for a value whose placeholder is $1, the word being completed $2.
_bristle_value() {
  local placeholder=$1 cur=$2 exe=$3
  case $placeholder in
    SCENE)
      compopt -o filenames 2>/dev/null
      COMPREPLY=($(compgen -d -- "$cur") $(compgen -f -X '!*.json' -- "$cur")) ;;
    OUT | DIR | ROOT | A | B)
      compopt -o filenames 2>/dev/null
      COMPREPLY=($(compgen -d -- "$cur")) ;;
    FILE | PATH)
      compopt -o filenames 2>/dev/null
      COMPREPLY=($(compgen -f -- "$cur")) ;;
    COMMAND)
      COMPREPLY=($(compgen -W "$(_bristle_commands "$exe")" -- "$cur")) ;;
    [a-z]*\|*)
      COMPREPLY=($(compgen -W "${placeholder//|/$'\n'}" -- "$cur")) ;;
    *)
      COMPREPLY=() ;;
  esac
}

_bristle() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  local exe=${COMP_WORDS[0]}
  # `~/bin/bristle` as typed: expand the tilde; otherwise find it on PATH.
  [[ $exe == "~/"* ]] && exe=$HOME/${exe#"~/"}
  command -v -- "$exe" >/dev/null 2>&1 || return 0
  local IFS=$'\n'

  if ((COMP_CWORD == 1)); then
    COMPREPLY=($(compgen -W "$(_bristle_commands "$exe")"$'\n'--version$'\n'--help -- "$cur"))
    return 0
  fi
  local command=${COMP_WORDS[1]}
  local kind flag value positional="" takes=""
  local -A placeholders=()
  while IFS=' ' read -r kind flag value; do
    case $kind in
      flag) placeholders[$flag]=$value ;;
      positional) positional=$flag ;;
    esac
  done < <(_bristle_arguments "$exe" "$command")

  # The value of the option before the cursor.
  if [[ $prev == -* && -n ${placeholders[$prev]+set} ]]; then
    takes=${placeholders[$prev]}
    if [[ -n $takes ]]; then
      _bristle_value "$takes" "$cur" "$exe"
      return 0
    fi
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "${!placeholders[*]}" -- "$cur"))
    return 0
  fi
  _bristle_value "$positional" "$cur" "$exe"
  return 0
}

complete -F _bristle bristle
