//go:build unix

package supervisor

// findCommand is the shell command that shows where a command is found.
const findCommand = "command -v"
