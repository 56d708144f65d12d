// Package filemode compares file modes as far as the OS keeps them, for the
// tests that check the mode a file was given.
package filemode

import (
	"io/fs"
	"runtime"
)

// Matches reports whether the permission bits got, as os.Stat reports them,
// are want where the OS has such bits. Windows has none: Go reports 0666
// for a writable file and 0444 for a read-only one (the read-only
// attribute), so there only the owner's write bit is compared; who else may
// read a file is its ACL's business (a user's profile folders admit that
// user alone).
func Matches(got, want fs.FileMode) bool {
	got, want = got.Perm(), want.Perm()
	if runtime.GOOS == "windows" {
		return got&0o200 == want&0o200
	}
	return got == want
}
