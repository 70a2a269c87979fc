#!/bin/sh
# Regenerates configure and the Makefile.in files from configure.ac and the Makefile.am files.
set -e
cd "$(dirname "$0")"
mkdir -p config build-aux
autoreconf --install --force --warnings=all,no-portability
