//go:build !linux && !darwin && !windows

package secrets

const keyringName = "Secret Service"

const dataUnderHome = true
