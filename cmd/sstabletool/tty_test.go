package main

import (
	"bytes"
	"io"
	"os/exec"
	"strings"
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
