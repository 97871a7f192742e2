#!/bin/sh
# Generate ./configure (autoreconf). Run once after a fresh clone.
set -e
cd "$(dirname "$0")"
mkdir -p m4 build-aux
autoreconf -fi
