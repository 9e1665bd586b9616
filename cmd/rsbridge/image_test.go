package main

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rsbridge/rsbridge/rsync"
)

// TestImageDefaults is the container image without a Docker engine (CI has
// none): it reads ../../Dockerfile, builds the binary exactly as its build
// stage does from the context ../../.dockerignore leaves, checks the binary is
// static (the distroless base has no libc), and starts it with the image's
// ENTRYPOINT and CMD, changing only the listen address (loopback, any port)
// and the data volume (a temporary directory). Then it runs the HEALTHCHECK
// command, serves the demo end to end, survives SIGHUP and stops with exit 0
// on SIGTERM, as docker kill -s HUP and docker stop would ask. Nothing about
// the image is written here twice: change the Dockerfile and this test
// follows it, or says why it cannot.
func TestImageDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the image's binary and runs it; skipped with -short")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the image is linux; the static-binary check reads ELF")
	}
	began := time.Now()
	root := moduleRoot(t)
	text, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	img := parseImage(t, string(text))
	checkGoVersion(t, root, img.buildBase)

	// The build, from the same context Docker would send.
	tmp := t.TempDir()
	ctxDir := filepath.Join(tmp, "context")
	copyBuildContext(t, root, ctxDir)
	bin := filepath.Join(tmp, "bin", filepath.Base(img.binary))
	args := append([]string{"build"}, img.buildArgs...)
	args[1+img.outputArg] = bin
	build := exec.Command("go", args...)
	build.Dir = ctxDir
	build.Env = append(os.Environ(), img.buildEnv...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go %s (env %s): %v\n%s", strings.Join(args, " "), strings.Join(img.buildEnv, " "), err, out)
	}
	t.Logf("built with %q go build %q in %s", img.buildEnv, img.buildArgs, time.Since(began).Round(time.Millisecond))
	checkStatic(t, bin, img)

	// Start it as the container would: ENTRYPOINT + CMD, in an empty working
	// directory (the image's root file system may be read-only).
	data := filepath.Join(tmp, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	cwd := filepath.Join(tmp, "cwd")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	runArgs := append(slices.Clone(img.entrypoint[1:]), img.cmd...)
	runArgs[img.listenArg+len(img.entrypoint)-1] = "127.0.0.1:0"
	runArgs[img.dataArg+len(img.entrypoint)-1] = data
	var stdout, stderr syncBuffer
	proc := exec.Command(bin, runArgs...)
	proc.Dir = cwd
	proc.Stdout, proc.Stderr = &stdout, &stderr
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { proc.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			proc.Process.Kill()
			<-exited
		}
	})
	report := func() string { return fmt.Sprintf("\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String()) }
	alive := func(what string) {
		t.Helper()
		select {
		case <-exited:
			t.Fatalf("%s: rsbridge exited with %d%s", what, proc.ProcessState.ExitCode(), report())
		default:
		}
	}
	// poll retries cond until it holds, for at most 30 s.
	poll := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			alive(what)
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 30 s%s", what, report())
			}
			time.Sleep(25 * time.Millisecond)
		}
	}
	listening := regexp.MustCompile(`(?m)^.*listening on http://(\S+)$`)
	var addr string
	poll("listening on", func() bool {
		m := listening.FindStringSubmatch(stdout.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	})
	base := "http://" + addr
	t.Logf("%s %s: listening on %s after %s", bin, strings.Join(runArgs, " "), addr, time.Since(began).Round(time.Millisecond))

	// Docker's health check.
	health := func() (int, string) {
		hc := slices.Clone(img.health[1:])
		hc[img.healthURLArg-1] = strings.Replace(hc[img.healthURLArg-1], img.healthHost, addr, 1)
		cmd := exec.Command(bin, hc...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("healthcheck %v: %v", hc, err)
		}
		return cmd.ProcessState.ExitCode(), string(out)
	}
	if code, out := health(); code != 0 || !strings.Contains(out, "healthy") {
		t.Fatalf("HEALTHCHECK: exit %d: %s%s", code, out, report())
	}
	if code, _ := fetch(base + "/.well-known/resourcesync"); code != 200 {
		t.Fatalf("Source Description: status %d%s", code, report())
	}

	// docker kill -s HUP: logged, never a stop, still serving; likely while
	// the first harvest runs.
	if err := proc.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	poll("SIGHUP logged", func() bool { return strings.Contains(stderr.String(), "SIGHUP") })
	alive("after SIGHUP")
	if code, out := health(); code != 0 {
		t.Fatalf("HEALTHCHECK after SIGHUP: exit %d: %s%s", code, out, report())
	}

	// The demo end to end: Source Description → the all-records Capability
	// List → its Resource List, which fills as the first harvest commits.
	docAt := func(u string) *rsync.Document {
		code, body := fetch(u)
		if code != 200 {
			return nil
		}
		doc, err := rsync.Parse(strings.NewReader(body))
		if err != nil {
			t.Fatalf("%s: %v\n%s", u, err, body)
		}
		return doc
	}
	sd := docAt(base + "/.well-known/resourcesync")
	if sd == nil {
		t.Fatalf("Source Description: not 200%s", report())
	}
	var capURL string
	for _, e := range sd.Entries {
		if !strings.HasPrefix(e.Loc, base+"/") {
			t.Errorf("Source Description names %s, not under the server's URL %s", e.Loc, base)
		}
		if capURL == "" && strings.HasSuffix(e.Loc, "/all/capabilitylist.xml") {
			capURL = e.Loc
		}
	}
	if capURL == "" {
		t.Fatalf("Source Description lists no all-records Capability List: %+v", sd.Entries)
	}
	capList := docAt(capURL)
	if capList == nil {
		t.Fatalf("%s: not 200", capURL)
	}
	var rlURL string
	for _, e := range capList.Entries {
		if e.MD != nil && e.MD.Capability == "resourcelist" {
			rlURL = e.Loc
		}
	}
	if rlURL == "" {
		t.Fatalf("%s has no Resource List: %+v", capURL, capList.Entries)
	}
	var records []rsync.Entry
	poll("records in "+rlURL, func() bool {
		doc := docAt(rlURL)
		if doc != nil && doc.Index && len(doc.Entries) > 0 {
			doc = docAt(doc.Entries[0].Loc)
		}
		if doc != nil {
			records = doc.Entries
		}
		return len(records) > 0
	})
	if !strings.HasPrefix(records[0].Loc, base+"/") {
		t.Fatalf("Resource List entry %s is not under %s", records[0].Loc, base)
	}
	if code, body := fetch(records[0].Loc); code != 200 || !strings.HasPrefix(strings.TrimSpace(body), "<") {
		t.Fatalf("record %s: status %d: %.200s", records[0].Loc, code, body)
	}
	t.Logf("%s lists %d records after %s", rlURL, len(records), time.Since(began).Round(time.Millisecond))

	// docker stop: SIGTERM, exit 0, no errors on the way out.
	if err := proc.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("still running 30 s after SIGTERM%s", report())
	}
	if code := proc.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit %d after SIGTERM, want 0%s", code, report())
	}
	if strings.Contains(stderr.String(), "level=ERROR") {
		t.Errorf("errors logged%s", report())
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, "level=WARN") {
			t.Logf("warning logged: %s", l)
		}
	}
	if code, out := health(); code == 0 || !strings.Contains(out, "unhealthy") {
		t.Errorf("HEALTHCHECK with the server stopped: exit %d: %s", code, out)
	}
	if left, _ := os.ReadDir(cwd); len(left) > 0 {
		t.Errorf("wrote outside the data volume, into the working directory: %v", left)
	}
	t.Logf("stopped with exit 0; %s in all", time.Since(began).Round(time.Millisecond))
}

