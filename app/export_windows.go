package app

import "path/filepath"

// hostGlob finds client folders with a wildcard in their path (the Claude
// Desktop of the Microsoft Store lives in %LOCALAPPDATA%\Packages\Claude_*).
var hostGlob = filepath.Glob
