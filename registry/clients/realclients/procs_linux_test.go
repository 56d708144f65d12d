package realclients

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// processesOf are the pids of live processes of binary exe (symbolic
// links resolved) whose first argument is arg and whose HOME is home,
// read from /proc, in order.
func processesOf(home, exe, arg string) []int {
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if i := bytes.LastIndexByte(stat, ')'); err != nil || i < 0 || len(stat) < i+3 || stat[i+2] == 'Z' {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		parts := strings.Split(string(cmdline), "\x00")
		if len(parts) < 2 || parts[1] != arg {
			continue
		}
		if p, err := filepath.EvalSymlinks(parts[0]); err != nil || p != exe {
			continue
		}
		environ, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if slices.Contains(strings.Split(string(environ), "\x00"), "HOME="+home) {
			pids = append(pids, pid)
		}
	}
	return pids
}
