package validate

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/arenabots/arena/harness/submission"
	"github.com/arenabots/arena/internal/version"
	"github.com/arenabots/arena/internal/words"
	"github.com/arenabots/arena/rules"
	"github.com/arenabots/arena/sandbox"
)

// nothingToRun says why a submission has no program to run: the failed
// checks that would have given it one.
func nothingToRun(rep *Report) string {
	var failed []string
	for _, c := range rep.Checks {
		if c.Status == Fail && (c.Name == "module" || c.Name == "executable" || c.Name == "build" || c.Name == "syntax") {
			failed = append(failed, c.Name)
		}
	}
	if len(failed) == 0 {
		return "there is no program to run"
	}
	return "there is no program to run (see the " + strings.Join(failed, " and ") + " check)"
}

// errorsAs finds a refusal of the submission reader in err's chain.
func errorsAs(err error, target **submission.Error) bool { return errors.As(err, target) }

// archiveFix is the advice for a refused archive, by the rule it broke.
func archiveFix(e *submission.Error) string {
	switch e.Kind {
	case submission.KindSymlink:
		return "replace the link with the file itself"
	case submission.KindPathEscape:
		return "zip the folder from inside it (cd bot && zip -r ../bot.zip .)"
	case submission.KindBomb, submission.KindTooLarge, submission.KindTooManyEntries:
		return "submit only the executable, its source and the README"
	case submission.KindEncrypted:
		return "zip without a password"
	case submission.KindDuplicate:
		return "zip each file once"
	}
	return "build the ZIP again with a standard zip tool"
}

// binaryChecks looks at the executable without running it.
func binaryChecks(rep *Report, entry string, exe []byte, facts *ImageFacts) {
	if submission.Classify(exe) == submission.Script {
		interpreterCheck(rep, entry, exe, facts)
		return
	}
	f, err := elf.NewFile(bytes.NewReader(exe))
	if err != nil {
		rep.add(Check{Name: "format", Status: Fail, Detail: fmt.Sprintf("%s is not a readable ELF file: %v", entry, err), Fix: "rebuild the executable"})
		return
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 || f.Class != elf.ELFCLASS64 {
		rep.add(Check{Name: "format", Status: Fail, Detail: fmt.Sprintf("%s is built for %s (%s), not x86-64", entry, f.Machine, f.Class),
			Fix: "build for Linux x86-64 on " + facts.System() + " (a Docker container of that system works on any machine)"})
		return
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		rep.add(Check{Name: "format", Status: Fail, Detail: fmt.Sprintf("%s is an ELF %s, not an executable", entry, f.Type), Fix: "link an executable"})
		return
	}
	rep.add(Check{Name: "format", Status: Pass, Detail: "ELF 64-bit x86-64 executable"})
	interp := ""
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			data := make([]byte, p.Filesz)
			p.ReadAt(data, 0)
			interp = string(bytes.TrimRight(data, "\x00"))
		}
	}
	if interp == "" {
		rep.add(Check{Name: "linking", Status: Pass, Detail: "statically linked: needs nothing from the image"})
		return
	}
	libs, _ := f.ImportedLibraries()
	rep.add(Check{Name: "linking", Status: Pass, Detail: fmt.Sprintf("dynamically linked (%s), needs %s", interp, strings.Join(libs, ", "))})
	if facts == nil {
		rep.add(Check{Name: "glibc", Status: Skip, Detail: "not checked: the runtime image was not probed"})
		rep.add(Check{Name: "libraries", Status: Skip, Detail: "not checked: the runtime image was not probed"})
		return
	}
	// glibc symbol versions.
	needs, _ := f.DynamicVersionNeeds()
	var newest, need string
	for _, n := range needs {
		for _, d := range n.Needs {
			if v, ok := strings.CutPrefix(d.Dep, "GLIBC_"); ok && version.Less(newest, v) {
				newest, need = v, n.Name
			}
		}
	}
	switch {
	case newest == "":
		rep.add(Check{Name: "glibc", Status: Pass, Detail: "no glibc symbol versions required"})
	case version.Less(facts.Glibc, newest):
		rep.add(Check{Name: "glibc", Status: Fail, Detail: fmt.Sprintf("needs GLIBC_%s (from %s); the runtime image has glibc %s", newest, need, facts.Glibc),
			Fix: "build on " + facts.System() + " (or older), or link statically"})
	default:
		rep.add(Check{Name: "glibc", Status: Pass, Detail: fmt.Sprintf("needs GLIBC_%s at most; the image has %s", newest, facts.Glibc)})
	}
	var missing []string
	for _, l := range append([]string{path.Base(interp)}, libs...) {
		if !facts.Libraries[l] {
			missing = append(missing, l)
		}
	}
	if len(missing) > 0 {
		rep.add(Check{Name: "libraries", Status: Fail, Detail: fmt.Sprintf("needs %s, which the runtime image lacks", strings.Join(missing, ", ")),
			Fix: "link those libraries statically, or bundle them into a one-file executable"})
	} else {
		rep.add(Check{Name: "libraries", Status: Pass, Detail: fmt.Sprintf("all %d shared libraries resolve in the runtime image", len(libs)+1)})
	}
}

