#!/usr/bin/env bash
# Installs what building, running or testing mcptray needs, when it is missing.
#   ensure-deps.sh build   Debian packages Fyne needs to compile (cgo, X11, GL)
#   ensure-deps.sh test    build + Xvfb, D-Bus and ImageMagick for GUI tests
#   ensure-deps.sh npm     real MCP servers from npm into .testservers/
# Debian packages are installed with apt-get when running as root or with
# password-less sudo; otherwise the exact command is printed and it stops.
set -euo pipefail
cd "$(dirname "$0")/.."

build_pkgs=(gcc pkg-config libgl1-mesa-dev libx11-dev libxcursor-dev libxrandr-dev libxinerama-dev libxi-dev libxxf86vm-dev)
test_pkgs=(xvfb xauth dbus dbus-x11 libglib2.0-bin imagemagick x11-utils xdotool)

apt_install() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "mcptray: missing packages: ${missing[*]}; install them with your package manager" >&2
    return 1
  fi
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo="sudo"
    else
      echo "mcptray: missing Debian packages; install them with:" >&2
      echo "  sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
      return 1
    fi
  fi
  echo "mcptray: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
    { $sudo apt-get update -qq >/dev/null && $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
}

npm_install() {
  local dir=.testservers
  if [ -f "$dir/package.json" ] && cmp -s testdata/npm/package.json "$dir/package.json" && [ -d "$dir/node_modules" ]; then
    return 0
  fi
  if ! command -v npm >/dev/null 2>&1; then
    echo "mcptray: npm not found; tests against real npm servers will be skipped" >&2
    return 0
  fi
  mkdir -p "$dir"
  cp testdata/npm/package.json "$dir/package.json"
  echo "mcptray: installing test MCP servers from npm into $dir/" >&2
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
}

case "${1:-build}" in
  build) apt_install "${build_pkgs[@]}" ;;
  test) apt_install "${build_pkgs[@]}" "${test_pkgs[@]}" ;;
  npm) npm_install ;;
  *) echo "usage: $0 build|test|npm" >&2; exit 2 ;;
esac
