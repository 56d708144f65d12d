package secrets

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"mcptray/registry"
)

// FileStore keeps values in one JSON file, mode 0600 in a 0700 folder: the
// store for machines without an OS keyring. It is not encrypted; its
// protection is the file's mode, as for ~/.ssh keys without a passphrase.
type FileStore struct {
	Path string
}

type fileData struct {
	Note    string            `json:"note"`
	Entries map[string]string `json:"entries"`
}

const fileNote = "mcptray's secrets (mcptray secret, mcptray auth); keep this file private"

func (f *FileStore) read() (map[string]string, error) {
	b, err := registry.ReadFile(f.Path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read secrets: %w", err)
	}
	return f.parse(b)
}

func (f *FileStore) parse(b []byte) (map[string]string, error) {
	if b == nil {
		return map[string]string{}, nil
	}
	if fi, err := os.Stat(f.Path); err == nil && othersMayRead(fi) {
		return nil, fmt.Errorf("%s is readable by others (mode %04o): run chmod 600 %s", f.Path, fi.Mode().Perm(), f.Path)
	}
	var d fileData
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s is damaged (%v): move it aside and store the secrets again", f.Path, err)
	}
	if d.Entries == nil {
		d.Entries = map[string]string{}
	}
	return d.Entries, nil
}

// edit changes the entries under the file's lock (other mcptray processes
// may write it at the same time: the app refreshing a token, a command).
func (f *FileStore) edit(change func(m map[string]string) error) error {
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
		return fmt.Errorf("save secrets: %w", err)
	}
	_, err := registry.EditFile(f.Path, &registry.WriteOptions{Perm: 0o600, Narrow: true}, func(old []byte) ([]byte, error) {
		m, err := f.parse(old)
		if err != nil {
			return nil, err
		}
		if err := change(m); err != nil {
			return nil, err
		}
		b, err := json.MarshalIndent(fileData{Note: fileNote, Entries: m}, "", "  ")
		return append(b, '\n'), err
	})
	return err
}

func (f *FileStore) Get(key string) (string, error) {
	m, err := f.read()
	if err != nil {
		return "", err
	}
	v, ok := m[key]
	if !ok {
		return "", ErrNotFound
	}
	return v, nil
}

func (f *FileStore) Set(key, value string) error {
	return f.edit(func(m map[string]string) error {
		m[key] = value
		return nil
	})
}

func (f *FileStore) Delete(key string) error {
	return f.edit(func(m map[string]string) error {
		if _, ok := m[key]; !ok {
			return ErrNotFound
		}
		delete(m, key)
		return nil
	})
}

func (f *FileStore) List(prefix string) ([]string, error) {
	m, err := f.read()
	if err != nil {
		return nil, err
	}
	return withPrefix(slices.Collect(maps.Keys(m)), prefix), nil
}

func (f *FileStore) Where() string { return f.Path }
