package views

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/sstabletool/sstabletool/internal/tui/catalog"
	"github.com/sstabletool/sstabletool/internal/tui/keys"
)

// Help lists every key, grouped, with what each view does with it.
type Help struct {
	env  *Env
	vp   viewport.Model
	w, h int
}

// NewHelp returns the help screen.
func NewHelp(env *Env) *Help { return &Help{env: env, vp: viewport.New()} }

func (v *Help) Init() tea.Cmd         { return nil }
func (v *Help) Title() string         { return "keys" }
func (v *Help) Table() *catalog.Table { return nil }
func (v *Help) Capturing() bool       { return false }
func (v *Help) Close()                {}
func (v *Help) Keys() []key.Binding   { return []key.Binding{v.env.Keys.Down, v.env.Keys.PageDown} }

// Groups are the key groups shown, by column.
func (v *Help) Groups() [][]key.Binding {
	k := v.env.Keys
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.HalfUp, k.HalfDown, k.Home, k.End},
		{k.Open, k.Back, k.Quit, keys.Quitting, k.Help, k.Metadata, k.Bytes},
		{k.Sort, k.Filter, k.Token, k.NextField, k.PrevField, k.Merge, k.Explain},
	}
}

func (v *Help) SetSize(w, h int) {
	v.w, v.h = w, h
	v.vp.SetWidth(w)
	v.vp.SetHeight(h)
	v.vp.SetContent(clip(v.content(), w))
}

func (v *Help) content() string {
	th := v.env.Theme
	hm := help.New()
	hm.Styles.Ellipsis = th.Dim
	hm.Styles.FullKey = th.Key
	hm.Styles.FullDesc = lipgloss.NewStyle()
	hm.Styles.FullSeparator = th.Dim
	hm.FullSeparator = "    "
	groups := v.Groups()
	body := hm.FullHelpView(groups)
	if lipgloss.Width(body) > v.w-3 {
		// Narrow terminals: one group under the other.
		parts := make([]string, len(groups))
		for i, g := range groups {
			parts[i] = hm.FullHelpView([][]key.Binding{g})
		}
		body = strings.Join(parts, "\n\n")
	}
	intro := []string{
		" " + th.Section.Render("Keys"),
		"",
	}
	notes := []string{
		"",
		" " + th.Section.Render("Views"),
		"   sstables    one line per sstable (when several are opened); enter opens its partitions",
		"   partitions  sorted by size; s cycles size/rows/cells/tombstones/token; / filters keys;",
		"               t jumps to a token; counts fill in while Data.db is scanned in the background",
		"   partition   header, static row, rows and range tombstones with their cells; x on a row",
		"               shows that row's bytes, on the header the whole partition's",
		"   bytes       hex dump with every field coloured and named; tab/n and shift+tab/N select",
		"               fields, the selected one is named in full above the dump and bracketed [..]",
		"   metadata    m from anywhere: everything `sstabletool metadata` prints",
		"",
		" The mouse wheel scrolls. Colours follow the terminal and NO_COLOR.",
	}
	lines := append(intro, indent(body, "   ")...)
	return strings.Join(append(lines, notes...), "\n")
}

func indent(s, pre string) []string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = pre + l
	}
	return lines
}

func (v *Help) Update(msg tea.Msg) tea.Cmd {
	if mv := navigation(msg, v.env.Keys); mv.ok {
		scrollViewport(&v.vp, mv)
	}
	return nil
}

func (v *Help) View() string { return frame(strings.Split(v.vp.View(), "\n"), v.w, v.h) }
