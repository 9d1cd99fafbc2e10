package roster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/nats-io/nkeys"
)

// pubSuffix ends an enrolled worker's public key file, NAME.pub, in the
// workers directory.
const pubSuffix = ".pub"

// KeyFile is where worker's public key is kept in the workers directory dir.
func KeyFile(dir, worker string) string { return filepath.Join(dir, worker+pubSuffix) }

// validName is a worker's or a tournament's name: one token of a subject and
// of a stream name.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// CheckName says why name cannot name a worker, or nil.
func CheckName(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("worker name %q: use 1 to 64 letters, digits, '-' or '_', starting with a letter or digit", name)
	}
	return nil
}

// Enrolled reads the workers directory: each enrolled worker's public user
// key by name. A directory that does not exist enrolls nobody.
func Enrolled(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), pubSuffix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if err := CheckName(name); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, e.Name()), err)
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		key := strings.TrimSpace(string(data))
		if !nkeys.IsValidPublicUserKey(key) {
			return nil, fmt.Errorf("%s does not hold a worker's public key", filepath.Join(dir, e.Name()))
		}
		out[name] = key
	}
	return out, nil
}

// Names lists a map's keys in order.
func Names(workers map[string]string) []string {
	out := make([]string, 0, len(workers))
	for n := range workers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
