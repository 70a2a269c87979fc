#!/usr/bin/env bash
# format: every C and C++ source of the tree is as clang-format writes it with the tree's
# .clang-format (Google style, 100 columns), so no line runs past the configured width and a
# reviewer reads no layout changes in a diff. One test per directory; a failing file shows the
# formatter's first differences. Fix with: clang-format -i <file>. A table laid out by hand is
# fenced by "// clang-format off" / "// clang-format on" with a comment saying why.
# It reads the sources and needs no build.
set -u
export LC_ALL=C

tests_dir=${srcdir:-$(dirname "$0")}
top=$(cd "$tests_dir/.." && pwd) || exit 1
if [ ! -f "$top/.clang-format" ]; then
  echo "Bail out! $top has no .clang-format"
  exit 1
fi
formatter=""
for f in clang-format clang-format-14; do
  command -v "$f" >/dev/null && { formatter=$f; break; }
done
if [ -z "$formatter" ]; then
  # scripts/install-deps installs it; a machine without it cannot say, and says so.
  echo "1..0 # SKIP clang-format is not installed"
  exit 0
fi

cd "$top" || exit 1
# The sources: what git tracks when this is a clone, else every C/C++ file outside build trees.
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git -C "$top" ls-files '*.c' '*.cc' '*.h')
else
  mapfile -t files < <(find . -path ./_build -prune -o -path ./_install -prune -o \
    \( -name '*.c' -o -name '*.cc' -o -name '*.h' \) -print | sed 's|^\./||' | sort)
fi

present=()
for f in "${files[@]}"; do [ -f "$f" ] && present+=("$f"); done
# One formatter for every file: it takes a sixth of a second to start here, a minute for the tree
# file by file. It names each file it would change; when it fails without naming one (it could not
# read a file), each file is asked alone.
declare -A bad
if ! out=$("$formatter" --style=file --dry-run --Werror "${present[@]}" 2>&1); then
  while IFS= read -r f; do bad[$f]=1; done < <(
    sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' <<<"$out")
  if [ ${#bad[@]} -eq 0 ]; then
    for f in "${present[@]}"; do
      "$formatter" --style=file --dry-run --Werror "$f" >/dev/null 2>&1 || bad[$f]=1
    done
  fi
fi
declare -A bad_in count_in
dirs=()
for f in "${present[@]}"; do
  d=$(dirname "$f")
  [ -n "${count_in[$d]+x}" ] || { dirs+=("$d"); count_in[$d]=0; bad_in[$d]=""; }
  count_in[$d]=$((count_in[$d] + 1))
  [ -z "${bad[$f]+x}" ] || bad_in[$d]+="$f "
done

echo "1..${#dirs[@]}"
n=0 failed=0
for d in "${dirs[@]}"; do
  n=$((n + 1))
  if [ -z "${bad_in[$d]}" ]; then
    echo "ok $n - $d: ${count_in[$d]} files as clang-format writes them"
    continue
  fi
  failed=$((failed + 1))
  echo "not ok $n - $d: not as clang-format writes them: ${bad_in[$d]}"
  for f in ${bad_in[$d]}; do
    "$formatter" --style=file --dry-run "$f" 2>&1 | head -n 12 | sed 's/^/# /'
  done
done
[ "$failed" -eq 0 ]
