#!/usr/bin/env bash
# make test-windows: every package's windows/amd64 tests, run under Wine 10.
#
# Debian 12's Wine 8 cannot run Go 1.26 programs (they need
# bcryptprimitives!ProcessPrng), so this makes a Debian 13 (trixie) system
# with debootstrap from the mirror apt already uses, installs wine64 in it
# (no i386, no recommends) and runs each PKG.test.exe there, one at a time,
# with the checkout mounted at the same path. The host's apt sources and libc
# are not touched. The system is kept between runs in $MCPTRAY_WINE_CACHE
# (default /var/cache/mcptray-wine, about 1.2 GB), never in the checkout.
#
# Needs root (debootstrap, chroot, mount). Mounts live in a private mount
# namespace (unshare -m), so an interrupted run leaves nothing mounted.
#
#   MCPTRAY_WINE_CACHE  where the Debian 13 system is kept
#   MCPTRAY_WINE_MIRROR Debian mirror (default: the one apt uses here)
#   PKGS                packages (default: every package of the module)
#   PKG_TIMEOUT         bound on one package's test binary (default 10m)
#   TEST_FLAGS          more go test flags (default -short -count=1)
#   DESKTOP_EXE         the desktop build (bin/windows/mcptray.exe) to run
#                       version and check with, after the tests
#   DIST_DIR            a `make dist` folder inside the checkout: instead of
#                       the tests, its Windows .zip and .msi are checked
#                       (make dist-test sets it; see packaging/README.md)
set -euo pipefail