// image is what TestImageDefaults takes from the Dockerfile.
type image struct {
	buildBase    string   // FROM of the stage that runs go build
	buildEnv     []string // that stage's ENV and the RUN line's assignments
	buildArgs    []string // go build's arguments
	outputArg    int      // buildArgs[outputArg] is the -o path
	binary       string   // where the final stage puts the binary
	entrypoint   []string
	cmd          []string
	listenArg    int // cmd[listenArg] is the listen address
	dataArg      int // cmd[dataArg] is the data directory
	health       []string
	healthURLArg int    // health[healthURLArg] is the URL probed
	healthHost   string // its host:port
}

type instruction struct {
	line int
	cmd  string // upper case
	args string
}

// dockerInstructions splits a Dockerfile into instructions: comments and
// blank lines dropped, continued lines (\ at the end) joined.
func dockerInstructions(text string) []instruction {
	var out []instruction
	var cur strings.Builder
	start := 0
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if s, ok := strings.CutSuffix(trimmed, `\`); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(trimmed)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{start, strings.ToUpper(cmd), strings.TrimSpace(args)})
		cur.Reset()
	}
	return out
}

// shellWords splits a shell command line into words the way sh would for
// the simple commands a Dockerfile's RUN has: quotes, backslashes, and
// &&, || and ; as separate words. It refuses what it does not expand.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				t.Fatalf("unterminated ' in %q", s)
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
					i++
				} else if s[i] == '$' || s[i] == '`' {
					t.Fatalf("the test does not expand shell variables: %q", s)
				}
				w.WriteByte(s[i])
			}
			if i == len(s) {
				t.Fatalf(`unterminated " in %q`, s)
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
			inWord = true
		case c == '$' || c == '`' || c == '|' && !strings.HasPrefix(s[i:], "||") || c == '<' || c == '>':
			t.Fatalf("the test does not expand %q in %q: extend shellWords", c, s)
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	var out []string
	for _, w := range words { // a trailing ; is a separator too
		if s, ok := strings.CutSuffix(w, ";"); ok && s != "" {
			out = append(out, s, ";")
			continue
		}
		out = append(out, w)
	}
	return out
}

