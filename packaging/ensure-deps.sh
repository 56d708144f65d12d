#!/usr/bin/env bash
# Installs what building, running or testing mcptray needs, when it is missing.
#   ensure-deps.sh build   Debian packages Fyne needs to compile (cgo, X11, GL)
#   ensure-deps.sh test    build + Xvfb, D-Bus, ImageMagick, a tray host, dunst
#                          and openbox for GUI tests,
#                          mingw-w64 for the Windows cross-build
#   ensure-deps.sh npm     real MCP servers from npm into .testservers/
#   ensure-deps.sh tools   the MCP conformance suite, Node 22 and the MCP bundle
#                          tool (mcpb) into .testtools/
#   ensure-deps.sh clients the real AI clients (Claude Code, Gemini CLI, Codex,
#                          GitHub Copilot CLI, Qwen Code)
#                          from npm into .testclients/, pinned in testdata/clients
#   ensure-deps.sh dist    build + mingw-w64, wixl and msitools for `make dist`,
#                          lintian, rpm and debootstrap for `make dist-test`
# Debian packages are installed with apt-get when running as root or with
# password-less sudo; otherwise the exact command is printed and it stops.
set -euo pipefail
cd "$(dirname "$0")/.."

build_pkgs=(gcc pkg-config libgl1-mesa-dev libx11-dev libxcursor-dev libxrandr-dev libxinerama-dev libxi-dev libxxf86vm-dev)
# gcc-mingw-w64-x86-64: `make cross` builds the Windows desktop app (cgo) here;
# zsh: the login-shell environment is tested with macOS's default shell;
# haskell-gtk-sni-tray-utils (gtk-sni-tray-standalone, a StatusNotifierItem
# host with its own watcher), dunst (a notification daemon) and openbox (a
# window manager): the desktop app is tested as a person's session runs it;
# python3-xlib: a file is dropped on the window as a file manager does (XDND).
test_pkgs=(xvfb xauth dbus dbus-x11 libglib2.0-bin imagemagick x11-utils gnome-keyring gcc-mingw-w64-x86-64 zsh xdotool curl
  haskell-gtk-sni-tray-utils dunst openbox python3-xlib)

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

# npm_install DIR PACKAGE_JSON WHAT installs the pinned packages of
# PACKAGE_JSON into DIR/node_modules, unless DIR already holds exactly them;
# it sets installed=1 when it ran npm.
installed=0
npm_install() {
  local dir=$1 src=$2 what=$3
  if [ -f "$dir/package.json" ] && cmp -s "$src" "$dir/package.json" && [ -d "$dir/node_modules" ]; then
    return 0
  fi
  if ! command -v npm >/dev/null 2>&1; then
    echo "mcptray: npm not found; the tests that need $what will be skipped" >&2
    return 0
  fi
  mkdir -p "$dir"
  cp "$src" "$dir/package.json"
  echo "mcptray: installing $what from npm into $dir/" >&2
  installed=1
  # A failed install removes the manifest, so the next run tries again.
  (cd "$dir" && npm install --no-audit --no-fund --include=optional --loglevel=error >/dev/null) ||
    { rm -f "$dir/package.json"; return 1; }
}

# clients_install installs the AI clients and checks each one starts. Codex
# ships its binary in an optional platform package (npm skips optional
# packages silently when told to omit them): install it explicitly if so.
clients_install() {
  local dir=.testclients
  npm_install "$dir" testdata/clients/package.json "AI clients" || return 1
  [ "$installed" = 1 ] || return 0
  local codex_version platform=""
  codex_version=$(node -p 'require("./testdata/clients/package.json").dependencies["@openai/codex"]')
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) platform=linux-x64 ;;
    Linux-aarch64) platform=linux-arm64 ;;
    Darwin-x86_64) platform=darwin-x64 ;;
    Darwin-arm64) platform=darwin-arm64 ;;
  esac
  if [ -n "$platform" ] && [ ! -d "$dir/node_modules/@openai/codex-$platform" ]; then
    echo "mcptray: installing Codex's $platform binary" >&2
    (cd "$dir" && npm install --no-audit --no-fund --no-save --loglevel=error \
      "@openai/codex-$platform@npm:@openai/codex@$codex_version-$platform" >/dev/null)
  fi
  local c
  for c in claude gemini codex copilot qwen; do
    if ! "$dir/node_modules/.bin/$c" --version >/dev/null 2>&1; then
      echo "mcptray: $dir/node_modules/.bin/$c does not start:" >&2
      "$dir/node_modules/.bin/$c" --version >&2 || true
      rm -f "$dir/package.json"
      return 1
    fi
  done
}

# wixl makes the MSI, msitools reads it back; lintian and rpm check the
# packages, debootstrap makes the clean Debian 12 the .deb is installed in.
dist_pkgs=(gcc-mingw-w64-x86-64 wixl msitools lintian rpm debootstrap binutils unzip python3)

case "${1:-build}" in
  build) apt_install "${build_pkgs[@]}" ;;
  test) apt_install "${build_pkgs[@]}" "${test_pkgs[@]}" ;;
  npm) npm_install .testservers testdata/npm/package.json "test MCP servers" ;;
  tools) npm_install .testtools testdata/npm-tools/package.json "the MCP conformance suite, Node 22 and the MCP bundle tool" ;;
  clients) clients_install ;;
  dist) apt_install "${build_pkgs[@]}" "${dist_pkgs[@]}" ;;
  *) echo "usage: $0 build|test|npm|tools|clients|dist" >&2; exit 2 ;;
esac
