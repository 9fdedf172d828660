package main

//go:generate go run . man --out ../../docs/man

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cpuguy83/go-md2man/v2/md2man"
	"github.com/urfave/cli/v2"

	"github.com/sstabletool/sstabletool/internal/vfs"
)

// manCommand is the man command.
func manCommand() *cli.Command {
	return command(&cli.Command{
		Name:      "man",
		Usage:     "write the manual pages: sstabletool(1) and one per command (sstabletool-dump(1)...)",
		ArgsUsage: "--out DIR",
		Description: "The pages are made from the definitions --help prints (urfave/cli's markdown, through\n" +
			"go-md2man): each command's description, options and examples. Pages of commands that no longer\n" +
			"exist are removed from DIR. The repository keeps them in docs/man (go generate ./cmd/sstabletool\n" +
			"writes them there); docs/install.md says where man looks for them.\n\n" +
			"Examples:\n" +
			"  sstabletool man --out /tmp/man                  # then: man /tmp/man/sstabletool-dump.1\n" +
			"  sudo sstabletool man --out /usr/local/share/man/man1",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "write the pages into `DIR` (created if missing)"},
		},
		Action: manAction,
	}, noArgs.withRequired("out"))
}

func manAction(c *cli.Context) error {
	pages, err := manPages(c.App)
	if err != nil {
		return err
	}
	dir := c.String("out")
	if err := writeManPages(vfs.Default, dir, pages); err != nil {
		return badData(err)
	}
	fmt.Fprintf(c.App.Writer, "wrote %d pages into %s: sstabletool.1, and sstabletool-COMMAND.1 for each of %d commands\n", len(pages), dir, len(pages)-1)
	return nil
}

// manPages returns the pages, by file name: sstabletool.1 and
// sstabletool-COMMAND.1 for each visible command.
func manPages(app *cli.App) (map[string][]byte, error) {
	pages := map[string][]byte{}
	var see []string
	for _, cmd := range app.Commands {
		if cmd.Hidden {
			continue
		}
		see = append(see, "sstabletool-"+cmd.Name)
	}
	top, err := appPage(app, see)
	if err != nil {
		return nil, err
	}
	pages["sstabletool.1"] = top
	for _, cmd := range app.Commands {
		if cmd.Hidden {
			continue
		}
		p, err := commandPage(app, cmd)
		if err != nil {
			return nil, fmt.Errorf("man page of %s: %w", cmd.Name, err)
		}
		pages["sstabletool-"+cmd.Name+".1"] = p
	}
	return pages, nil
}

// appPage is sstabletool(1): what --help says, each command with its
// usage, the exit codes, and the command pages.
func appPage(app *cli.App, see []string) ([]byte, error) {
	desc, examples := manDescription(app.Description)
	page := &cli.App{
		Name:        app.Name,
		Usage:       app.Usage,
		UsageText:   app.Name + " [--help | --version] COMMAND [OPTIONS] [ARGUMENTS...]",
		Description: desc,
		Flags:       []cli.Flag{cli.HelpFlag, cli.VersionFlag},
		HideHelp:    true,
		HideVersion: true,
	}
	for _, cmd := range app.Commands {
		if !cmd.Hidden {
			page.Commands = append(page.Commands, &cli.Command{Name: cmd.Name,
				Usage: cmd.Usage + " (see **sstabletool-" + cmd.Name + "**(1))"})
		}
	}
	extra := "# EXIT STATUS\n\n" +
		fmt.Sprintf("**%d**\n: success\n\n", exitOK) +
		fmt.Sprintf("**%d**\n: the command ran and found problems (verify)\n\n", exitProblem) +
		fmt.Sprintf("**%d**\n: input that could not be read or decoded, or bad usage\n\n", exitBadData)
	return renderMan(page, "", examples, extra, see)
}

// commandPage is sstabletool-COMMAND(1): the command's --help.
func commandPage(app *cli.App, cmd *cli.Command) ([]byte, error) {
	desc, examples := manDescription(cmd.Description)
	flags := cmd.VisibleFlags()
	if !slices.Contains(flags, cli.HelpFlag) { // urfave/cli adds it to the command it runs
		flags = append(flags, cli.HelpFlag)
	}
	page := &cli.App{
		Name:        app.Name + "-" + cmd.Name,
		Usage:       cmd.Usage,
		Description: desc,
		Flags:       flags,
		HideHelp:    true,
		HideVersion: true,
	}
	synopsis := "**" + app.Name + " " + cmd.Name + "** [OPTIONS]"
	if args := strings.TrimSpace(cmd.ArgsUsage); args != "" {
		synopsis += " " + markdownEscape(args)
	}
	return renderMan(page, synopsis, examples, "", []string{app.Name})
}

