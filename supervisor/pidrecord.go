package supervisor

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"mcptray/registry"
)

// A supervisor killed with SIGKILL cannot stop what it started. Linux ends
// its direct children (Pdeathsig), but not their children, and macOS ends
// none. So each supervisor keeps a record file of the servers it runs (pid,
// process group, start time, token) in a folder of the user's; the next
// supervisor of that user, whichever command runs it (check, up, the daemon,
// the desktop app), ends the processes of records whose owner is gone
// before it starts its own servers.
//
// Safety: a record is cleaned only when its owner (pid and start time) no
// longer runs, so several supervisors of one user never touch each other's
// servers; a cleaner first claims the file by renaming it, so two never
// clean one record twice; and a recorded pid is signalled only while it has
// the recorded start time (a pid is reused, the pair is not), after a
// reboot nothing is (the boot id differs).

// procID names one process for good.
type procID struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"` // Linux: clock ticks after boot; macOS: µs since the epoch
}

// procRecord is one server process in a record file.
type procRecord struct {
	Server string   `json:"server"`
	PID    int      `json:"pid"`
	PGID   int      `json:"pgid"`
	Start  uint64   `json:"start"`
	Token  string   `json:"token,omitempty"` // the MCPTRAY_SPAWN_ID value its descendants carry
	Family []procID `json:"family,omitempty"`
	// Cgroup is the server's own cgroup (Linux, where one could be
	// made): everything in it is the server's, whatever it did.
	Cgroup string `json:"cgroup,omitempty"`
}

type recordFile struct {
	Owner procID       `json:"owner"`
	Boot  string       `json:"boot,omitempty"`
	Procs []procRecord `json:"procs"`
}

// self is this process's identity, or Start 0 where start times are not
// known (then nothing is recorded).
var self = sync.OnceValue(func() procID {
	pid := os.Getpid()
	start, _ := procStartTime(pid)
	return procID{PID: pid, Start: start}
})

var recordSeq, tokenSeq atomic.Uint64

// newToken names one spawn: unique on this machine and boot, and it says
// which supervisor made it.
func newToken() string {
	me := self()
	return fmt.Sprintf("%d.%d.%d", me.PID, me.Start, tokenSeq.Add(1))
}

// procRecords is one supervisor's record file. A nil *procRecords records
// nothing. The file exists only while a server runs.
type procRecords struct {
	path   string
	logger *slog.Logger

	// wmu is held by the one writer of the file at a time: changes made
	// while it writes are written by the next writer, in one write, so
	// 50 servers starting at once cost a few writes, not 50 of a
	// growing file.
	wmu sync.Mutex

	mu      sync.Mutex // guards the fields below
	procs   []*procRecord
	version uint64 // changes made to procs
	written uint64 // the version on disk
	warned  bool   // a write failed and was logged
}

// newProcRecords returns the record file for one supervisor in dir, or nil
// when dir is empty or this system does not give start times.
func newProcRecords(dir string, logger *slog.Logger) *procRecords {
	me := self()
	if dir == "" || me.Start == 0 {
		return nil
	}
	name := fmt.Sprintf("%d-%d-%d.json", me.PID, me.Start, recordSeq.Add(1))
	return &procRecords{path: filepath.Join(dir, name), logger: logger}
}

// add records a server process just started (it leads its own group).
func (r *procRecords) add(server string, pid int, token, cgroup string) *procRecord {
	if r == nil {
		return nil
	}
	start, ok := procStartTime(pid)
	if !ok {
		return nil // already gone
	}
	rec := &procRecord{Server: server, PID: pid, PGID: pid, Start: start, Token: token, Cgroup: cgroup}
	r.change(func() { r.procs = append(r.procs, rec) })
	return rec
}

// update records the members of rec's family seen so far.
func (r *procRecords) update(rec *procRecord, family []procID) {
	if r == nil || rec == nil {
		return
	}
	r.change(func() { rec.Family = family })
}

// remove drops a process that ended with everything it started.
func (r *procRecords) remove(rec *procRecord) {
	if r == nil || rec == nil {
		return
	}
	r.change(func() {
		for i, p := range r.procs {
			if p == rec {
				r.procs = append(r.procs[:i], r.procs[i+1:]...)
				return
			}
		}
	})
}