// moduleChecks checks that the image offers what the game's adapter needs.
func moduleChecks(rep *Report, pack rules.Packager, facts *ImageFacts) {
	if facts == nil {
		rep.add(Check{Name: "interpreter", Status: Skip, Detail: "not checked: the runtime image was not probed"})
		return
	}
	var missing []string
	for _, n := range pack.Needs() {
		if !facts.HasCommand(n) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		rep.add(Check{Name: "interpreter", Status: Fail, Detail: "the runtime image lacks " + strings.Join(missing, ", "),
			Fix: "run this game with an image that offers " + strings.Join(pack.Needs(), ", ") + " (e.g. arena image build --base arena-testbase:trixie)"})
		return
	}
	rep.add(Check{Name: "interpreter", Status: Pass, Detail: "the runtime image offers " + strings.Join(pack.Needs(), ", ")})
}

// docChecks looks for the source and the README: a missing one fails when
// require names it, else it warns. A single file handed in (single) is told
// how to package it with its README; a bot with nothing to build (a
// script, a module) is not asked for build steps.
func docChecks(rep *Report, files []sandbox.File, require []string, single, nothingToBuild bool) {
	missing := func(doc string) Status {
		if slices.Contains(require, doc) {
			return Fail
		}
		return Warn
	}
	var sources []string
	var readme *sandbox.File
	for i, f := range files {
		base := strings.ToLower(path.Base(f.Name))
		if sourceExt[path.Ext(base)] {
			sources = append(sources, f.Name)
		}
		if base == "readme" || base == "readme.md" || base == "readme.txt" {
			if readme == nil || strings.Count(f.Name, "/") < strings.Count(readme.Name, "/") {
				readme = &files[i]
			}
		}
	}
	if len(sources) == 0 {
		rep.add(Check{Name: "source", Status: missing(rules.DocSource), Detail: "no source files found", Fix: "add every source file needed to build the bot"})
	} else {
		rep.add(Check{Name: "source", Status: Pass, Detail: fmt.Sprintf("%s (%s)", words.Plural(len(sources), "source file"), strings.Join(first(sources, 3), ", "))})
	}
	if readme == nil {
		c := Check{Name: "readme", Status: missing(rules.DocReadme), Detail: "no README.md or README.txt", Fix: "add a README with the algorithm, the build steps and the data file's name, format and purpose"}
		if single {
			name := files[0].Name
			base := strings.TrimSuffix(name, path.Ext(name))
			c.Detail = "a single file holds no README.md or README.txt"
			c.Fix = fmt.Sprintf("upload a ZIP instead, with %s and a README.md side by side at its top level (no folder around them): for example zip %s.zip %s README.md; the README says how the bot chooses its moves", name, base, name)
			if !nothingToBuild {
				c.Fix += ", how to build it"
			}
			c.Fix += " and the name, format and purpose of any data file it keeps"
		}
		rep.add(c)
		return
	}
	rep.add(Check{Name: "readme", Status: Pass, Detail: readme.Name})
	if !algorithmWords.Match(readme.Data) {
		rep.add(Check{Name: "readme: algorithm", Status: Warn, Detail: "the README does not seem to describe the algorithm", Fix: "say briefly how the bot chooses its moves"})
	}
	if !nothingToBuild && !buildWords.Match(readme.Data) {
		rep.add(Check{Name: "readme: build", Status: Warn, Detail: "the README does not seem to give build instructions", Fix: "give the commands that build the executable"})
	}
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(slices.Clone(s[:n]), "...")
	}
	return s
}

// interpreterCheck reads a script's #! line as Linux will when the bot is
// run (submission.Shebang): the program it names must be in the runtime
// image, and the line must name one program as Linux reads it.
func interpreterCheck(rep *Report, entry string, exe []byte, facts *ImageFacts) {
	interp, arg, _ := submission.Shebang(exe)
	fail := func(detail, fix string) {
		rep.add(Check{Name: "interpreter", Status: Fail, Detail: entry + ": " + detail, Fix: fix})
	}
	const envFix = "start the script with #!/usr/bin/env python3 (or the interpreter it needs), with nothing after the interpreter's name"
	switch {
	case interp == "":
		fail("its #! line names no interpreter", envFix)
		return
	case strings.ContainsRune(interp+arg, '\r'):
		fail(fmt.Sprintf("its #! line ends in a carriage return: Linux looks for %q", strings.TrimSpace(interp+" "+arg)),
			"save the script with Unix line endings (LF), or submit it as source without the #! line")
		return
	}
	prog := interp
	if path.Base(interp) == "env" {
		switch {
		case arg == "":
			fail("#!"+interp+" names no program for env to run", envFix)
			return
		case strings.HasPrefix(arg, "-S"):
			fields := strings.Fields(strings.TrimPrefix(arg, "-S"))
			if len(fields) == 0 {
				fail("#!"+interp+" -S names no program", envFix)
				return
			}
			prog = fields[0]
		case strings.ContainsAny(arg, " \t"):
			// Linux hands env the rest of the line as one argument.
			fail(fmt.Sprintf("#!%s %s: Linux passes %q to env as one word, and env finds no program of that name", interp, arg, arg),
				fmt.Sprintf("write #!/usr/bin/env -S %s, or name the interpreter by its path (#!/usr/bin/%s)", arg, arg))
			return
		default:
			prog = arg
		}
	}
	switch {
	case facts == nil:
		rep.add(Check{Name: "interpreter", Status: Skip, Detail: "no image facts"})
	case facts.HasCommand(prog):
		rep.add(Check{Name: "interpreter", Status: Pass, Detail: fmt.Sprintf("%s runs under %s, which the runtime image has", entry, prog)})
	default:
		rep.add(Check{Name: "interpreter", Status: Fail, Detail: fmt.Sprintf("%s needs %s, which the runtime image does not have", entry, prog),
			Fix: "use an interpreter the image has (python3, node...), or hand in source in a language of the event (arena languages), or a one-file executable built on " + facts.System()})
	}
}
