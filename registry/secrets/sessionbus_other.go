//go:build darwin || windows

package secrets

// sessionBusMissing is nil: the keyring here is not reached over D-Bus.
func sessionBusMissing() error { return nil }
