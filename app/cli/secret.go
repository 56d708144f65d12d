package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"mcptray/app"
	"mcptray/registry/secrets"
)

const secretHelp = `A server's env, args, url and headers can say ${keyring:NAME}: the value is
read from the OS keyring (or mcptray's private file where there is none) when
the server starts, so servers.toml holds no secret.`

func secretName(args []string) (string, error) {
	if len(args) != 1 {
		return "", app.Usagef("name one secret (the value is never an argument: it would be in your shell history)")
	}
	if err := secrets.ValidName(args[0]); err != nil {
		return "", app.Usagef("%v", err)
	}
	return args[0], nil
}

// readSecret reads a value: from a terminal without echo, else the whole of
// stdin with one trailing newline removed.
func readSecret(env *app.Env, name string) (string, error) {
	if f, ok := env.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		b, err := readHidden(env.Stderr, f, fmt.Sprintf("Value for %s (not shown): ", name))
		if err != nil {
			return "", fmt.Errorf("read the value: %w", err)
		}
		return string(b), nil
	}
	b, err := io.ReadAll(bufio.NewReader(io.LimitReader(env.Stdin, 1<<20)))
	if err != nil {
		return "", fmt.Errorf("read the value from stdin: %w", err)
	}
	v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	return v, nil
}

// secretCommand is set, get and rm: one NAME argument and the store.
func secretCommand(fn func(env *app.Env, st secrets.Store, name string) error) func(fs *flag.FlagSet) runFunc {
	return func(fs *flag.FlagSet) runFunc {
		return func(ctx context.Context, env *app.Env, args []string) error {
			name, err := secretName(args)
			if err != nil {
				return err
			}
			st, err := app.OpenSecrets(env)
			if err != nil {
				return err
			}
			err = fn(env, st, name)
			if errors.Is(err, secrets.ErrNotFound) {
				return fmt.Errorf("no secret named %s in %s", name, st.Where())
			}
			return err
		}
	}
}

var (
	secretSetFlags = secretCommand(func(env *app.Env, st secrets.Store, name string) error {
		v, err := readSecret(env, name)
		if err != nil {
			return err
		}
		if v == "" {
			return errors.New("the value is empty: nothing stored")
		}
		if err := st.Set(secrets.SecretKey(name), v); err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "Stored %s in %s; refer to it as ${keyring:%s}.\n", name, st.Where(), name)
		return nil
	})
	secretGetFlags = secretCommand(func(env *app.Env, st secrets.Store, name string) error {
		v, err := st.Get(secrets.SecretKey(name))
		if err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, v)
		return nil
	})
	secretRmFlags = secretCommand(func(env *app.Env, st secrets.Store, name string) error {
		if err := st.Delete(secrets.SecretKey(name)); err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "Removed %s.\n", name)
		return nil
	})
)

func secretListFlags(fs *flag.FlagSet) runFunc {
	asJSON := fs.Bool("json", false, "print JSON")
	return func(ctx context.Context, env *app.Env, args []string) error {
		if len(args) > 0 {
			return app.Usagef("takes no arguments")
		}
		st, err := app.OpenSecrets(env)
		if err != nil {
			return err
		}
		keys, err := st.List(secrets.SecretPrefix)
		if err != nil {
			return err
		}
		names := []string{}
		for _, k := range keys {
			names = append(names, strings.TrimPrefix(k, secrets.SecretPrefix))
		}
		if *asJSON {
			return json.NewEncoder(env.Stdout).Encode(map[string]any{"store": st.Where(), "secrets": names})
		}
		if len(names) == 0 {
			fmt.Fprintf(env.Stdout, "No secrets in %s.\n", st.Where())
			return nil
		}
		for _, n := range names {
			fmt.Fprintln(env.Stdout, n)
		}
		fmt.Fprintf(env.Stderr, "(%d in %s)\n", len(names), st.Where())
		return nil
	}
}

// askYesNo asks a yes/no question on a terminal (default no); without a
// terminal the answer is no.
func askYesNo(env *app.Env, question string) bool {
	f, ok := env.Stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return false
	}
	fmt.Fprintf(env.Stderr, "%s [y/N] ", question)
	line, _ := bufio.NewReader(f).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes"
}
