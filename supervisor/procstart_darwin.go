package supervisor

import (
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// procStartTime is pid's start time in microseconds since the epoch, which
// with the pid names one process for good.
func procStartTime(pid int) (uint64, bool) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp == nil || int(kp.Proc.P_pid) != pid || kp.Proc.P_stat == 5 /* SZOMB */ {
		return 0, false
	}
	tv := kp.Proc.P_starttime
	return uint64(tv.Sec)*1e6 + uint64(tv.Usec), true
}

// bootID tells one boot from the next. It is read once: no process
// outlives its boot.
var bootID = sync.OnceValue(func() string {
	tv, err := unix.SysctlTimeval("kern.boottime")
	if err != nil {
		return ""
	}
	return strconv.FormatInt(int64(tv.Sec), 10) + "." + strconv.FormatInt(int64(tv.Usec), 10)
})

// killStale ends a dead supervisor's server if it still runs with the
// recorded start time, and its process group (macOS has no parent-death
// signal, so the server itself usually outlived the supervisor). Members
// that left the group are not found here.
func killStale(recs []procRecord) []int {
	out := make([]int, len(recs))
	for i, rec := range recs {
		out[i] = killStaleOne(rec)
	}
	return out
}

func killStaleOne(rec procRecord) int {
	n := 0
	if start, ok := procStartTime(rec.PID); ok && start == rec.Start {
		unix.Kill(-rec.PGID, unix.SIGKILL)
		unix.Kill(rec.PID, unix.SIGKILL)
		n++
	}
	for _, m := range rec.Family {
		if start, ok := procStartTime(m.PID); ok && start == m.Start {
			unix.Kill(m.PID, unix.SIGKILL)
			n++
		}
	}
	return n
}
