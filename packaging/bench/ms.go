package main

import (
	"fmt"
	"time"
)

// us prints a duration in milliseconds, to the microsecond.
func us(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d.Nanoseconds())/1e6) }
