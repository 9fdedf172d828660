// Package theme holds the browser's styles. Every style comes from one
// lipgloss.Renderer, whose colour profile follows the terminal and the
// environment (NO_COLOR, CLICOLOR, TERM=dumb select plain text), so the
// whole UI switches together. Because a colourless profile also drops
// reverse video and bold, views never rely on attributes alone: the cursor
// row carries a marker glyph and byte fields a separator.
package theme

import (
	"io"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/sstabletool/sstabletool/tui/bytemap"
)

// Cursor marks the selected line in every list.
const (
	Cursor   = "▸ "
	NoCursor = "  "
)

// Theme is the set of styles the views draw with.
type Theme struct {
	R *lipgloss.Renderer
	// Color is false when the profile has no colours (NO_COLOR, dumb terminal).
	Color bool

	Title, Crumb, Header, Selected, Dim, Error, Warn, OK, Accent, Key, Label lipgloss.Style
	Section                                                                  lipgloss.Style
	Bar                                                                      lipgloss.Style
	// Field is the colour of each class of labelled bytes.
	Field [16]lipgloss.Style
}

// NewRenderer returns a renderer for w whose profile follows the terminal
// and NO_COLOR.
func NewRenderer(w io.Writer) *lipgloss.Renderer {
	return lipgloss.NewRenderer(w, termenv.WithColorCache(true))
}

// Plain returns a renderer that never emits escape sequences (tests, pipes).
func Plain(w io.Writer) *lipgloss.Renderer {
	r := lipgloss.NewRenderer(w)
	r.SetColorProfile(termenv.Ascii)
	return r
}

// New builds the styles on r. ANSI colours 0-15 are used so that the
// terminal's own palette (light or dark) decides the exact shades.
func New(r *lipgloss.Renderer) *Theme {
	c := func(n string) lipgloss.Color { return lipgloss.Color(n) }
	t := &Theme{R: r, Color: r.ColorProfile() != termenv.Ascii}
	s := r.NewStyle
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
