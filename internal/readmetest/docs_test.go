package readmetest

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arenabots/arena/internal/dockertest"
)

// notRunnable are the commands the documents show that cannot run as
// written, with the reason. Every other command is run.
var notRunnable = map[string]string{
	"bash scripts/quickstart.sh": "sets the machine up (a Docker engine, bin/ in the checkout, the runtime image); what it then builds is built here as make builds it, and the match it plays is README's first",
	"bash scripts/test.sh":       "runs the tests, this one among them",
	"arena image testbase":       "builds the offline test base with debootstrap (root, minutes); the tests run on the one scripts/test.sh built",

	"arena image build [--base IMAGE]":       "IMAGE is a placeholder",
	"arena validate SUBMISSION...":           "SUBMISSION... is a placeholder",
	"arena match --white BOT --black BOT":    "BOT is a placeholder",
	"arena match ... | head":                 "... is a placeholder",
	"arena tournament --out DIR BOT...":      "DIR and BOT... are placeholders",
	"arena standings DIR":                    "DIR is a placeholder",
	"arena duel --out DIR A B":               "DIR, A and B are placeholders",
	"arena enroll --out DIR NAME":            "DIR and NAME are placeholders",
	"arena worker --creds FILE --join URL":   "FILE and URL are placeholders",
	"arena replay MATCH":                     "MATCH is a placeholder",
	"arena export --format pgn MATCH":        "MATCH is a placeholder",
	"arena rerun MATCH --ply N --bot BOT":    "MATCH, N and BOT are placeholders",
	"arena view MATCH":                       "MATCH is a placeholder",
	"arena rules explain [--game G]":         "G is a placeholder",
	"arena rules perft --game G --depth N":   "G and N are placeholders",
	"arena rules legal STATE.json":           "STATE.json is a placeholder",
	"arena rules check STATE.json MOVE.json": "STATE.json and MOVE.json are placeholders",

	"arena serve --event DIR":                       "DIR is a placeholder",
	"arena event init DIR --game G":                 "DIR and G are placeholders",
	"arena event teams import DIR FILE.csv":         "DIR and FILE.csv are placeholders",
	"arena event admin-token DIR":                   "DIR is a placeholder",
	"arena event backup DIR OUT":                    "DIR and OUT are placeholders",
	"arena event ladder DIR":                        "DIR is a placeholder",
	"arena event close DIR":                         "DIR is a placeholder",
	"arena event reopen DIR":                        "DIR is a placeholder",
	"arena workers list DIR":                        "DIR is a placeholder",
	"arena workers readmit DIR NAME":                "DIR and NAME are placeholders",
	"arena event final DIR":                         "DIR is a placeholder",
	"arena event publish DIR OUT":                   "DIR and OUT are placeholders; harness/web's tests publish a final and verify it",
	"arena verify --key KEY BUNDLE\\|URL":           "KEY and BUNDLE|URL are placeholders; harness/web's tests verify a published final",
	"arena witness --dir DIR --name NAME --log KEY": "DIR, NAME and KEY are placeholders, and a witness runs until stopped; harness/witness's and harness/web's tests run witnesses",
	"arena standings DIR/final":                     "DIR is a placeholder",
	"arena submit --server URL --token-file F BOT":  "URL, F and BOT are placeholders",

	"arena serve --event myevent --trust-proxy 1":                                                                   "runs until stopped; harness/web's tests run the server behind a proxy",
	"arena serve --event myevent --trust-proxy 10.0.0.5,10.1.0.0/16":                                                "runs until stopped; harness/web's tests run the server behind a proxy",
	"arena serve --event myevent --http 127.0.0.1:8080":                                                             "runs until stopped; harness/web's tests run the server",
	"curl -H \"Authorization: Bearer $(cat team.token)\" -F file=@bot.zip http://127.0.0.1:8080/api/v1/submissions": "needs a running server; harness/web's tests upload through the API",
	"curl -H \"Authorization: Bearer $(cat team.token)\" http://127.0.0.1:8080/api/v1/submissions/1":                "needs a running server; harness/web's tests read the API",
	"curl -H \"Authorization: Bearer $(cat team.token)\" http://127.0.0.1:8080/api/v1/submissions/1/report.txt":     "needs a running server; harness/web's tests read the API",
	"arena submit --server http://127.0.0.1:8080 --token-file team.token bot.zip":                                   "needs a running server; harness/web's tests run arena submit against one",

	"kubectl apply -k deploy/kubernetes":                                   "needs a cluster; internal/clustertest applies these manifests to the one scripts/test.sh starts",
	"arena image build --tag registry.example:5000/arena-runtime:1 --push": "needs a registry; images' tests push to one served in the test",
	"docker build -f images/server/Dockerfile --build-arg BASE=registry.example:5000/arena-runtime:1 -t registry.example:5000/arena-server:1 bin": "its base names a registry's image; images' tests build this Dockerfile on the test runtime image, offline",
	"docker push registry.example:5000/arena-server:1": "needs a registry",
	"sed -i 's|arena-server:latest|registry.example:5000/arena-server:1|; s|arena-runtime:latest|registry.example:5000/arena-runtime:1|' deploy/kubernetes/server.yaml":     "edits the checkout's manifests for a registry; harness/web's tests read them as they are",
	"POD=$(kubectl -n arena get pod -l app.kubernetes.io/name=arena-server -o jsonpath='{.items[0].metadata.name}')":                                                        "needs a cluster running the server's Deployment",
	"(cd myevent && find . -mindepth 1 -maxdepth 1 ! -name event.toml -print0 | tar -cf - --null -T -) | kubectl -n arena exec -i \"$POD\" -c event -- tar -xf - -C /event": "needs a cluster running the server's Deployment",
	"tar -C myevent -cf - event.toml | kubectl -n arena exec -i \"$POD\" -c event -- tar -xf - -C /event":                                                                   "needs a cluster running the server's Deployment",
	"kubectl -n arena rollout status deployment/arena-server":                                                                                                               "needs a cluster running the server's Deployment",
	"kubectl -n arena port-forward service/arena-server 8080:80":                                                                                                            "needs a cluster running the server's Deployment; runs until stopped",
	"kubectl -n arena exec deploy/arena-server -c server -- arena event admin-token /event":                                                                                 "needs a cluster running the server's Deployment",
	"arena --kube-config admin.kubeconfig kubeconfig --out arena.kubeconfig":                                                                                                "needs a cluster; cmd/arena's TestTheKubeconfigCommandGivesArenasRightsAlone runs it on the cluster scripts/test.sh starts",
	"arena kubeconfig --out FILE":       "needs a cluster; cmd/arena's TestTheKubeconfigCommandGivesArenasRightsAlone runs it on the cluster scripts/test.sh starts",
	"arena doctor --sandbox kubernetes": "needs a cluster; cmd/arena's TestTheDoctorChecksTheCluster runs it on the cluster scripts/test.sh starts",
	"arena --kube-config arena.kubeconfig doctor --sandbox kubernetes --image registry.example/arena-runtime:v1":                              "needs a cluster and a registry; cmd/arena's TestTheDoctorChecksTheCluster runs it on the cluster scripts/test.sh starts",
	"arena --kube-config arena.kubeconfig match --sandbox kubernetes --image registry.example/arena-runtime:v1 --white bots/a --black bots/b": "needs a cluster and a registry; cmd/arena's cluster tests play matches on the cluster scripts/test.sh starts",

	"arena tournament --out cup --listen 0.0.0.0:4222 bots/*":                     "coordinates workers on other machines: it waits for them to join",
	"arena worker --creds w1.creds --join tls://coordinator:4222 --concurrency 4": "joins a coordinator on a remote host (coordinator:4222)",
}

