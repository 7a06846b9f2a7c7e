#!/usr/bin/env bash
# The man page the build wrote (tools/man-page.sh) is well-formed roff and holds every command
# of `bristle help` and every option of each command's help.
#   check_man_page.sh BRISTLE PAGE
set -euo pipefail
bristle=$1
page=$2
fail() { echo "CHECK FAILED: $*"; exit 1; }
[ -s "$page" ] || fail "$page is missing or empty"

for section in '^\.TH BRISTLE 1 ' '^\.SH NAME$' '^\.SH SYNOPSIS$' '^\.SH DESCRIPTION$' '^\.SH COMMANDS$' \
               '^\.SH "EXIT STATUS"$' '^\.SH "SEE ALSO"$'; do
  grep -q "$section" "$page" || fail "no line matching $section"
done
version=$("$bristle" --version)
grep -q "^\.TH BRISTLE 1 \"\" \"$version\"" "$page" || fail "the .TH line does not name $version"

# Every command (read from the program, not listed here) has its entry and, but help, its section.
commands=$("$bristle" help | awk '/^commands:/{on=1; next} on && NF==0{exit} on{print $1}')
[ "$(wc -l <<<"$commands")" -ge 3 ] || fail "'bristle help' listed fewer than 3 commands"
for command in $commands; do
  grep -qx "\.B $command" "$page" || fail "no entry for $command under COMMANDS"
  [ "$command" = help ] && continue
  grep -qx "\.SS \"bristle $command\"" "$page" || fail "no section for bristle $command"
  # Each option of its help, as roff writes it (every hyphen \-).
  for option in $("$bristle" help "$command" | grep -oE '^  (-[a-z], )?--[a-z][-a-z]*' | grep -oE -- '--[a-z][-a-z]*'); do
    grep -qF -- "${option//-/\\-}" "$page" || fail "bristle $command's option $option is not in the page"
  done
done
# No text line is taken for a request: the lines starting with . or ' are the macros
# tools/man-page.sh writes, nothing else (help text starting with a dot is escaped as \&.).
if grep -E "^[.']" "$page" | grep -vE '^\.(\\"|TH|SH|SS|TP|B|I|RI|br|nf|fi)( |$)'; then
  fail "a text line starts with . or ' (read as a request)"
fi

# groff, when present (groff-base, tools/install-deps.sh), formats it without a warning.
if command -v groff >/dev/null; then
  warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
  [ -z "$warnings" ] || fail "groff warns: $warnings"
  text=$(groff -man -Tutf8 -P-c "$page" 2>/dev/null | sed 's/.\x08//g')
  grep -q 'bristle run SCENE -o OUT' <<<"$text" || fail "the formatted page lacks run's usage line"
  grep -q -- '--threads N' <<<"$text" || fail "the formatted page lacks run's --threads (as ASCII hyphens)"
else
  echo "note: groff not found; the page's structure was checked, not its formatting"
fi
echo "man page $page: $(wc -l <"$page") lines, $(wc -w <<<"$commands") commands"
