package supervisor

// findCommand is the shell command that shows where a command is found.
const findCommand = "where"
