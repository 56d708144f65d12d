#!/usr/bin/env bash
# `make dist-test`: checks what `make dist` wrote to dist/.
#
#   1. the artefacts: every one there, checksums.txt right, the archives'
#      files, lintian on the .deb (no errors; overrides in
#      packaging/debian/lintian-overrides), rpm -qpl and -qpR, msiinfo's
#      File, Shortcut and Feature tables, the declared libraries against
#      what the desktop build links (objdump -p);
#   2. as root with debootstrap: the .deb installed into a clean Debian 12
#      (minbase, from Debian's mirror; the base system cached in
#      $MCPTRAY_DIST_CACHE, default /var/cache/mcptray-dist-test) with
#      `apt install ./mcptray_*.deb`, then as a user inside it: version,
#      check of the built-in demo, connect demo answering a go-sdk client,
#      service install (no systemd there: it says what to do instead), the
#      desktop app under Xvfb read back over D-Bus (its tray menu); then
#      `apt purge` and autoremove leave none of the package's files.
#      DIST_TEST_CHROOT=0 skips this part.
#   3. the Windows .zip's and .msi's programs run under Wine 10: version and
#      check of a server, the MSI installed with msiexec and uninstalled
#      (packaging/wine/test-windows.sh with DIST_DIR; DIST_TEST_WINE=0
#      skips it).
# DIST names the folder (default dist); DIST_TEST_WINDOWS=0 leaves out the
# Windows artefacts (a machine without mingw-w64 or wixl).
set -euo pipefail
cd "$(dirname "$0")/.."
D=${DIST:-dist}
win=${DIST_TEST_WINDOWS:-1}

fail() { echo "dist-test: FAIL: $*" >&2; exit 1; }
step() { echo "== dist-test: $*"; }

