// Package theme holds the browser's styles. Every style is built for one
// colour profile, detected once from the terminal and the environment
// (NO_COLOR, CLICOLOR, TERM=dumb, output not a terminal select plain
// text), so the whole UI switches together. A plain theme's styles carry
// no attributes at all, not even reverse video or bold, so views never
// rely on attributes alone: the cursor row carries a marker glyph and byte
// fields a separator.
//
// Detecting the profile reads only the environment and whether the output
// is a terminal: nothing is written to the terminal and no answer is
// awaited (Lip Gloss v1 asked the terminal for its background colour when
// the program started).
package theme

import (
	"io"
	"os"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/sstabletool/sstabletool/internal/tui/bytemap"
)

// Cursor marks the selected line in every list.
const (
	Cursor   = "▸ "
	NoCursor = "  "
)

// Theme is the set of styles the views draw with.
type Theme struct {
	// Color is false when the profile has no colours (NO_COLOR, dumb
	// terminal, not a terminal): then every style is empty.
	Color bool

	Title, Crumb, Header, Selected, Dim, Error, Warn, OK, Accent, Key, Label lipgloss.Style
	Section                                                                  lipgloss.Style
	Bar                                                                      lipgloss.Style
	// Field is the colour of each class of labelled bytes.
	Field [16]lipgloss.Style
}

// Detect returns the colour profile of w: the one colour policy of the
// browser and of every command that colours its output. colorprofile
// reads the terminal and TERM, COLORTERM, CLICOLOR; NO_COLOR (any
// non-empty value, as https://no-color.org says) turns colours off, and
// CLICOLOR_FORCE (any value but "" and "0", as https://bixense.com/clicolors
// says) turns them on, off a terminal too, whatever NO_COLOR says: a script
// that sets it wants the escape sequences.
func Detect(w io.Writer) colorprofile.Profile {
	env := os.Environ()
	if f := os.Getenv("CLICOLOR_FORCE"); f != "" && f != "0" {
		forced := []string{"CLICOLOR_FORCE=1"}
		for _, kv := range env {
			if !strings.HasPrefix(kv, "CLICOLOR_FORCE=") && !strings.HasPrefix(kv, "NO_COLOR=") {
				forced = append(forced, kv)
			}
		}
		return colorprofile.Detect(w, forced)
	}
	p := colorprofile.Detect(w, env)
	if os.Getenv("NO_COLOR") != "" {
		p = min(p, colorprofile.ASCII)
	}
	return p
}

// Plain returns the theme without colours or attributes (tests, pipes).
func Plain() *Theme { return New(colorprofile.ASCII) }

// New builds the styles for profile p. ANSI colours 0-15 are used so that
// the terminal's own palette (light or dark) decides the exact shades.
func New(p colorprofile.Profile) *Theme {
	t := &Theme{Color: p > colorprofile.ASCII}
	if !t.Color {
		// Every style empty: what Lip Gloss v1 drew with an Ascii profile,
		// the text alone.
		return t
	}
	c := lipgloss.Color
	s := lipgloss.NewStyle
	t.Title = s().Bold(true).Reverse(true)
	t.Crumb = s().Bold(true)
	t.Header = s().Bold(true).Underline(true)
	t.Selected = s().Reverse(true)
	t.Dim = s().Faint(true)
	t.Error = s().Foreground(c("9")).Bold(true)
	t.Warn = s().Foreground(c("11"))
	t.OK = s().Foreground(c("10"))
	t.Accent = s().Foreground(c("14")).Bold(true)
	t.Key = s().Foreground(c("12")).Bold(true)
	t.Label = s().Foreground(c("6"))
	t.Section = s().Bold(true).Foreground(c("13"))
	t.Bar = s().Foreground(c("12"))
	colors := map[bytemap.Class]string{
		bytemap.KeyLength:         "6",
		bytemap.Key:               "14",
		bytemap.PartitionDeletion: "9",
		bytemap.Flags:             "11",
		bytemap.Clustering:        "10",
		bytemap.Size:              "8",
		bytemap.Liveness:          "12",
		bytemap.Deletion:          "13",
		bytemap.Columns:           "5",
		bytemap.CellHeader:        "3",
		bytemap.CellPath:          "2",
		bytemap.CellValue:         "15",
		bytemap.EndOfPartition:    "1",
		bytemap.Unlabelled:        "8",
	}
	for cl, col := range colors {
		t.Field[cl] = s().Foreground(c(col))
	}
	return t
}
