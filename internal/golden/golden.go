// Package golden pins the formats arena writes: a test compares what it wrote
// with a file under testdata/ (rewritten with -update), checks that its sample
// values set every field, and that every JSON key is camelCase. It is for
// tests only and must never be imported by code that ships.
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Check compares got with testdata/name, or rewrites that file under
// -update. doc names the document that describes the format.
func Check(t testing.TB, name string, got []byte, doc string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (create it with: go test -run '%s' -update, in this package's directory)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s changed (%s): what arena writes is not what it was.\n"+
			"If the change is intended, update %s and rewrite the golden file with\n"+
			"  go test -run '%s' -update   (in this package's directory)", p, FirstDiff(got, want), doc, t.Name())
	}
}

// FirstDiff names the first line where got and want differ.
func FirstDiff(got, want []byte) string {
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := range max(len(g), len(w)) {
		var a, b []byte
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if !bytes.Equal(a, b) {
			return fmt.Sprintf("line %d: got %q, want %q", i+1, a, b)
		}
	}
	return "same lines"
}

// Unset lists the fields, by path, that are zero in every one of values, which
// must all be of one struct type. Fields tagged json:"-" are skipped; pointers,
// slices and maps are entered (a map entry with a zero value counts as unset).
func Unset(values ...any) []string {
	all, set := map[string]bool{}, map[string]bool{}
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem(), path)
			}
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i), path+"[]")
			}
		case reflect.Map:
			for _, k := range v.MapKeys() {
				p := path + "[" + k.String() + "]"
				all[p] = true
				if !v.MapIndex(k).IsZero() {
					set[p] = true
				}
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				f := v.Type().Field(i)
				if !f.IsExported() || f.Tag.Get("json") == "-" {
					continue
				}
				p := path + "." + f.Name
				all[p] = true
				if !v.Field(i).IsZero() {
					set[p] = true
				}
				walk(v.Field(i), p)
			}
		}
	}
	for _, v := range values {
		walk(reflect.ValueOf(v), reflect.TypeOf(v).Name())
	}
	var out []string
	for p := range all {
		if !set[p] {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

var jsonKey = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)

// BadKeys lists the fields of t, and of every struct type it reaches, whose
// JSON key is not camelCase or is left to the Go field name (no tag).
func BadKeys(t reflect.Type) []string {
	var out []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			walk(t.Elem())
			return
		case reflect.Struct:
		default:
			return
		}
		if seen[t] {
			return
		}
		seen[t] = true
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			tag, ok := f.Tag.Lookup("json")
			name := strings.Split(tag, ",")[0]
			switch {
			case tag == "-":
				continue
			case f.Anonymous && name == "":
				// An embedded struct's fields are promoted into the record.
			case !ok || name == "":
				out = append(out, t.Name()+"."+f.Name+": no JSON key (the Go name would be used)")
			case !jsonKey.MatchString(name):
				out = append(out, t.Name()+"."+f.Name+": JSON key "+name+" is not camelCase")
			}
			walk(f.Type)
		}
	}
	walk(t)
	return out
}
