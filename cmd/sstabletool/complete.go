package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/format"
)

// Shell completion. The scripts "sstabletool completion bash|zsh|fish"
// prints hand the words of the command line to the hidden command
// "sstabletool __complete WORD...", the last WORD being the one under the
// cursor (empty after a space), and show what it prints: one candidate a
// line, as "word" or "word<TAB>description" (zsh and fish show the
// description), in the order to show them, then a last line of
// directives: ":files" when the candidates are file names (bash then
// quotes them as such), ":" otherwise.
//
// Everything comes from the app's definitions, as --help does: the
// commands, their flags (read before or after the arguments, as flagsFirst
// reads them), the values of a choiceFlag, paths for a flag that takes a
// file or directory, and the positional arguments from the command's
// BashComplete, which command() sets from its argSpec: a command added
// later completes with no change here.

// candidate is one completion: the word, and what it is.
type candidate struct{ word, desc string }

// completion is what __complete prints.
type completion struct {
	cands []candidate
	files bool // the candidates are file names
}

func (c completion) write(w io.Writer) {
	for _, k := range c.cands {
		if k.desc != "" {
			fmt.Fprintf(w, "%s\t%s\n", k.word, k.desc)
		} else {
			fmt.Fprintln(w, k.word)
		}
	}
	if c.files {
		fmt.Fprintln(w, ":files")
	} else {
		fmt.Fprintln(w, ":")
	}
}

// readCompletion reads what completion.write wrote (a command's
// BashComplete writes it too).
func readCompletion(r io.Reader) completion {
	var c completion
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, ":") {
			c.files = c.files || strings.Contains(line, "files")
			continue
		}
		word, desc, _ := strings.Cut(line, "\t")
		c.cands = append(c.cands, candidate{word, desc})
	}
	return c
}

// complete returns the candidates for the last of words, the words of a
// command line after the program's name.
func complete(app *cli.App, words []string) completion {
	if len(words) == 0 {
		words = []string{""}
	}
	cur, before := words[len(words)-1], words[:len(words)-1]
	// The app's own flags (--help, --version) take no value.
	i := 0
	for i < len(before) && strings.HasPrefix(before[i], "-") {
		i++
	}
	if i == len(before) {
		if strings.HasPrefix(cur, "-") {
			return flagCandidates(append(slices.Clone(app.Flags), cli.VersionFlag), cur, nil)
		}
		return commandCandidates(app, cur)
	}
	var cmd *cli.Command
	for _, c := range app.Commands {
		if c.HasName(before[i]) {
			cmd = c
		}
	}
	if cmd == nil {
		return completion{}
	}
	flags := append(slices.Clone(cmd.Flags), cli.HelpFlag)
	byName := map[string]cli.Flag{}
	for _, f := range flags {
		for _, n := range f.Names() {
			byName[n] = f
		}
	}
	// The words after the command, as flagsFirst reads them: a flag that
	// takes a value takes the next word unless it has =value; "--" ends
	// the flags.
	given := map[cli.Flag]bool{}
	var args []string
	var pending cli.Flag // a flag whose value is the next word
	dashdash := false
	for _, w := range before[i+1:] {
		switch {
		case pending != nil:
			pending = nil
		case dashdash || len(w) < 2 || w[0] != '-':
			args = append(args, w)
		case w == "--":
			dashdash = true
		default:
			name, _, hasValue := strings.Cut(flagName(w), "=")
			if f := byName[name]; f != nil {
				given[f] = true
				if takesValue(f) && !hasValue {
					pending = f
				}
			}
		}
	}
	switch {
	case pending != nil:
		return valueCandidates(pending, cur, "")
	case !dashdash && len(cur) > 0 && cur[0] == '-':
		if name, value, ok := strings.Cut(flagName(cur), "="); ok {
			if f := byName[name]; f != nil {
				return valueCandidates(f, value, cur[:len(cur)-len(value)])
			}
			return completion{}
		}
		return flagCandidates(flags, cur, given)
	}
	return argCandidates(app, cmd, append(args, cur))
}

// flagName is a flag word without its leading - or --.
func flagName(w string) string { return strings.TrimPrefix(strings.TrimPrefix(w, "-"), "-") }

func takesValue(f cli.Flag) bool {
	d, ok := f.(cli.DocGenerationFlag)
	return ok && d.TakesValue()
}

// commandCandidates are the visible commands whose names start with cur.
func commandCandidates(app *cli.App, cur string) completion {
	var c completion
	for _, cmd := range app.Commands {
		if !cmd.Hidden && strings.HasPrefix(cmd.Name, cur) {
			c.cands = append(c.cands, candidate{cmd.Name, cmd.Usage})
		}
	}
	return c
}

// flagCandidates are the names of the visible flags that start with cur,
// in the order --help lists them, leaving out those given already (unless
// they repeat).
func flagCandidates(flags []cli.Flag, cur string, given map[cli.Flag]bool) completion {
	var c completion
	for _, f := range flags {
		if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
			continue
		}
		if s, ok := f.(cli.DocGenerationSliceFlag); given[f] && !(ok && s.IsSliceFlag()) {
			continue
		}
		desc := ""
		if d, ok := f.(cli.DocGenerationFlag); ok {
			desc = shortUsage(d.GetUsage())
		}
		for _, n := range f.Names() {
			w := "--" + n
			if len(n) == 1 {
				w = "-" + n
			}
			if strings.HasPrefix(w, cur) {
				c.cands = append(c.cands, candidate{w, desc})
			}
		}
	}
	return c
}

