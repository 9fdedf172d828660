// Package keys is the browser's key map, shared by the views and by the
// help screen (bubbles/key bindings carry their own help text).
package keys

import "charm.land/bubbles/v2/key"

// Map is every binding the browser answers.
type Map struct {
	Up, Down, PageUp, PageDown, HalfUp, HalfDown, Home, End key.Binding
	Open, Back, Quit, Help, Bytes, Metadata                 key.Binding
	Sort, Filter, Token, NextField, PrevField               key.Binding
	Merge, Explain                                          key.Binding
}

// Default is the key map: arrows and vim keys move, PgUp/PgDn and
// Home/End jump, enter opens, q/esc go back (and quit at the top).
func Default() Map {
	b := func(help string, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return Map{
		Up:        b("↑/k", "up", "up", "k"),
		Down:      b("↓/j", "down", "down", "j"),
		PageUp:    b("pgup/b", "page up", "pgup", "b", "ctrl+b"),
		PageDown:  b("pgdn/f", "page down", "pgdown", "f", "ctrl+f", "space"),
		HalfUp:    b("ctrl+u", "half up", "ctrl+u"),
		HalfDown:  b("ctrl+d", "half down", "ctrl+d"),
		Home:      b("home/g", "first", "home", "g"),
		End:       b("end/G", "last", "end", "G"),
		Open:      b("enter/l", "open", "enter", "right", "l"),
		Back:      b("esc/h", "back", "esc", "left", "h"),
		Quit:      b("q", "back/quit", "q"),
		Help:      b("?", "keys", "?"),
		Bytes:     b("x", "bytes", "x"),
		Metadata:  b("m", "metadata", "m"),
		Sort:      b("s", "sort", "s"),
		Filter:    b("/", "filter", "/"),
		Token:     b("t", "token", "t"),
		NextField: b("tab/n", "next field", "tab", "n"),
		PrevField: b("S-tab/N", "prev field", "shift+tab", "N"),
		Merge:     b("M", "merge/unmerge", "M"),
		Explain:   b("e", "explain", "e"),
	}
}

// Quitting is ctrl+c, which always quits.
var Quitting = key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit"))
