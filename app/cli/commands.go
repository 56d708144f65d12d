package cli

// commands is the command table, in the order usage lists them. Each
// command's help text and flags live in the file named after it; the flags
// function declares the flags and returns the command's run function.
// (Set in init: the table refers to functions that print the table.)
var commands []*command

func init() {
	commands = []*command{
		{
			name:    "auth",
			summary: "sign in to remote servers that require it (OAuth), sign out, show sign-ins",
			children: []*command{
				{name: "login", args: "NAME|URL", summary: "sign in to a remote server in the browser", help: authLoginHelp, flags: authLoginFlags},
				{name: "logout", args: "NAME|URL", summary: "sign out: revoke the tokens where the server allows it and forget them", flags: authLogoutFlags},
				{name: "status", summary: "list the servers signed in to", flags: authStatusFlags},
			},
		},
		{
			name:    "add",
			args:    "REGISTRY-NAME[@VERSION] | FILE.mcpb | --json | --update NAME",
			summary: "add a server from the MCP Registry, an MCP bundle or a pasted snippet, and check it",
			help:    addHelp,
			flags:   addFlags,
		},
		{
			name:    "remove",
			args:    "NAME...",
			summary: "remove servers from servers.toml (and, if asked, the folders their MCP bundles were unpacked into)",
			help:    removeHelp,
			flags:   removeFlags,
		},
		{
			name:    "call",
			args:    "TARGET TOOL [JSON-ARGS]  |  TOOL [JSON-ARGS] -- COMMAND [ARGS...]",
			command: true,
			summary: "call a tool of a server and print its result",
			help:    callHelp,
			flags:   callFlags,
		},
		{
			name:    "read",
			args:    "TARGET URI  |  URI -- COMMAND [ARGS...]",
			command: true,
			summary: "read a resource of a server",
			help:    readHelp,
			flags:   readFlags,
		},
		{
			name:    "prompt",
			args:    "TARGET NAME [JSON-ARGS]  |  NAME [JSON-ARGS] -- COMMAND [ARGS...]",
			command: true,
			summary: "get a prompt of a server, filled with arguments",
			help:    promptHelp,
			flags:   promptFlags,
		},
		{
			name:    "complete",
			args:    "TARGET (--prompt NAME | --resource URI-TEMPLATE) ARG [VALUE]",
			command: true,
			summary: "ask a server to complete an argument of a prompt or resource template",
			help:    completeHelp,
			flags:   completeFlags,
		},
		{
			name:    "check",
			args:    "[NAME... | URL | -- COMMAND [ARGS...]]",
			command: true,
			summary: "start, handshake, discover and probe servers once; report what works and why not",
			help:    checkHelp,
			flags:   checkFlags,
		},
		{
			name:    "completion",
			args:    "bash|zsh|fish",
			summary: "print the shell completion script for bash, zsh or fish",
			help:    completionHelp,
			flags:   completionFlags,
		},
		{
			name:    "config",
			summary: "show, check and list the servers.toml config",
			children: []*command{
				{name: "path", summary: "print the config file's path", flags: cmdConfigPath},
				{name: "validate", summary: "check the config; print every error and warning with its position", flags: cmdConfigValidate,
					help: configValidateHelp},
				{name: "list", summary: "list the configured servers in file order", flags: cmdConfigList},
				{name: "show", args: "NAME", summary: "print one server's entry, with where it came from (source)", flags: cmdConfigShow},
			},
		},
		{
			name:    "connect",
			args:    "[NAME]",
			summary: "be server NAME (or, with --profile or no NAME, every server of a profile) for an AI client: relay MCP on stdin/stdout to mcptray",
			help:    connectHelp,
			flags:   connectFlags,
		},
		{
			name:    "daemon",
			summary: "run the servers headless and serve the local control API",
			help:    daemonHelp,
			flags:   daemonFlags,
		},
		{
			name:    "export",
			args:    "[NAME...]",
			summary: "print the config snippet, add command or install link an AI client needs",
			help:    exportHelp,
			flags:   cmdExport,
		},
		{
			name:    "gateway",
			summary: "list each server's local URL and the client sessions connected through mcptray",
			help:    gatewayHelp,
			flags:   gatewayFlags,
		},
		{
			name:    "trace",
			args:    "NAME | --profile PROFILE",
			summary: "show the protocol trace of a server (or of a profile's aggregate sessions): the frames clients, mcptray and the server exchanged",
			help:    traceHelp,
			flags:   traceFlags,
		},
		{
			name:    "gui",
			summary: "start the desktop app (what mcptray does with no command)",
			help:    guiHelp,
			flags:   guiFlags,
		},
		{
			name:    "import",
			summary: "copy the servers an AI client has configured into servers.toml",
			help:    importHelp,
			flags:   importFlags,
		},
		{
			name:    "install",
			args:    "[NAME...]",
			summary: "add or update servers in an AI client's config file",
			help:    installHelp,
			flags:   cmdInstall,
		},
		{
			name:    "uninstall",
			args:    "NAME...",
			summary: "remove servers from an AI client's config file",
			help:    uninstallHelp,
			flags:   cmdUninstall,
		},
		{name: "version", summary: "print mcptray's version, commit, build date and build (desktop or headless)", flags: versionFlags},
		{
			name:    "search",
			args:    "[QUERY]",
			summary: "list the servers of the MCP Registry whose name holds QUERY",
			help:    searchHelp,
			flags:   searchFlags,
		},
		{
			name:    "serve-demo",
			summary: "run the built-in demo MCP server on stdin/stdout",
			help:    serveDemoHelp,
			flags:   serveDemoFlags,
		},
		{
			name:    "secret",
			summary: "keep secrets for ${keyring:NAME} references in the OS keyring",
			help:    secretHelp,
			children: []*command{
				{name: "set", args: "NAME", summary: "store a secret (the value is read from stdin, or asked for on a terminal)", flags: secretSetFlags},
				{name: "get", args: "NAME", summary: "print a secret's value", flags: secretGetFlags},
				{name: "rm", args: "NAME", summary: "remove a secret", flags: secretRmFlags},
				{name: "list", summary: "list the secrets' names (never their values)", flags: secretListFlags},
			},
		},
		{
			name:    "service",
			summary: "run the daemon at login as a per-user service (install, uninstall, start, stop, status)",
			children: []*command{
				{name: "install", summary: "install the daemon as your user's service, start it, and start it at every login", flags: serviceFlags(serviceInstall, true)},
				{name: "uninstall", summary: "stop the service and remove it", flags: serviceFlags(serviceUninstall, false)},
				{name: "start", summary: "start the installed service", flags: serviceFlags(serviceStart, false)},
				{name: "stop", summary: "stop the service (its servers stop with it)", flags: serviceFlags(serviceStop, false)},
				{name: "status", summary: "say whether the service is installed and running", flags: serviceFlags(serviceStatus, false)},
			},
		},
		{
			name:    "status",
			args:    "[NAME...]",
			summary: "show what the running daemon's servers are doing",
			help:    statusHelp,
			flags:   statusFlags,
		},
		{
			name:    "logs",
			args:    "NAME",
			summary: "print a server's stderr from the running daemon",
			help:    logsHelp,
			flags:   logsFlags,
		},
		{name: "start", args: "NAME...", summary: "start servers in the running daemon", help: startHelp, flags: startFlags},
		{name: "stop", args: "NAME...", summary: "stop servers in the running daemon (they stay stopped)", help: stopHelp, flags: stopFlags},
		{name: "restart", args: "NAME...", summary: "restart servers in the running daemon", help: restartHelp, flags: restartFlags},
		{
			name:    "reload",
			summary: "make the running daemon read its servers.toml again",
			help:    reloadHelp,
			flags:   reloadFlags,
		},
		{
			name:    "tools",
			summary: "see, approve and hold the tools mcptray keeps from clients until approved",
			children: []*command{
				{name: "diff", args: "[SERVER [TOOL]]", summary: "list the held tools: why, flags for hidden instructions, and the change as a diff", help: toolsDiffHelp, flags: toolsDiffFlags},
				{name: "approve", args: "SERVER [TOOL]", summary: "approve a held tool as its server lists it now (SERVER alone: all of its held tools)", help: toolsApproveHelp, flags: toolsApproveFlags},
				{name: "hold", args: "SERVER TOOL", summary: "hold a tool back from every client until it is approved", help: toolsHoldHelp, flags: toolsHoldFlags},
			},
		},
		{
			name:    "up",
			args:    "[NAME...]",
			summary: "run the configured servers in the foreground, printing each state change",
			help:    upHelp,
			flags:   upFlags,
		},
	}
}
