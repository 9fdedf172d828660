// Package app is the browser's root model behind tui.Run: a router that
// keeps a stack of views (package views), sends keys to the top one,
// handles the keys that mean the same everywhere (back, quit, help,
// metadata), and draws a title line with the breadcrumb, a status line for
// errors and a short key help around the top view. The data comes from
// package catalog, which reads through format/sstable and the other format
// packages the CLI uses. Tests drive the model (New, Update, Render).
package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/tui/catalog"
	"github.com/sstabletool/sstabletool/internal/tui/keys"
	"github.com/sstabletool/sstabletool/internal/tui/theme"
	"github.com/sstabletool/sstabletool/internal/tui/views"
	"github.com/sstabletool/sstabletool/merge"
	"github.com/sstabletool/sstabletool/reader"
)

// App is the browser's root model.
type App struct {
	env    *views.Env
	tables []*catalog.Table
	stack  []views.View
	// parts keeps each table's partitions view, so going back and opening
	// it again neither re-lists nor re-scans.
	parts map[*catalog.Table]*views.Partitions
	// merged keeps each directory's merged table and view (M toggles
	// between a table's sstables and their merge).
	merged     map[string]*views.MergedPartitions
	mergedData map[string]*catalog.Merged
	// startMerged opens the first table's merge on Init (browse --merge).
	startMerged bool
	// mergeNow is the merges' nowInSec (browse --now): what has expired;
	// 0 is the current time.
	mergeNow int64

	status    string
	statusErr bool
	w, h      int
	help      help.Model
	quitting  bool
	// altScreen and mouse are the terminal modes the view asks for (Run
	// sets them; a model under test draws without).
	altScreen, mouse bool
}

// New returns the app over opened tables and the sstables that failed to
// open. With one table and no failure it starts at its partitions;
// otherwise at the sstables view, which lists every sstable it was given,
// an unreadable one as a row with its error.
func New(tables []*catalog.Table, unreadable []catalog.Unreadable, th *theme.Theme) *App {
	a := &App{env: &views.Env{Theme: th, Keys: keys.Default()}, tables: tables, parts: map[*catalog.Table]*views.Partitions{},
		merged: map[string]*views.MergedPartitions{}, mergedData: map[string]*catalog.Merged{}}
	a.help = help.New()
	a.help.Styles.ShortKey = th.Key
	a.help.Styles.ShortDesc = th.Dim
	a.help.Styles.ShortSeparator = th.Dim
	a.help.Styles.Ellipsis = ellipsisStyle(th, true)
	if n := len(unreadable); n > 0 {
		a.status = fmt.Sprintf("%d of %d sstables could not be opened: %s", n, n+len(tables), unreadable[0].Err)
		a.statusErr = true
	}
	switch {
	case len(tables) == 0:
	case len(tables) == 1 && len(unreadable) == 0:
		a.stack = []views.View{a.partitions(tables[0])}
	default:
		a.stack = []views.View{views.NewSstables(a.env, tables, unreadable)}
	}
	return a
}

func (a *App) partitions(t *catalog.Table) *views.Partitions {
	p, ok := a.parts[t]
	if !ok {
		p = views.NewPartitions(a.env, t)
		a.parts[t] = p
	}
	return p
}

// Open opens each path (a component of an sstable) for browsing; the ones
// that fail are returned to list with their errors, not to stop on.
func Open(paths []string, access reader.Access) ([]*catalog.Table, []catalog.Unreadable) {
	var tables []*catalog.Table
	var bad []catalog.Unreadable
	for _, p := range paths {
		t, err := catalog.Open(p, access)
		if err != nil {
			bad = append(bad, catalog.Unreadable{Path: p, Err: err})
			continue
		}
		tables = append(tables, t)
	}
	return tables, bad
}

// errNoneReadable is Run's error when no sstable could be opened.
var errNoneReadable = errors.New("no sstable could be opened")

// Top is the view on top of the stack (nil when there is none).
func (a *App) Top() views.View {
	if len(a.stack) == 0 {
		return nil
	}
	return a.stack[len(a.stack)-1]
}

// Stack is the views from the root to the top.
func (a *App) Stack() []views.View { return a.stack }

// Status is the status line's text and whether it is an error.
func (a *App) Status() (string, bool) { return a.status, a.statusErr }

// StartMerged makes the app open the merge of its first table's
// directory when it starts (browse --merge).
func (a *App) StartMerged() { a.startMerged = true }

// MergeAt makes every merge the app opens one as of now (seconds since the
// epoch; 0, the default, is the current time).
func (a *App) MergeAt(now int64) { a.mergeNow = now }