die() { echo "test-windows: $*" >&2; exit 2; }

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
SRC=$(cd "$HERE/../.." && pwd -P)
CACHE=${MCPTRAY_WINE_CACHE:-/var/cache/mcptray-wine}
ROOT=$CACHE/trixie
READY=$ROOT/.mcptray-wine-ready
PKG_TIMEOUT=${PKG_TIMEOUT:-10m}
TEST_FLAGS=${TEST_FLAGS:--short -count=1}
GO=${GO:-go}

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot and mount make the Debian 13 system Wine 10 runs in); run: sudo make test-windows"
case "$ROOT" in "$SRC"/*) die "MCPTRAY_WINE_CACHE=$CACHE is inside the checkout $SRC: put it elsewhere";; esac

# Everything below runs in a private mount namespace: the mounts disappear
# with the last process in it, however the run ends.
if [ -z "${MCPTRAY_WINE_NS:-}" ]; then
	command -v unshare >/dev/null || die "unshare (util-linux) not found"
	MCPTRAY_WINE_NS=1 exec unshare --mount --propagation private -- "$0" "$@" ||
		die "unshare --mount failed: mounting needs CAP_SYS_ADMIN"
fi

mkdir -p "$CACHE"
# One run at a time per cache: two runs would share wineserver and mounts.
exec 9>"$CACHE/lock"
if ! flock -n 9; then
	echo "test-windows: waiting for another run using $CACHE" >&2
	flock 9
fi

mirror() {
	if [ -n "${MCPTRAY_WINE_MIRROR:-}" ]; then echo "$MCPTRAY_WINE_MIRROR"; return; fi
	local m
	# deb822 sources (Debian 12's default), then one-line sources.
	m=$(awk '/^URIs:/ && $2 ~ /debian\/?$/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
	[ -n "$m" ] || m=$(awk '$1 == "deb" && $3 ~ /^(bookworm|trixie)$/ {print $2; exit}' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true)
	echo "${m:-http://deb.debian.org/debian}"
}

mounted() { mountpoint -q "$1"; }
mount_system() { # $1: the system's root
	local r=$1
	mounted "$r/proc" || mount -t proc proc "$r/proc"
	mounted "$r/dev" || mount --bind /dev "$r/dev"
	mounted "$r/dev/pts" || mount --bind /dev/pts "$r/dev/pts"
	mkdir -p "$r/tmp" && chmod 1777 "$r/tmp"
}
umount_system() { # $1: the system's root; deepest first
	local r=$1 m
	for m in "$r$SRC" "$r/dev/pts" "$r/dev" "$r/proc"; do
		if mounted "$m"; then umount "$m" 2>/dev/null || umount -l "$m"; fi
	done
}

WENV=(HOME=/root XDG_RUNTIME_DIR=/tmp/xdg WINEDEBUG=-all WINEDLLOVERRIDES=mscoree,mshtml= WINEPREFIX=/root/.wine)
in_root() { chroot "$ROOT" /usr/bin/env -i PATH=/usr/bin:/bin "${WENV[@]}" "$@"; }

# The system: made once, in a folder beside the final one, and renamed
# into place only when wine64 and its prefix work, so a run cut short
# leaves nothing that looks ready.
setup() {
	local new=$CACHE/trixie.new t log=$CACHE/setup.log
	umount_system "$new"
	rm -rf --one-file-system "$new"
	if ! command -v debootstrap >/dev/null; then
		echo "== installing debootstrap (apt-get)"
		{ apt-get -o DPkg::Lock::Timeout=900 update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends debootstrap; } >"$log" 2>&1 ||
			{ tail -20 "$log" >&2; die "could not install debootstrap with apt-get (log: $log)"; }
	fi
	local m; m=$(mirror)
	t=$SECONDS
	echo "== debootstrap --variant=minbase trixie from $m into $new"
	debootstrap --variant=minbase trixie "$new" "$m" >"$log" 2>&1 ||
		{ tail -20 "$log" >&2; die "debootstrap of Debian 13 (trixie) from $m failed (log: $log); set MCPTRAY_WINE_MIRROR to a reachable Debian mirror"; }
	echo "   $((SECONDS - t))s"
	cp /etc/resolv.conf "$new/etc/resolv.conf"
	mount_system "$new"
	t=$SECONDS
	echo "== apt-get install wine64 (Wine 10, in the Debian 13 system)"
	{ chroot "$new" apt-get update -qq &&
		chroot "$new" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wine64 &&
		chroot "$new" apt-get clean; } >>"$log" 2>&1 ||
		{ tail -20 "$log" >&2; umount_system "$new"; die "installing wine64 in $new failed (log: $log)"; }
	echo "   $((SECONDS - t))s"
	t=$SECONDS
	echo "== first Wine prefix"
	mkdir -p "$new/tmp/xdg" && chmod 700 "$new/tmp/xdg"
	ROOT=$new in_root /usr/lib/wine/wine64 wineboot --init >>"$log" 2>&1 </dev/null ||
		{ tail -20 "$log" >&2; umount_system "$new"; die "wineboot failed in $new (log: $log)"; }
	ROOT=$new in_root /usr/lib/wine/wineserver64 -w >/dev/null 2>&1 || true
	echo "   $((SECONDS - t))s"
	umount_system "$new"
	touch "$new/.mcptray-wine-ready"
	umount_system "$ROOT"
	rm -rf --one-file-system "$ROOT"
	mv "$new" "$ROOT"
}

t0=$SECONDS
[ -e "$READY" ] || setup

cleanup() {
	in_root /usr/lib/wine/wineserver64 -k >/dev/null 2>&1 || true
	umount_system "$ROOT"
	rm -rf "$ROOT/tmp/gotest"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
mount_system "$ROOT"
mkdir -p "$ROOT$SRC" "$ROOT/tmp/xdg" "$ROOT/tmp/gotest"
chmod 700 "$ROOT/tmp/xdg"
mounted "$ROOT$SRC" || mount --bind "$SRC" "$ROOT$SRC"
# The test dependencies (npm servers) are often symlinks out of the checkout.
for d in .testservers .testtools .testclients; do
	if [ -L "$SRC/$d" ]; then
		tgt=$(readlink -f "$SRC/$d")
		if [ -d "$tgt" ] && ! mounted "$ROOT$tgt"; then mkdir -p "$ROOT$tgt" && mount --bind "$tgt" "$ROOT$tgt"; fi
	fi
done
echo "== $(in_root /usr/lib/wine/wine64 --version) in $ROOT"

# wineserver and Wine's services (services.exe, explorer.exe, ...) started
# once with their output to /dev/null: started by the first test binary,
# they would hold go test's output pipe open after it ends.
in_root /usr/lib/wine/wineserver64 -p >/dev/null 2>&1 </dev/null
in_root /usr/lib/wine/wine64 wineboot >/dev/null 2>&1 </dev/null
echo "== ready in $((SECONDS - t0))s"

# go test writes the test binaries under GOTMPDIR: put it in the system so
# the wrapper runs them where they are.
export GOTMPDIR=$ROOT/tmp/gotest
export MCPTRAY_WINE_ROOT=$ROOT MCPTRAY_WINE_PKG_TIMEOUT=$PKG_TIMEOUT
export MCPTRAY_WINE_ENV="${WENV[*]}"

# wexe DIR PROGRAM ARGS...: a Windows program run by the system's wine64 in
# DIR (a path inside the system), bounded in time; NOHANDOFF=1 keeps the
# command in the desktop build (MCPTRAY_NO_HANDOFF).
wexe() {
	local dir=$1; shift
	in_root /bin/sh -c 'd=$1; h=$2; shift 2; cd "$d" && exec env MCPTRAY_NO_HANDOFF=$h timeout -k 10 120 /usr/lib/wine/wine64 "$@"' \
		sh "$dir" "${NOHANDOFF:-}" "$@" </dev/null
}
winpath() { echo "Z:$(echo "$1" | tr / '\\')"; } # a path inside the system, as Windows names it
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# commands EXE WANT: EXE (a path inside the system) answers `version` with a
# first line matching WANT, and `check` of a config whose demo server is EXE
# serve-demo reports it ready; what it prints is shown.
commands() {
	local exe=$1 want=$2 d=/tmp/mcptray-commands out drc
	rm -rf "$ROOT$d" && mkdir -p "$ROOT$d"
	printf "[servers.demo]\ncommand = '%s'\nargs = [\"serve-demo\"]\n" "$(winpath "$exe")" >"$ROOT$d/servers.toml"
	drc=0; out=$(wexe "$d" "$exe" version 2>&1) || drc=$?
	echo "$out"
	if [ "$drc" != 0 ] || ! echo "$out" | head -1 | grep -q "$want"; then
		bad "$(winpath "$exe") version (exit $drc): want a line matching: $want"
		return
	fi
	drc=0; out=$(wexe "$d" "$exe" --config "$(winpath "$d/servers.toml")" check 2>&1) || drc=$?
	echo "$out"
	if [ "$drc" != 0 ] || ! echo "$out" | grep -q "^demo  *ready "; then
		bad "$(winpath "$exe") check of the demo server (exit $drc)"
		return
	fi
	echo "ok   $(winpath "$exe"): version, check (demo ready)"
}

# The release's Windows artefacts (make dist), as a person gets them.
if [ -n "${DIST_DIR:-}" ]; then
	dist=$(cd "$DIST_DIR" && pwd -P)
	case $dist in "$SRC"/*) ;; *) die "DIST_DIR=$dist is outside the checkout $SRC (only it is mounted)";; esac
	shopt -s nullglob
	zips=("$dist"/mcptray_*_windows_amd64.zip) msis=("$dist"/mcptray_*_windows_amd64.msi)
	[ ${#zips[@]} = 1 ] && [ ${#msis[@]} = 1 ] || die "want one mcptray_*_windows_amd64.zip and one .msi in $dist (run make dist)"
	version=$(basename "${zips[0]}" | sed 's/^mcptray_\(.*\)_windows_amd64\.zip$/\1/')

	echo "== the .zip, unpacked: $(basename "${zips[0]}")"
	z=/tmp/mcptray-zip
	rm -rf "$ROOT$z" && mkdir -p "$ROOT$z" && unzip -q "${zips[0]}" -d "$ROOT$z"
	# The desktop build hands the command to the headless one beside it;
	# kept in the desktop build, it answers too.
	commands "$z/mcptray.exe" "^mcptray $version (headless build, .*windows/amd64"
	NOHANDOFF=1 commands "$z/mcptray.exe" "^mcptray $version (desktop build, .*windows/amd64"
	commands "$z/mcptray-headless.exe" "^mcptray $version (headless build, .*windows/amd64"

	echo "== the .msi, installed with msiexec: $(basename "${msis[0]}")"
	cp "${msis[0]}" "$ROOT/tmp/mcptray.msi"
	c=$ROOT/root/.wine/drive_c
	dir="$c/Program Files/mcptray"
	# A per-machine install's Start menu is the common one on Windows; Wine
	# 10's msi puts the shortcuts in the installing user's.
	menus=("$c/ProgramData/Microsoft/Windows/Start Menu/Programs" "$c/users/root/AppData/Roaming/Microsoft/Windows/Start Menu/Programs")
	lnk() { # lnk NAME: the first Start menu folder's NAME that exists, in any case (Wine's is StartUp)
		local m f
		for m in "${menus[@]}"; do
			f=$(find "$m" -maxdepth 2 -ipath "$m/$1" 2>/dev/null | head -1)
			[ -n "$f" ] && { echo "${f#"$c/"}"; return 0; }
		done
		return 1
	}
	lnkhas() { # lnkhas FILE STRING...: the shortcut names each string (ANSI or UTF-16)
		python3 - "$@" <<'PY'
import sys
data = open(sys.argv[1], 'rb').read()
sys.exit(0 if all(s.encode() in data or s.encode('utf-16-le') in data for s in sys.argv[2:]) else 1)
PY
	}
	msi() { # msiexec ARGS..., quiet, with its log's end shown on failure
		local mrc=0
		wexe /tmp msiexec "$@" /qn '/l*v' 'Z:\tmp\msiexec.log' >/dev/null 2>&1 || mrc=$?
		if [ "$mrc" != 0 ]; then
			iconv -f UTF-16LE -t UTF-8 "$ROOT/tmp/msiexec.log" 2>/dev/null | tail -20 || true
			bad "msiexec $* (exit $mrc)"
			return 1
		fi
	}
	if msi /i 'Z:\tmp\mcptray.msi'; then
		for f in mcptray.exe mcptray-headless.exe; do
			if cmp -s "$dir/$f" "$ROOT$z/$f"; then echo 'ok   C:\Program Files\mcptray\'"$f (the .zip's)"
			else bad 'C:\Program Files\mcptray\'"$f is missing or not the .zip's"; fi
		done
		if ! l=$(lnk mcptray.lnk); then bad "no Start menu entry (mcptray.lnk in ${menus[*]#"$c/"})"
		elif lnkhas "$c/$l" 'Program Files\mcptray\mcptray.exe' gui; then echo "ok   Start menu entry: $l (mcptray.exe gui)"
		else bad "$l does not start C:\Program Files\mcptray\mcptray.exe gui"; fi
		if l=$(lnk Startup/mcptray.lnk); then bad "a run-at-login entry unasked for: $l"; else echo "ok   no run-at-login entry unless asked for"; fi
		# Uninstalled before anything ran from it: a program Wine still has
		# open would be left for a reboot to remove.
		if msi /x 'Z:\tmp\mcptray.msi'; then
			left=$(ls -A "$dir" 2>/dev/null || true)
			if [ -z "$left" ] && ! lnk mcptray.lnk >/dev/null; then echo "ok   uninstalled: no program, no Start menu entry left"
			else bad "msiexec /x left: $left $(lnk mcptray.lnk)"; fi
		fi
	fi
	if msi /i 'Z:\tmp\mcptray.msi' ADDLOCAL=Main,Autostart; then
		if ! l=$(lnk Startup/mcptray.lnk); then bad "ADDLOCAL=Main,Autostart installed no Startup/mcptray.lnk"
		elif lnkhas "$c/$l" 'mcptray.exe' 'gui --hide'; then echo "ok   ADDLOCAL=Main,Autostart: run-at-login entry $l (mcptray.exe gui --hide)"
		else bad "$l does not start mcptray.exe gui --hide"; fi
		commands "/root/.wine/drive_c/Program Files/mcptray/mcptray.exe" "^mcptray $version (headless build, .*windows/amd64"
		msi /x 'Z:\tmp\mcptray.msi' || true
		if l=$(lnk Startup/mcptray.lnk); then bad "msiexec /x left $l"; fi
	fi
	rm -rf "$ROOT$z" "$ROOT/tmp/mcptray.msi" "$ROOT/tmp/msiexec.log" "$ROOT/tmp/mcptray-commands"
	[ "$fails" = 0 ] && echo "== windows artefacts under Wine: ok" || echo "== windows artefacts under Wine: $fails failed"
	[ "$fails" = 0 ]
	exit
fi

cd "$SRC"
export CGO_ENABLED=0 GOOS=windows GOARCH=amd64
# The command line's end-to-end tests run a built mcptray, which they build
# with the go command where there is one: under Wine, this headless build.
"$GO" build -tags nogui -o "$SRC/bin/windows/test/mcptray.exe" . || die "go build of the headless mcptray.exe for the tests failed"
export MCPTRAY_WINE_ENV="$MCPTRAY_WINE_ENV MCPTRAY_TEST_BINARY=$(winpath "$SRC/bin/windows/test/mcptray.exe")"
if [ -z "${PKGS:-}" ]; then
	# Every package that builds for Windows without cgo: the Fyne GUI
	# (app/gui) needs cgo and OpenGL, so its tests run on Linux only.
	PKGS=$("$GO" list -e -tags nogui -f '{{if or .Error .DepsErrors}}{{else}}{{.ImportPath}}{{end}}' ./...)
	skipped=$("$GO" list -e -tags nogui -f '{{if or .Error .DepsErrors}}{{.ImportPath}}{{end}}' ./...)
	[ -z "$skipped" ] || echo "== not run under Wine (they need cgo: Fyne's OpenGL): $(echo $skipped)"
fi
t=$SECONDS
log=$(mktemp)
# -p 1: one test binary at a time (Wine is slow to start processes).
# -timeout: the binary's own bound, which names the test that hung; the
# wrapper's bound (PKG_TIMEOUT plus a minute) ends a binary Wine itself hangs.
# -v: the summary below counts and names every test, skips with their reason.
set +e
"$GO" test -v -p 1 -exec "$HERE/exec.sh" -tags nogui -timeout "$PKG_TIMEOUT" $TEST_FLAGS $PKGS 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
echo "== windows tests under Wine: $((SECONDS - t))s (exit $rc)"
# Per package: top-level tests passed, failed, skipped (go test -v prints a
# package's results before its ok/FAIL line; -p 1 keeps packages apart).
awk '
/^=== (RUN|CONT|PAUSE)/ { said = ""; next }
/^    [^ ]/ { said = substr($0, 5) }
/^--- PASS/ { p++ } /^--- FAIL/ { f++ }
/^--- SKIP/ { s++; skips = skips sprintf("   skip %s: %s\n", $3, said) }
/^(ok  |FAIL|\?   )\t/ || /^FAIL\t/ {
	name = $2; st = ($1 == "ok") ? "ok" : ($1 == "?" ? "no tests" : "FAIL")
	if (/\[build failed\]|\[setup failed\]/) st = "build failed"
	printf "%-40s %-12s pass %3d  fail %3d  skip %3d\n", name, st, p, f, s
	if (skips != "") printf "%s", skips
	p = f = s = 0; skips = ""
}' "$log"
rm -f "$log"

# The desktop build (mingw cgo, Fyne) answers commands under Wine without
# a desktop: version, and check of the built-in demo server, which it runs
# as a server of its own (mcptray.exe serve-demo). The tray itself needs a
# Windows desktop and is not started.
if [ -n "${DESKTOP_EXE:-}" ]; then
	exe=$(cd "$(dirname "$DESKTOP_EXE")" && pwd -P)/$(basename "$DESKTOP_EXE")
	[ -f "$exe" ] || die "DESKTOP_EXE=$DESKTOP_EXE does not exist (make cross builds bin/windows/mcptray.exe)"
	case $exe in "$SRC"/*) ;; *) die "DESKTOP_EXE=$exe is outside the checkout $SRC (only it is mounted)";; esac
	echo "== desktop build under Wine: $exe"
	d=$ROOT/tmp/mcptray-desktop
	rm -rf "$d" && mkdir -p "$d"
	winexe="Z:$(echo "$exe" | tr / '\\')"
	printf "[servers.demo]\ncommand = '%s'\nargs = [\"serve-demo\"]\n" "$winexe" >"$d/servers.toml"
	# MCPTRAY_NO_HANDOFF: the desktop build runs the command itself, not
	# the headless build beside it.
	desk() { in_root /bin/sh -c 'cd /tmp/mcptray-desktop && exec env MCPTRAY_NO_HANDOFF=1 timeout -k 10 120 /usr/lib/wine/wine64 "$@"' sh "$exe" "$@" </dev/null; }
	drc=0
	out=$(desk version 2>&1) || drc=$?
	echo "$out"
	if [ "$drc" != 0 ] || ! echo "$out" | grep -q "^mcptray .*desktop build.*windows/amd64"; then
		echo "FAIL: mcptray.exe version (exit $drc)"; rc=1
	fi
	drc=0
	out=$(desk --config 'Z:\tmp\mcptray-desktop\servers.toml' check 2>&1) || drc=$?
	echo "$out"
	if [ "$drc" != 0 ] || ! echo "$out" | grep -q "^demo  *ready "; then
		echo "FAIL: mcptray.exe check of the demo server (exit $drc)"; rc=1
	else
		echo "ok   mcptray.exe version, check (demo ready)"
	fi
fi
exit "$rc"
