#!/usr/bin/env bash
# Every text a user reads is true: MPI_Get_library_version (tests/progs/version.c) and
# torusmpi_info name exactly the data transports this build has, and no text that was once stale
# comes back, in them, in torusmpi_info --help, torusmpi_sim --help, the installed man pages or
# the README.
#
# What the build has is taken from its configuration, not from the code under test: configure's
# decision in the build tree's config.h, checked against the installed library (which names a
# network library and its calls only when that transport is compiled in).
. "$(dirname "$0")/lib.sh"

info=$TM_BINDIR/torusmpi_info
sim=$TM_BINDIR/torusmpi_sim

# --- What this build has. TM_PROGS is <build tree>/tests/progs.
config_h=$TM_PROGS/../../config.h
[ -r "$config_h" ] || {
  echo "Bail out! no $config_h: run this script from a configured build tree"
  exit 1
}
defined() { grep -Eq "^#define $1 1\$" "$config_h"; }
# in_library <name>: the installed libmpi holds the string (a dlopen'ed soname, a dlsym'ed call).
lib_strings=$work/libmpi-strings.txt
strings -a "$tm_libmpi" >"$lib_strings"
in_library() { grep -qxF "$1" "$lib_strings"; }

expected=(shm self)
found_ofi=no found_ucx=no
if defined TORUSMPI_HAVE_OFI; then expected+=(ofi) found_ofi=yes; fi
if defined TORUSMPI_HAVE_UCX; then expected+=(ucx) found_ucx=yes; fi
diag "config.h: this build has ${expected[*]}"
# library_has <yes|no> <string...>: the installed library holds all the strings (yes) or none (no).
library_has() {
  local want=$1 s
  shift
  for s in "$@"; do
    if in_library "$s"; then
      [ "$want" = yes ] || { echo "# the library holds $s"; return 1; }
    else
      [ "$want" = no ] || { echo "# the library does not hold $s"; return 1; }
    fi
  done
}
check "installed libmpi has the ofi transport (libfabric.so.1, fi_getinfo) iff config.h says so" \
  library_has $found_ofi libfabric.so.1 fi_getinfo
check "installed libmpi has the ucx transport (libucp.so.0, ucp_init_version) iff config.h says so" \
  library_has $found_ucx libucp.so.0 ucp_init_version

# one_per_line <word...>: the words sorted, one a line (the order of a list is not what is checked).
one_per_line() { printf '%s\n' "$@" | sort; }
one_per_line "${expected[@]}" >"$work/expected.txt"
# names_are <what> <file of names>: the file names exactly the expected transports.
names_are() {
  sort "$2" | diff "$work/expected.txt" - >"$work/names.diff" && return 0
  echo "# $1: expected (<) and named (>) transports differ:"
  sed 's/^/#   /' "$work/names.diff"
  return 1
}

# --- MPI_Get_library_version, as a singleton and from a 2-rank job.
bin=$TM_PROGS/version.gcc
versions=()
run_job 30 env "${no_launcher[@]}" LD_PRELOAD="$tm_libmpi" "$bin"
check "version.gcc, singleton: MPI_Get_library_version before, during and after MPI" \
  ranks_done 1 || diag_job
sed -n 's/^library_version: //p' "$job_out" >"$work/version-singleton.txt"
versions+=("$work/version-singleton.txt")
run_job 60 "${mpirun[@]}" -np 2 "${via_path[@]}" "$bin"
check "version.gcc, np=2: MPI_Get_library_version before, during and after MPI" ranks_done 2 ||
  diag_job
