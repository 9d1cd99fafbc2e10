package submission

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// BotArg is a BOT argument of the command line read as a name and a path.
type BotArg struct {
	Name string // the bot's name in standings, reports and transcripts
	Path string // the executable, directory, ZIP or source file
	// Given says the name was given (NAME=PATH); otherwise it comes from
	// the path (DefaultName), or from its parent directories when two paths
	// give the same one.
	Given bool
}

// safeName is a name a bot may be given: it ends up in directory and
// container names, so it is short and plain.
var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// CheckBotName refuses a name that is not a safe bot name.
func CheckBotName(name string) error {
	if !safeName.MatchString(name) {
		return fmt.Errorf("%q is not a usable bot name: want 1 to 64 letters, digits, '_', '-' or '.', starting with a letter or a digit", name)
	}
	return nil
}

// ParseBotArg reads one BOT argument: PATH, or NAME=PATH to name the bot. A
// path may hold '=': a file that exists under the whole argument is that
// file, and only a safe name before the first '=' names the bot (anything
// else before it is part of a path).
func ParseBotArg(arg string) (BotArg, error) {
	if _, err := os.Stat(arg); err == nil {
		return BotArg{Name: DefaultName(arg), Path: arg}, nil
	}
	name, p, ok := strings.Cut(arg, "=")
	if !ok {
		return BotArg{Name: DefaultName(arg), Path: arg}, nil
	}
	if err := CheckBotName(name); err != nil {
		if _, serr := os.Stat(p); serr == nil && p != "" {
			// The part after '=' is a bot: the part before was meant as
			// its name.
			return BotArg{}, fmt.Errorf("%s: %w", arg, err)
		}
		return BotArg{Name: DefaultName(arg), Path: arg}, nil
	}
	if p == "" {
		return BotArg{}, fmt.Errorf("%s: no path after %s=", arg, name)
	}
	return BotArg{Name: name, Path: p, Given: true}, nil
}

// DefaultName is the name a bot gets from its path: a file's name without
// its extension, a directory's name.
func DefaultName(p string) string {
	base := filepath.Base(filepath.Clean(p))
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		return base
	}
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// NameBots reads BOT arguments (ParseBotArg) and gives every bot a distinct
// name. A given name stands; two bots given the same name are refused. Bots
// whose paths give the same name (teamA/bot.py, teamB/bot.py) are named by
// their parent directories instead (teamA, teamB), with as many of them as
// it takes (a-x/bot.py and b-x/bot.py are a-x and b-x; the separator is '-').
// One path given twice is one bot under one name (a bot may play itself);
// bots that no directory tells apart are refused, asking for NAME=PATH.
func NameBots(args []string) ([]BotArg, error) {
	out := make([]BotArg, len(args))
	keys := make([]string, len(args)) // the file each argument names
	for i, a := range args {
		b, err := ParseBotArg(a)
		if err != nil {
			return nil, err
		}
		out[i] = b
		if keys[i], err = filepath.Abs(b.Path); err != nil {
			keys[i] = filepath.Clean(b.Path)
		}
	}
	// Given names first: they are not changed.
	given := map[string]int{}
	for i, b := range out {
		if !b.Given {
			continue
		}
		if j, dup := given[b.Name]; dup && keys[j] != keys[i] {
			return nil, fmt.Errorf("two bots are named %q (%s and %s); give them different names", b.Name, args[j], args[i])
		}
		given[b.Name] = i
	}
	// Then the names paths give, each group of paths that give the same
	// name (or a given one) told apart by their directories.
	groups := map[string][]int{}
	var order []string
	for i, b := range out {
		if b.Given {
			continue
		}
		if _, seen := groups[b.Name]; !seen {
			order = append(order, b.Name)
		}
		groups[b.Name] = append(groups[b.Name], i)
	}
	taken := func(name string, key string) bool {
		if j, ok := given[name]; ok && keys[j] != key {
			return true
		}
		return false
	}
	final := map[string]string{} // name -> the file it names
	for _, name := range order {
		idx := groups[name]
		files := map[string]bool{}
		for _, i := range idx {
			files[keys[i]] = true
		}
		if len(files) == 1 && !taken(name, keys[idx[0]]) {
			final[name] = keys[idx[0]]
			continue
		}
		named, err := byDirectory(idx, keys, func(n, key string) bool {
			if taken(n, key) {
				return true
			}
			if f, ok := final[n]; ok && f != key {
				return true
			}
			_, other := groups[n]
			return other && n != name
		})
		if err != nil {
			var paths []string
			for _, i := range idx {
				paths = append(paths, args[i])
			}
			return nil, fmt.Errorf("%s would all be named %q, and their directories do not tell them apart; name them with NAME=PATH", strings.Join(paths, ", "), name)
		}
		for _, i := range idx {
			out[i].Name = named[keys[i]]
			final[out[i].Name] = keys[i]
		}
	}
	return out, nil
}

// byDirectory names each file of the group by its parent directories: the
// fewest, counted up from the file, that give every file a distinct safe
// name that busy does not refuse.
func byDirectory(idx []int, keys []string, busy func(name, key string) bool) (map[string]string, error) {
	dirs := map[string][]string{}
	most := 0
	for _, i := range idx {
		d := strings.Split(strings.Trim(filepath.ToSlash(filepath.Dir(keys[i])), "/"), "/")
		dirs[keys[i]] = d
		most = max(most, len(d))
	}
	for depth := 1; depth <= most; depth++ {
		names := map[string]string{} // file -> name
		used := map[string]string{}  // name -> file
		ok := true
		for key, d := range dirs {
			part := d[max(0, len(d)-depth):]
			name := strings.Trim(unsafeNameChars.ReplaceAllString(strings.Join(part, "-"), "-"), "-.")
			if f, dup := used[name]; (dup && f != key) || CheckBotName(name) != nil || busy(name, key) {
				ok = false
				break
			}
			names[key], used[name] = name, key
		}
		if ok {
			return names, nil
		}
	}
	return nil, fmt.Errorf("no directory tells them apart")
}

var unsafeNameChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)