// execForm reads an instruction's JSON array; distroless has no shell to run
// the shell form.
func execForm(t *testing.T, in instruction, s string) []string {
	t.Helper()
	var argv []string
	if err := json.Unmarshal([]byte(s), &argv); err != nil || len(argv) == 0 {
		t.Fatalf("Dockerfile line %d: %s must be a non-empty JSON array (exec form: the image has no shell): %s", in.line, in.cmd, s)
	}
	return argv
}

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

func parseImage(t *testing.T, text string) image {
	t.Helper()
	var img image
	type stage struct {
		name, base string
		env        []string
		ins        []instruction
	}
	var stages []*stage
	for _, in := range dockerInstructions(text) {
		if in.cmd == "FROM" {
			f := strings.Fields(in.args)
			f = slices.DeleteFunc(f, func(s string) bool { return strings.HasPrefix(s, "--") })
			st := &stage{base: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			}
			stages = append(stages, st)
			continue
		}
		if len(stages) == 0 {
			if in.cmd != "ARG" {
				t.Fatalf("Dockerfile line %d: %s before FROM", in.line, in.cmd)
			}
			continue
		}
		st := stages[len(stages)-1]
		st.ins = append(st.ins, in)
		if in.cmd == "ENV" {
			w := shellWords(t, in.args)
			if len(w) > 0 && !strings.Contains(w[0], "=") {
				w = []string{w[0] + "=" + strings.Join(w[1:], " ")}
			}
			st.env = append(st.env, w...)
		}
	}
	if len(stages) < 2 {
		t.Fatalf("Dockerfile: want a build stage and a final stage, got %d stages", len(stages))
	}

	// The build: the one RUN with go build.
	var buildStage *stage
	for _, st := range stages {
		for _, in := range st.ins {
			if in.cmd != "RUN" || !regexp.MustCompile(`\bgo\s+build\b`).MatchString(in.args) {
				continue
			}
			if buildStage != nil {
				t.Fatalf("Dockerfile line %d: a second go build; the test knows one", in.line)
			}
			buildStage = st
			words := shellWords(t, in.args)
			for len(words) > 0 && strings.HasPrefix(words[0], "--") { // RUN --mount=…
				words = words[1:]
			}
			// The command of the && list that is go build.
			var cmd []string
			for _, w := range append(words, ";") {
				if w != "&&" && w != ";" && w != "||" {
					cmd = append(cmd, w)
					continue
				}
				env := 0
				for env < len(cmd) && assignment.MatchString(cmd[env]) {
					env++
				}
				if len(cmd) > env+1 && cmd[env] == "go" && cmd[env+1] == "build" {
					img.buildEnv = append(slices.Clone(st.env), cmd[:env]...)
					img.buildArgs = cmd[env+2:]
				}
				cmd = nil
			}
			if img.buildArgs == nil {
				t.Fatalf("Dockerfile line %d: cannot find go build in %q", in.line, in.args)
			}
			img.outputArg = -1
			for i, a := range img.buildArgs {
				if a == "-o" && i+1 < len(img.buildArgs) {
					img.outputArg = i + 1
				} else if strings.HasPrefix(a, "-o=") {
					t.Fatalf("Dockerfile line %d: write -o PATH, not -o=PATH", in.line)
				}
			}
			if img.outputArg < 0 {
				t.Fatalf("Dockerfile line %d: go build has no -o", in.line)
			}
		}
	}
	if buildStage == nil {
		t.Fatal("Dockerfile: no RUN … go build")
	}
	img.buildBase = buildStage.base
	out := img.buildArgs[img.outputArg]

	// The final stage.
	final := stages[len(stages)-1]
	var volume, user string
	var exposed []string
	owners := map[string]string{} // COPY --chown destinations before VOLUME
	for _, in := range final.ins {
		switch in.cmd {
		case "COPY":
			w := strings.Fields(in.args)
			var from, own string
			for len(w) > 0 && strings.HasPrefix(w[0], "--") {
				if v, ok := strings.CutPrefix(w[0], "--from="); ok {
					from = v
				}
				if v, ok := strings.CutPrefix(w[0], "--chown="); ok {
					own = v
				}
				w = w[1:]
			}
			if len(w) != 2 {
				continue
			}
			if (from == buildStage.name || from == strconv.Itoa(slices.Index(stages, buildStage))) && w[0] == out {
				img.binary = w[1]
			}
			if volume == "" && own != "" {
				owners[strings.TrimRight(w[1], "/")] = own
			}
		case "USER":
			user = in.args
		case "VOLUME":
			if strings.HasPrefix(in.args, "[") {
				v := execForm(t, in, in.args)
				volume = v[0]
			} else {
				volume = strings.Fields(in.args)[0]
			}
		case "EXPOSE":
			for _, p := range strings.Fields(in.args) {
				exposed = append(exposed, strings.TrimSuffix(p, "/tcp"))
			}
		case "ENTRYPOINT":
			img.entrypoint = execForm(t, in, in.args)
		case "CMD":
			img.cmd = execForm(t, in, in.args)
		case "HEALTHCHECK":
			opts, argv, ok := strings.Cut(in.args, "CMD ")
			if !ok || strings.Contains(opts, "NONE") {
				t.Fatalf("Dockerfile line %d: HEALTHCHECK … CMD [...] expected: %s", in.line, in.args)
			}
			img.health = execForm(t, in, strings.TrimSpace(argv))
		}
	}
	switch {
	case img.binary == "":
		t.Fatalf("Dockerfile: the final stage does not COPY %s from the build stage", out)
	case len(img.entrypoint) == 0 || img.entrypoint[0] != img.binary:
		t.Fatalf("Dockerfile: ENTRYPOINT %q does not start with the binary %s", img.entrypoint, img.binary)
	case img.cmd == nil || img.health == nil:
		t.Fatal("Dockerfile: the final stage needs CMD and HEALTHCHECK")
	case img.health[0] != img.binary:
		t.Fatalf("Dockerfile: HEALTHCHECK runs %s, not the binary %s (the image has nothing else)", img.health[0], img.binary)
	case volume == "":
		t.Fatal("Dockerfile: no VOLUME for the data")
	}

	// The data volume: owned by the user rsbridge runs as before VOLUME,
	// so a new named volume is writable.
	owner := owners[strings.TrimRight(volume, "/")]
	if user == "" || owner == "" {
		t.Fatalf("Dockerfile: want USER UID:GID and COPY --chown=UID:GID … %s before VOLUME (USER %q, owner %q)", volume, user, owner)
	}
	if _, err := strconv.Atoi(strings.Split(user, ":")[0]); err != nil || user != owner {
		t.Fatalf("Dockerfile: %s is owned by %q, rsbridge runs as USER %q: want the same numeric UID:GID", volume, owner, user)
	}

	// CMD: listens on every interface on an exposed port, and stores on the volume.
	img.listenArg, img.dataArg = -1, -1
	for i, a := range img.cmd[:len(img.cmd)-1] {
		switch a {
		case "-listen", "--listen":
			img.listenArg = i + 1
		case "-data", "--data":
			img.dataArg = i + 1
		}
	}
	if img.listenArg < 0 || img.dataArg < 0 {
		t.Fatalf("Dockerfile: CMD %q needs -listen ADDR and -data DIR (as separate words)", img.cmd)
	}
	host, port, err := net.SplitHostPort(img.cmd[img.listenArg])
	if err != nil || (host != "0.0.0.0" && host != "" && host != "::") {
		t.Fatalf("Dockerfile: CMD -listen %q: want every interface (0.0.0.0:PORT), so -p can reach it", img.cmd[img.listenArg])
	}
	if !slices.Contains(exposed, port) {
		t.Errorf("Dockerfile: CMD listens on port %s, EXPOSE says %v", port, exposed)
	}
	if img.cmd[img.dataArg] != volume {
		t.Errorf("Dockerfile: CMD -data %q is not the VOLUME %q", img.cmd[img.dataArg], volume)
	}

	// HEALTHCHECK: probes that port on the loopback interface.
	for i, a := range img.health {
		if u, err := url.Parse(a); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			img.healthURLArg, img.healthHost = i, u.Host
			if u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost" || u.Port() != port {
				t.Errorf("Dockerfile: HEALTHCHECK probes %s; rsbridge listens on port %s of every interface", u.Host, port)
			}
		}
	}
	if img.healthHost == "" {
		t.Fatalf("Dockerfile: HEALTHCHECK %q names no URL", img.health)
	}
	return img
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		t.Fatalf("go env GOMOD: %v %s", err, out)
	}
	return filepath.Dir(string(bytes.TrimSpace(out)))
}

