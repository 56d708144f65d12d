package wine

import (
	"errors"
	"sync"

	"golang.org/x/sys/windows"
)

// running looks for wine_get_version, an export only Wine's ntdll has.
var running = sync.OnceValue(func() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
})

func privilegeMissing(err error) bool { return errors.Is(err, windows.ERROR_PRIVILEGE_NOT_HELD) }
