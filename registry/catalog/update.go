package catalog

import (
	"context"
	"strconv"
	"strings"
)

// Update is what the registry offers for an entry added from it.
type Update struct {
	Name      string    // the registry name
	Installed string    // the version the entry runs
	Latest    *Response // the registry's latest version
	Newer     bool      // Latest is newer than Installed
}

// CheckUpdate asks the registry for the latest version of the server an
// entry's source names ("registry:NAME@VERSION").
func (c *Client) CheckUpdate(ctx context.Context, source string) (*Update, error) {
	name, installed, err := ParseSource(source)
	if err != nil {
		return nil, err
	}
	latest, err := c.Get(ctx, name, "latest")
	if err != nil {
		return nil, err
	}
	return &Update{Name: name, Installed: installed, Latest: latest,
		Newer: CompareVersions(latest.Server.Version, installed) > 0}, nil
}

// CompareVersions orders two versions the way semantic versioning does
// (1.10.0 after 1.9.0, a pre-release before its release); versions that
// are not semantic compare as text, which is what the registry itself can
// only do with them.
func CompareVersions(a, b string) int {
	ca, pa, okA := splitSemver(a)
	cb, pb, okB := splitSemver(b)
	if !okA || !okB {
		return strings.Compare(a, b)
	}
	for i := range 3 {
		if ca[i] != cb[i] {
			if ca[i] < cb[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case pa == pb:
		return 0
	case pa == "":
		return 1
	case pb == "":
		return -1
	}
	return comparePre(pa, pb)
}

func splitSemver(v string) (core [3]int, pre string, ok bool) {
	v = strings.TrimPrefix(v, "v")
	v, _, _ = strings.Cut(v, "+")
	v, pre, _ = strings.Cut(v, "-")
	parts := strings.Split(v, ".")
	if len(parts) > 3 || len(parts) == 0 {
		return core, "", false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return core, "", false
		}
		core[i] = n
	}
	return core, pre, true
}

func comparePre(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		na, ea := strconv.Atoi(as[i])
		nb, eb := strconv.Atoi(bs[i])
		switch {
		case ea == nil && eb == nil && na != nb:
			if na < nb {
				return -1
			}
			return 1
		case ea == nil && eb != nil:
			return -1
		case ea != nil && eb == nil:
			return 1
		case as[i] != bs[i]:
			return strings.Compare(as[i], bs[i])
		}
	}
	return len(as) - len(bs)
}
