package wine

import (
	"os"
	"runtime"
	"testing"
)

// TestRunning: make test-windows runs this binary under Wine and says so in
// MCPTRAY_TEST_WINE; detection must agree, and never claim Wine off Windows.
func TestRunning(t *testing.T) {
	if runtime.GOOS != "windows" && Running() {
		t.Fatal("Wine reported on", runtime.GOOS)
	}
	if os.Getenv("MCPTRAY_TEST_WINE") == "1" && !Running() {
		t.Fatal("run under Wine (MCPTRAY_TEST_WINE=1), but Wine was not detected")
	}
	t.Logf("under Wine: %v", Running())
}
