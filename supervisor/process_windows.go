//go:build windows

package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// procGroup is a Job Object with kill-on-close: every process the server
// starts joins it, and closing it (or mcptray dying) ends them all.
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

func (g *procGroup) add(p *os.Process) error {
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(p.Pid))
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	return windows.AssignProcessToJobObject(g.job, h)
}

// terminate: Windows has no SIGTERM for a console-less child; end the job.
func (g *procGroup) terminate(int) { g.kill(0) }

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

func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

func exitInfo(ps *os.ProcessState, err error) ExitInfo {
	if ps == nil {
		return ExitInfo{Code: -1}
	}
	return ExitInfo{Code: ps.ExitCode()}
}
