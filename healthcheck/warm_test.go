package healthcheck

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// firstListAllocs connects a go-sdk client to the demo server (this test
// binary, in a process of its own) and returns the allocations of its
// first prompts/list, after prepareDecoders when prepared: what the SDK
// builds to decode the answer shows up here, once. Only this process's
// allocations count: the server's are its own.
func firstListAllocs(prepared bool) uint64 {
	ctx := context.Background()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=demo")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	if err := cs.Ping(ctx, nil); err != nil { // the connection's own first use
		panic(err)
	}
	prepareEncoders() // both sides: the requests are encoded alike
	if prepared {
		prepareDecoders()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := cs.ListPrompts(ctx, nil); err != nil {
		panic(err)
	}
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}

// TestPrepareFillsTheSDKsCache: prepareDecoders builds what the SDK itself
// decodes answers with, so a list after it allocates less than a first
// list without it. Each side runs in a fresh process: the caches are the
// process's.
func TestPrepareFillsTheSDKsCache(t *testing.T) {
	allocs := func(mode string) uint64 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"="+mode)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", mode, err, out)
		}
		n, err := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 64)
		if err != nil {
			t.Fatalf("%s printed %q", mode, out)
		}
		return n
	}
	cold, warm := allocs("first-list-cold"), allocs("first-list-prepared")
	t.Logf("allocations of the first prompts/list: %d without prepare, %d after it", cold, warm)
	if warm+100 > cold {
		t.Errorf("prepareDecoders saved %d allocations of the SDK's first decode of a list (cold %d, prepared %d); the SDK no longer decodes with what it prepares (segmentio/encoding/json)", int64(cold)-int64(warm), cold, warm)
	}
}

func printFirstListAllocs(prepared bool) int {
	fmt.Println(firstListAllocs(prepared))
	return 0
}
