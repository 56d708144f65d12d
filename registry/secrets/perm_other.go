//go:build !windows

package secrets

import "io/fs"

// othersMayRead: the group or others have any permission bit.
func othersMayRead(fi fs.FileInfo) bool { return fi.Mode().Perm()&0o077 != 0 }