// checkGoVersion: the golang image runs with GOTOOLCHAIN=local, so its Go
// must be at least the go line of go.mod.
func checkGoVersion(t *testing.T, root, base string) {
	t.Helper()
	tag, ok := strings.CutPrefix(base, "golang:")
	if !ok {
		return
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	minor := regexp.MustCompile(`^(\d+)\.(\d+)`)
	want := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(mod)
	have := minor.FindStringSubmatch(tag)
	if want == nil || have == nil {
		return
	}
	w := minor.FindStringSubmatch(string(want[1]))
	num := func(m []string) int { a, _ := strconv.Atoi(m[1]); b, _ := strconv.Atoi(m[2]); return a*1000 + b }
	if num(have) < num(w) {
		t.Errorf("Dockerfile builds with %s, go.mod needs go %s (the golang image does not download toolchains)", base, want[1])
	}
}

// checkStatic: no interpreter, no shared libraries, and the build settings
// recorded in the binary are the Dockerfile's.
func checkStatic(t *testing.T, bin string, img image) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s has a %v program header: not static, and the image has no libc", bin, p.Type)
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("%s needs shared libraries %v (%v)", bin, libs, err)
	}
	if syms, _ := f.ImportedSymbols(); len(syms) > 0 {
		t.Errorf("%s imports %d dynamic symbols, e.g. %v", bin, len(syms), syms[0])
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if settings["CGO_ENABLED"] != "0" {
		t.Errorf("built with CGO_ENABLED=%q", settings["CGO_ENABLED"])
	}
	// The binary is what the Dockerfile's flags make. (With -trimpath, Go
	// does not record -ldflags: look at their effect.)
	for i, a := range img.buildArgs {
		ldflags, ok := strings.CutPrefix(a, "-ldflags=")
		if a == "-ldflags" && i+1 < len(img.buildArgs) {
			ldflags, ok = img.buildArgs[i+1], true
		}
		switch {
		case a == "-trimpath" && settings["-trimpath"] != "true":
			t.Errorf("built without -trimpath: %v", settings)
		case ok && slices.Contains(strings.Fields(ldflags), "-s") && f.Section(".symtab") != nil:
			t.Errorf("-ldflags %q, yet the binary has a symbol table", ldflags)
		case ok && slices.Contains(strings.Fields(ldflags), "-w") && f.Section(".debug_info") != nil:
			t.Errorf("-ldflags %q, yet the binary has DWARF", ldflags)
		}
	}
	if rev, ok := settings["vcs.revision"]; ok {
		t.Errorf("the binary names revision %s; built from the Docker context (no .git) it cannot", rev)
	}
	// The image's "version" says so (the Dockerfile's header documents it).
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !regexp.MustCompile(`revision\s+unknown`).Match(out) {
		t.Errorf("version: %v\n%s", err, out)
	}
}

