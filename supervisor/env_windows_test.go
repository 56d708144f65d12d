package supervisor

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestMergeRegistryEnv(t *testing.T) {
	expand := func(s string) (string, error) {
		return strings.NewReplacer("%SystemRoot%", `C:\Windows`, "%USERPROFILE%", `C:\Users\me`).Replace(s), nil
	}
	sys := []regVar{
		{name: "Path", value: `%SystemRoot%\system32;C:\Program Files\nodejs`, expand: true},
		{name: "ComSpec", value: `%SystemRoot%\system32\cmd.exe`, expand: true},
		{name: "TEMP", value: `%SystemRoot%\TEMP`, expand: true},
		{name: "RAW", value: `%SystemRoot%`}, // REG_SZ: not expanded
	}
	user := []regVar{
		{name: "PATH", value: `%USERPROFILE%\AppData\Roaming\npm`, expand: true},
		{name: "temp", value: `%USERPROFILE%\AppData\Local\Temp`, expand: true},
	}
	got := mergeRegistryEnv(sys, user, expand)
	want := []string{
		`ComSpec=C:\Windows\system32\cmd.exe`,
		`RAW=%SystemRoot%`,
		`temp=C:\Users\me\AppData\Local\Temp`,
		`PATH=C:\Windows\system32;C:\Program Files\nodejs;C:\Users\me\AppData\Roaming\npm`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// TestRegistryEnvironment reads this machine's registry: there is a Path.
func TestRegistryEnvironment(t *testing.T) {
	env, err := loginShellEnv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p := envValue(env, "PATH"); !strings.Contains(strings.ToLower(p), `\system32`) {
		t.Errorf("registry Path %q lacks system32", p)
	}
}
