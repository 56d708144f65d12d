//go:build windows

package supervisor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// procGroup is a Job Object with kill-on-close: every process the server
// starts joins it, and closing it (or mcptray dying) ends them all.
//
// The server is created suspended (sysProcAttr) and assigned to the job
// before its first instruction runs (add resumes it): were it running
// first, `cmd /c npx.cmd` could start node before the assignment, and node
// would live outside the job, out of reach of a stop.
type procGroup struct{ job windows.Handle }

func newProcGroup() (*procGroup, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, err
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return nil, err
	}
	return &procGroup{job: job}, nil
}

// add puts the (suspended) process in the job, then lets it run.
func (g *procGroup) add(p *os.Process) error {
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(p.Pid))
	if err != nil {
		return fmt.Errorf("open process %d: %w", p.Pid, err)
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(g.job, h); err != nil {
		return fmt.Errorf("assign process %d to its job: %w", p.Pid, err)
	}
	return resumeProcess(uint32(p.Pid))
}

// resumeProcess resumes the threads of a process created suspended (it has
// one: os.StartProcess closes the thread handle CreateProcess returned, so
// the thread is found by listing the system's threads).
func resumeProcess(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("resume process %d: list threads: %w", pid, err)
	}
	defer windows.CloseHandle(snap)
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return fmt.Errorf("resume process %d: open thread %d: %w", pid, te.ThreadID, err)
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("resume process %d: thread %d: %w", pid, te.ThreadID, err)
		}
		resumed++
	}
	if resumed == 0 {
		return fmt.Errorf("resume process %d: it has no thread", pid)
	}
	return nil
}

// terminate asks the server to stop, after stdin was closed and the grace
// passed: a CTRL_BREAK_EVENT to its process group (CREATE_NEW_PROCESS_GROUP:
// the group is the server and everything it started that shares its
// console), which node, Python and Go programs take as a request to exit
// (SIGBREAK), so they can flush. A console event reaches only processes on
// our console: when mcptray has none (the desktop app), the server runs
// without one (CREATE_NO_WINDOW) and closing stdin was the gentle step; kill
// follows after the kill grace either way.
func (g *procGroup) terminate(pid int) {
	if pid > 0 && hasConsole() {
		windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(pid))
	}
}

// kill ends every process in the job.
func (g *procGroup) kill(int) {
	if g.job != 0 {
		windows.TerminateJobObject(g.job, 1)
	}
}

func (g *procGroup) close() {
	if g.job != 0 {
		windows.CloseHandle(g.job)
		g.job = 0
	}
}

// hasConsole says whether mcptray runs attached to a console (the command
// line, a daemon started from a terminal) rather than as a GUI process.
var hasConsole = sync.OnceValue(func() bool {
	h, _, _ := windows.NewLazySystemDLL("kernel32.dll").NewProc("GetConsoleWindow").Call()
	return h != 0
})

// commandLine runs a .cmd or .bat file (npx.cmd) through cmd /c, the only
// way Windows runs batch files.
func commandLine(path string, args, env []string) (string, []string) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".cmd", ".bat":
		comspec := envValue(env, "ComSpec")
		if comspec == "" {
			comspec = `C:\Windows\System32\cmd.exe`
		}
		return comspec, append([]string{"/c", path}, args...)
	}
	return path, args
}

// sysProcAttr: suspended until add has put it in its job; its own process
// group, for terminate's CTRL_BREAK; no console window of its own when
// mcptray has no console to share (a window per server would pop up).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: creationFlags(hasConsole())}
}

func creationFlags(console bool) uint32 {
	f := uint32(windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP)
	if !console {
		f |= windows.CREATE_NO_WINDOW
	}
	return f
}

func exitInfo(ps *os.ProcessState, err error) ExitInfo {
	if ps == nil {
		return ExitInfo{Code: -1}
	}
	return ExitInfo{Code: ps.ExitCode()}
}

// pipeUnread: not known on Windows (see process_bsd.go).
func pipeUnread(*os.File) (int, bool) { return 0, false }