// dockerignore is a .dockerignore: patterns relative to the context root, the
// last match deciding, "!" re-including, "**" any number of directories, and
// a match on a directory taking everything in it.
type dockerignore struct {
	pats []*regexp.Regexp
	neg  []bool
}

func readDockerignore(t *testing.T, path string) *dockerignore {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return &dockerignore{}
		}
		t.Fatal(err)
	}
	d := &dockerignore{}
	for _, line := range strings.Split(string(text), "\n") {
		p := strings.TrimSpace(line)
		if p == "" || strings.HasPrefix(p, "#") {
			continue
		}
		neg := false
		if s, ok := strings.CutPrefix(p, "!"); ok {
			p, neg = strings.TrimSpace(s), true
		}
		p = strings.TrimPrefix(filepath.ToSlash(filepath.Clean(p)), "/")
		var re strings.Builder
		re.WriteString("^")
		for i := 0; i < len(p); i++ {
			switch c := p[i]; {
			case strings.HasPrefix(p[i:], "**/"):
				re.WriteString("(.*/)?")
				i += 2
			case strings.HasPrefix(p[i:], "**"):
				re.WriteString(".*")
				i++
			case c == '*':
				re.WriteString("[^/]*")
			case c == '?':
				re.WriteString("[^/]")
			case c == '\\' && i+1 < len(p):
				i++
				re.WriteString(regexp.QuoteMeta(p[i : i+1]))
			case c == '[':
				t.Fatalf(".dockerignore: character classes are not supported by this test: %q", line)
			default:
				re.WriteString(regexp.QuoteMeta(string(c)))
			}
		}
		re.WriteString("$")
		d.pats = append(d.pats, regexp.MustCompile(re.String()))
		d.neg = append(d.neg, neg)
	}
	return d
}

func (d *dockerignore) excluded(rel string) bool {
	parts := strings.Split(rel, "/")
	ex := false
	for i, re := range d.pats {
		for n := 1; n <= len(parts); n++ {
			if re.MatchString(strings.Join(parts[:n], "/")) {
				ex = !d.neg[i]
				break
			}
		}
	}
	return ex
}

// copyBuildContext copies what the build context holds to dst.
func copyBuildContext(t *testing.T, root, dst string) {
	t.Helper()
	ignore := readDockerignore(t, filepath.Join(root, ".dockerignore"))
	canSkipDirs := !slices.Contains(ignore.neg, true)
	files := 0
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if ignore.excluded(rel) {
			if e.IsDir() && canSkipDirs {
				return filepath.SkipDir
			}
			if !e.IsDir() {
				return nil
			}
		}
		target := filepath.Join(dst, filepath.FromSlash(rel))
		switch {
		case e.IsDir():
			return os.MkdirAll(target, 0o755)
		case !e.Type().IsRegular():
			return nil
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		files++
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("build context: %d files", files)
}