// Every command README.md shows, in its code blocks and its text, and every
// command of the code blocks of docs/*.md runs as written, from the root of
// a checkout after make, against the engine: only the games are short and
// what they write goes to a temporary directory. The files the documents
// name are there: submissions/team-a.zip and team-b.zip (the random and
// greedy examples), team-a.zip, and matches/final-3, a match they played.
func TestDocumentedCommands(t *testing.T) {
	t.Parallel()
	_, image := dockertest.Engine(t)
	root := repo(t)
	all := commands(t, root, "README.md", true)
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs: %v", err)
	}
	for _, d := range docs {
		all = append(all, commands(t, root, filepath.Join("docs", filepath.Base(d)), false)...)
	}
	shown := map[string]bool{}
	for _, c := range all {
		shown[c.text] = true
	}
	for c := range notRunnable {
		if !shown[c] {
			t.Errorf("%q is listed as not runnable, but no document shows it any more", c)
		}
	}

	// A code block's commands run in order, in one directory; each command
	// named in the text runs on its own, once.
	type group struct {
		name string
		cmds []command
	}
	var groups []*group
	byBlock := map[string]*group{}
	seen := map[string]bool{}
	for _, c := range all {
		file, _, _ := strings.Cut(c.where, ":")
		key := fmt.Sprintf("%s#%d", file, c.block)
		if c.block == 0 {
			if seen[c.text] {
				continue
			}
			seen[c.text] = true
			key = c.where + " " + c.text
		}
		g := byBlock[key]
		if g == nil {
			g = &group{name: c.where}
			if c.block == 0 {
				g.name = key
			}
			byBlock[key] = g
			groups = append(groups, g)
		}
		g.cmds = append(g.cmds, c)
	}

	fixtures := teamsAndMatch(t, image)
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			var runnable []command
			for _, c := range g.cmds {
				if why, ok := notRunnable[c.text]; ok {
					t.Logf("%s: not run: %s: %s", c.where, c.text, why)
					continue
				}
				runnable = append(runnable, c)
			}
			if len(runnable) == 0 {
				return
			}
			dir := workDir(t)
			if err := os.CopyFS(dir, os.DirFS(fixtures)); err != nil {
				t.Fatal(err)
			}
			for _, c := range runnable {
				run(t, dir, image, shorter(c.text))
			}
		})
	}
}

