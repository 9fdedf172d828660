package theme

import (
	"bytes"
	"testing"

	"github.com/charmbracelet/colorprofile"
)

// The one colour policy off a terminal: plain unless CLICOLOR_FORCE asks,
// and then coloured whatever NO_COLOR says (metadata -c's testscript holds
// the command to the same).
func TestDetectOffTerminal(t *testing.T) {
	for _, c := range []struct {
		force, noColor string
		color          bool
	}{
		{"", "", false},
		{"", "1", false},
		{"1", "", true},
		{"1", "1", true},
		{"yes", "", true},
		{"0", "", false},
	} {
		t.Setenv("CLICOLOR_FORCE", c.force)
		t.Setenv("NO_COLOR", c.noColor)
		t.Setenv("TERM", "xterm-256color")
		if got := Detect(&bytes.Buffer{}) > colorprofile.ASCII; got != c.color {
			t.Errorf("CLICOLOR_FORCE=%q NO_COLOR=%q: colour %v, want %v", c.force, c.noColor, got, c.color)
		}
	}
}
