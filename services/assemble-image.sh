#!/bin/sh
# Lays out what a banstream image runs, in the current directory, from a built tree.
#
#   sh services/assemble-image.sh BUILD_DIR
#
# The current directory already holds the manifests and the production node_modules
# (workspace links included); BUILD_DIR is the repository after `npm run build`. Per
# workspace this copies what its package.json "files" lists (dist, plus run-time
# assets such as schemas/avro or the enforcer's lua/), as npm would publish it; a
# workspace without "files" gets dist only.
#
# services/Dockerfile's assemble stage runs this script, and so does
# test/images.long.test.ts, which then starts every service from the result alone:
# one script, so the image and its test cannot drift apart.
set -eu

build=${1:?usage: sh services/assemble-image.sh BUILD_DIR (run in the directory being assembled)}

for ws in schemas packages/* services/*; do
  [ -f "$ws/package.json" ] || continue
  # No globbing of the entries: a pattern would copy what happens to exist.
  set -f
  for f in $(node -p "(JSON.parse(require('fs').readFileSync('$ws/package.json','utf8')).files || ['dist']).join('\n')"); do
    case "$f" in *'*'*|*'?'*|*'['*|'!'*)
      echo "services/assemble-image.sh: $ws/package.json files entry '$f' is a pattern; list plain paths" >&2
      exit 1;;
    esac
    # A listed path the build lacks is a mistake (a typo, or an asset that moved):
    # fail here rather than in the first container that needs it.
    if [ ! -e "$build/$ws/$f" ]; then
      echo "services/assemble-image.sh: $ws/package.json lists '$f' but $build/$ws/$f does not exist" >&2
      exit 1
    fi
    mkdir -p "$(dirname "$ws/$f")"
    cp -a "$build/$ws/$f" "$ws/$f"
  done
  set +f
done

# Build bookkeeping, never read at run time.
find . -name '*.tsbuildinfo' -not -path './node_modules/*' -delete