// renderMan renders page with urfave/cli's markdown, shaped as a man page
// (a SYNOPSIS of the command line, OPTIONS, then EXAMPLES, extra and SEE
// ALSO), through go-md2man.
func renderMan(page *cli.App, synopsis, examples, extra string, see []string) ([]byte, error) {
	md, err := page.ToMarkdown()
	if err != nil {
		return nil, err
	}
	// urfave/cli's template (v2.27) writes the name, a SYNOPSIS of the
	// flags, the description, a **Usage** block of UsageText and GLOBAL
	// OPTIONS. A template that changes fails here, and so the staleness
	// test, rather than making pages that read wrong.
	cut := func(from, to string) (string, error) {
		i := strings.Index(md, from)
		j := strings.Index(md, to)
		if i < 0 || j < i {
			return "", fmt.Errorf("urfave/cli's markdown has no %q before %q", from, to)
		}
		removed := md[i:j]
		md = md[:i] + md[j:]
		return removed, nil
	}
	if _, err := cut("# SYNOPSIS\n", "# DESCRIPTION\n"); err != nil {
		return nil, err
	}
	usage, err := cut("**Usage**:", "# GLOBAL OPTIONS")
	if err != nil {
		return nil, err
	}
	if synopsis == "" { // the app's: its UsageText
		synopsis = strings.TrimSpace(strings.NewReplacer("**Usage**:", "", "```", "").Replace(usage))
		synopsis = markdownEscape(synopsis)
	}
	md = strings.Replace(md, "# DESCRIPTION\n", "# SYNOPSIS\n\n"+synopsis+"\n\n# DESCRIPTION\n", 1)
	opts := strings.Index(md, "# GLOBAL OPTIONS")
	// Flag usages are plain text: <keyspace> is not HTML.
	md = md[:opts] + "# OPTIONS" + strings.NewReplacer("<", `\<`, ">", `\>`).Replace(md[opts+len("# GLOBAL OPTIONS"):])
	md = strings.TrimRight(md, "\n") + "\n\n"
	if examples != "" {
		md += "# EXAMPLES\n\n```\n" + examples + "```\n\n"
	}
	md += extra
	if len(see) > 0 {
		var refs []string
		for _, s := range see {
			refs = append(refs, "**"+s+"**(1)")
		}
		md += "# SEE ALSO\n\n" + strings.Join(refs, ", ") + "\n"
	}
	// .TH's fields: the title, the section, no date (the pages are the
	// same whenever they are made), the source and the manual's name.
	md = "% " + strings.ToUpper(page.Name) + ` 1 "" "sstabletool" "sstabletool manual"` + "\n\n" + md
	roff := string(md2man.Render([]byte(md)))
	// md2man says .nh (no hyphenation: --sizes-only is not two words)
	// before .TH, which turns hyphenation back on; say it again after.
	if th := strings.Index(roff, "\n.TH "); th >= 0 {
		if eol := strings.IndexByte(roff[th+1:], '\n'); eol >= 0 {
			at := th + 1 + eol + 1
			roff = roff[:at] + ".nh\n" + roff[at:]
		}
	}
	return []byte(roff), nil
}

// manDescription turns a --help description into markdown: its prose
// paragraphs escaped (a line starting with - is not a list, <id> is not
// HTML), its indented lines kept as they are in code blocks, and the
// examples that end it returned apart, for the EXAMPLES section.
func manDescription(desc string) (markdown, examples string) {
	if before, ex, ok := strings.Cut(desc, "Examples:\n"); ok {
		desc = before
		for _, l := range strings.Split(ex, "\n") {
			examples += strings.TrimPrefix(l, "  ") + "\n"
		}
	}
	var b strings.Builder
	inCode := false
	for _, l := range strings.Split(strings.TrimRight(desc, "\n"), "\n") {
		code := strings.HasPrefix(l, "  ")
		switch {
		case code && !inCode:
			if !strings.HasSuffix(b.String(), "\n\n") {
				b.WriteString("\n")
			}
			b.WriteString("```\n")
		case !code && inCode:
			b.WriteString("```\n\n")
		}
		inCode = code
		if code {
			b.WriteString(l + "\n")
			continue
		}
		b.WriteString(markdownEscape(strings.TrimRight(l, " ")) + "\n")
	}
	if inCode {
		b.WriteString("```\n")
	}
	return b.String(), examples
}

// markdownEscape makes a line of plain text read as itself in markdown.
func markdownEscape(s string) string {
	s = strings.NewReplacer(`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "<", `\<`, ">", `\>`, "[", `\[`, "]", `\]`, "|", `\|`).Replace(s)
	// At the start of a line: a list item, a heading, a numbered list.
	t := strings.TrimLeft(s, " ")
	if strings.HasPrefix(t, "-") || strings.HasPrefix(t, "+") || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "=") {
		return strings.Repeat(" ", len(s)-len(t)) + `\` + t
	}
	if i := strings.IndexFunc(t, func(r rune) bool { return r < '0' || r > '9' }); i > 0 && (t[i] == '.' || t[i] == ')') {
		return t[:i] + `\` + t[i:]
	}
	return s
}

// writeManPages writes each page into dir (a temporary file renamed over
// the page, so that man never reads half a page) and removes the pages of
// commands that no longer exist.
func writeManPages(fsys vfs.FS, dir string, pages map[string][]byte) error {
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, b := range pages {
		tmp := filepath.Join(dir, "."+name+".tmp")
		_ = fsys.Remove(tmp) // a leftover of a run that was killed
		f, err := fsys.Create(tmp, 0o644)
		if err != nil {
			return err
		}
		_, err = f.Write(b)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = fsys.Rename(tmp, filepath.Join(dir, name))
		}
		if err != nil {
			_ = fsys.Remove(tmp)
			return err
		}
	}
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if n := e.Name(); strings.HasPrefix(n, "sstabletool-") && strings.HasSuffix(n, ".1") && pages[n] == nil {
			if err := fsys.Remove(filepath.Join(dir, n)); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
	}
	return fsys.SyncDir(dir)
}
