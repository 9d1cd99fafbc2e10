package submission

import (
	"bytes"
	"strings"

	"github.com/arenabots/arena/sandbox"
)

// bom is the UTF-8 byte order mark some Windows editors write first.
var bom = []byte{0xEF, 0xBB, 0xBF}

// hasShebang says whether data starts with a #! line, after a byte order
// mark when there is one.
func hasShebang(data []byte) bool {
	return bytes.HasPrefix(bytes.TrimPrefix(data, bom), []byte("#!"))
}

// unixScript is a script as its author meant it when it was written on
// Windows: a byte order mark before its #! line dropped, and, when its #!
// line ends in a carriage return, every CRLF read as LF. Linux would look
// for an interpreter called "python3\r", or not see the #! at all. note
// says what changed ("" for nothing).
func unixScript(data []byte) (out []byte, note string) {
	var notes []string
	if bytes.HasPrefix(data, bom) && bytes.HasPrefix(data[len(bom):], []byte("#!")) {
		data = data[len(bom):]
		notes = append(notes, "a UTF-8 byte order mark before its #! line was dropped")
	}
	if !bytes.HasPrefix(data, []byte("#!")) {
		return data, ""
	}
	if line, _, _ := bytes.Cut(data, []byte("\n")); bytes.HasSuffix(line, []byte("\r")) {
		data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
		notes = append(notes, "its Windows line endings (CRLF) are read as Unix ones (LF)")
	}
	if len(notes) == 0 {
		return data, ""
	}
	return data, "it was written on Windows: " + strings.Join(notes, ", and ")
}

// runnable makes the entry point runnable as its author meant, in place:
// a script written on Windows is read as a Unix one (unixScript). It
// returns what was done, for the choice's explanation.
func runnable(files []sandbox.File, entry string) string {
	for i := range files {
		if files[i].Name != entry {
			continue
		}
		data, note := unixScript(files[i].Data)
		if note == "" {
			return ""
		}
		files[i].Data = data
		return "; " + note
	}
	return ""
}

// Shebang reads a script's #! line as Linux does: the interpreter up to
// the first space or tab, and at most one argument, the rest of the line
// with spaces and tabs trimmed at both ends. A carriage return is no space
// to Linux: it stays in the interpreter's name or its argument. ok is false
// when data has no #! line.
func Shebang(data []byte) (interp, arg string, ok bool) {
	if !bytes.HasPrefix(data, []byte("#!")) {
		return "", "", false
	}
	line, _, _ := bytes.Cut(data[2:], []byte("\n"))
	s := strings.Trim(string(line), " \t")
	interp, arg, _ = strings.Cut(s, " ")
	if i := strings.IndexByte(interp, '\t'); i >= 0 {
		interp, arg = interp[:i], interp[i+1:]+" "+arg
	}
	return interp, strings.Trim(arg, " \t"), true
}