func (a *App) Init() tea.Cmd {
	var cmds []tea.Cmd
	if top := a.Top(); top != nil {
		cmds = append(cmds, top.Init())
	}
	if a.startMerged && len(a.tables) > 0 {
		t := a.tables[0]
		cmds = append(cmds, func() tea.Msg { return views.OpenMergedMsg{Table: t} })
	}
	if a.env.Theme.Color {
		// The help line's ellipsis is grey for the background (bubbles'
		// default). The answer comes as a message, if the terminal gives
		// one; nothing waits for it.
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	return tea.Batch(cmds...)
}

// ellipsisStyle is the key help's "…" when it is cut short: bubbles'
// separator grey for a dark or a light background, none without colours.
func ellipsisStyle(th *theme.Theme, dark bool) lipgloss.Style {
	if !th.Color {
		return lipgloss.NewStyle()
	}
	return lipgloss.NewStyle().Foreground(lipgloss.LightDark(dark)(lipgloss.Color("#DADADA"), lipgloss.Color("#3C3C3C")))
}

func (a *App) bodyHeight() int { return max(a.h-3, 1) }

func (a *App) pushView(v views.View) tea.Cmd {
	v.SetSize(a.w, a.bodyHeight())
	a.stack = append(a.stack, v)
	return v.Init()
}

func (a *App) quit() tea.Cmd {
	a.quitting = true
	for _, p := range a.parts {
		p.Close()
	}
	for _, m := range a.mergedData {
		m.Close()
	}
	for _, v := range a.stack {
		v.Close()
	}
	return tea.Quit
}

// back pops the top view, or quits at the root.
func (a *App) back() tea.Cmd {
	if len(a.stack) <= 1 {
		return a.quit()
	}
	top := a.Top()
	switch top.(type) {
	case *views.Partitions, *views.MergedPartitions: // cached
	default:
		top.Close()
	}
	a.stack = a.stack[:len(a.stack)-1]
	a.Top().SetSize(a.w, a.bodyHeight())
	return nil
}

func (a *App) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		a.w, a.h = msg.Width, msg.Height
		a.help.SetWidth(a.w)
		for _, v := range a.stack {
			v.SetSize(a.w, a.bodyHeight())
		}
		return a, nil
	case tea.BackgroundColorMsg:
		a.help.Styles.Ellipsis = ellipsisStyle(a.env.Theme, msg.IsDark())
		return a, nil
	case views.StatusMsg:
		a.status, a.statusErr = msg.Text, msg.Err
		return a, nil
	case views.PushMsg:
		return a, a.pushView(msg.View)
	case views.OpenTableMsg:
		_, seen := a.parts[msg.Table]
		p := a.partitions(msg.Table)
		p.SetSize(a.w, a.bodyHeight())
		a.stack = append(a.stack, p)
		if seen {
			return a, nil
		}
		return a, p.Init()
	case views.OpenMergedMsg:
		return a, a.openMerged(msg.Table)
	case views.Owned:
		return a, msg.Owner().Update(msg)
	case tea.KeyPressMsg:
		if utf8.RuneCountInString(msg.Text) > 1 {
			// Keys typed faster than the terminal is read may arrive as one
			// message ("/abc"); each is a key of its own here, so that a
			// command key followed by text opens its input and fills it.
			var cmds []tea.Cmd
			for _, r := range msg.Text {
				cmds = append(cmds, a.key(tea.KeyPressMsg{Code: r, Text: string(r), Mod: msg.Mod}))
			}
			return a, tea.Batch(cmds...)
		}
		return a, a.key(msg)
	case tea.PasteMsg:
		if top := a.Top(); top != nil && top.Capturing() {
			return a, top.Update(msg)
		}
		return a, nil
	case tea.MouseMsg:
		if top := a.Top(); top != nil {
			return a, top.Update(msg)
		}
		return a, nil
	}
	if top := a.Top(); top != nil {
		return a, top.Update(msg)
	}
	return a, nil
}

func (a *App) key(msg tea.KeyPressMsg) tea.Cmd {
	k := a.env.Keys
	if key.Matches(msg, keys.Quitting) {
		return a.quit()
	}
	top := a.Top()
	if top == nil {
		if key.Matches(msg, k.Quit, k.Back) {
			return a.quit()
		}
		return nil
	}
	if top.Capturing() {
		return top.Update(msg)
	}
	if !a.statusErr {
		a.status = ""
	}
	switch {
	case key.Matches(msg, k.Quit, k.Back):
		if a.statusErr {
			// The first back after an error clears it; errors are not missed.
			a.status, a.statusErr = "", false
		}
		return a.back()
	case key.Matches(msg, k.Help):
		if _, ok := top.(*views.Help); !ok {
			return a.pushView(views.NewHelp(a.env))
		}
		return nil
	case key.Matches(msg, k.Merge):
		if _, ok := top.(*views.MergedPartitions); ok && len(a.stack) > 1 {
			return a.back() // M again: back to the sstables
		}
		return top.Update(msg)
	case key.Matches(msg, k.Metadata):
		if _, ok := top.(*views.Metadata); !ok && top.Table() != nil {
			return a.pushView(views.NewMetadata(a.env, top.Table()))
		}
		return nil
	}
	return top.Update(msg)
}

