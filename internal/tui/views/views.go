// Package views holds the browser's screens, each a component with its own
// state, Update and View: Sstables, Partitions, Partition, Bytes, Metadata
// and Help. A view draws exactly the area it is given (SetSize) and asks
// the app for navigation with messages (PushMsg, OpenTableMsg, StatusMsg);
// results of background work come back as messages naming their owner, so
// the app can deliver them even to a view that is not on top.
//
// The partitions table, the partition's row list and the hex dump are
// hand-written virtual lists instead of bubbles/table or bubbles/viewport:
// those take their whole content up front (every row as strings, or one
// string of every line), which for a million partitions or a megabyte of
// hex costs seconds per sort, filter or resize. These lists render only the
// lines on screen. bubbles is used where content is small: the sstables
// table, the metadata and help viewports, text inputs, the progress bar and
// key help.
package views

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sstabletool/sstabletool/internal/tui/catalog"
	"github.com/sstabletool/sstabletool/internal/tui/keys"
	"github.com/sstabletool/sstabletool/internal/tui/theme"
)

// Env is what every view shares.
type Env struct {
	Theme *theme.Theme
	Keys  keys.Map
}

// View is one screen.
type View interface {
	Init() tea.Cmd
	// Update handles a message; views keep their state behind a pointer.
	Update(msg tea.Msg) tea.Cmd
	// View renders exactly the size set by SetSize.
	View() string
	SetSize(width, height int)
	// Title is the view's breadcrumb.
	Title() string
	// Table is the sstable the view shows (for the metadata key), or nil.
	Table() *catalog.Table
	// Keys are the bindings to list in the short help line.
	Keys() []key.Binding
	// Capturing reports that a text input has focus and wants every key.
	Capturing() bool
	// Close stops background work.
	Close()
}

// PushMsg asks the app to show View on top of the current one.
type PushMsg struct{ View View }

// OpenTableMsg asks the app for the partitions view of a table.
type OpenTableMsg struct{ Table *catalog.Table }

// StatusMsg puts a line in the status bar; errors stay until replaced.
type StatusMsg struct {
	Text string
	Err  bool
}

// Owned is a background result addressed to the view that started it.
type Owned interface{ Owner() View }

func push(v View) tea.Cmd { return func() tea.Msg { return PushMsg{View: v} } }

func status(text string, isErr bool) tea.Cmd {
	return func() tea.Msg { return StatusMsg{Text: text, Err: isErr} }
}

// Fit makes s exactly width cells: cut with an ellipsis, or padded.
func Fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	w := ansi.StringWidth(s)
	if w > width {
		return ansi.Truncate(s, width, "…")
	}
	return s + strings.Repeat(" ", width-w)
}

// frame joins lines into exactly height lines of width cells.
func frame(lines []string, width, height int) string {
	var b strings.Builder
	for i := 0; i < height; i++ {
		if i > 0 {
			b.WriteByte('\n')
		}
		if i < len(lines) {
			b.WriteString(Fit(lines[i], width))
		} else {
			b.WriteString(strings.Repeat(" ", max(width, 0)))
		}
	}
	return b.String()
}

// alignRight pads s on the left to width cells (cutting it if longer).
func alignRight(s string, width int) string {
	w := ansi.StringWidth(s)
	if w >= width {
		return ansi.Truncate(s, width, "…")
	}
	return strings.Repeat(" ", width-w) + s
}

// move is a cursor motion decoded from a key or the mouse wheel.
type move struct {
	delta      int
	home, end  bool
	ok         bool
	pageFactor float64 // delta in pages (1, -1, 0.5...) when non-zero
}

// navigation decodes the motion keys of the key map.
func navigation(msg tea.Msg, km keys.Map) move {
	switch m := msg.(type) {
	case tea.KeyPressMsg:
		switch {
		case key.Matches(m, km.Up):
			return move{delta: -1, ok: true}
		case key.Matches(m, km.Down):
			return move{delta: 1, ok: true}
		case key.Matches(m, km.PageUp):
			return move{pageFactor: -1, ok: true}
		case key.Matches(m, km.PageDown):
			return move{pageFactor: 1, ok: true}
		case key.Matches(m, km.HalfUp):
			return move{pageFactor: -0.5, ok: true}
		case key.Matches(m, km.HalfDown):
			return move{pageFactor: 0.5, ok: true}
		case key.Matches(m, km.Home):
			return move{home: true, ok: true}
		case key.Matches(m, km.End):
			return move{end: true, ok: true}
		}
	case tea.MouseWheelMsg:
		switch m.Button {
		case tea.MouseWheelUp:
			return move{delta: -3, ok: true}
		case tea.MouseWheelDown:
			return move{delta: 3, ok: true}
		}
	}
	return move{}
}

// cursor is a selection in a list of n equal-height lines shown height at a time.
type cursor struct {
	pos, top int
}

// apply moves the cursor and keeps it on screen.
func (c *cursor) apply(m move, n, height int) {
	switch {
	case m.home:
		c.pos = 0
	case m.end:
		c.pos = n - 1
	case m.pageFactor != 0:
		c.pos += int(m.pageFactor * float64(max(height, 1)))
	default:
		c.pos += m.delta
	}
	c.clamp(n, height)
}

func (c *cursor) clamp(n, height int) {
	c.pos = max(0, min(c.pos, n-1))
	height = max(height, 1)
	if c.pos < c.top {
		c.top = c.pos
	}
	if c.pos >= c.top+height {
		c.top = c.pos - height + 1
	}
	c.top = max(0, min(c.top, n-height))
}

// pct renders a fraction as a percentage.
func pct(done, total int64) float64 {
	if total <= 0 {
		return 1
	}
	return float64(done) / float64(total)
}

// scrollViewport applies a motion to a bubbles viewport.
func scrollViewport(vp *viewport.Model, m move) {
	switch {
	case m.home:
		vp.GotoTop()
	case m.end:
		vp.GotoBottom()
	case m.pageFactor < 0:
		vp.ScrollUp(int(-m.pageFactor * float64(vp.Height())))
	case m.pageFactor > 0:
		vp.ScrollDown(int(m.pageFactor * float64(vp.Height())))
	case m.delta < 0:
		vp.ScrollUp(-m.delta)
	default:
		vp.ScrollDown(m.delta)
	}
}

// clip cuts every line of s to width cells: a viewport would wrap longer
// lines and lose its line count.
func clip(s string, width int) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if ansi.StringWidth(l) > width {
			lines[i] = ansi.Truncate(l, width, "…")
		}
	}
	return strings.Join(lines, "\n")
}
