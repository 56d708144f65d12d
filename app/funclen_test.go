package app

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"mcptray/internal/wine"
)

// maxFuncLines is the longest a function of the product may be: past it a
// function does several things that want names of their own.
const maxFuncLines = 120

// tables are the functions that are data, not steps: the command table.
var tables = map[string]bool{"app/cli/commands.go init": true}

// TestNoLongFunctions holds every function outside tests and tables to
// maxFuncLines.
func TestNoLongFunctions(t *testing.T) {
	wine.Skip(t, "reads the source tree, which is checked where the tests are built")
	root := ".."
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" || d.Name() == "dist") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || tables[rel+" "+fn.Name.Name] {
				continue
			}
			if n := fset.Position(fn.Body.End()).Line - fset.Position(fn.Body.Pos()).Line - 1; n > maxFuncLines {
				t.Errorf("%s: %s is %d lines long (at most %d): split it into functions that each do one thing", fset.Position(fn.Pos()), fn.Name.Name, n, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
