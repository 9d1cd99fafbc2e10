package submission

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/arenabots/arena/sandbox"
)

// RunName is the name of the file that is a submission's entry point by
// name, at its top (see PickEntry).
const RunName = "run"

// PickExecutable chooses the file that runs by the rules of PickEntry.
func PickExecutable(files []sandbox.File) (entry, why string, err error) {
	return PickEntry(files, "")
}

// PickEntry chooses the file that runs, and says by which rule (why):
//
//  1. named: the file the caller names (a path inside the submission; in a
//     ZIP or directory that wraps everything in one folder, a path inside that
//     folder works too). It must be an ELF executable or a #! script; a name
//     that is not in the submission is ErrEntryNotFound.
//  2. by name: a file called run at the top of the submission (or of the one
//     folder wrapping it), an ELF executable or a #! script.
//  3. the candidates are the ELF executables and #! scripts (ClassifyFile:
//     never a shared library or an object file). When any has the run bit
//     set, only those with it count. Of those, the one ELF executable; with
//     none, the one script.
//
// It refuses, naming the candidates, when the choice is ambiguous, and
// explains a Windows or macOS executable. The entry point chosen is made
// runnable as its author meant, in files itself: a script written on
// Windows (a byte order mark, CRLF line endings) is read as a Unix one,
// and why says so.
func PickEntry(files []sandbox.File, named string) (entry, why string, err error) {
	entry, why, err = pickEntry(files, named)
	if err == nil {
		why += runnable(files, entry)
	}
	return entry, why, err
}

func pickEntry(files []sandbox.File, named string) (entry, why string, err error) {
	if named != "" {
		return pickNamed(files, named)
	}
	top := topDir(files)
	for _, f := range files {
		if f.Name != top+RunName {
			continue
		}
		switch k := ClassifyFile(f.Name, f.Data); k {
		case ELF, Script:
			return f.Name, fmt.Sprintf("%s is the entry point by its name (a file called %s at the top of the submission)", f.Name, RunName), nil
		default:
			return "", "", fmt.Errorf("%s is the entry point by its name, but it is %s: make it an ELF executable or a script with a #! line", f.Name, describe(k))
		}
	}

	var elves, scripts, skipped []string // the candidates and the ELF files that are not programs
	var runELF, runScripts []string      // the candidates with the run bit set
	var pe, macho []string
	for _, f := range files {
		switch k := ClassifyFile(f.Name, f.Data); k {
		case ELF:
			elves = append(elves, f.Name)
			if f.Mode&0o111 != 0 {
				runELF = append(runELF, f.Name)
			}
		case Script:
			scripts = append(scripts, f.Name)
			if f.Mode&0o111 != 0 {
				runScripts = append(runScripts, f.Name)
			}
		case SharedLibrary, ObjectFile:
			skipped = append(skipped, fmt.Sprintf("%s (%s)", f.Name, describe(k)))
		case PE:
			pe = append(pe, f.Name)
		case MachO:
			macho = append(macho, f.Name)
		}
	}
	for _, names := range [][]string{elves, scripts, skipped, runELF, runScripts, pe, macho} {
		sort.Strings(names)
	}
	notes := ""
	if len(skipped) > 0 {
		notes = "; never the entry point: " + list(skipped)
	}
	const advice = "keep exactly one, or call the one that runs \"" + RunName + "\""

	if len(runELF)+len(runScripts) > 0 {
		if len(elves) > len(runELF) || len(scripts) > len(runScripts) {
			notes += "; without the run bit, not considered: " + list(without(append(append([]string(nil), elves...), scripts...), append(append([]string(nil), runELF...), runScripts...)))
		}
		switch {
		case len(runELF) == 1:
			w := fmt.Sprintf("%s is the only ELF executable with the run bit set", runELF[0])
			if len(runScripts) > 0 {
				noun := "script"
				if len(runScripts) > 1 {
					noun = "scripts"
				}
				w += fmt.Sprintf(" (an ELF executable comes before the %s %s; to run a script, call it %s)", noun, list(runScripts), RunName)
			}
			return runELF[0], w + notes, nil
		case len(runELF) > 1:
			return "", "", fmt.Errorf("%d ELF executables with the run bit set (%s): %s", len(runELF), strings.Join(runELF, ", "), advice)
		case len(runScripts) == 1:
			return runScripts[0], fmt.Sprintf("%s is the only script with a #! line and the run bit set, and no ELF executable has the run bit", runScripts[0]) + notes, nil
		default:
			return "", "", fmt.Errorf("no ELF executable with the run bit set and %d scripts with #! lines and the run bit (%s): %s", len(runScripts), strings.Join(runScripts, ", "), advice)
		}
	}

	// No candidate has the run bit (a ZIP made on Windows has none).
	switch {
	case len(elves) == 1:
		return elves[0], fmt.Sprintf("%s is the only ELF executable (no ELF executable or script has the run bit set)", elves[0]) + notes, nil
	case len(elves) > 1:
		return "", "", fmt.Errorf("%d ELF executables (%s): %s", len(elves), strings.Join(elves, ", "), advice)
	case len(scripts) == 1:
		return scripts[0], fmt.Sprintf("%s is the only script with a #! line and there is no ELF executable (no script has the run bit set)", scripts[0]) + notes, nil
	case len(scripts) > 1:
		return "", "", fmt.Errorf("no ELF executable and %d scripts with #! lines (%s): %s", len(scripts), strings.Join(scripts, ", "), advice)
	}
	if len(pe) > 0 {
		return "", "", fmt.Errorf("%s is a Windows executable; build the bot for Linux x86-64", pe[0])
	}
	if len(macho) > 0 {
		return "", "", fmt.Errorf("%s is a macOS executable; build the bot for Linux x86-64", macho[0])
	}
	if len(skipped) > 0 {
		return "", "", fmt.Errorf("%w; not programs: %s", ErrNoExecutable, list(skipped))
	}
	return "", "", ErrNoExecutable
}