// openMerged shows the merge of the sstables in t's directory (those the
// browser was given), opening it the first time.
func (a *App) openMerged(t *catalog.Table) tea.Cmd {
	dir := filepath.Dir(t.S.Path(format.ComponentData))
	if v, ok := a.merged[dir]; ok {
		v.SetSize(a.w, a.bodyHeight())
		a.stack = append(a.stack, v)
		return nil
	}
	var paths []string
	for _, o := range a.tables {
		if p := o.S.Path(format.ComponentData); filepath.Dir(p) == dir {
			paths = append(paths, p)
		}
	}
	m, err := catalog.OpenMerged(paths, t.Access(), merge.Options{Now: a.mergeNow, GCGraceSeconds: merge.DefaultGCGraceSeconds}, t.Schema)
	if err != nil {
		a.status, a.statusErr = "merge: "+err.Error(), true
		return nil
	}
	v := views.NewMergedPartitions(a.env, m)
	a.merged[dir], a.mergedData[dir] = v, m
	return a.pushView(v)
}

// View is the screen, on the alternate screen with the mouse reported
// (cell motion) when Run asks for them.
func (a *App) View() tea.View {
	v := tea.NewView(a.Render())
	v.AltScreen = a.altScreen
	if a.mouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	return v
}

// Render draws the screen: exactly the terminal's size.
func (a *App) Render() string {
	if a.quitting || a.w <= 0 || a.h <= 0 {
		return ""
	}
	th := a.env.Theme
	var crumbs []string
	for _, v := range a.stack {
		crumbs = append(crumbs, v.Title())
	}
	title := " sstabletool browse"
	if len(crumbs) > 0 {
		title += " › " + strings.Join(crumbs, " › ")
	}
	// Keep the end of a long breadcrumb: it says where the user is.
	if w := ansi.StringWidth(title); w > a.w {
		title = "…" + ansi.TruncateLeft(title, w-a.w+1, "")
	}
	lines := []string{th.Title.Render(views.Fit(title, a.w))}
	if top := a.Top(); top != nil {
		lines = append(lines, top.View())
	} else {
		lines = append(lines, fitBlock(" no sstable could be opened", a.w, a.bodyHeight()))
	}
	st := a.status
	switch {
	case a.statusErr:
		st = th.Error.Render(views.Fit(" ✗ "+st, a.w))
	case st != "":
		st = th.OK.Render(views.Fit(" "+st, a.w))
	default:
		st = views.Fit("", a.w)
	}
	lines = append(lines, st)
	bindings := []key.Binding{a.env.Keys.Help}
	if top := a.Top(); top != nil {
		bindings = append(bindings, top.Keys()...)
	}
	bindings = append(bindings, a.env.Keys.Quit)
	lines = append(lines, views.Fit(" "+a.help.ShortHelpView(bindings), a.w))
	return strings.Join(lines, "\n")
}

func fitBlock(s string, w, h int) string {
	lines := make([]string, h)
	lines[0] = views.Fit(s, w)
	for i := 1; i < h; i++ {
		lines[i] = strings.Repeat(" ", w)
	}
	return strings.Join(lines, "\n")
}

// Run opens paths and runs the browser on the terminal until the user
// quits, listing known (sstables the caller could not open) among the
// rest; mouse reports the mouse to the browser. It returns every sstable
// that could not be opened; errNoneReadable when none could be.
func Run(paths []string, access reader.Access, mouse, merged bool, mergeNow int64, known []catalog.Unreadable, schema func(*sstable.SSTable) *catalog.Schema) ([]catalog.Unreadable, error) {
	tables, bad := Open(paths, access)
	if schema != nil {
		for _, t := range tables {
			t.Schema = schema(t.S)
		}
	}
	bad = append(known, bad...)
	defer func() {
		for _, t := range tables {
			t.Close()
		}
	}()
	if len(tables) == 0 {
		return bad, errNoneReadable
	}
	a := New(tables, bad, theme.New(theme.Detect(os.Stdout)))
	a.altScreen, a.mouse = true, mouse
	a.MergeAt(mergeNow)
	if merged {
		a.StartMerged()
	}
	_, err := tea.NewProgram(a).Run()
	return bad, err
}
