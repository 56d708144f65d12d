//go:build !linux && !darwin

package supervisor

// procStartTime: not known here, so no record is kept and no recorded pid
// is ever signalled (on Windows the Job Object ends a dead supervisor's
// processes instead).
func procStartTime(int) (uint64, bool) { return 0, false }

func bootID() string { return "" }

func killStale(recs []procRecord) []int { return make([]int, len(recs)) }
