#!/bin/sh
# go test -exec wrapper: runs one PKG.test.exe under the Debian 13 system's
# wine64 (set up by test-windows.sh), in the package's folder, bounded in time.
exe=$1; shift
: "${MCPTRAY_WINE_ROOT:?run by packaging/wine/test-windows.sh}"
case $exe in
"$MCPTRAY_WINE_ROOT"/*) inner=${exe#"$MCPTRAY_WINE_ROOT"} ;;
*) echo "exec.sh: $exe is not under $MCPTRAY_WINE_ROOT (GOTMPDIR)" >&2; exit 2 ;;
esac
bound=${MCPTRAY_WINE_PKG_TIMEOUT:-10m}
# The binary's own -test.timeout fires first and names the test; this one,
# a minute later, ends a binary that Wine cannot bring down.
case $bound in *m) secs=$(( ${bound%m} * 60 + 60 ));; *s) secs=$(( ${bound%s} + 60 ));; *) secs=660;; esac
# The host's temporary folders (go test points TMPDIR at GOTMPDIR) are not
# paths inside the system: Wine's own (C:\users\root\Temp) are used instead.
# The output goes to a file, not to go test's pipe: a Wine process that
# outlives the test binary (wineserver, a service) would otherwise hold the
# pipe open, and go test fails the package with "Test I/O incomplete".
out=$(mktemp "${TMPDIR:-/tmp}/mcptray-wine-out.XXXXXX")
unset TMPDIR TMP TEMP GOTMPDIR
timeout -k 10 "$secs" chroot "$MCPTRAY_WINE_ROOT" /bin/sh -c 'cd "$0" && exec /usr/bin/env $MCPTRAY_WINE_ENV MCPTRAY_TEST_WINE=1 /usr/lib/wine/wine64 "$@"' \
	"$PWD" "$inner" "$@" >"$out" 2>&1 </dev/null
rc=$?
cat "$out"
rm -f "$out"
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	echo "FAIL: $(basename "$exe" .exe) did not end within $secs s under Wine (killed)" >&2
fi
exit $rc
