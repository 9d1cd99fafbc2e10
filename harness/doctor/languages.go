package doctor

import (
	"fmt"
	"strings"

	"github.com/arenabots/arena/harness/langs"
	"github.com/arenabots/arena/harness/validate"
	"github.com/arenabots/arena/sandbox"
)

// languageCheck is the name of a language's row: "language .java".
func languageCheck(ext string) string { return "language " + ext }

// imagePackages says, for the built-in languages, what the runtime image's
// Dockerfile installs for them.
var imagePackages = map[string]string{
	".py":   "python3",
	".c":    "gcc and libc6-dev",
	".cpp":  "g++",
	".java": "default-jdk-headless (javac, jar and java)",
	".js":   "nodejs",
}

// languageRow says what the image offers a language: its toolchain's
// version, or what is missing with a fix. A missing toolchain is a
// warning: bots handed in as that language would not build or run.
func languageRow(l langs.Language, tc validate.Toolchain, found bool) sandbox.Check {
	c := sandbox.Check{Name: languageCheck(l.Ext), Status: sandbox.OK, Detail: tc.Version}
	if found && tc.OK() {
		return c
	}
	c.Status = sandbox.Warn
	var parts []string
	switch {
	case !found:
		parts = append(parts, "the image probe did not ask about it")
	default:
		if len(tc.Missing) > 0 {
			parts = append(parts, "no "+strings.Join(tc.Missing, ", ")+" in the image")
		}
		if tc.Error != "" {
			parts = append(parts, tc.Error)
		} else if tc.Version != "" {
			parts = append(parts, tc.Version)
		}
	}
	c.Detail = strings.Join(parts, "; ")
	def, builtIn := langs.Default()[l.Ext]
	if pkgs := imagePackages[l.Ext]; builtIn && pkgs != "" && def.Version == l.Version {
		c.Fix = fmt.Sprintf("bots handed in as %s source would not build or run: rebuild the runtime image with arena image build (its Dockerfile installs %s)", l.Ext, pkgs)
	} else {
		c.Fix = fmt.Sprintf("bots handed in as %s source would not build or run: install the toolchain (%s) in the runtime image, e.g. with a Dockerfile FROM it, or drop %s from the languages file", l.Ext, strings.Join(validate.Programs(l), ", "), l.Ext)
	}
	return c
}

// languageRows are the rows of every language of the table, from what the
// image probe found (f nil: the probe did not run, the rows are skipped
// with why).
func languageRows(langs langs.Languages, f *validate.ImageFacts, why string) []sandbox.Check {
	var out []sandbox.Check
	for _, ext := range langs.Exts() {
		if f == nil {
			out = append(out, sandbox.Check{Name: languageCheck(ext), Status: sandbox.Skip, Detail: why})
			continue
		}
		tc, found := f.Toolchains[ext]
		out = append(out, languageRow(langs[ext], tc, found))
	}
	return out
}
