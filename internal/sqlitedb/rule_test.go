package sqlitedb

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// openers are the calls that open a file by its name: one of them on a
// database file, closed again, drops the process's locks on it.
var openers = map[string][]string{
	"os":      {"Open", "OpenFile", "ReadFile", "WriteFile", "Create", "OpenInRoot", "DirFS"},
	"syscall": {"Open", "Openat"},
	"unix":    {"Open", "Openat", "Openat2"},
}

// The rule, read off the module's own code: no code but this package opens
// a SQLite database (sql.Open, or the driver imported), and no code opens a
// file by a name that names a database (an identifier DBFile, a literal
// ending in .db, -wal, -shm or -journal) outside SQLite. The locks check at
// Close catches a path the tests walk; this one catches what they do not.
func TestOnlySQLiteOpensADatabaseFile(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	self, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := 0
	var broken []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == self || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		imports := map[string]string{} // local name -> import path
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			name := filepath.Base(path)
			if im.Name != nil {
				name = im.Name.Name
			}
			imports[name] = path
			if path == "modernc.org/sqlite" {
				broken = append(broken, fset.Position(im.Pos()).String()+": imports the SQLite driver: open databases through sqlitedb")
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			path := imports[pkg.Name]
			if path == "database/sql" && sel.Sel.Name == "Open" {
				broken = append(broken, fset.Position(call.Pos()).String()+": sql.Open: open databases through sqlitedb")
				return true
			}
			for _, fn := range openers[filepath.Base(path)] {
				if fn == sel.Sel.Name && (path == "os" || path == "syscall" || path == "golang.org/x/sys/unix") && namesADatabase(call.Args) {
					broken = append(broken, fset.Position(call.Pos()).String()+": "+pkg.Name+"."+fn+" of a database file: only SQLite opens one")
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d files of the module: the walk missed its code", files)
	}
	for _, b := range broken {
		t.Error(b)
	}
}

// namesADatabase says whether an argument mentions a database's file.
func namesADatabase(args []ast.Expr) bool {
	found := false
	for _, a := range args {
		ast.Inspect(a, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Ident:
				found = found || n.Name == "DBFile"
			case *ast.BasicLit:
				if n.Kind == token.STRING {
					v, _ := strconv.Unquote(n.Value)
					for _, suf := range []string{".db", ".db-wal", ".db-shm", ".db-journal", ".sqlite"} {
						found = found || strings.HasSuffix(v, suf)
					}
				}
			}
			return !found
		})
	}
	return found
}

// The rule's reader finds what it looks for: each of these breaks it.
func TestTheRuleSeesABreach(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		`filepath.Join(dir, DBFile)`,
		`filepath.Join(s.Dir, event.DBFile)`,
		`"event.db"`,
		`dir + "/tournament.db-wal"`,
	} {
		e, err := parser.ParseExpr(src)
		if err != nil {
			t.Fatal(err)
		}
		if !namesADatabase([]ast.Expr{e}) {
			t.Errorf("%s is not seen as a database's name", src)
		}
	}
	for _, src := range []string{`filepath.Join(dir, "event.toml")`, `p`, `"Thumbs.db.txt"`} {
		e, err := parser.ParseExpr(src)
		if err != nil {
			t.Fatal(err)
		}
		if namesADatabase([]ast.Expr{e}) {
			t.Errorf("%s is seen as a database's name", src)
		}
	}
}
