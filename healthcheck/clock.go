package healthcheck

import "mcptray/internal/clock"

// Clock is the time source of every timeout in this package (the wait for
// server/discover, the grace after an exit, the bound on Close), so tests
// drive them on a fake clock (internal/clock/fakeclock).
type Clock = clock.Clock

// Timer is a [time.Timer] behind an interface.
type Timer = clock.Timer
