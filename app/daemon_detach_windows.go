package app

import "os"

// waitProcessGone returns when process pid has exited (or cannot be
// opened: it is gone).
func waitProcessGone(pid int) {
	p, err := os.FindProcess(pid)
	if err != nil {
		return
	}
	_, _ = p.Wait()
}

// redirectOutput is not done on Windows: daemon.log is renamed only where
// an open file can be (it cannot here), so it is never rotated under a
// writer.
func redirectOutput(*os.File) {}
