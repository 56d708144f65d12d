// Package realclients has no code of its own: its tests drive the real AI
// clients (Claude Code, Gemini CLI, Codex, GitHub Copilot CLI and Qwen Code, pinned in
// testdata/clients/package.json and installed by `make test` into
// .testclients/) against what `mcptray install`, `export --format cli` and
// `import` read and write, in throwaway home folders.
//
// The tests look for the clients in $MCPTRAY_TEST_CLIENTS (the Makefile sets
// it) or .testclients/node_modules. When they are missing the tests skip,
// except with CI=true, where they fail.
package realclients
