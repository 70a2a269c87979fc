#!/usr/bin/env bash
# layers: the sources keep the layering of ARCHITECTURE.md ("Layers"):
#   src/mpi -> coll -> pml -> src/device, src/topo, src/core
# and nothing below src/mpi includes mpi.h, so the collective engine, the simulator and the
# transports build and test on their own. It reads the sources' #include lines against the table
# below and needs no build. A violation is one line
#   layers: <file> includes <header>: <layer> may not include <layer>
# and fails its layer's test.
#
# Includes are written from the source root or from src/ (-I$(top_srcdir) -I$(top_srcdir)/src):
# "coll/coll.h" is coll/coll.h, "core/log.h" is src/core/log.h, "include/torusmpi.h" is made
# from include/torusmpi.h.in; "config.h" (configure's) may be included anywhere. <mpi.h> and
# Open MPI's other headers (<mpi-ext.h>, ...) are the layer "mpi.h".
set -u
# The table's patterns are matched against paths, never expanded to file names.
set -f
export LC_ALL=C

# --- The rules. A file is in the first layer whose patterns (shell patterns on its path from the
# source root) match it; it may include its own layer and those listed. "-": nothing else.
#
# layer      files                                       may include
rules='
core        src/core/*                                  -
topo        src/topo/*                                  core
device      src/device/*                                core topo
dtype       src/dtype/*                                 core
io          src/io/*                                    dtype core
boot        src/boot/*                                  core
pml         pml/*                                       core topo device boot
coll-exec   coll/sched/exec.* coll/sched/rescue.* coll/team.* coll core topo device pml
coll        coll/*                                      core topo
sim         src/sim/*                                   coll core topo
info        src/info/*                                  coll pml core topo mpi.h
switch      src/switch/*                                pml core
mpi         src/mpi/*                                   coll coll-exec pml io dtype device topo boot core api mpi.h
api         include/*                                   mpi.h
bindings    bindings/*                                  api mpi.h
'
# Why:
# - switch: torusmpi_switch, a program of its own (the emulated aggregation switch): it shares the
#   wire protocol with the ranks' client (pml/ina/protocol.h) and the 16-bit float conversions
#   with the ranks' kernels (core/float16.h, header only), and nothing else of the library.
# - core, topo, device, boot: the bottom (ARCHITECTURE: "pml -> src/device, src/topo, src/core";
#   src/boot is the PMIx bootstrap beside them). The device layer places chips with topo.
# - dtype: the datatype engine, used by src/mpi; pml and coll move bytes and never see a type.
# - io: MPI-IO's views and POSIX file access (data sieving, locks), over the datatype engine; the
#   MPI layer maps it to MPI_File_* and stages device memory and data representations.
# - pml: matching and protocols over the transports (pml/shm, pml/ofi, pml/ucx); the endpoint
#   exchange is src/boot's.
# - coll: the pure collective engine (coll.h, algorithms, patterns/, select/, sched/schedule,
#   sim/, ops/, stats): builders and the simulator run with no pml, no device and no MPI.
# - coll-exec: the only part of coll that runs schedules over the pml (sched/exec, and
#   sched/rescue, which finishes aggregations a dying switch left half done) and keeps a
#   communicator's pml view (team).
# - sim (torusmpi_sim): the simulator's command, over the pure engine only.
# - info (torusmpi_info): reads the build, the registry and pml::net's transport list; mpi.h for
#   its version macros only.
# - mpi: the MPI entry points, above everything; api: the installed torusmpi.h, an MPI header.
# - bindings: other languages' libraries over MPI (bindings/torch, torch.distributed's backend):
#   programs of the MPI API, which see the library only through mpi.h and torusmpi.h.

# --- Where the sources are: make check gives $srcdir (tests/); else this script's directory.
tests_dir=${srcdir:-$(dirname "$0")}
top=$(cd "$tests_dir/.." && pwd) || exit 1
if [ ! -d "$top/src/core" ] || [ ! -d "$top/coll" ] || [ ! -d "$top/pml" ]; then
  echo "Bail out! $top is not torusmpi's source tree (set srcdir to its tests/ directory)"
  exit 1
fi

layers=()
declare -A patterns allowed
while read -r layer rest; do
  [ -n "$layer" ] || continue
  read -r -a words <<<"$rest"
  layers+=("$layer")
  # A pattern holds a '/'; the other words are the layers it may include ("-": none).
  allow=()
  pats=()
  for w in "${words[@]}"; do
    if [[ $w == */* ]]; then pats+=("$w"); else allow+=("$w"); fi
  done
  patterns[$layer]="${pats[*]}"
  allowed[$layer]=" $layer ${allow[*]/#-/} "
