package app

import (
	"context"

	"mcptray/registry"
	"mcptray/supervisor"
)

// newGUIEngine runs the engine in this process.
func newGUIEngine(ctx context.Context, env *Env, cfg *registry.Config) (Engine, func(context.Context), error) {
	sup := supervisor.New(cfg.Servers, engineOptions(cfg))
	return sup, func(ctx context.Context) { sup.Run(ctx) }, nil
}