// shortUsage is a flag's usage as a completion menu shows it: one line,
// without the placeholder's quotes, cut at about 80 characters.
func shortUsage(usage string) string {
	s := strings.Join(strings.Fields(strings.ReplaceAll(usage, "`", "")), " ")
	if r := []rune(s); len(r) > 80 {
		cut := string(r[:80])
		if i := strings.LastIndex(cut, " "); i > 40 {
			cut = cut[:i]
		}
		s = cut + "…"
	}
	return s
}

// valueCandidates are the values of flag f that start with prefix, each
// after head (the "--flag=" of a value given with =).
func valueCandidates(f cli.Flag, prefix, head string) completion {
	var c completion
	if ch, ok := f.(*choiceFlag); ok {
		// In a list, the last item is the one being completed; the
		// items before it are not offered again.
		done, item := "", prefix
		if ch.list {
			if i := strings.LastIndex(prefix, ","); i >= 0 {
				done, item = prefix[:i+1], prefix[i+1:]
			}
		}
		taken := splitList(done)
		for _, v := range ch.values {
			if slices.Contains(taken, v) {
				continue
			}
			if strings.HasPrefix(v, item) || ch.fold && len(v) >= len(item) && strings.EqualFold(v[:len(item)], item) {
				c.cands = append(c.cands, candidate{word: head + done + v})
			}
		}
	}
	if paths, dirs := flagPaths(f); paths {
		p := pathCandidates(prefix, dirs)
		for _, k := range p.cands {
			c.cands = append(c.cands, candidate{head + k.word, k.desc})
		}
		c.files = true
	}
	if _, ok := f.(*cli.BoolFlag); ok && head != "" { // --verify=false
		for _, v := range []string{"true", "false"} {
			if strings.HasPrefix(v, prefix) {
				c.cands = append(c.cands, candidate{word: head + v})
			}
		}
	}
	return c
}

// argCandidates are the candidates for the last of args, the positional
// arguments given to cmd: what its BashComplete prints, or paths.
func argCandidates(app *cli.App, cmd *cli.Command, args []string) completion {
	if cmd.BashComplete == nil {
		return pathCandidates(args[len(args)-1], false)
	}
	set := flag.NewFlagSet(cmd.Name, flag.ContinueOnError)
	if err := set.Parse(append([]string{"--"}, args...)); err != nil {
		return completion{}
	}
	var out bytes.Buffer
	ctx := cli.NewContext(&cli.App{Name: app.Name, Commands: app.Commands, Writer: &out}, set, nil)
	ctx.Command = cmd
	cmd.BashComplete(ctx)
	return readCompletion(&out)
}

// completeArgs is the BashComplete of a command built by command(): its
// positional arguments are paths, as many as spec takes. c.Args() are the
// arguments given, the last the one being completed.
func (a argSpec) completeArgs(c *cli.Context) {
	if a.max >= 0 && c.NArg() > a.max {
		completion{}.write(c.App.Writer)
		return
	}
	pathCandidates(c.Args().Get(c.NArg()-1), false).write(c.App.Writer)
}

// pathsAfter is the BashComplete of a command whose first n positional
// arguments are not paths (query's SELECT statement): paths after them.
func pathsAfter(n int) cli.BashCompleteFunc {
	return func(c *cli.Context) {
		if c.NArg() <= n {
			completion{}.write(c.App.Writer)
			return
		}
		pathCandidates(c.Args().Get(c.NArg()-1), false).write(c.App.Writer)
	}
}

// pathCandidates are the files and directories whose paths start with
// prefix: directories first (with their "/"), then sstables' Data.db,
// then their other components, then other files, each in name order.
// Names starting with a dot show only when prefix's last element does.
// dirs: directories only.
func pathCandidates(prefix string, dirs bool) completion {
	c := completion{files: true}
	i := strings.LastIndex(prefix, "/") + 1
	dir, base := prefix[:i], prefix[i:]
	list := dir
	switch {
	case list == "":
		list = "."
	case strings.HasPrefix(list, "~/"):
		home, err := os.UserHomeDir()
		if err != nil {
			return c
		}
		list = filepath.Join(home, list[2:])
	}
	entries, err := os.ReadDir(list)
	if err != nil {
		return c
	}
	ranked := make([][]candidate, 4)
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".") || strings.ContainsAny(name, "\n\t") {
			continue
		}
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(filepath.Join(list, name)); err == nil {
				isDir = st.IsDir()
			}
		}
		rank := 3
		switch {
		case isDir:
			rank, name = 0, name+"/"
		case dirs:
			continue
		default:
			if _, comp, err := format.ParseDescriptor(name); err == nil {
				rank = 2
				if comp == format.ComponentData {
					rank = 1
				}
			}
		}
		ranked[rank] = append(ranked[rank], candidate{word: dir + name})
	}
	for _, r := range ranked { // os.ReadDir sorts by name
		c.cands = append(c.cands, r...)
	}
	return c
}