// teamsAndMatch makes the files the documents name: submissions/team-a.zip
// (the random example, also as team-a.zip) and submissions/team-b.zip (the
// greedy example), zipped as a team hands them in, and matches/final-3,
// team-a (white) against team-b (black).
func teamsAndMatch(t *testing.T, image string) string {
	t.Helper()
	dir := t.TempDir()
	subs := filepath.Join(built(t), "bin", "examples", "submissions", "codeclash")
	if err := os.MkdirAll(filepath.Join(dir, "submissions"), 0o755); err != nil {
		t.Fatal(err)
	}
	for p, example := range map[string]string{"submissions/team-a.zip": "random", "team-a.zip": "random", "submissions/team-b.zip": "greedy"} {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(p)), zipDir(t, filepath.Join(subs, example)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	arena := filepath.Join(built(t), "bin", "arena")
	run(t, dir, image, arena+" match --quiet --seed 3 --white submissions/team-a.zip --black submissions/team-b.zip --out matches/final-3")
	return dir
}

// zipDir zips the files of a directory, each with its mode.
func zipDir(t *testing.T, dir string) []byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		h, err := zip.FileInfoHeader(info)
		if err != nil {
			t.Fatal(err)
		}
		h.Method = zip.Deflate
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// README's commands are read as shown, from its code blocks and its text.
func TestREADMECommandsAreRead(t *testing.T) {
	t.Parallel()
	root := repo(t)
	var texts []string
	for _, c := range commands(t, root, "README.md", true) {
		texts = append(texts, c.text)
	}
	for _, want := range []string{"bash scripts/quickstart.sh", "arena doctor", "arena languages",
		"bin/arena match --game tiles --white bin/examples/tiles-random --black bin/examples/tiles_random_bot.py --rule map=@examples/tiles/maps/event.csv --rule turns=150"} {
		if !slices.Contains(texts, want) {
			t.Errorf("README.md: %q not read; read %q", want, texts)
		}
	}
}
