#!/usr/bin/env bash
# Takes the README's screenshots of the real app: run from the repository
# root after `make build` and `make test` (which installs the npm servers):
#   xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- packaging/screenshots/take.sh
# Needs xdotool and ImageMagick's import.
set -euo pipefail
root=$(pwd)
out=$root/packaging/screenshots
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# go test below keeps the real module and build caches (HOME changes).
export GOMODCACHE=$(go env GOMODCACHE) GOCACHE=$(go env GOCACHE) GOPATH=$(go env GOPATH)
export HOME=$work XDG_CONFIG_HOME=$work/config XDG_CACHE_HOME=$work/cache XDG_RUNTIME_DIR=$work/run
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
mods=$root/.testservers/node_modules/@modelcontextprotocol
cat > "$work/servers.toml" <<TOML
[settings]
probe_interval = "2s"

[servers.demo]
command = "$root/bin/mcptray"
args = ["serve-demo"]

[servers.everything]
command = "node"
args = ["$mods/server-everything/dist/index.js", "stdio"]

[servers.memory]
command = "node"
args = ["$mods/server-memory/dist/index.js"]

[servers.github]
command = "sh"
args = ["-c", "echo 'Error: GITHUB_PERSONAL_ACCESS_TOKEN environment variable is not set' >&2; exit 1"]

[servers.weather]
command = "weather-mcp"
TOML
"$root/bin/mcptray" gui --config "$work/servers.toml" >"$work/gui.log" 2>&1 &
pid=$!
sleep 9
wid=$(xdotool search --name '^mcptray$' | head -1)
xdotool windowsize --sync "$wid" 1100 700; xdotool windowmove "$wid" 0 0; sleep 1
shot() { import -window "$wid" "$out/$1"; }
click() { xdotool mousemove --window "$wid" "$1" "$2" click 1; sleep "${3:-1}"; }
# Rows are 29 px from y=144, failing ones first: github, weather, then
# demo, everything, memory. The tabs are at y=116.
click 150 231 2; shot main-ready.png      # everything, Overview
click 460 116; click 480 215; shot tools.png
# A tool's result with an image: find get-tiny-image, Run it.
click 700 155; xdotool type --delay 50 tiny; sleep 1; click 450 200 2
click 606 351 4; shot tool-image.png
click 700 155; xdotool key ctrl+a BackSpace; sleep 1
click 150 144; click 380 116; shot failing.png
click 150 231; click 848 116 2; shot log.png
click 908 116 3; shot latency.png
kill -INT "$pid"; wait "$pid" || true
# The app started the daemon, which outlives it: stop it too.
kill -TERM "$(sed -n 's/.*, pid \([0-9]*\), .*/\1/p' "$XDG_RUNTIME_DIR/mcptray/daemon.log" | head -1)" 2>/dev/null || true
# The Clients and Trace tabs of a server with three AI clients connected
# through `mcptray connect` (the end-to-end test drives the real binaries).
MCPTRAY_SCREENSHOTS=$out go test -count=1 -run 'TestTrayClientsEndToEnd' ./app/gui >/dev/null
# The tray menu, drawn from the same builder by Fyne's software painter.
MCPTRAY_SCREENSHOTS=$out go test -count=1 -run 'TestScreenshotTrayMenu|TestScreenshotMainWindow' ./app/gui >/dev/null
