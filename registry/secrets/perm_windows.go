package secrets

import "io/fs"

// othersMayRead: Windows keeps no permission bits (Go reports 0666 for any
// writable file); who may read the file is its ACL's, inherited from the
// user's own profile folder, which admits that user alone.
func othersMayRead(fs.FileInfo) bool { return false }
