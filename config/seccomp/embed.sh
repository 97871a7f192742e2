#!/bin/sh
# embed.sh NAME FILE: FILE as a C string constant NAME (for runtime/sandbox/embedded_profiles.c).
# The profiles are ASCII JSON: only backslashes and quotes need escaping.
set -eu
name=$1
file=$2
printf '/* Generated from %s by config/seccomp/embed.sh: do not edit. */\n' "$(basename "$file")"
printf 'const char %s[] =\n' "$name"
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/  "/' -e 's/$/\\n"/' "$file"
printf '  ;\n'