done <<<"$rules"

# layer_of <path from the source root>: its layer, or nothing.
layer_of() {
  local layer pat
  for layer in "${layers[@]}"; do
    for pat in ${patterns[$layer]}; do
      # shellcheck disable=SC2053  # the pattern is meant to match
      [[ $1 == $pat ]] && { echo "$layer"; return; }
    done
  done
}

# header_layer <include text with its delimiters> <including file>: the layer of what it names,
# "config" for configure's config.h, or "?" when it is a quoted include found nowhere in the tree
# (from the root, src/ or the including file's directory); nothing for a system header.
header_layer() {
  local inc=$1 name=${1:1:-1} path
  if [[ $inc == \<* ]]; then
    case ${name##*/} in mpi*.h) echo mpi.h ;; torusmpi.h) echo api ;; esac
    return
  fi
  case $name in
    config.h) echo config; return ;;
    mpi.h | mpi-ext.h) echo mpi.h; return ;;
  esac
  for path in "$name" "src/$name" "$name.in" "$(dirname "$2")/$name"; do
    if [ -e "$top/$path" ]; then
      layer_of "$path"
      return
    fi
  done
  echo "?"
}

tap_count=0
result() {  # result <status> <description>
  tap_count=$((tap_count + 1))
  if [ "$1" -eq 0 ]; then echo "ok $tap_count - $2"; else echo "not ok $tap_count - $2"; fi
}

declare -A failed files_in
unplaced=0 violations=0
cd "$top" || exit 1
while IFS= read -r file; do
  layer=$(layer_of "$file")
  if [ -z "$layer" ]; then
    echo "layers: $file: in no layer of the table (add its directory to tests/layers.sh)"
    unplaced=$((unplaced + 1))
    continue
  fi
  files_in[$layer]=$((${files_in[$layer]:-0} + 1))
  while IFS= read -r inc; do
    target=$(header_layer "$inc" "$file")
    if [ -z "$target" ] || [ "$target" = config ]; then continue; fi
    if [ "$target" = "?" ]; then
      echo "layers: $file includes $inc: no such header in the source tree"
      failed[$layer]=1
      violations=$((violations + 1))
    elif [[ ${allowed[$layer]} != *" $target "* ]]; then
      echo "layers: $file includes $inc: $layer may not include $target"
      failed[$layer]=1
      violations=$((violations + 1))
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*\([<"][^>"]*[>"]\).*/\1/p' "$file")
done < <(find src coll pml include bindings -type f \( -name '*.h' -o -name '*.cc' -o -name '*.c' \
  -o -name '*.inc' -o -name '*.def' -o -name '*.h.in' \) | sort)

result "$unplaced" "every source file of src/, coll/, pml/, include/ and bindings/ is in a layer"
for layer in "${layers[@]}"; do
  may=${allowed[$layer]# $layer }
  may=${may% }
  n=${files_in[$layer]:-0}
  result "${failed[$layer]:-0}" \
    "$layer ($n file$([ "$n" = 1 ] || echo s)) includes only itself${may:+ and $may}"
done
echo "1..$tap_count"
# TAP says what failed; the status says it too, to whoever runs the script by hand.
[ $((unplaced + violations)) -eq 0 ]
