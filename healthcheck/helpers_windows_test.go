package healthcheck

import (
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// coarseClock: Windows' monotonic clock moves in timer ticks (0.5 to 15.6
// ms), so a fast exchange can measure 0.
const coarseClock = true

// ownGroup makes cmd lead a process group of its own.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

// killGroup kills cmd and every process it started, as taskkill /T would
// (Windows has no process group kill), walking the process list itself:
// Wine's taskkill /T can hang for ever.
func killGroup(cmd *exec.Cmd) {
	root := uint32(cmd.Process.Pid)
	tree := []uint32{root}
	if snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0); err == nil {
		children := map[uint32][]uint32{}
		e := windows.ProcessEntry32{Size: uint32(unsafe.Sizeof(windows.ProcessEntry32{}))}
		for err := windows.Process32First(snap, &e); err == nil; err = windows.Process32Next(snap, &e) {
			if e.ProcessID != root {
				children[e.ParentProcessID] = append(children[e.ParentProcessID], e.ProcessID)
			}
		}
		windows.CloseHandle(snap)
		seen := map[uint32]bool{root: true} // a reused pid can close a loop
		for i := 0; i < len(tree); i++ {
			for _, c := range children[tree[i]] {
				if !seen[c] {
					seen[c] = true
					tree = append(tree, c)
				}
			}
		}
	}
	_ = cmd.Process.Kill()
	for _, pid := range tree[1:] {
		if h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, pid); err == nil {
			windows.TerminateProcess(h, 1)
			windows.CloseHandle(h)
		}
	}
}
