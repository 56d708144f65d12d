package secrets

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// privateSessionBus starts a dbus-daemon of its own and returns its address.
func privateSessionBus(t *testing.T) (string, func()) {
	t.Helper()
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	return strings.TrimSpace(line), func() { cmd.Process.Kill(); cmd.Wait() }
}

func waitABit() { time.Sleep(50 * time.Millisecond) }