shopt -s nullglob
debs=($D/mcptray_*_amd64.deb); rpms=($D/mcptray-*.x86_64.rpm); msis=($D/mcptray_*_windows_amd64.msi)
[ ${#debs[@]} = 1 ] || fail "want one $D/mcptray_*_amd64.deb, have ${#debs[@]} (run make dist)"
[ ${#rpms[@]} = 1 ] || fail "want one $D/mcptray-*.x86_64.rpm, have ${#rpms[@]}"
[ "$win" = 0 ] || [ ${#msis[@]} = 1 ] || fail "want one $D/mcptray_*_windows_amd64.msi, have ${#msis[@]}"
deb=${debs[0]} rpm=${rpms[0]} msi=${msis[0]:-}
version=$(dpkg-deb -f "$deb" Version)

step "artefacts of $version"
want=("mcptray_${version}_linux_amd64.tar.gz" "mcptray-headless_${version}_linux_arm64.tar.gz" "mcptray-headless_${version}_darwin_amd64.tar.gz"
  "mcptray-headless_${version}_darwin_arm64.tar.gz" checksums.txt)
[ "$win" = 0 ] || want+=("mcptray_${version}_windows_amd64.zip" "mcptray_${version}_windows_amd64.msi")
for f in "${want[@]}"; do
  [ -s "$D/$f" ] || fail "$D/$f missing"
done
(cd "$D" && sha256sum --quiet -c checksums.txt) || fail "checksums.txt does not match"
for f in "$D"/*.deb "$D"/*.rpm "$D"/*.tar.gz "$D"/*.zip "$D"/*.msi; do
  grep -q "  ${f#"$D"/}\$" "$D/checksums.txt" || fail "checksums.txt has no line for ${f#"$D"/}"
done
ls -l "$D"/*.deb "$D"/*.rpm "$D"/*.tar.gz "$D"/*.zip "$D"/*.msi "$D/checksums.txt"

step "linux archive"
list=$(tar tzf "$D/mcptray_${version}_linux_amd64.tar.gz" | sed 's|^[^/]*/||')
for f in mcptray mcptray-headless share/applications/dev.mcptray.app.desktop share/icons/hicolor/256x256/apps/dev.mcptray.app.png \
  lib/systemd/user/mcptray.service share/mcptray/mcptray-autostart.desktop share/bash-completion/completions/mcptray \
  share/zsh/site-functions/_mcptray share/fish/vendor_completions.d/mcptray.fish share/man/man1/mcptray.1.gz share/man/man1/mcptray-check.1.gz; do
  grep -qx "$f" <<<"$list" || fail "the linux tar.gz has no $f"
done
for a in linux_arm64 darwin_amd64 darwin_arm64; do
  l=$(tar tzf "$D/mcptray-headless_${version}_$a.tar.gz")
  grep -q '/mcptray-headless$' <<<"$l" || fail "mcptray-headless_$a.tar.gz has no mcptray-headless"
  ! grep -q '/mcptray$' <<<"$l" || fail "mcptray-headless_$a.tar.gz has a desktop build"
done
if [ "$win" != 0 ]; then
zl=$(unzip -Z1 "$D/mcptray_${version}_windows_amd64.zip")
grep -qx 'mcptray.exe' <<<"$zl" && grep -qx 'mcptray-headless.exe' <<<"$zl" || fail "the zip lacks mcptray.exe or mcptray-headless.exe:"$'\n'"$zl"
fi

step "both builds stamped, the .exe files carry icon and version"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
tar xzf "$D/mcptray_${version}_linux_amd64.tar.gz" -C "$tmp"
bin=$(echo "$tmp"/mcptray_*)
MCPTRAY_NO_HANDOFF=1 "$bin/mcptray" version --json | tee "$tmp/v.json"
grep -q "\"version\": \"$version\"" "$tmp/v.json" && grep -q '"build": "desktop"' "$tmp/v.json" && grep -q '"commit": "[0-9a-f]\{40\}"' "$tmp/v.json" \
  || fail "the desktop build's version --json"
"$bin/mcptray-headless" version | grep -q "^mcptray $version (headless build, commit [0-9a-f]\{40\}, built " || fail "the headless build's version"
"$bin/mcptray" version | grep -q "^mcptray $version (headless build" || fail "mcptray version beside mcptray-headless did not run in the headless build"
if [ "$win" != 0 ]; then
unzip -q -o "$D/mcptray_${version}_windows_amd64.zip" mcptray.exe mcptray-headless.exe -d "$tmp/win"
for exe in "$tmp"/win/*.exe; do
  # The version resource is UTF-16: look for ProductVersion and the version.
  python3 - "$exe" "$version" <<'EOF' || fail "$exe has no icon or version resource"
import sys
data = open(sys.argv[1], 'rb').read()
for s in ("ProductVersion", sys.argv[2], "mcptray: run and check your MCP servers"):
    if s.encode('utf-16-le') not in data:
        sys.exit(f"{sys.argv[1]}: no {s!r} in its resources")
if b'\x89PNG' not in data:
    sys.exit(f"{sys.argv[1]}: no icon image")
EOF
done
# Into a file first: grep -q ends at its first match, and objdump, still
# writing, would fail the pipe (pipefail).
objdump -x "$tmp/win/mcptray.exe" > "$tmp/pe.txt"
grep -q 'Subsystem.*00000002' "$tmp/pe.txt" || fail "mcptray.exe is not a GUI program"
fi

step "declared libraries against what the desktop build links"
needed=$(objdump -p "$bin/mcptray" | awk '/NEEDED/ {print $2}' | sort)
echo "$needed" | tr '\n' ' '; echo
depends=$(dpkg-deb -f "$deb" Depends)
rpmreq=$(rpm -qpR "$rpm")
for so in $needed; do
  # awk reads to the end: one that stopped at its match would end
  # ldconfig with SIGPIPE, which pipefail makes this script's exit (141).
  path=$(ldconfig -p | awk -v so="$so" '$1 == so && /x86-64/ && !p {print $NF; p = 1}')
  [ -n "$path" ] || fail "$so (linked by the desktop build) is not on this machine"
  pkg=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | sed -n '1s/:.*//p') || true
  [ -n "$pkg" ] || pkg=$(dpkg -S "$path" | sed -n '1s/:.*//p')
  grep -qE "(^|, )$pkg( |,|$)" <<<"$depends" || fail "$so is in $pkg, which the .deb does not depend on ($depends)"
  grep -qF "$so()(64bit)" <<<"$rpmreq" || fail "the .rpm does not require $so()(64bit)"
done

step "lintian $deb"
lintian --fail-on error --display-level '>=warning' "$deb" | tee "$tmp/lintian.txt" || fail "lintian reports errors"

step "rpm -qpl / -qpR"
rpm -qpl "$rpm" > "$tmp/rpm.txt"
for f in /usr/bin/mcptray /usr/bin/mcptray-headless /usr/share/applications/dev.mcptray.app.desktop \
  /usr/share/icons/hicolor/48x48/apps/dev.mcptray.app.png /usr/lib/systemd/user/mcptray.service \
  /usr/share/bash-completion/completions/mcptray /usr/share/zsh/site-functions/_mcptray \
  /usr/share/fish/vendor_completions.d/mcptray.fish /usr/share/man/man1/mcptray.1.gz; do
  grep -qx "$f" "$tmp/rpm.txt" || fail "the .rpm has no $f"
done
wc -l < "$tmp/rpm.txt" | sed 's/$/ files in the .rpm/'
echo "$rpmreq" | grep -v '^rpmlib('

if [ "$win" != 0 ]; then
step "msiinfo $msi"
msiinfo export "$msi" File | tee "$tmp/file.idt"
msiinfo export "$msi" Shortcut | tee "$tmp/shortcut.idt"
msiinfo export "$msi" Feature | tee "$tmp/feature.idt"
grep -q 'mcptray.exe' "$tmp/file.idt" && grep -q 'mcptray-headless.exe' "$tmp/file.idt" || fail "the MSI's File table lacks a binary"
grep -q '^StartMenuShortcut.*ProgramMenuFolder' "$tmp/shortcut.idt" || fail "the MSI has no Start menu shortcut"
grep -q '^LoginShortcut.*StartupFolder.*gui --hide' "$tmp/shortcut.idt" || fail "the MSI has no run-at-login shortcut"
grep -q '^Autostart.*1000' "$tmp/feature.idt" || fail "the run-at-login entry is not an optional feature"
# Per machine, into Program Files\mcptray (64-bit).
# (msiinfo writes the tables with CRLF line ends.)
msiinfo export "$msi" Property | tr -d '\r' > "$tmp/property.idt"
msiinfo export "$msi" Directory | tr -d '\r' > "$tmp/directory.idt"
grep -qx $'ALLUSERS\t1' "$tmp/property.idt" || fail "the MSI does not install per machine (ALLUSERS)"
grep -qx $'INSTALLDIR\tProgramFiles64Folder\tmcptray' "$tmp/directory.idt" || fail "the MSI does not install into Program Files\\mcptray"
msiextract -l "$msi" | tee "$tmp/msi-files.txt"
[ "$(sort "$tmp/msi-files.txt" | tr '\n' ' ')" = "mcptray/mcptray-headless.exe mcptray/mcptray.exe " ] || fail "msiextract lists other files than the two builds"
msiextract -C "$tmp/msi" "$msi" >/dev/null
for f in mcptray.exe mcptray-headless.exe; do
  cmp -s "$tmp/msi/mcptray/$f" "$tmp/win/$f" || fail "the MSI's $f is not the .zip's"
done

# The .zip's and the .msi's programs run under Wine 10 (the Debian 13
# system make test-windows keeps): version and check of a server from the
# unpacked .zip, then the MSI installed with msiexec, run from Program
# Files, and uninstalled. DIST_TEST_WINE=0 skips it.
if [ "${DIST_TEST_WINE:-1}" = 0 ]; then
  echo "dist-test: DIST_TEST_WINE=0: the Windows artefacts are not run under Wine"
elif [ "$(id -u)" != 0 ]; then
  fail "running the Windows artefacts under Wine needs root (DIST_TEST_WINE=0 skips it)"
else
  step "the .zip and the .msi under Wine"
  DIST_DIR=$D packaging/wine/test-windows.sh || fail "the Windows artefacts under Wine"
fi
fi

if [ "${DIST_TEST_CHROOT:-1}" = 0 ]; then
  echo "dist-test: DIST_TEST_CHROOT=0: the install into a clean Debian 12 is skipped"
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v debootstrap >/dev/null; then
  fail "the install into a clean Debian 12 needs root and debootstrap (DIST_TEST_CHROOT=0 skips it)"
fi

step "a clean Debian 12"
cache=${MCPTRAY_DIST_CACHE:-/var/cache/mcptray-dist-test}
base=$cache/bookworm-minbase.tar
if [ ! -s "$base" ]; then
  mkdir -p "$cache"
  rm -rf "$cache/bookworm.tmp"
  debootstrap --variant=minbase bookworm "$cache/bookworm.tmp" http://deb.debian.org/debian
  tar -C "$cache/bookworm.tmp" -cf "$base.tmp" . && mv "$base.tmp" "$base" && rm -rf "$cache/bookworm.tmp"
fi
root=$(mktemp -d /tmp/mcptray-dist-test.XXXXXX)
mounts=()
# stop_inside ends what runs in the chroot (it shares this PID namespace):
# the processes whose root is it.
stop_inside() {
  local p pids=()
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && pids+=("${p#/proc/}")
  done
  [ ${#pids[@]} = 0 ] || { kill "${pids[@]}" 2>/dev/null || true; sleep 1; kill -9 "${pids[@]}" 2>/dev/null || true; }
}
cleanup() {
  stop_inside
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[i]}" 2>/dev/null || true; done
  rm -rf "$root" "$tmp"
}
trap cleanup EXIT
tar -C "$root" -xf "$base"
for m in proc sys dev dev/pts; do
  case $m in
    proc) mount -t proc proc "$root/proc" ;;
    sys) mount -t sysfs sys "$root/sys" ;;
    dev) mount --bind /dev "$root/dev" ;;
    dev/pts) mount --bind /dev/pts "$root/dev/pts" ;;
  esac
  mounts+=("$root/$m")
done
cp /etc/resolv.conf "$root/etc/resolv.conf"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 "$@"; }
as_user() { chroot --userspec=tester:tester "$root" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/home/tester USER=tester LANG=C.UTF-8 "$@"; }
in_root useradd -m -s /bin/bash tester
in_root apt-get -qq update
snapshot() { in_root find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /tmp -o -path /var/cache -o -path /var/lib/apt \
  -o -path /var/lib/dpkg -o -path /var/log -o -path /home -o -path /root -o -path /run \) -prune -o -print | sort; }
snapshot > "$tmp/before.txt"
in_root dpkg-query -W -f '${Package}\n' | sort > "$tmp/pkgs-before.txt"

step "apt install ./$(basename "$deb")"
cp "$deb" "$root/tmp/"
in_root apt-get install -y -q "/tmp/$(basename "$deb")" > "$tmp/apt.txt" || { cat "$tmp/apt.txt"; fail "apt install"; }
in_root dpkg-query -W -f '${Package}\n' | sort > "$tmp/pkgs-after.txt"
echo "packages apt installed with it: $(comm -13 "$tmp/pkgs-before.txt" "$tmp/pkgs-after.txt" | tr '\n' ' ')"
in_root dpkg -L mcptray | sort > "$tmp/files.txt"

step "inside: mcptray version"
as_user mcptray version | tee "$tmp/out.txt"
grep -q "^mcptray $version (headless build" "$tmp/out.txt" || fail "mcptray version inside"
as_user mcptray version --json | grep -q '"build": "headless"' || fail "mcptray version --json inside"

step "inside: mcptray check (first run: the built-in demo)"
as_user mcptray check | tee "$tmp/out.txt" || fail "mcptray check of the demo"
grep -q demo "$tmp/out.txt" || fail "mcptray check did not check the demo"

step "inside: mcptray connect demo, answering a go-sdk client"
CGO_ENABLED=0 go build -o "$root/usr/local/bin/mcpprobe" ./packaging/mcpprobe
as_user /usr/local/bin/mcpprobe mcptray connect demo | tee "$tmp/out.txt" || fail "mcptray connect demo"
grep -q '^echo: hello from mcpprobe' "$tmp/out.txt" || fail "connect demo: no echo"
as_user mcptray status || true
stop_inside # the daemon connect started

step "inside: mcptray service install (no systemd in a chroot)"
set +e; as_user mcptray service install > "$tmp/out.txt" 2>&1; code=$?; set -e
cat "$tmp/out.txt"
[ "$code" != 0 ] && grep -q 'autostart' "$tmp/out.txt" || fail "service install without systemd: exit $code, no word on what to do instead"
rm -f "$root/usr/local/bin/mcpprobe"

step "apt purge mcptray"
in_root apt-get purge -y -q mcptray > /dev/null
in_root apt-get autoremove --purge -y -q > /dev/null
while read -r f; do
  [ -e "$root$f" ] || [ -L "$root$f" ] || continue
  [ -d "$root$f" ] && [ ! -L "$root$f" ] && continue # a shared folder (/usr/share/man/man1)
  fail "$f is left after apt purge"
done < "$tmp/files.txt"
snapshot > "$tmp/after.txt"
if ! diff "$tmp/before.txt" "$tmp/after.txt" > "$tmp/diff.txt"; then
  cat "$tmp/diff.txt"; fail "the system's files differ after install and purge"
fi
echo "purge: $(wc -l < "$tmp/files.txt") package paths gone; the file list equals the one before the install ($(wc -l < "$tmp/before.txt") paths)"

step "inside: the desktop app under Xvfb, its tray read back over D-Bus"
in_root apt-get install -y -q xvfb xauth dbus dbus-x11 libglib2.0-bin procps > /dev/null
in_root apt-get install -y -q "/tmp/$(basename "$deb")" > /dev/null
cat > "$root/tmp/tray.sh" <<'EOF'
set -eu
mcptray --config "$HOME/.config/mcptray/servers.toml" &
pid=$!
# The item registers first and fills its menu after (updates are
# coalesced): the layout is read until the items it shows (those not
# 'visible': <false>) hold Quit and the demo server.
layout=
for i in $(seq 600); do
  if gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus -m org.freedesktop.DBus.NameHasOwner "org.kde.StatusNotifierItem-$pid-1" 2>/dev/null | grep true >/dev/null; then
    layout=$(gdbus call --session -d "org.kde.StatusNotifierItem-$pid-1" -o /StatusNotifierMenu -m com.canonical.dbusmenu.GetLayout -- 0 -1 '[]' 2>&1 || true)
    shown=$(printf '%s' "$layout" | grep -o "{[^{}]*}" | grep -v "'visible': <false>" | grep -o "'label': <'[^']*'>" || true)
    case $shown in *"'label': <'Quit"*"'label': <'demo: "*|*"'label': <'demo: "*"'label': <'Quit"*)
      echo "$shown"; kill $pid; wait $pid || true; exit 0 ;;
    esac
  fi
  kill -0 $pid || { echo "the desktop app exited"; exit 1; }
  sleep 0.1
done
echo "no tray menu with Quit and the demo server on the session bus after 60 s; last layout:"; echo "$layout"; kill $pid; exit 1
EOF
as_user xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- sh /tmp/tray.sh > "$tmp/tray.txt" 2>&1 || { cat "$tmp/tray.txt"; fail "the desktop app's tray"; }
cat "$tmp/tray.txt"
grep -q "'label': <'Quit" "$tmp/tray.txt" || fail "the tray menu shows no Quit"
grep -q "'label': <'demo: " "$tmp/tray.txt" || fail "the tray menu does not show the demo server"
step "all passed"
