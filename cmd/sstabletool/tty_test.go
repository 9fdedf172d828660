package main

import (
	"bytes"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestNoTerminalQueryAtStart runs the sstabletool binary (the copy that
// testscript.Main puts in $PATH) under a pseudo-terminal that never answers.
// A command that draws no TUI must not query the terminal: Bubble Tea v1
// asked for the background colour (OSC 11) and the cursor position (DSR 6)
// in a package init, before main, and waited 5 s for a reply that a silent
// terminal never gives (charmbracelet/bubbletea#1771).
func TestNoTerminalQueryAtStart(t *testing.T) {
	bin, err := exec.LookPath("sstabletool")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(cmd.Environ(), "TERM=xterm-256color", "COLORTERM=", "NO_COLOR=")
	ptmx, err := pty.Start(cmd) // stdin, stdout and stderr are the pty
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()

	var out bytes.Buffer
	read := make(chan struct{})
	go func() {
		io.Copy(&out, ptmx) // ends with EIO once the child is gone
		close(read)
	}()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- cmd.Wait() }()

	select {
	case err := <-done:
		if err != nil {
			t.Errorf("sstabletool --version: %v", err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
	took := time.Since(start)
	ptmx.Close()
	select {
	case <-read:
	case <-time.After(5 * time.Second):
		t.Fatal("the pseudo-terminal's output did not end after sstabletool exited")
	}

	got := out.String()
	if took > 2*time.Second {
		t.Errorf("sstabletool --version took %v under a silent terminal, want < 2s", took.Round(time.Millisecond))
	}
	for _, q := range []string{"\x1b]11", "\x1b[6n"} {
		if strings.Contains(got, q) {
			t.Errorf("sstabletool --version wrote the terminal query %q: %q", q, got)
		}
	}
	if !strings.Contains(got, "sstabletool version") {
		t.Errorf("sstabletool --version printed %q, want its version", got)
	}
}

// TestMainJobOnATerminal runs sstabletool with no arguments on a
// pseudo-terminal, as README's first command does: it writes the demo
// sstable and opens the browser on it (not the tour printed when piped),
// which draws its sstables view and quits on q with exit 0.
func TestMainJobOnATerminal(t *testing.T) {
	bin, err := exec.LookPath("sstabletool")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	env := []string{"TERM=xterm-256color", "NO_COLOR=1"}
	for _, e := range cmd.Environ() {
		if !strings.HasPrefix(e, "CI=") { // CI makes the root print the tour
			env = append(env, e)
		}
	}
	cmd.Env = env
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 30, Cols: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	var mu sync.Mutex
	var out bytes.Buffer
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			mu.Lock()
			out.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	seen := func(s string) bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(out.String(), s)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for !seen("sstabletool browse") {
		select {
		case err := <-done:
			mu.Lock()
			t.Fatalf("sstabletool exited (%v) before drawing the browser: %q", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			mu.Lock()
			t.Fatalf("no browser after 60 s: %q", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// q leaves the sstables view, which is the last: the browser quits.
	for range 3 {
		ptmx.Write([]byte("q"))
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("sstabletool on a terminal: %v", err)
			}
			return
		case <-time.After(2 * time.Second):
		}
	}
	cmd.Process.Kill()
	t.Fatal("the browser did not quit on q")
}
