package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// designDoc is the document whose names TestDesignDocNamesExist checks.
const designDoc = "docs/DESIGN.md"

var (
	// docCode matches a code span: `…`.
	docCode = regexp.MustCompile("`([^`\n]+)`")
	// docPath matches a repository path of a Go file or a package folder
	// in a code span: broker/ack.go, handler/guard.
	docPath = regexp.MustCompile(`^([a-z][a-z0-9_]*/)+[a-z0-9_]+(\.go)?/?$|^[a-z][a-z0-9_]*\.go$`)
	// docQualified matches pkg.Name or pkg.Type.Method in a code span,
	// optionally followed by a call's parentheses.
	docQualified = regexp.MustCompile(`^([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*)(?:\.([A-Za-z][A-Za-z0-9_]*))?(?:\(.*\))?$`)
)

// TestDesignDocNamesExist: every file or folder docs/DESIGN.md names in a
// code span exists, and every qualified Go name it gives (codec.DecodeFrame,
// broker.Broker.Ack) is declared in that package of this repository, so the
// walk through the code cannot drift from the code silently.
func TestDesignDocNamesExist(t *testing.T) {
	text, err := os.ReadFile(designDoc)
	require.NoError(t, err)
	decls := map[string]map[string]bool{} // package dir → declared names ("Name", "Type.Method")
	checked := 0
	for _, m := range docCode.FindAllStringSubmatch(string(text), -1) {
		span := strings.TrimSpace(m[1])
		if docPath.MatchString(span) {
			checked++
			_, err := os.Stat(strings.TrimSuffix(span, "/"))
			require.NoError(t, err, "%s names %q, which does not exist", designDoc, span)
			continue
		}
		q := docQualified.FindStringSubmatch(span)
		if q == nil {
			continue
		}
		dir := packageDir(q[1])
		if dir == "" {
			continue // a package of the standard library or a dependency
		}
		if decls[dir] == nil {
			decls[dir] = declaredNames(t, dir)
		}
		name := q[2]
		if q[3] != "" {
			name += "." + q[3]
		}
		checked++
		require.True(t, decls[dir][name], "%s names %s, which package %s does not declare", designDoc, span, dir)
	}
	require.Greater(t, checked, 40, "the check found too few names to be checking anything")
}

// packageDir is the folder of the repository package called name (its last
// path element), or "" when the repository has none.
func packageDir(name string) string {
	var found string
	_ = filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.HasPrefix(p, "testdata") || strings.HasPrefix(p, ".") && p != "." || p == "bin" {
			return filepath.SkipDir
		}
		if filepath.Base(p) == name && found == "" {
			found = p
		}
		return nil
	})
	return found
}

// declaredNames parses the non-test Go files of dir and returns its
// top-level names, its methods as "Type.Method" and its struct fields as
// "Type.Field".
func declaredNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	names := map[string]bool{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names[d.Name.Name] = true
					continue
				}
				typ := d.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					names[id.Name+"."+d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, fld := range st.Fields.List {
								for _, n := range fld.Names {
									names[s.Name.Name+"."+n.Name] = true
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					}
				}
			}
		}
	}
	return names
}