// change applies edit and returns once the file holds it (or a later
// version): written atomically (temp file and rename), or removed when
// nothing runs. A failure is logged once: the servers run on, only a
// killed supervisor's leftovers would not be found.
func (r *procRecords) change(edit func()) {
	r.mu.Lock()
	edit()
	r.version++
	r.mu.Unlock()

	r.wmu.Lock()
	defer r.wmu.Unlock()
	r.mu.Lock()
	if r.written == r.version {
		r.mu.Unlock() // the writer before took this change along
		return
	}
	v := r.version
	var b []byte
	var err error
	if len(r.procs) > 0 {
		rf := recordFile{Owner: self(), Boot: bootID()}
		for _, p := range r.procs {
			rf.Procs = append(rf.Procs, *p)
		}
		b, err = json.Marshal(rf)
	}
	r.mu.Unlock()
	if err == nil {
		err = r.write(b)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.written = v
	if err != nil && !r.warned {
		r.warned = true
		r.logger.Warn("cannot keep the record of running servers", "file", r.path, "error", err)
	}
}

// write puts b in the file, or removes the file when b is nil.
func (r *procRecords) write(b []byte) error {
	if b == nil {
		if err := os.Remove(r.path); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(r.path), 0o700); err != nil {
		return err
	}
	return registry.ReplaceFile(r.path, b, 0o600)
}

// cleanStaleRecords ends the processes recorded in dir by supervisors that
// no longer run, and removes their records. It returns how many processes
// it signalled.
func cleanStaleRecords(dir string, logger *slog.Logger) int {
	me := self()
	if dir == "" || me.Start == 0 {
		return 0
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	total := 0
	var stale []staleFile
	var claimedPaths []string
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(dir, name)
		// A record being replaced is .NAME.tmp-* (registry.ReplaceFile).
		owner, rest, ok := parseRecordName(strings.TrimPrefix(name, "."))
		if !ok || ownerAlive(owner) || (name[0] == '.') != strings.HasPrefix(rest, ".json.tmp") {
			continue
		}
		switch {
		case strings.HasPrefix(rest, ".json.tmp"):
			os.Remove(path)
			continue
		case rest == ".json":
		case strings.HasPrefix(rest, ".json.cleaning-"):
			// A cleaner that died while at it: take over once it is gone.
			claimer, _, ok := parseRecordName(strings.TrimPrefix(rest, ".json.cleaning-") + "-0")
			if !ok || ownerAlive(claimer) {
				continue
			}
		default:
			continue
		}
		claimed := filepath.Join(dir, strings.TrimSuffix(name, rest)+fmt.Sprintf(".json.cleaning-%d-%d", me.PID, me.Start))
		if err := os.Rename(path, claimed); err != nil {
			continue // another supervisor got there first
		}
		b, err := os.ReadFile(claimed)
		var rf recordFile
		if err == nil && json.Unmarshal(b, &rf) == nil && rf.Owner == owner && rf.Boot == bootID() {
			stale = append(stale, staleFile{owner: owner, procs: rf.Procs})
		}
		claimedPaths = append(claimedPaths, claimed)
	}
	if len(stale) > 0 {
		// One look at the processes for every record, every kill at once,
		// then one bounded wait for all of them: a killed daemon's 30
		// servers cost what one does.
		var all []procRecord
		for _, sf := range stale {
			all = append(all, sf.procs...)
		}
		counts := killStale(all)
		i := 0
		for _, sf := range stale {
			n := 0
			var names []string
			for _, p := range sf.procs {
				if k := counts[i]; k > 0 {
					n += k
					names = append(names, p.Server)
				}
				i++
			}
			if n > 0 {
				what := "processes"
				if n == 1 {
					what = "process"
				}
				logger.Warn(fmt.Sprintf("ended %d %s left running by mcptray pid %d, which did not stop cleanly (servers: %s)",
					n, what, sf.owner.PID, strings.Join(names, ", ")))
			}
			total += n
		}
	}
	for _, c := range claimedPaths {
		os.Remove(c)
	}
	removeStaleCgroups(ownerAlive)
	return total
}

// staleFile is the record file of a supervisor that no longer runs.
type staleFile struct {
	owner procID
	procs []procRecord
}

// parseRecordName reads "PID-START-…" from a record file name; rest is
// what follows the third field.
func parseRecordName(name string) (owner procID, rest string, ok bool) {
	parts := strings.SplitN(name, "-", 3)
	if len(parts) != 3 {
		return procID{}, "", false
	}
	pid, err1 := strconv.Atoi(parts[0])
	start, err2 := strconv.ParseUint(parts[1], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return procID{}, "", false
	}
	i := strings.IndexByte(parts[2], '.')
	if i < 0 {
		i = len(parts[2])
	}
	return procID{PID: pid, Start: start}, parts[2][i:], true
}

func ownerAlive(o procID) bool {
	start, ok := procStartTime(o.PID)
	return ok && start == o.Start
}

// defaultProcDir is the procs folder in the user's runtime folder (the
// daemon's, the same whatever the environment: registry.RuntimeDir), so
// the next supervisor finds the records whoever started it.
func defaultProcDir() string {
	if d, err := registry.RuntimeDir(); err == nil {
		return filepath.Join(d, "procs")
	}
	return ""
}