sed -n 's/^library_version: //p' "$job_out" >"$work/version-np2.txt"
versions+=("$work/version-np2.txt")
for file in "${versions[@]}"; do
  kind=${file##*/version-}
  kind=${kind%.txt}
  text=$(cat "$file")
  diag "MPI_Get_library_version ($kind): $text"
  check "library version ($kind) is torusmpi's, one line" \
    test "$(wc -l <"$file")" = 1 -a "${text%% *}" = torusmpi
  # "... data transports: shm,self,ofi,ucx)": the list runs to the closing parenthesis.
  sed -n 's/.*data transports: \([^)]*\)).*/\1/p' "$file" | tr ',' '\n' >"$work/version-names.txt"
  check "library version ($kind) names exactly this build's transports" \
    names_are "MPI_Get_library_version" "$work/version-names.txt"
done

# --- torusmpi_info: the parsable line, and the report (one line listing them, one line each).
"$info" --parsable >"$work/info-parsable.txt" 2>&1
check "torusmpi_info --parsable runs" test $? -eq 0 || diag_file "$work/info-parsable.txt"
sed -n 's/^build:transports://p' "$work/info-parsable.txt" | tr ',' '\n' >"$work/parsable-names.txt"
check "torusmpi_info --parsable build:transports names exactly this build's transports" \
  names_are "build:transports" "$work/parsable-names.txt"
check "torusmpi_info --parsable says libfabric_found:$found_ofi" \
  grep -qx "build:libfabric_found:$found_ofi" "$work/info-parsable.txt"
check "torusmpi_info --parsable says ucx_found:$found_ucx" \
  grep -qx "build:ucx_found:$found_ucx" "$work/info-parsable.txt"

"$info" >"$work/info.txt" 2>&1
check "torusmpi_info runs" test $? -eq 0 || diag_file "$work/info.txt"
# "  data transports : shm, self, ofi, ucx (each peer ...)", then one "    <name>  : <peers>"
# line per transport, then the library lines.
sed -n 's/^  data transports *: \([^(]*\).*/\1/p' "$work/info.txt" | tr ',' '\n' | tr -d ' ' |
  sed '/^$/d' >"$work/info-names.txt"
check "torusmpi_info's data transports line names exactly this build's transports" \
  names_are "torusmpi_info" "$work/info-names.txt"
# Each field below it, "<name> <text>", its wrapped lines joined.
sed -n '/^  data transports *:/,/^  libfabric/p' "$work/info.txt" | awk '
  /^    [a-z]+ +: / { if (f != "") print f; f = $1; sub(/^[^:]*: /, ""); f = f " " $0; next }
  /^      / && f != "" { sub(/^ +/, ""); f = f " " $0; next }
  { if (f != "") print f; f = "" }
  END { if (f != "") print f }' | grep -v '^network ' >"$work/info-fields.txt"
cut -d' ' -f1 "$work/info-fields.txt" >"$work/info-each.txt"
check "torusmpi_info describes each of this build's transports, and no other" \
  names_are "torusmpi_info (one field each)" "$work/info-each.txt"
for t in "${expected[@]}"; do
  case $t in shm | self) continue ;; esac
  check "torusmpi_info says $t is chosen by TORUSMPI_NET=$t" \
    grep -Eq "^$t .*TORUSMPI_NET=$t( |\$)" "$work/info-fields.txt"
done
if [ "${#expected[@]}" -eq 2 ]; then
  check "torusmpi_info says a build without a network transport cannot reach other nodes" \
    grep -q '^    network *: no network transport' "$work/info.txt"
fi

# --- No stale text anywhere a user reads. Each phrase was once printed or shipped, and was false.
stale=(
  "none yet"                  # MPI_Get_library_version: "data transports: none yet"
  "transport yet"             # torusmpi_info: "no network transport yet"
  "uses it yet"               # torusmpi_info: "found by configure; no transport uses it yet"
  "cannot communicate"        # torusmpi_info: "a job spanning nodes cannot communicate"
  "only 1 for now"            # torusmpi_sim(1): --instances "Only 1 for now"
  "not simulated yet"         # torusmpi_sim(1): "the network between instances is not simulated yet"
  "more is refused"           # torusmpi_sim(1): more than one instance "is refused"
  "later, the network"        # "and, later, the network"
  "its version today"         # torusmpi(7): torusmpi.h, when it held the device API too
  "are to be chosen"          # torusmpi(7): collectives "are to be chosen per topology"
)
texts=("${versions[@]}" "$work/info.txt" "$work/info-parsable.txt")
"$info" --help >"$work/info-help.txt" 2>&1
texts+=("$work/info-help.txt")
"$sim" --help >"$work/sim-help.txt" 2>&1
check "torusmpi_sim --help runs" test $? -eq 0 || diag_file "$work/sim-help.txt"
texts+=("$work/sim-help.txt")
# Man pages as troff: lines joined (a phrase may wrap), escapes undone.
mandir=$(sed -n 's/^path:mandir://p' "$work/info-parsable.txt")
pages=("$mandir"/man1/*.1 "$mandir"/man7/*.7)
check "the man pages are installed in $mandir" test -e "${pages[0]}" -a -e "$mandir/man7/torusmpi.7"
for page in "${pages[@]}" "$TM_SRCDIR/../README.md"; do
  [ -e "$page" ] || continue
  flat=$work/flat-${page##*/}.txt
  sed -e 's/\\-/-/g' -e 's/\\&//g' -e 's/^\.[A-Z][A-Z]* //' "$page" | tr '\n' ' ' | tr -s ' ' >"$flat"
  texts+=("$flat")
done
# stale_in <file>: prints each stale phrase the file holds; fails when there is one.
stale_in() {
  local phrase status=0
  for phrase in "${stale[@]}"; do
    if grep -qiF -- "$phrase" "$1"; then
      echo "# it says \"$phrase\""
      status=1
    fi
  done
  return $status
}
for file in "${texts[@]}"; do
  check "no stale text in ${file##*/}" stale_in "$file"
done

check_shm
tap_done
