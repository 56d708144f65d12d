package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

// maxBundle bounds a bundle download.
const maxBundle = 1 << 30

// FetchBundle downloads an MCP bundle package into dir and checks it
// against the fileSha256 the registry lists; it returns the file's path
// (remove it when done). A mismatch leaves no file behind.
func (c *Client) FetchBundle(ctx context.Context, pk *Package, dir string) (string, error) {
	if pk.RegistryType != "mcpb" {
		return "", fmt.Errorf("%s is a %s package, not an MCP bundle", pk.Identifier, pk.RegistryType)
	}
	want := strings.ToLower(pk.FileSHA256)
	if len(want) != 64 {
		return "", fmt.Errorf("%s: no fileSha256 to check the download against", pk.Identifier)
	}
	if !strings.HasPrefix(pk.Identifier, "https://") && !strings.HasPrefix(pk.Identifier, "http://") {
		return "", fmt.Errorf("%s: an MCP bundle's identifier must be its download URL", pk.Identifier)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, pk.Identifier, nil)
	if err != nil {
		return "", fmt.Errorf("download %s: %w", pk.Identifier, err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("download %s: %w", pk.Identifier, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("download %s: %s", pk.Identifier, resp.Status)
	}
	f, err := os.CreateTemp(dir, "download-*.mcpb")
	if err != nil {
		return "", fmt.Errorf("download %s: %w", pk.Identifier, err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(resp.Body, maxBundle+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > maxBundle {
		err = fmt.Errorf("larger than %d MiB", maxBundle>>20)
	}
	if err == nil {
		if got := hex.EncodeToString(h.Sum(nil)); got != want {
			err = fmt.Errorf("its SHA-256 is %s, not the %s the registry lists: it is not the file the publisher listed", got, want)
		}
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("download %s: %w", pk.Identifier, err)
	}
	return f.Name(), nil
}
