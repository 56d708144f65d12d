//go:build !darwin && !windows

package secrets

import (
	"errors"
	"fmt"
	"os"
)

// sessionBusMissing says why there is no D-Bus session bus to reach the
// keyring through, or is nil when there is one. Without one, the D-Bus
// library (godbus) autolaunches a bus with dbus-launch, whose daemons
// outlive mcptray: mcptray never lets it. The places checked are the
// library's own, in its order.
func sessionBusMissing() error {
	if a := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); a != "" && a != "autolaunch:" {
		return nil
	}
	dir := fmt.Sprintf("/run/user/%d", os.Getuid())
	for _, f := range []string{"bus", "dbus-session"} {
		if _, err := os.Stat(dir + "/" + f); err == nil {
			return nil
		}
	}
	return errors.New("no session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
}
