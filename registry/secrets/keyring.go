package secrets

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/zalando/go-keyring"
)

// osKeyring keeps each value as one entry of the OS keyring (service
// "mcptray", the key as the account). The keyrings cannot list a service's
// entries portably, so an index entry holds the keys.
type osKeyring struct{}

const indexKey = "mcptray-index"

func newKeyring() *osKeyring { return &osKeyring{} }

// available asks the keyring for an entry that is never stored: "not
// found" means it answers. It never starts a session bus, and gives up
// after wait: a keyring that does not answer is not there.
func (k *osKeyring) available(wait time.Duration) error {
	if err := sessionBusMissing(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		_, err := keyring.Get(Service, "mcptray-probe")
		done <- err
	}()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case err := <-done:
		if err == nil || errors.Is(err, keyring.ErrNotFound) {
			return nil
		}
		return fmt.Errorf("the OS keyring does not answer: %w", err)
	case <-t.C:
		// The probe goroutine is left to its D-Bus call; the store used
		// is the file.
		return fmt.Errorf("the OS keyring did not answer within %s", wait)
	}
}

func (k *osKeyring) Get(key string) (string, error) {
	v, err := keyring.Get(Service, key)
	if errors.Is(err, keyring.ErrNotFound) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("read %s from the OS keyring: %w", key, err)
	}
	return v, nil
}

func (k *osKeyring) Set(key, value string) error {
	if err := keyring.Set(Service, key, value); err != nil {
		return fmt.Errorf("store %s in the OS keyring: %w", key, err)
	}
	return k.editIndex(func(keys []string) []string {
		if !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
		return keys
	})
}

func (k *osKeyring) Delete(key string) error {
	err := keyring.Delete(Service, key)
	if errors.Is(err, keyring.ErrNotFound) {
		err = ErrNotFound
	} else if err != nil {
		return fmt.Errorf("remove %s from the OS keyring: %w", key, err)
	}
	if ierr := k.editIndex(func(keys []string) []string {
		return slices.DeleteFunc(keys, func(s string) bool { return s == key })
	}); ierr != nil {
		return ierr
	}
	return err
}

func (k *osKeyring) List(prefix string) ([]string, error) {
	keys, err := k.index()
	if err != nil {
		return nil, err
	}
	return withPrefix(keys, prefix), nil
}

func (k *osKeyring) Where() string { return "the OS keyring (" + keyringName + ")" }

func (k *osKeyring) index() ([]string, error) {
	v, err := keyring.Get(Service, indexKey)
	if errors.Is(err, keyring.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the OS keyring: %w", err)
	}
	var keys []string
	if err := json.Unmarshal([]byte(v), &keys); err != nil {
		return nil, nil // a damaged index only loses the listing, never a value
	}
	return keys, nil
}

func (k *osKeyring) editIndex(edit func([]string) []string) error {
	keys, err := k.index()
	if err != nil {
		return err
	}
	keys = edit(keys)
	slices.Sort(keys)
	b, _ := json.Marshal(keys)
	if err := keyring.Set(Service, indexKey, string(b)); err != nil {
		return fmt.Errorf("update the OS keyring's index: %w", err)
	}
	return nil
}
