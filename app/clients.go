package app

import (
	"context"
	"os"
	"runtime"

	"mcptray/registry"
	"mcptray/registry/clients"
	"mcptray/supervisor"
)

// ClientOptions are the client options for this machine with every default:
// user scope, this OS, commands resolved on the login shell's PATH (what the
// desktop app uses).
func ClientOptions(ctx context.Context, env *Env) *clients.Options {
	o := &clients.Options{
		OS:        runtime.GOOS,
		Getenv:    os.Getenv,
		LookupEnv: env.LookupEnv,
		Secret:    (&LazySecrets{}).Secret, // read only when secrets are revealed
		Glob:      hostGlob,
		Resolve: func(cmd string) (string, error) {
			return supervisor.ResolveCommand(cmd, supervisor.LoginEnvironment(ctx))
		},
	}
	o.Home, _ = os.UserHomeDir()
	o.ProjectDir, _ = os.Getwd()
	return o
}

// MaskSecret and Masked are registry's, for the app's views.
var MaskSecret = registry.MaskSecret

const Masked = registry.Masked