// pickNamed is rule 1 of PickEntry.
func pickNamed(files []sandbox.File, named string) (entry, why string, err error) {
	named = strings.TrimPrefix(named, "./")
	var f *sandbox.File
	for _, want := range []string{named, topDir(files) + named} {
		for i := range files {
			if files[i].Name == want {
				f = &files[i]
				break
			}
		}
		if f != nil {
			break
		}
	}
	if f == nil {
		var names []string
		for _, f := range files {
			if k := ClassifyFile(f.Name, f.Data); k == ELF || k == Script {
				names = append(names, f.Name)
			}
		}
		sort.Strings(names)
		if len(names) == 0 {
			return "", "", fmt.Errorf("%w: no file %q in the submission, which holds no ELF executable or #! script", ErrEntryNotFound, named)
		}
		return "", "", fmt.Errorf("%w: no file %q in the submission (its ELF executables and #! scripts: %s)", ErrEntryNotFound, named, list(names))
	}
	switch k := ClassifyFile(f.Name, f.Data); k {
	case ELF, Script:
		return f.Name, fmt.Sprintf("%s was named as the entry point", f.Name), nil
	case PE:
		return "", "", fmt.Errorf("%s is a Windows executable; build the bot for Linux x86-64", f.Name)
	case MachO:
		return "", "", fmt.Errorf("%s is a macOS executable; build the bot for Linux x86-64", f.Name)
	default:
		return "", "", &notProgramError{name: f.Name, kind: k}
	}
}

// notProgramError is a named entry point that is not a program; Load
// builds it when it is a source file.
type notProgramError struct {
	name string
	kind Kind
}

func (e *notProgramError) Error() string {
	return fmt.Sprintf("%s was named as the entry point, but it is %s: name an ELF executable or a script with a #! line", e.name, describe(e.kind))
}

// topDir is the one folder, with its slash, that holds every file; "" when
// there is none.
func topDir(files []sandbox.File) string {
	dir := ""
	for i, f := range files {
		d, _, ok := strings.Cut(f.Name, "/")
		if !ok || (i > 0 && d != dir) {
			return ""
		}
		dir = d
	}
	if dir == "" {
		return ""
	}
	return dir + "/"
}

// list joins names for a message, the first few only.
func list(names []string) string {
	const most = 5
	if len(names) > most {
		return fmt.Sprintf("%s and %d more", strings.Join(names[:most], ", "), len(names)-most)
	}
	return strings.Join(names, ", ")
}

// without is the names of all that are not in some.
func without(all, some []string) []string {
	var out []string
	for _, n := range all {
		if !slices.Contains(some, n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// ErrNoExecutable is a submission that holds no executable at all.
var ErrNoExecutable = errors.New("no executable found: expected one ELF executable built for Linux x86-64 (or one script starting with #!)")

// ErrEntryNotFound is an entry point named (to PickEntry or Load) that
// is not a file of the submission.
var ErrEntryNotFound = errors.New("entry point not found")

// PickSource finds the one source file of a submission without an
// executable: the one at the top, else the only one anywhere.
func PickSource(files []sandbox.File, isSource func(string) bool) (string, error) {
	var top, all []string
	for _, f := range files {
		if !isSource(f.Name) {
			continue
		}
		all = append(all, f.Name)
		if !strings.Contains(f.Name, "/") {
			top = append(top, f.Name)
		}
	}
	sort.Strings(top)
	switch {
	case len(top) == 1:
		return top[0], nil
	case len(top) > 1:
		return "", fmt.Errorf("no executable and %d source files at the top (%s): hand in one source file, or one executable", len(top), strings.Join(top, ", "))
	case len(all) == 1:
		return all[0], nil
	}
	return "", ErrNoExecutable
}
